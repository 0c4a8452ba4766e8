"""An independent red-team pass over the text editor's ``insert`` beside a
line read_file cut short (it shows the first 2,000 characters of a longer
line and says so): the lines around the insertion point, as read_file
showed them, became the old text of an ``edit_file``, the cut line's
marker included, which occurs nowhere in the file: every insert next to a
long line (a minified bundle, a data line, a lock file's hash list) was
refused NOT_FOUND with no way to succeed.

``insert`` is by line number: it must land there whatever the lines beside
it hold, exactly once, the rest of the file unchanged; where the text that
can be known around the point (a cut line's tail is never seen) occurs
more than once, or there is none (the end of the file after a cut last
line), it answers a refusal saying so and what to do, the file unchanged.  On every backend config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.integrations._text_editor import run_text_editor


def _long(tag: str, count: int = 700) -> str:
    return f"var {tag}=[" + ",".join(f"{tag}{i}" for i in range(count)) + "];"


LONG, OTHER = _long("a"), _long("b")
CASES = {  # each must take an insert at every line
    "long_first": f"{LONG}\nb\nc\n",
    "long_in_the_middle": f"a\n{LONG}\nc\n",
    "long_next_to_last": f"a\nb\n{LONG}\nz\n",
    "only_a_long_line": f"{LONG}\n",
    "two_long_lines": f"{LONG}\n{OTHER}\nend\n",
    "long_lines_around_a_short_one": f"{LONG}\nx\n{OTHER}\nend\n",
    "long_then_empty": f"{LONG}\n\nend\n",
    "crlf": f"a\r\n{LONG}\r\nc\r\n",
    "short_lines_repeated_between_long_ones": f"{LONG}\nx\n{OTHER}\nx\n{_long('c')}\nend\n",
}
# the known text around some points occurs more than once (the cut lines
# start alike), or there is none (the end, after a cut last line): those
# may be refused, never inserted elsewhere
ALIKE = {
    "long_last": f"a\nb\n{LONG}\n",
    "two_long_lines_last": f"{LONG}\n{OTHER}\n",
    "long_then_empty_last": f"{LONG}\n\n",
    "a_short_line_repeated_after_long_ones": f"{LONG}\nx\n{OTHER}\nx\n",
    "long_lines_starting_alike": f"{LONG}1\n{LONG}2\n",
    "long_last_without_line_break": f"a\n{LONG}",
}


def _expected(data: str, after: int, text: str) -> str:
    eol = "\r\n" if "\r\n" in data else "\n"
    lines = data.split(eol)
    ended = lines[-1] == ""
    if ended:
        lines.pop()
    lines.insert(after, text)
    return eol.join(lines) + (eol if ended else "")


def _count(data: str) -> int:
    eol = "\r\n" if "\r\n" in data else "\n"
    return len(data.split(eol)) - (1 if data.endswith(eol) else 0)


def _insert(tmp_path: Path, make_toolbox, name: str, data: str, after: int):
    target = tmp_path / f"{name}-{after}.txt"
    target.write_bytes(data.encode())
    with make_toolbox(tmp_path) as tools:
        done = run_text_editor(tools, {"command": "insert", "path": target.name,
                                       "insert_line": after, "new_str": "NEW"})
    return done, target.read_bytes().decode()


@pytest.mark.parametrize("name", list(CASES))
def test_insert_beside_a_cut_line_lands_at_its_line(tmp_path, make_toolbox, name):
    data = CASES[name]
    assert any(len(line) > 2000 for line in data.splitlines())
    for after in range(_count(data) + 1):
        done, now = _insert(tmp_path, make_toolbox, name, data, after)
        assert done.is_error is False, (name, after, done.text)
        assert now == _expected(data, after, "NEW"), (name, after)


@pytest.mark.parametrize("name", list(ALIKE))
def test_insert_where_the_known_text_repeats_lands_or_says_why(tmp_path, make_toolbox, name):
    data = ALIKE[name]
    refused = 0
    for after in range(_count(data) + 1):
        done, now = _insert(tmp_path, make_toolbox, name, data, after)
        if done.is_error:
            refused += 1
            assert now == data, (name, after)
            assert "longer than read_file shows" in done.text, done.text
            assert "str_replace" in done.text, done.text
        else:
            assert now == _expected(data, after, "NEW"), (name, after)
    assert refused < _count(data) + 1  # the points the known text does pin still take it
