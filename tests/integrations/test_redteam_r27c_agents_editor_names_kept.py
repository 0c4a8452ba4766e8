"""An independent red-team pass (round twenty-seven, third team) over the
names the OpenAI Agents SDK's ``apply_patch`` editor
(:class:`corral.integrations.openai_agents.CorralEditor`) says in a
refusal.  Row 73 put corral's ``apply_patch`` words in the operation's
(``apply_patch`` -> the operation, ``'input'`` -> the field at fault) by
rewriting the whole text, names of files included: a refused update of
``tools/apply_patch.py`` (a name this very project has) answered about
``tools/update_file.py``, a create of it "tools/create_file.py already
exists ... Change tools/create_file.py with update_file", a missing file
"tools/update_file.py exists" as the name to use instead, and a file named
``'input'.py`` became ``'diff'.py``: names that are not on the disk, so
the model's next call misses.  Every name in a refusal stays as it is on
the disk; only the tool's own words are rewritten.  On every backend
config.
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

CASES = {  # the operation, a name on the disk the refusal must say as it is
    "an_update_that_does_not_match": (
        ApplyPatchOperation(type="update_file", path="tools/apply_patch.py",
                            diff="@@\n-y = 1\n+y = 2\n"), "tools/apply_patch.py"),
    "a_create_of_a_file_that_exists": (
        ApplyPatchOperation(type="create_file", path="tools/apply_patch.py", diff="+z\n"),
        "tools/apply_patch.py"),
    "a_misspelt_name_beside_it": (
        ApplyPatchOperation(type="update_file", path="tools/apply_patchx.py",
                            diff="@@\n-y = 1\n+y = 2\n"), "tools/apply_patch.py"),
    "a_file_named_input": (
        ApplyPatchOperation(type="update_file", path="tools/'input'.py",
                            diff="@@\n-y = 1\n+y = 2\n"), "tools/'input'.py"),
    "a_bare_name_apply_patch": (
        ApplyPatchOperation(type="create_file", path="apply_patch", diff="+z\n"), "apply_patch"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_refusal_says_every_name_as_it_is_on_the_disk(tmp_path: Path, make_root,
                                                        name: str) -> None:
    operation, kept = CASES[name]
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "apply_patch.py").write_text("x = 1\n")
    (tmp_path / "tools" / "'input'.py").write_text("x = 1\n")
    (tmp_path / "apply_patch").write_text("x = 1\n")
    editor = CorralEditor(Toolbox(make_root(str(tmp_path)), editing="apply_patch"))
    result: Any = asyncio.run(getattr(editor, operation.type)(operation))
    assert result.status == "failed", result.output
    assert kept in result.output, result.output
    for invented in ("update_file.py", "create_file.py", "'diff'", "'path'.py"):
        assert invented not in result.output, result.output
    assert sorted(os.listdir(tmp_path / "tools")) == ["'input'.py", "apply_patch.py"]
    assert (tmp_path / "tools" / "apply_patch.py").read_text() == "x = 1\n"
