"""An independent red-team pass over the tree lock a process keeps between
its steps: the lock file lives in a directory of the user's own, where
another program of the user may shorten it or fill it with bytes of its
own.  A busy process keeps the shared lock from step to step and lets it
go when the file says a process waits to hold it exclusively; whatever the
file held before, a waiter's want must still reach the holder, or another
process's move (an exclusive take) waits out its deadline behind a holder
that never hears of it.

The holder here never lets go for being idle (``keep_idle_for``), so only
the want the waiter writes into the file can make it let go: the test does
not depend on how fast either process runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corral.tools import Toolbox
from corral.tools._runtime.view import tree_lock

SRC = str(Path(__file__).resolve().parents[2] / "src")

_MOVER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
path, backend, fast = sys.argv[1:4]
root = Root(path, backend=backend_by_name(backend), fast_path=fast == "1")
answer = Toolbox(root).call("move_file", {"source": "a.txt", "destination": "b.txt"},
                            timeout=10.0)
print(json.dumps(answer))
"""


def _lock_file_of(path: Path) -> str:
    directory = tree_lock._lock_directory()
    assert directory is not None
    info = os.stat(path)
    return os.path.join(directory, f"{info.st_dev:x}-{info.st_ino:x}.lock")


@pytest.mark.parametrize("damage", ["shortened", "emptied", "counts-at-their-end",
                                    "emptied-while-waited-for"])
def test_a_waiter_is_heard_whatever_another_program_left_in_the_lock_file(
        tmp_path, make_root, damage):
    (tmp_path / "a.txt").write_text("moved\n")
    before = tree_lock.keep_idle_for(3600.0)
    mover = None
    try:
        box = Toolbox(make_root(tmp_path))
        first = box.call("write_file", {"path": "busy.txt", "content": "0\n", "overwrite": True})
        assert first["ok"], first
        lock_file = _lock_file_of(tmp_path)
        with open(lock_file, "r+b") as file:  # another program of the user
            if damage == "emptied-while-waited-for":
                pass  # below, once the mover said it waits
            elif damage == "shortened":
                file.truncate(8)
            elif damage == "emptied":
                file.truncate(0)
            else:  # as many wants said as served, at the counts' largest value
                file.seek(8)
                file.write(b"\xff" * 16)
        env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
        mover = subprocess.Popen([sys.executable, "-c", _MOVER, str(tmp_path),
                                  make_root.backend_name, "1" if make_root.fast_path else "0"],
                                 stdout=subprocess.PIPE, text=True, env=env)
        if damage == "emptied-while-waited-for":
            said = time.monotonic() + 60
            while time.monotonic() < said and mover.poll() is None:
                with open(lock_file, "rb") as file:
                    counts = file.read()
                if len(counts) == 24 and counts[8:16] != counts[16:24]:
                    break  # the mover waits, its want said
                time.sleep(0.01)
            else:
                raise AssertionError("the mover never said it waits")
            os.truncate(lock_file, 0)  # another program empties the file meanwhile
        steps = 0
        give_up = time.monotonic() + 60
        while mover.poll() is None and time.monotonic() < give_up:
            steps += 1  # this process stays busy: a step at a time, each reading the file
            answer = box.call("write_file", {"path": "busy.txt", "content": f"{steps}\n",
                                             "overwrite": True})
            assert answer["ok"], answer
        out, _ = mover.communicate(timeout=30)
        moved = json.loads(out)
        assert moved["ok"], moved
        assert (tmp_path / "b.txt").read_text() == "moved\n"
        assert not (tmp_path / "a.txt").exists()
    finally:
        tree_lock.keep_idle_for(before)
        if mover is not None and mover.poll() is None:
            mover.kill()
            mover.wait()
