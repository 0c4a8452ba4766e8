"""An independent red-team pass (round twenty-four, third team) over what
the text editor (Claude's ``str_replace_based_edit_tool`` run on a
Toolbox) tells the model when it refuses: the sentences were corral's own
tools', in their words.  ``str_replace`` with an ``old_str`` found twice
was told "Add neighbouring lines to oldText until it matches once, or pass
replaceAll: true to replace all 2" (the editor has no ``replaceAll``: a
model following the hint sends it, it is ignored, and the call is refused
again); an empty ``old_str`` was told to put the text in ``oldText`` and,
to insert, to widen both ``oldText`` and ``newText``; a ``view_range``
past the end was told "Pass an offset from 1 to 3".  Now each refusal
names the editor's own arguments and commands (``old_str``, ``new_str``,
``view_range``, ``insert``), never a field the editor does not have; the
code and the rest of the refusal are unchanged, nothing changed on disk.
On every backend config.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox

TEXT = "a = 1\nb = 2\na = 1\n"

# the call, the code, and a word of the editor's the answer must use
CASES: dict[str, tuple[dict[str, Any], str, str]] = {
    "old_str_found_twice": ({"command": "str_replace", "path": "f.py", "old_str": "a = 1",
                             "new_str": "a = 3"}, "AMBIGUOUS", "old_str"),
    "old_str_empty": ({"command": "str_replace", "path": "f.py", "old_str": "",
                       "new_str": "c = 3\n"}, "INVALID_ARGUMENT", "insert"),
    "old_str_same_as_new_str": ({"command": "str_replace", "path": "f.py", "old_str": "b = 2",
                                 "new_str": "b = 2"}, "INVALID_ARGUMENT", "new_str"),
    "old_str_not_there": ({"command": "str_replace", "path": "f.py", "old_str": "zzz",
                           "new_str": "c"}, "NOT_FOUND", "old_str"),
    "view_range_past_the_end": ({"command": "view", "path": "f.py", "view_range": [10, 20]},
                                "INVALID_ARGUMENT", "view_range"),
    "view_range_starting_past_the_end_to_its_end": ({"command": "view", "path": "f.py",
                                                     "view_range": [4, -1]},
                                                    "INVALID_ARGUMENT", "view_range"),
}
# the tool the editor's command runs, named in its sentence: the command's name instead
TOOL_NAMES: dict[str, tuple[dict[str, Any], str, str]] = {
    "str_replace_in_a_binary_file": ({"command": "str_replace", "path": "bin.dat",
                                      "old_str": "a", "new_str": "b"}, "UNSUPPORTED",
                                     "str_replace"),
    "create_over_a_symlink": ({"command": "create", "path": "link", "file_text": "x"},
                              "UNSUPPORTED", "create"),
    "insert_into_a_file_past_the_edit_limit": ({"command": "insert", "path": "big.txt",
                                                "insert_line": 0, "new_str": "x"},
                                               "TOO_LARGE", "insert"),
}
NOT_THE_EDITORS = re.compile(r"\b(oldText|newText|replaceAll|offset|expectedSha256|edit_file|"
                             r"write_file)\b")


@pytest.mark.parametrize("name", list(CASES))
def test_a_refusal_speaks_the_editors_words(tmp_path: Path, make_root, name: str) -> None:
    call, code, word = CASES[name]
    (tmp_path / "f.py").write_text(TEXT)
    toolbox = Toolbox(make_root(str(tmp_path)))
    done = run_text_editor(toolbox, call)
    assert done.is_error is True, done.text
    assert done.text.startswith(f"{code}: "), done.text
    assert not NOT_THE_EDITORS.search(done.text), done.text
    assert word in done.text, done.text
    assert len(done.text.splitlines()) == 2, done.text  # a sentence, then what to do next
    assert (tmp_path / "f.py").read_text() == TEXT


@pytest.mark.parametrize("text", [TEXT, "\n\n"], ids=["lines", "empty_lines_only"])
def test_an_insert_into_a_file_changed_meanwhile_says_so_in_the_editors_words(
        tmp_path: Path, make_root, text: str) -> None:
    """Another program writes the file between the insert's read and its
    edit (the insert's own ``expectedSha256``, which the model never sent,
    was named, and it was told to write with a new one)."""
    target = tmp_path / "f.py"
    target.write_text(text)
    toolbox = Toolbox(make_root(str(tmp_path)))
    real_call = toolbox.call

    def call(name: str, args: Any) -> dict[str, Any]:
        answer = real_call(name, args)
        if name == "read_file":
            target.write_text("changed = True\n" + text)  # another program, just after
        return answer

    toolbox.call = call  # type: ignore[method-assign]
    done = run_text_editor(toolbox, {"command": "insert", "path": "f.py", "insert_line": 1,
                                     "new_str": "NEW"})
    assert done.is_error is True, done.text
    assert done.text.startswith("STALE: "), done.text
    assert not NOT_THE_EDITORS.search(done.text), done.text
    assert "view" in done.text.splitlines()[1].lower(), done.text
    assert target.read_text() == "changed = True\n" + text


@pytest.mark.parametrize("name", list(TOOL_NAMES))
def test_a_refusal_names_the_editors_command_not_corrals_tool(tmp_path: Path, make_root,
                                                              name: str) -> None:
    call, code, word = TOOL_NAMES[name]
    (tmp_path / "bin.dat").write_bytes(b"\0\1\2a")
    (tmp_path / "big.txt").write_text("x\n" * (5 << 20))
    (tmp_path / "f.py").write_text(TEXT)
    os.symlink("f.py", tmp_path / "link")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if not p.is_symlink()}
    done = run_text_editor(Toolbox(make_root(str(tmp_path))), call)
    assert done.is_error is True, done.text
    assert done.text.startswith(f"{code}: "), done.text
    assert not NOT_THE_EDITORS.search(done.text), done.text
    assert word in done.text, done.text
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if not p.is_symlink()} == before
    assert os.readlink(tmp_path / "link") == "f.py"
