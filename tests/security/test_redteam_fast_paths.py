"""An independent red-team pass over the hot path's shortcuts (the
decision's skipped link weighing, edit_file's quick path, the step written
out as a context manager, the parents an act made removed on its failure,
the schema check on the fields sent), tried as a hostile model would,
with another process changing the tree between the calls' steps.

Every test asserts the secure behaviour on every backend config.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox


# -- the parents a failed write made are removed: only they, never one moved in ----------------


@pytest.mark.parametrize("tool,args,method,name", [
    ("write_file", {"path": "x/y/f.txt", "content": "data\n"}, "write", "f.txt"),
    ("make_directory", {"path": "x/y/f.txt"}, "mkdir_at", "f.txt"),
    ("move_file", {"source": "a.txt", "destination": "x/y/f.txt"}, "rename_at", "a.txt"),
], ids=["write_file", "make_directory", "move_file"])
def test_a_failed_writes_parents_removal_spares_a_folder_moved_into_their_place(
        tmp_path: Path, make_root, tool: str, args: dict, method: str, name: str) -> None:
    """write_file x/y/f.txt makes x and x/y; its write fails (a full disk),
    and before the directories it made are removed, another process moves
    the user's own (empty) folder ``keep`` to x/y.  The removal took x/y
    by name and removed ``keep``: a folder the call never made, lost."""
    (tmp_path / "keep").mkdir()
    (tmp_path / "a.txt").write_text("a\n")

    def move_keep_in() -> None:
        os.rename(tmp_path / "x" / "y", tmp_path / "made-y")
        os.rename(tmp_path / "keep", tmp_path / "x" / "y")

    full = Fault(method, errno.ENOSPC, name=name, hook=move_keep_in)
    backend = FaultBackend(backend_by_name(make_root.backend_name), full)
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    try:
        answer = Toolbox(root).call(tool, args)
    finally:
        root.close()
    assert full.fired == 1, backend.fired
    assert answer["ok"] is False, answer
    assert (tmp_path / "x" / "y").is_dir(), sorted(p.name for p in tmp_path.rglob("*"))
    assert not (tmp_path / "x" / "y" / "f.txt").exists()
