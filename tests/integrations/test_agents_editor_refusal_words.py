"""Tried as a hostile model would: what
the OpenAI Agents SDK's ``apply_patch`` editor
(:class:`corral.integrations.openai_agents.CorralEditor`) tells the model
when it refuses an operation.  That model sends operations
(``create_file``, ``update_file`` with ``move_to``, ``delete_file``), never
the patch envelope, but the refusals spoke the envelope's words: a
``create_file`` of a file that exists was told to "Change a.txt with
'*** Update File: a.txt'", an ``update_file`` whose ``move_to`` names the
file itself to "Drop the '*** Move to:' line".  Now each failed result
names the operations and fields the model has (``update_file``,
``move_to``), never an envelope line; the code is kept, nothing changed.
On every backend config.
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

CASES = {
    "create_file_of_a_file_that_exists": (
        ApplyPatchOperation(type="create_file", path="a.txt", diff="+x\n"),
        "ALREADY_EXISTS", "update_file"),
    "move_to_the_file_itself": (
        ApplyPatchOperation(type="update_file", path="a.txt", diff="@@\n-one\n+ONE\n",
                            move_to="./a.txt"),
        "INVALID_ARGUMENT", "move_to"),
    "move_to_the_file_through_a_link": (
        ApplyPatchOperation(type="update_file", path="a.txt", diff="@@\n-one\n+ONE\n",
                            move_to="here/a.txt"),
        "INVALID_ARGUMENT", "move_to"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_failed_operation_speaks_the_operations_words(tmp_path: Path, make_root,
                                                        name: str) -> None:
    operation, code, word = CASES[name]
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    os.symlink(".", tmp_path / "here")
    editor = CorralEditor(Toolbox(make_root(str(tmp_path)), editing="apply_patch"))
    result: Any = asyncio.run(getattr(editor, operation.type)(operation))
    assert result.status == "failed", result.output
    assert result.output.startswith(f"{code}: "), result.output
    assert "***" not in result.output and "section" not in result.output, result.output
    assert word in result.output, result.output
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\n"
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "here"]
