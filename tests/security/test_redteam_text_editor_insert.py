"""An independent red-team pass over the text editor's ``insert`` (Claude's
``str_replace_based_edit_tool`` run on a Toolbox): it turns a line number
into an ``edit_file`` whose old text is the fewest lines around the point
that occur once.  Those lines were counted as whole lines while edit_file
counts the text anywhere, so an insert into lines that are unique as lines
but not as text (a blank line among blank lines at the end, ``x`` below
``xx``) was refused AMBIGUOUS with no way to succeed, and so was any
insert into a file of one empty line (its old text was empty).  The count
also grew as the cube of the file's lines (2,000 equal lines: 1.6 s of
CPU outside any call's deadline).  Each insert must land at its line,
exactly once, the rest of the file unchanged; on every backend config.
"""

from __future__ import annotations

import time

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox

CASES = {
    "blank_lines_at_the_end": b"a  \nb\t\n\n\n",
    "a_line_inside_another": b"xx\nx\n",
    "one_empty_line": b"\n",
    "one_empty_line_crlf": b"\r\n",
    "blank_lines_only": b"\n\n\n",
    "repeated_pairs": b"ab\nab\nb\nab\n",
    "crlf": b"a\r\nb\r\n\r\n",
    "two_empty_lines_crlf": b"\r\n\r\n",
    "four_empty_lines": b"\n\n\n\n",
    "a_line_then_an_empty_one": b"a\n\n",
    "byte_order_mark_and_empty_lines": b"\xef\xbb\xbf\n\n",
}


def _expected(data: bytes, after: int, text: str) -> bytes:
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    data = data[len(bom):]
    eol = b"\r\n" if b"\r\n" in data else b"\n"
    lines = data.split(eol)
    ended = lines[-1] == b""
    if ended:
        lines.pop()
    lines.insert(after, text.encode())
    return bom + eol.join(lines) + (eol if ended else b"")


@pytest.mark.parametrize("name", list(CASES))
def test_insert_lands_at_its_line(tmp_path, make_root, name):
    data = CASES[name]
    count = len(data.split(b"\r\n" if b"\r\n" in data else b"\n")) - 1
    for after in range(count + 1):
        target = tmp_path / f"{name}-{after}.txt"
        target.write_bytes(data)
        toolbox = Toolbox(make_root(str(tmp_path)))
        done = run_text_editor(toolbox, {"command": "insert", "path": target.name,
                                         "insert_line": after, "new_str": "NEW"})
        assert done.is_error is False, (after, done.text)
        assert target.read_bytes() == _expected(data, after, "NEW"), after


def test_insert_among_many_equal_lines_is_quick(tmp_path, make_root):
    target = tmp_path / "same.txt"
    target.write_text("x\n" * 2000)
    toolbox = Toolbox(make_root(str(tmp_path)))
    started = time.process_time()
    done = run_text_editor(toolbox, {"command": "insert", "path": "same.txt",
                                     "insert_line": 1000, "new_str": "NEW"})
    spent = time.process_time() - started
    assert done.is_error is False, done.text
    assert target.read_text() == "x\n" * 1000 + "NEW\n" + "x\n" * 1000
    assert spent < 0.5, spent  # a hang detector: the cubic count took 1.6 s here
