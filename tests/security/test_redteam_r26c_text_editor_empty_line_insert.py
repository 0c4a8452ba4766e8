"""An independent red-team pass (round twenty-six, third team) over the
text editor's ``insert`` of an empty line (``new_str`` ``"\\n"`` or
``""``).  The insert is an ``edit_file`` whose old text is the lines around
the point; where the new text (those lines with an empty line between)
was already in the file, as it is after the last line of a file ending in
a line break (``b\\n``: old ``b``, new ``b\\n``) or beside an empty line
(``b\\n\\nc\\n`` after line 1), edit_file read the call as one already made
and refused it ``NOT_FOUND`` "old_str occurs in f.txt only inside new_str
... this edit looks already made", about an old_str the model never sent,
with no way to succeed.  Each insert must land after its line, once, the
rest of the file unchanged.  On every backend config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox

CASES = {  # file, insert_line, new_str -> the file after
    "after_the_only_line": (b"b\n", 1, "\n", b"b\n\n"),
    "after_the_only_line_given_nothing": (b"b\n", 1, "", b"b\n\n"),
    "after_the_last_line_of_crlf": (b"a\r\nb\r\n", 2, "\n", b"a\r\nb\r\n\r\n"),
    "after_the_last_of_two_lines": (b"a\nb\n", 2, "\n", b"a\nb\n\n"),
    "before_an_empty_line": (b"b\n\nc\n", 1, "\n", b"b\n\n\nc\n"),
    "after_an_empty_line": (b"b\n\nc\n", 2, "\n", b"b\n\n\nc\n"),
    "after_an_empty_last_line": (b"b\n\n", 2, "\n", b"b\n\n\n"),
    "at_the_top_before_an_empty_line": (b"\nb\n", 0, "\n", b"\n\nb\n"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_an_empty_line_is_inserted_where_asked(tmp_path: Path, make_root: Callable[..., Any],
                                               name: str) -> None:
    data, after, new, expected = CASES[name]
    target = tmp_path / "f.txt"
    target.write_bytes(data)
    done = run_text_editor(Toolbox(make_root(str(tmp_path))),
                           {"command": "insert", "path": "f.txt", "insert_line": after,
                            "new_str": new})
    assert done.is_error is False, done.text
    assert target.read_bytes() == expected
