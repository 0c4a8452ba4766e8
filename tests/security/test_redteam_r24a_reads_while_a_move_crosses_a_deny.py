"""An independent red-team pass (round twenty-four, first team; held, kept
for the shapes): every read tool (``read_file``, ``read_files``, ``grep``
of a file and of a folder, ``glob``, ``list_directory``, ``file_info``)
paused right after its first look at ``pub/d`` (or the file in it), while
the model's own ``move_file`` of that folder into the denied ``vault``
(or of ``vault/d``, the denied folder, out to ``pub``) runs: a read that
looks at one entry holds no lock, so the move is decided while the read
is under way; a walk (glob, grep of a folder) holds the tree lock shared,
so a move that would act waits for the walk to end (THREATS row 62).

What must hold: the move is refused either way (``DENIED``: nothing enters
or leaves a denied folder, so no read that started on a visible folder can
end inside a denied one, and a denied one never becomes visible), the read
answers what the visible folder held, and no answer names or shows what
the denied one holds (its file's name, its text), on every backend config.
It would catch a move into or out of a denied folder allowed while a read
holds the folder (the read would then show a folder that is denied now:
the host's next file there, as another program's move shows;
docs/policy.md says so of reads under way).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.contained import Backend, Root, backend_by_name
from corral.testing.backends import FaultBackend
from corral.tools import Toolbox

HIDDEN_NAME = "payroll-2026.csv"
HIDDEN_TEXT = "salary=9137"


class PausedAfterFirstLook(FaultBackend):
    """``inner``, running ``during`` once right after the first call that
    succeeds on an entry named ``name``, once armed."""

    def __init__(self, inner: Backend, name: str, during: Callable[[], None]) -> None:
        super().__init__(inner)
        self._name = name
        self._during = during
        self.armed = False
        self.ran = False

    def _looked(self, name: str) -> None:
        if self.armed and not self.ran and name.rstrip("/").rsplit("/", 1)[-1] == self._name:
            self.ran = True
            self._during()

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        fd = super().open_at(dir_fd, name, flags, mode)
        self._looked(name)
        return fd

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        fd = super().openat2(dir_fd, path, flags, mode, resolve)
        self._looked(path)
        return fd

    def lstat_at(self, dir_fd: int, name: str) -> os.stat_result:
        info = super().lstat_at(dir_fd, name)
        self._looked(name)
        return info


READS: list[tuple[str, dict[str, Any], str]] = [
    ("read_file", {"path": "pub/d/f.txt"}, "f.txt"),
    ("read_files", {"paths": ["pub/d/f.txt"]}, "f.txt"),
    ("grep", {"pattern": "plain|salary", "path": "pub/d/f.txt"}, "f.txt"),
    ("grep", {"pattern": "plain|salary", "path": "pub"}, "d"),
    ("glob", {"pattern": "**/*", "path": "pub"}, "d"),
    ("list_directory", {"path": "pub/d"}, "d"),
    ("file_info", {"path": "pub/d"}, "d"),
]

# the reads that walk a folder (glob, grep of a folder): they hold the tree
# lock while they walk
WALKS = {("grep", "pub"), ("glob", "pub")}

MOVES = {"visible_into_denied": {"source": "pub/d", "destination": "vault/d"},
         "denied_out_to_visible": {"source": "vault/d", "destination": "pub/e"}}


@pytest.mark.parametrize("move", list(MOVES))
@pytest.mark.parametrize("tool, args, first", READS,
                         ids=[f"{tool}-{args.get('path', 'files')}" for tool, args, _ in READS])
def test_a_read_under_way_and_a_move_across_the_deny(tmp_path, make_root, move, tool, args,
                                                     first):
    (tmp_path / "pub" / "d").mkdir(parents=True)
    (tmp_path / "pub" / "d" / "f.txt").write_text("plain words\n")
    (tmp_path / "vault" / "d").mkdir(parents=True)
    (tmp_path / "vault" / "d" / HIDDEN_NAME).write_text(HIDDEN_TEXT + "\n")
    moved: dict[str, Any] = {}
    holder: dict[str, Toolbox] = {}
    workers: list[threading.Thread] = []

    def the_move() -> None:
        # the model's own call of the same turn, on another thread
        worker = threading.Thread(
            target=lambda: moved.update(holder["box"].call("move_file", MOVES[move])))
        worker.start()
        workers.append(worker)
        if (tool, args.get("path")) not in WALKS:
            worker.join(20)
        # a walk holds the tree lock shared (THREATS row 62): a move that
        # would act waits for it to end, joined below

    backend = PausedAfterFirstLook(backend_by_name(make_root.backend_name), first, the_move)
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    try:
        with Toolbox(root, deny=["vault/**"]) as box:
            holder["box"] = box
            backend.armed = True
            answer = box.call(tool, args)
            for worker in workers:  # before the toolbox closes
                worker.join(20)
    finally:
        root.close()
    assert backend.ran and moved, "the move never ran"
    assert moved["ok"] is False and moved["code"] == "DENIED", moved
    assert (tmp_path / "pub" / "d" / "f.txt").exists() and \
        (tmp_path / "vault" / "d" / HIDDEN_NAME).exists()
    text = json.dumps(answer)
    assert HIDDEN_NAME not in text and HIDDEN_TEXT not in text, answer
    assert answer["ok"] is True, answer
    if tool in ("read_file", "grep", "glob", "read_files"):
        assert "plain words" in text or "f.txt" in text, answer
