"""An independent red-team pass over THREATS' faults paragraph ("``EACCES``
is a typed refusal"), swept over every method of the backend a tool call
reaches: each tool (the reads, the listings, the searches, every change,
a patch of one and of several sections) run with ``EACCES`` injected at
each invocation of one backend method in turn
(``corral.testing``'s ``FaultBackend``; these machines run as root, so a
refusal is only ever met this way).  A security module (SELinux's
``getattr``, AppArmor) refuses ``fstat`` as it refuses an open: the
look at the root before a call makes directories (a refused look was
taken as the root removed: ``INTERNAL``, "a bug in corral") and the
identity of each directory a call makes (the refusal escaped untyped:
``INTERNAL``, and the directory made stayed) answered ``INTERNAL``.

Each answer must be a typed refusal or a success, never ``INTERNAL``;
name no host path and no secret's content; and a refusal (but a patch's,
which says which sections landed) leaves the tree as it was.  ``close``
is left out: the kernel never answers ``close`` with ``EACCES`` or
``EPERM``.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

from ..helpers import EVERY_TOOL_CALL

SECTIONS = ("*** Begin Patch\n*** Add File: n/new.txt\n+hi\n*** Update File: d/a.txt\n"
            "*** Move to: e/a.txt\n@@\n-alpha\n+beta\n*** Delete File: d/b.txt\n*** End Patch")
CALLS = [*EVERY_TOOL_CALL, ("apply_patch", {"input": SECTIONS})]
IDS = [f"{n}-{tool}" for n, (tool, _) in enumerate(CALLS)]
METHODS = ("open_at", "lstat_at", "readlink_at", "mkdir_at", "create_directory_at",
           "unlink_at", "rmdir_at", "rename_at", "link_at", "symlink_at", "fstat", "scandir",
           "read", "pread", "write", "fsync", "flock", "fchmod", "fchown", "flistxattr",
           "fgetxattr", "fsetxattr", "mount_flags", "filesystem_type", "watch_add",
           "watch_remove", "watch_waiting", "watch_limit")
FIRST, LAST = 8, 3  # the invocations of a method tried: the first ones and the last ones
SECRET = "hunter2-q7"


def _tree(base: Path) -> Path:
    (base / "d" / "sub").mkdir(parents=True)
    (base / "d" / "a.txt").write_text("alpha\n")
    (base / "d" / "b.txt").write_text("bravo\n")
    (base / "d" / "sub" / "c.txt").write_text("alpha c\n")
    (base / ".git" / "hooks").mkdir(parents=True)
    (base / ".env").write_text(f"TOKEN={SECRET}\n")
    return base


def _snapshot(base: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(base)): None if p.is_dir() else p.read_bytes()
            for p in sorted(base.rglob("*"))}


def _run(make_root, base: Path, method: str, hook) -> dict:
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(str(base), backend=backend, fast_path=make_root.fast_path)
    try:
        box = Toolbox(root)
        assert box.call("read_file", {"path": "d/b.txt"})["ok"] is True  # the look at open done
        backend.add(Fault(method, None, times=-1, hook=hook))
        return box.call(CALLS_BY_ID[hook.call_id][0], CALLS_BY_ID[hook.call_id][1])
    finally:
        root.close()


CALLS_BY_ID = dict(zip(IDS, CALLS))


class _Counter:
    def __init__(self, call_id: str) -> None:
        self.call_id, self.seen = call_id, 0

    def __call__(self) -> None:
        self.seen += 1


class _FailAt(_Counter):
    def __init__(self, call_id: str, nth: int, err: int) -> None:
        super().__init__(call_id)
        self.nth, self.err = nth, err

    def __call__(self) -> None:
        self.seen += 1
        if self.seen == self.nth + 1:
            raise OSError(self.err, os.strerror(self.err))


def _refusal_of(answer: dict) -> dict:
    """The refusal to look at (read_files: each file's own answer)."""
    if answer.get("ok") is True and "files" in answer:
        refused = [one for one in answer["files"] if one.get("ok") is False]
        return refused[0] if refused else answer
    return answer


@pytest.mark.parametrize("call_id", IDS)
def test_a_refusal_at_each_backend_method_is_typed(tmp_path, make_root, call_id):
    """``EACCES`` at each invocation of each method in turn (``EPERM``
    answers the same: both are ``_permission``'s)."""
    tried = 0
    for method in METHODS:
        counter = _Counter(call_id)
        counted = _run(make_root, _tree(tmp_path / f"count-{method}"), method, counter)
        assert counted["ok"] is True, counted
        total = counter.seen
        for nth in sorted(set(range(min(total, FIRST))) | set(range(max(0, total - LAST), total))):
            base = _tree(tmp_path / f"{method}-{nth}")
            before = _snapshot(base)
            answer = _run(make_root, base, method, _FailAt(call_id, nth, errno.EACCES))
            tried += 1
            said = json.dumps(answer)
            refusal = _refusal_of(answer)
            where = (method, nth, total, answer)
            assert refusal.get("code") != "INTERNAL", where
            assert str(base) not in said and os.path.realpath(base) not in said, where
            assert SECRET not in said, where
            if refusal["ok"] is False and not call_id.endswith("apply_patch"):
                assert _snapshot(base) == before, where
    assert tried > 0
