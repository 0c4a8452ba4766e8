"""An independent red-team pass (round twenty-seven, third team) over
edit_file's reading of a lone ``\\r`` in the model's oldText and newText.
In a file whose lines end in ``\\n``, a lone ``\\r`` is a character inside
a line (a terminal's progress text, ``'a\\rb'``): read_file and the text
editor's ``view`` show it there, and edit_file's file text keeps it.  But
edit_file read every lone ``\\r`` the model sent as a line break: an
oldText copied exactly from such a line (``a\\rb``) was refused
``NOT_FOUND`` "does not occur ... nothing in it is close", with no way to
succeed; and an oldText of ``\\r`` alone, or ``\\r`` beside text that also
ends a line, matched the file's line break instead, so the edit changed a
place the model never named (``ab\\rcd\\n``: the final ``\\n`` replaced,
the ``\\r`` left) and answered that it was done.  A lone ``\\r`` the model
sends means what one means in the file: inside a line where the file holds
one there, a line break otherwise.  Through edit_file and the text
editor's ``str_replace``, on every backend config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox

CASES = {  # file, oldText, newText -> the file after
    "copied_from_a_line_holding_one": (b"a\rb\nc\n", "a\rb", "Q", b"Q\nc\n"),
    "the_carriage_return_alone": (b"ab\rcd\n", "\r", "-", b"ab-cd\n"),
    "across_it_in_a_crlf_file": (b"ab\rcd\r\nef\r\n", "b\rc", "X", b"aXd\r\nef\r\n"),
    "with_the_line_break_after_it": (b"x = 'a\rb'\ny = 1\n", "'a\rb'\ny", "'a'\ny",
                                     b"x = 'a'\ny = 1\n"),
    "kept_in_the_new_text": (b"p = '10%\r50%'\n", "50%", "50%\r100%", b"p = '10%\r50%\r100%'\n"),
    "a_progress_log_line": (b"start\n10%\r50%\r100%\ndone\n", "10%\r50%\r100%", "ok",
                            b"start\nok\ndone\n"),
}


def _edit_file(toolbox: Toolbox, old: str, new: str) -> tuple[bool, str]:
    done = toolbox.call("edit_file", {"path": "f.txt", "oldText": old, "newText": new})
    return bool(done["ok"]), str(done)


def _str_replace(toolbox: Toolbox, old: str, new: str) -> tuple[bool, str]:
    done = run_text_editor(toolbox, {"command": "str_replace", "path": "f.txt",
                                     "old_str": old, "new_str": new})
    return done.is_error is False, done.text


@pytest.mark.parametrize("through", [_edit_file, _str_replace], ids=["edit_file", "str_replace"])
@pytest.mark.parametrize("name", list(CASES))
def test_a_lone_carriage_return_means_what_it_means_in_the_file(
        tmp_path: Path, make_root: Callable[..., Any], name: str,
        through: Callable[[Toolbox, str, str], tuple[bool, str]]) -> None:
    data, old, new, expected = CASES[name]
    target = tmp_path / "f.txt"
    target.write_bytes(data)
    landed, said = through(Toolbox(make_root(str(tmp_path))), old, new)
    assert landed, said
    assert target.read_bytes() == expected


def test_a_lone_carriage_return_still_breaks_lines_where_the_file_has_none_inside(
        tmp_path: Path, make_root: Callable[..., Any]) -> None:
    # files whose lines hold no lone \r: one sent is a line break, as before
    # (a \r-only file's own breaks; an \n file's, written the file's way)
    toolbox = Toolbox(make_root(str(tmp_path)))
    for data, old, new, expected in ((b"a\rb\rc\r", "a\rb", "A\rB\rX", b"A\rB\rX\rc\r"),
                                     (b"a\nb\nc\n", "a\rb", "A\rB", b"A\nB\nc\n"),
                                     (b"a\r\nb\r\n", "a\rb", "A\rB", b"A\r\nB\r\n")):
        target = tmp_path / "f.txt"
        target.write_bytes(data)
        landed, said = _edit_file(toolbox, old, new)
        assert landed, said
        assert target.read_bytes() == expected, data
