"""An independent red-team pass (round twenty-six, third team), the same
shape as ``test_redteam_r26c_text_editor_empty_line_insert.py`` beside a
line read_file cuts short (over 2,000 characters) or a line holding a lone
``\\r``: the text editor's ``insert`` of an empty line there anchors on the
text it can know of the lines around, and where that text with the empty
line was already in the file edit_file read the insert as an edit already
made, refused ``NOT_FOUND`` "old_str occurs in f.txt only inside new_str"
about an old_str the model never sent.  Each insert must land after its
line, once, the rest unchanged.  And an insert after the only line, cut
and with no line break after it, was refused in edit_file's words ("old_str
does not occur"); it is the insert's own refusal.  On every backend config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox

LONG = b"L" * 3000  # read_file cuts it
CASES = {  # file, insert_line, new_str -> the file after
    "before_an_empty_line_above_a_long_one": (b"b\n\n" + LONG + b"\n", 1, "\n",
                                              b"b\n\n\n" + LONG + b"\n"),
    "after_an_empty_line_above_a_long_one": (b"b\n\n" + LONG + b"\n", 2, "\n",
                                             b"b\n\n\n" + LONG + b"\n"),
    "after_the_first_line_above_a_long_one": (b"b\n" + LONG + b"\n", 1, "",
                                              b"b\n\n" + LONG + b"\n"),
    "below_a_return_before_an_empty_line": (b"a\rb\nc\n\nd\n", 2, "\n",
                                            b"a\rb\nc\n\n\nd\n"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_an_empty_line_beside_a_cut_line_is_inserted_where_asked(
        tmp_path: Path, make_root: Callable[..., Any], name: str) -> None:
    data, after, new, expected = CASES[name]
    target = tmp_path / "f.txt"
    target.write_bytes(data)
    done = run_text_editor(Toolbox(make_root(str(tmp_path))),
                           {"command": "insert", "path": "f.txt", "insert_line": after,
                            "new_str": new})
    assert done.is_error is False, done.text
    assert target.read_bytes() == expected


def test_after_the_only_line_cut_and_unended_the_refusal_is_the_inserts(
        tmp_path: Path, make_root: Callable[..., Any]) -> None:
    """One line read_file cuts, no line break after it: nothing known marks
    the end of the file, so the insert after it is refused in its own words
    (``AMBIGUOUS``, what to send instead), never edit_file's "old_str does
    not occur" about an old_str the model never sent; nothing changed."""
    target = tmp_path / "f.txt"
    target.write_bytes(LONG)
    done = run_text_editor(Toolbox(make_root(str(tmp_path))),
                           {"command": "insert", "path": "f.txt", "insert_line": 1,
                            "new_str": "NEW"})
    assert done.is_error is True
    assert done.text.startswith("AMBIGUOUS: "), done.text
    assert "old_str" not in done.text.splitlines()[0], done.text
    assert "str_replace" in done.text.splitlines()[1], done.text
    assert target.read_bytes() == LONG
