"""An independent red-team pass (round twenty-seven, third team) over what
the tools say of a file's path sent with a trailing ``/`` (``f.txt/``, a
model's slip, or ``new/`` for a file to make).  edit_file, read_file and
apply_patch's ``Update File: f.txt/`` answered "f.txt/ is not a directory"
with the hint "Pass a directory here." (the tool takes a file: the advice
leads nowhere), apply_patch's ``Add File: new/`` "new is a directory" where
nothing is, and its ``Move to: new/`` "new/ is not a directory. Pass a
directory here.".  The answer says what is true (the path ends with ``/``,
which names a directory) and what to send (the path without it), as
delete_file's and move_file's always did; nothing changed.  On every
backend config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox


def _patch(body: str) -> dict[str, str]:
    return {"input": f"*** Begin Patch\n{body}*** End Patch"}


CALLS = {
    "edit_file": ("edit_file", {"path": "f.txt/", "oldText": "x", "newText": "y"}, "f.txt"),
    "read_file": ("read_file", {"path": "f.txt/"}, "f.txt"),
    "patch_update": ("apply_patch", _patch("*** Update File: f.txt/\n@@\n-x\n+y\n"), "f.txt"),
    "patch_add": ("apply_patch", _patch("*** Add File: new/\n+x\n"), "new"),
    "patch_move_to": ("apply_patch", _patch("*** Update File: f.txt\n*** Move to: new/\n@@\n"
                                            "-x\n+y\n"), "new"),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_trailing_slash_on_a_files_path_is_said_as_it_is(
        tmp_path: Path, make_root: Callable[..., Any], name: str) -> None:
    tool, args, meant = CALLS[name]
    (tmp_path / "f.txt").write_text("x\n")
    answer = Toolbox(make_root(str(tmp_path))).call(tool, args)
    assert answer["ok"] is False, answer
    said = f"{answer['message']}\n{answer.get('hint')}"
    assert "ends with '/'" in answer["message"], said
    assert f'"{meant}" without the trailing' in str(answer.get("hint")), said
    assert "Pass a directory here" not in said
    assert f"{meant} is a directory" not in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]
    assert (tmp_path / "f.txt").read_text() == "x\n"
