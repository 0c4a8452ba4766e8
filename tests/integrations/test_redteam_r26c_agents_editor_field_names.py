"""An independent red-team pass (round twenty-six, third team) over what
the OpenAI Agents SDK's ``apply_patch`` editor
(:class:`corral.integrations.openai_agents.CorralEditor`) tells its model
when an operation's own field is at fault.  That model sends ``path``,
``move_to`` and ``diff``; the editor runs corral's ``apply_patch``, whose
one argument is ``input``, and its refusals reached the model in those
words: an absolute ``path`` or ``move_to``, one naming corral's temporary
file form, or a NUL byte in ``path`` or in ``diff`` was "argument 'input'
is an absolute path outside the root" / "Remove the NUL character from
'input'", a field the model does not have (it would send one and see it
ignored), and so was a lone surrogate in either or a diff over
the size limit; a symlink or a directory was refused naming ``apply_patch``, a
tool the model was not given.  Each refusal must name the field at fault
and the operation, never ``input`` nor ``apply_patch``, with nothing
changed.  On every backend config.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from agents.editor import ApplyPatchOperation

from corral.integrations.openai_agents import CorralEditor
from corral.tools import Toolbox

TEMPORARY = ".x.0123456789ab.corral-tmp"  # corral's temporary file form
CASES = {
    "an_absolute_path": (
        ApplyPatchOperation(type="create_file", path="/new.txt", diff="+x\n"), "path"),
    "an_absolute_move_to": (
        ApplyPatchOperation(type="update_file", path="a.txt", diff="@@\n-one\n+ONE\n",
                            move_to="/moved.txt"), "move_to"),
    "a_temporary_name_as_path": (
        ApplyPatchOperation(type="create_file", path=TEMPORARY, diff="+x\n"), "path"),
    "a_temporary_name_as_move_to": (
        ApplyPatchOperation(type="update_file", path="a.txt", diff="@@\n-one\n+ONE\n",
                            move_to=f"sub/{TEMPORARY}"), "move_to"),
    "a_nul_in_the_path": (
        ApplyPatchOperation(type="create_file", path="n\x00.txt", diff="+x\n"), "path"),
    "a_nul_in_a_new_file's_diff": (
        ApplyPatchOperation(type="create_file", path="new.txt", diff="+x\x00y\n"), "diff"),
    "a_nul_in_an_update's_diff": (
        ApplyPatchOperation(type="update_file", path="a.txt", diff="@@\n-one\n+O\x00NE\n"),
        "diff"),
    "a_lone_surrogate_in_the_diff": (
        ApplyPatchOperation(type="create_file", path="new.txt", diff="+x\ud800\n"), "diff"),
    "a_lone_surrogate_in_move_to": (
        ApplyPatchOperation(type="update_file", path="a.txt", diff="@@\n-one\n+ONE\n",
                            move_to="m\ud800.txt"), "move_to"),
    "a_diff_over_the_size_limit": (
        ApplyPatchOperation(type="create_file", path="new.txt", diff="+x\n" * (6 << 20)),
        "diff"),
    "an_update_of_a_symlink": (
        ApplyPatchOperation(type="update_file", path="link", diff="@@\n-one\n+ONE\n"),
        "update_file"),
    "a_delete_of_a_symlink": (
        ApplyPatchOperation(type="delete_file", path="link"), "delete_file"),
    "an_update_of_a_directory": (
        ApplyPatchOperation(type="update_file", path="sub", diff="@@\n-one\n+ONE\n"),
        "update_file"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_refusal_names_the_operations_field_at_fault(tmp_path: Path, make_root,
                                                       name: str) -> None:
    operation, word = CASES[name]
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "sub").mkdir()
    os.symlink("a.txt", tmp_path / "link")
    editor = CorralEditor(Toolbox(make_root(str(tmp_path)), editing="apply_patch"))
    result: Any = asyncio.run(getattr(editor, operation.type)(operation))
    assert result.status == "failed", result.output
    assert "input" not in result.output and "apply_patch" not in result.output, result.output
    assert word in result.output, result.output
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\n"
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "link", "sub"]
    assert os.listdir(tmp_path / "sub") == []
