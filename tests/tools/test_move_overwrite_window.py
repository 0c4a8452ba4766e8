"""move_file with ``overwrite: true`` replaces only the file that was at the
destination when the move was decided.  Another program's file put there
after the last look at the destination and before the rename (a
deterministic hook: the fault-injecting backend runs it just before the
rename's system call) is never replaced: the move swaps the two names
(``RENAME_EXCHANGE``, Darwin's ``RENAME_SWAP``), looks at what came back,
and swaps them back and answers ``STALE`` when it is not the file decided
on.  Where the filesystem cannot swap (``EINVAL``, injected here), the
move falls back to a plain rename after one more look, which sees a file
put there before it.  On every backend config."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

MOVE = {"source": "src/moved.txt", "destination": "dst/taken.txt", "overwrite": True}


def _tree(base: Path) -> Path:
    (base / "src").mkdir(parents=True)
    (base / "dst").mkdir()
    (base / "src" / "moved.txt").write_text("moved\n")
    (base / "dst" / "taken.txt").write_text("decided on\n")
    return base


def _put_other(base: Path) -> Callable[[], None]:
    """Another program replacing the destination by its own file, the way
    editors save: a file written beside it, renamed onto its name."""
    def put() -> None:
        beside = base / "dst" / ".other.tmp"
        beside.write_text("another program's\n")
        os.rename(beside, base / "dst" / "taken.txt")
    return put


def _box(make_root: Callable[..., Any], base: Path, *faults: Fault) -> tuple[Toolbox, Root]:
    backend = FaultBackend(backend_by_name(make_root.backend_name), *faults)
    root = Root(str(base), backend=backend, fast_path=make_root.fast_path)
    return Toolbox(root), root


def test_a_file_put_in_the_window_is_never_replaced(make_root: Callable[..., Any],
                                                   tmp_path: Path) -> None:
    base = _tree(tmp_path / "root")
    window = Fault("rename_at", None, name="taken.txt", hook=_put_other(base))
    box, root = _box(make_root, base, window)
    try:
        answer = box.call("move_file", MOVE)
    finally:
        box.close()
        root.close()
    assert window.fired == 1
    assert answer["ok"] is False and answer["code"] == "STALE", answer
    assert answer["details"]["kind"] == "swapped", answer
    # the other program's file is where it put it, the source where it was
    assert (base / "dst" / "taken.txt").read_text() == "another program's\n"
    assert (base / "src" / "moved.txt").read_text() == "moved\n"
    assert sorted(os.listdir(base / "src")) == ["moved.txt"]
    assert sorted(os.listdir(base / "dst")) == ["taken.txt"]


def test_the_file_decided_on_is_replaced(make_root: Callable[..., Any], tmp_path: Path) -> None:
    base = _tree(tmp_path / "root")
    box, root = _box(make_root, base)
    try:
        answer = box.call("move_file", MOVE)
        again = box.call("read_file", {"path": "dst/taken.txt"})
    finally:
        box.close()
        root.close()
    assert answer["ok"] is True and answer["overwritten"] is True, answer
    assert (base / "dst" / "taken.txt").read_text() == "moved\n"
    assert os.listdir(base / "src") == []  # the replaced file is gone, nothing left beside
    assert again["ok"] and again["content"].endswith("moved"), again


def test_without_exchange_the_move_falls_back_to_a_checked_rename(
        make_root: Callable[..., Any], tmp_path: Path) -> None:
    base = _tree(tmp_path / "root")
    unsupported = Fault("rename_at", errno.EINVAL, name="taken.txt")
    box, root = _box(make_root, base, unsupported)
    try:
        answer = box.call("move_file", MOVE)
    finally:
        box.close()
        root.close()
    assert unsupported.fired == 1
    assert answer["ok"] is True and answer["overwritten"] is True, answer
    assert (base / "dst" / "taken.txt").read_text() == "moved\n"
    assert os.listdir(base / "src") == []


def test_the_fallback_looks_again_before_its_rename(make_root: Callable[..., Any],
                                                   tmp_path: Path) -> None:
    """The file put there as the swap was tried (and failed: no exchange
    here) is seen by the fallback's own look."""
    base = _tree(tmp_path / "root")
    unsupported = Fault("rename_at", errno.EINVAL, name="taken.txt", hook=_put_other(base))
    box, root = _box(make_root, base, unsupported)
    try:
        answer = box.call("move_file", MOVE)
    finally:
        box.close()
        root.close()
    assert unsupported.fired == 1
    assert answer["ok"] is False and answer["code"] == "STALE", answer
    assert (base / "dst" / "taken.txt").read_text() == "another program's\n"
    assert (base / "src" / "moved.txt").read_text() == "moved\n"
