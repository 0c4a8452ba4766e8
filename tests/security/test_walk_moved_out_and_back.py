"""A directory moved out of the root and back while the walk is inside it.

The userspace walk (every open on a config without openat2, and the
fallback of one that has it when the fast path fails) holds an fd per
directory, so a rename cannot take it along through ``..``.  But it can be
carried out: while ``Root.open("a/q/.../q/f")`` walks, an attacker renames
``a`` out of the root, puts an outside directory in place of the deepest
``q``, puts it back and renames ``a`` in again.  A walk that entered the
outside directory meanwhile would open a file that was never inside the
root.  The result must be refused (or the genuine file), never the outside
one: on every backend config, through a plain spelling and through an
in-root link ``l -> a`` (which sends openat2 configs to the walk too),
with each check the result may meet (``check``).

``OPENS`` opens per spelling (2,000 by default, a few seconds a config);
``CORRAL_RACE_ITERATIONS`` scales it (the soak profile runs more).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from corral.contained import default_backend

OPENS = max(2000, int(os.environ.get("CORRAL_RACE_ITERATIONS", "0") or 0) // 5)
DEPTH = 400  # directories below "a": the walk spends a while in there
INSIDE = b"inside"
OUTSIDE = b"OUTSIDE"

# The attacker: a loop of renames that leaves every name where it was
# between rounds.  argv: root, out, the deep directory relative to "a".
_ATTACK = r"""
import os, sys
root, out, deep = sys.argv[1:4]
ra, oa = os.path.join(root, "a"), os.path.join(out, "a")
ob, held, s = os.path.join(oa, deep), os.path.join(out, "held"), os.path.join(out, "s")
print("ready", flush=True)
while True:
    os.rename(ra, oa)
    os.rename(ob, held)
    os.rename(s, ob)
    for _ in range(200):
        pass
    os.rename(ob, s)
    os.rename(held, ob)
    os.rename(oa, ra)
    for _ in range(1000):
        pass
"""


def _tree(base: str) -> tuple[str, str, str]:
    root, out = os.path.join(base, "root"), os.path.join(base, "out")
    deep = "/".join(["q"] * DEPTH)
    os.makedirs(os.path.join(root, "a", deep))
    os.makedirs(os.path.join(out, "s"))
    with open(os.path.join(root, "a", deep, "f"), "wb") as fh:
        fh.write(INSIDE)
    with open(os.path.join(out, "s", "f"), "wb") as fh:
        fh.write(OUTSIDE)
    os.symlink("a", os.path.join(root, "l"))
    return root, out, deep


# the openat2 re-resolution is a check only where the backends have openat2
# (not with CORRAL_OPENAT2=0, nor on a kernel without it: there, with procfs
# gone, the walk's own guarantee is what is left, still_beneath's last case)
_CHECKS = ["names", "openat2"] if default_backend().has_openat2 and sys.platform.startswith(
    "linux") else ["names"]


@pytest.fixture(params=_CHECKS)
def check(request, monkeypatch):
    """Which check the walk's result meets: the kernel's names (procfs,
    F_GETPATH), or on Linux, as where /proc is no procfs, openat2
    re-resolving the canonical path."""
    if request.param == "openat2":
        from corral.contained import _linux
        monkeypatch.setattr(_linux, "_proc_is_procfs", [False])
    return request.param


@contextlib.contextmanager
def attacking(root_dir: str, out: str, deep: str) -> Iterator[None]:
    """:data:`_ATTACK`'s dance, in another process, for the block's length;
    an attacker that stopped early tested nothing and fails the test."""
    attacker = subprocess.Popen([sys.executable, "-c", _ATTACK, root_dir, out, deep],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert attacker.stdout is not None and attacker.stdout.readline() == b"ready\n"
        yield
        crashed = attacker.poll()
    finally:
        if attacker.poll() is None:
            attacker.kill()
        attacker.wait()
    assert crashed is None, attacker.stderr.read() if attacker.stderr else crashed


@pytest.mark.parametrize("top", ["a", "l"])
def test_open_never_returns_a_file_from_a_directory_moved_out_and_back(make_root, tmp_path, top,
                                                                       check):
    root_dir, out, deep = _tree(str(tmp_path))
    root = make_root(root_dir)
    seen: dict[str, int] = {}
    with attacking(root_dir, out, deep):
        for _ in range(OPENS):
            try:
                fd = root.open(f"{top}/{deep}/f")
            except OSError as exc:  # moved away right now: refused, typed
                key = type(exc).__name__
            else:
                try:
                    key = os.read(fd, 16).decode()
                finally:
                    os.close(fd)
            seen[key] = seen.get(key, 0) + 1
    assert OUTSIDE.decode() not in seen, seen


def test_a_file_replaced_while_the_walk_opens_it_is_the_old_or_the_new(make_root, tmp_path,
                                                                         check):
    """A writer's atomic replace racing the walk is no escape: the result
    is refused only after a few tries, and what opens is one of the two."""
    root_dir = tmp_path / "root"
    (root_dir / "d").mkdir(parents=True)
    (root_dir / "d" / "f").write_bytes(b"old")
    (root_dir / "d" / "g").write_bytes(b"new")
    replacer = subprocess.Popen([sys.executable, "-c", _REPLACE, str(root_dir / "d")],
                                stdout=subprocess.PIPE)
    root = make_root(str(root_dir))
    seen: dict[str, int] = {}
    opened = tries = 0
    # the opens go on until enough of them opened: a replacer descheduled
    # between its two renames leaves no "f" for as long as it waits, which
    # on a loaded machine can be the whole of a fixed number of opens (a
    # hang detector bounds the loop, not a measure)
    deadline = time.monotonic() + 120
    try:
        assert replacer.stdout is not None and replacer.stdout.readline() == b"ready\n"
        while tries < OPENS // 4 or (opened < OPENS // 32 and time.monotonic() < deadline):
            tries += 1
            try:
                fd = root.open("d/f")
            except OSError as exc:
                key = type(exc).__name__
            else:
                try:
                    key = os.read(fd, 16).decode()
                finally:
                    os.close(fd)
                opened += 1
            seen[key] = seen.get(key, 0) + 1
    finally:
        replacer.kill()
        replacer.wait()
    assert set(seen) <= {"old", "new", "FileNotFoundError", "EscapeError"}, seen
    assert opened >= OPENS // 32, seen  # most attempts that find the name open it


# swaps d/f and d/g by renames through a third name, over and over
_REPLACE = r"""
import os, sys
d = sys.argv[1]
f, g, t = (os.path.join(d, n) for n in ("f", "g", "t"))
print("ready", flush=True)
while True:
    os.rename(f, t)
    os.rename(g, f)
    os.rename(t, g)
"""
