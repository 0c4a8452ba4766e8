"""An independent red-team pass (round twenty-four, third team) over the
text editor's ``insert`` on files whose lines hold a carriage return
inside them (a terminal's progress log, ``10%\\r50%\\r100%``; a stray
``\\r`` in a line of an ``\\n`` file).  ``view`` shows such a line as one
line, ``\\r`` and all, as read_file and edit_file count it; but an old
text holding a lone ``\\r`` is read by edit_file as a line break, so the
insert's old text (the lines around the point) never matched: every
insert next to such a line was refused ``NOT_FOUND`` "oldText does not
occur", about an oldText the model never sent, with no way to succeed.
Each insert must land after its line, exactly once, the rest of the file
unchanged; where no text without a carriage return next to the point
occurs once (``x``, ``y\\rx``, ``y``: ``x\\ny`` is there twice, once
across the ``\\r``), the refusal says so and what to send instead,
nothing changed.
On every backend config.
"""

from __future__ import annotations

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox

CASES = {
    "inside_the_first_line": b"a\rb\nc\n",
    "inside_a_middle_line": b"x\ny\rz\nw\n",
    "inside_a_middle_line_whose_parts_repeat": b"x\ny\rx\ny\n",
    "at_a_line_start": b"a\n\rb\nc\n",
    "a_progress_log": b"start\n10%\r50%\r100%\ndone\n",
    "inside_the_last_line": b"a\nb\rc\n",
    "inside_the_last_line_without_a_final_newline": b"a\nb\rc",
    "inside_the_only_line": b"p\rq\n",
    "two_lines_in_a_row": b"a\rb\nc\rd\ne\n",
}
# cases where every anchor an oldText can carry may occur twice
NO_ANCHOR = {"inside_a_middle_line_whose_parts_repeat"}


def _expected(data: bytes, after: int, text: str) -> bytes:
    lines = data.split(b"\n")
    ended = lines[-1] == b""
    if ended:
        lines.pop()
    lines.insert(after, text.encode())
    return b"\n".join(lines) + (b"\n" if ended else b"")


@pytest.mark.parametrize("name", list(CASES))
def test_insert_next_to_a_carriage_return_lands_at_its_line(tmp_path, make_root, name):
    data = CASES[name]
    count = len(data.split(b"\n")) - (1 if data.endswith(b"\n") else 0)
    toolbox = Toolbox(make_root(str(tmp_path)))
    for after in range(count + 1):
        target = tmp_path / f"{name}-{after}.txt"
        target.write_bytes(data)
        seen = run_text_editor(toolbox, {"command": "view", "path": target.name})
        assert seen.text.count("\n") + 1 == count, seen.text  # the lines view counts
        done = run_text_editor(toolbox, {"command": "insert", "path": target.name,
                                         "insert_line": after, "new_str": "NEW"})
        if name in NO_ANCHOR and done.is_error:
            assert done.text.startswith("AMBIGUOUS: ") and "carriage return" in done.text, \
                done.text
            assert "create" in done.text.splitlines()[1], done.text
            assert target.read_bytes() == data
            continue
        assert done.is_error is False, (after, done.text)
        assert target.read_bytes() == _expected(data, after, "NEW"), after
