"""Race harness: an attacker process renames directories while a root resolves.

Two scenarios (THREATS.md row 9), each in a fresh ``base`` directory:

* ``exchange``: ``ws/sw`` (a real directory) and ``ws/lnk`` (a symlink to
  ``base/outside``, which has the same layout with secret content) are
  swapped with ``renameat2(RENAME_EXCHANGE)`` in a loop, so ``sw`` is now a
  directory, now a link out.  Operations go through ``sw/...``.
* ``move_out``: ``ws/x`` (holding ``y/``) is renamed to ``base/xo`` (outside
  the root) and back in a loop.  Operations use ``x/y/../../...``: a
  resolver that hands ``..`` to the kernel while ``x`` is out climbs to
  ``base``, where another ``secret`` and the would-be created files are.

The attacker is a separate process (no GIL shared) doing nothing but the
renames.  :func:`run_scenario` runs each operation ``iterations`` times and
checks every result: content read is never the outside secret, no inode
returned is an outside one, what is created is created in the root, and the
only errors are the ones a race-free run could give at some instant.  At
the end the attacker restores the tree and nothing outside may differ from
the snapshot taken before.  Operations are data (:class:`RaceOp`): tool
operations can be added later.
"""

from __future__ import annotations

import collections
import errno
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from corral.testing import changes, snapshot

INSIDE = b"INSIDE"
SECRET = b"OUTSIDE-SECRET"

ATTACKER = r"""
import ctypes, select, sys
libc = ctypes.CDLL(None, use_errno=True)
mode, a, b = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
AT_FDCWD, RENAME_NOREPLACE, RENAME_EXCHANGE = -100, 1, 2
done = failed = 0
out = False  # move: whether a is now at b (outside the root)
print("ready", flush=True)
while True:
    stop = select.select([sys.stdin], [], [], 0)[0]
    if stop and not out:
        break
    for _ in range(1 if stop else 512):
        if mode == "exchange":
            ok = libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0
        elif not out:
            ok = out = libc.rename(a, b) == 0
        else:  # NOREPLACE: never clobber a directory the root made meanwhile
            ok = libc.renameat2(AT_FDCWD, b, AT_FDCWD, a, RENAME_NOREPLACE) == 0
            out = not ok
        done += ok
        failed += not ok
if mode == "exchange" and done % 2:  # leave the tree as it was
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
print(done, failed, flush=True)
"""


class Attacker:
    """The renaming process; ``stop()`` returns (renames done, failed)."""

    def __init__(self, mode: str, a: str, b: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", ATTACKER, mode, a, b],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"

    def stop(self) -> tuple[int, int]:
        out, _ = self.proc.communicate(input="stop\n", timeout=60)
        done, failed = (int(v) for v in out.split())
        return done, failed

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Layout:
    base: str
    root: str
    outside_idents: set = field(default_factory=set)


def make_exchange(base: str) -> Layout:
    root = os.path.join(base, "ws")
    outside = os.path.join(base, "outside")
    for top, content in ((os.path.join(root, "sw"), INSIDE), (outside, SECRET)):
        os.makedirs(os.path.join(top, "sub"))
        for name in ("f", "sub/f", "r_a"):
            with open(os.path.join(top, name), "wb") as fh:
                fh.write(content)
    os.symlink(outside, os.path.join(root, "lnk"))
    return Layout(base, root)


def make_move_out(base: str) -> Layout:
    root = os.path.join(base, "ws")
    os.makedirs(os.path.join(root, "x", "y"))
    for path, content in (("ws/secret", INSIDE), ("ws/r_a", INSIDE), ("ws/x/secret", INSIDE),
                          ("secret", SECRET)):
        with open(os.path.join(base, path), "wb") as fh:
            fh.write(content)
    return Layout(base, root)


@dataclass(frozen=True)
class RaceOp:
    """``run(root, layout, i, state)`` does iteration ``i`` and returns
    ``"ok"`` or raises; it asserts on anything that is an escape."""

    name: str
    run: Callable[[Any, Layout, int, dict], str]
    allowed: frozenset  # errno names a race-free run could also give


def _read(prefix: str) -> Callable:
    paths = [f"{prefix}f", f"{prefix}sub/../f", f"{prefix}sub/f"] if prefix == "sw/" else \
        ["x/y/../../secret", "x/y/../../x/y/../../secret"]

    def run(root, layout, i, state):
        fd = root.open(paths[i % len(paths)])
        try:
            info = os.fstat(fd)
            assert (info.st_dev, info.st_ino) not in layout.outside_idents, "ESCAPE: outside inode"
            data = os.read(fd, 100)
        finally:
            os.close(fd)
        assert data != SECRET, "ESCAPE: read the outside secret"
        assert data == INSIDE, f"read {data!r}"
        return "ok"
    return run


def _stat(path: str) -> Callable:
    def run(root, layout, i, state):
        info = root.stat(path)
        assert (info.st_dev, info.st_ino) not in layout.outside_idents, "ESCAPE: outside inode"
        return "ok"
    return run


def _in_root(layout: Layout, rel: str, ident: tuple[int, int] | None = None) -> None:
    """``rel`` (from the root) exists in the root, and is ``ident`` if given."""
    info = os.lstat(os.path.join(layout.root, rel))
    if ident is not None:
        assert (info.st_dev, info.st_ino) == ident, f"ESCAPE: {rel} is not what was made"


def _create(prefix: str, where: str) -> Callable:
    def run(root, layout, i, state):
        fd = root.open(f"{prefix}c{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        state.setdefault("created", []).append(i)
        if where == "root":  # move_out: "x/y/../../c" must land in the root
            _in_root(layout, f"c{i}", (info.st_dev, info.st_ino))
        return "ok"
    return run


def _mkdir(prefix: str, where: str) -> Callable:
    def run(root, layout, i, state):
        root.mkdir(f"{prefix}m{i}")
        if where == "root":
            _in_root(layout, f"m{i}")
        return "ok"
    return run


def _makedirs(prefix: str, where: str) -> Callable:
    def run(root, layout, i, state):
        made = root.makedirs(f"{prefix}md{i}/z")
        assert all(not p.startswith("..") for p in made), made
        if where == "root":
            _in_root(layout, f"md{i}/z")
            if "x" in made:
                # x was out, so makedirs rightly made a new one: move it aside
                # (the attacker only moves x back with RENAME_NOREPLACE)
                os.rename(os.path.join(layout.root, "x"), os.path.join(layout.root, f"x{i}"))
                return "made x"
        return "ok"
    return run


def _rename(prefix: str) -> Callable:
    def run(root, layout, i, state):
        src, dst = ("r_a", "r_b") if not state.get("renamed") else ("r_b", "r_a")
        root.rename(prefix + src, prefix + dst)
        state["renamed"] = not state.get("renamed")
        return "ok"
    return run


def _remove(prefix: str, where: str) -> Callable:
    def run(root, layout, i, state):
        created = state.get("created") or [None]
        n = created.pop() if created[-1] is not None else i
        root.remove(f"{prefix}c{n}")
        if where == "root":
            assert not os.path.lexists(os.path.join(layout.root, f"c{n}"))
        return "ok"
    return run


def _write(prefix: str, where: str) -> Callable:
    def run(root, layout, i, state):
        data = INSIDE + str(i).encode()
        root.write_bytes(f"{prefix}w", data, fsync=False)
        if where == "root":
            with open(os.path.join(layout.root, "w"), "rb") as fh:
                assert fh.read() == data
        return "ok"
    return run


_COMMON = frozenset({"ENOENT"})
_SWAP = frozenset({"EXDEV", "ENOENT", "ELOOP", "ENOTDIR"})


def operations(scenario: str) -> list[RaceOp]:
    if scenario == "exchange":
        p, where, allowed = "sw/", "sw", _SWAP
    else:
        p, where, allowed = "x/y/../../", "root", _COMMON
    return [
        RaceOp("open_read", _read(p), allowed),
        RaceOp("stat", _stat(f"{p}f" if scenario == "exchange" else f"{p}secret"), allowed),
        RaceOp("create", _create(p, where), allowed),
        RaceOp("remove", _remove(p, where), allowed),
        RaceOp("mkdir", _mkdir(p, where), allowed),
        RaceOp("makedirs", _makedirs(p, where), allowed),
        RaceOp("rename", _rename(p), allowed),
        RaceOp("write_bytes", _write(p, where), allowed),
    ]


def run_scenario(scenario: str, base: str, factory: Callable[[str], Any], iterations: int,
                 ops: list[RaceOp] | None = None) -> dict:
    """Run every operation ``iterations`` times under attack; return the
    statistics (AssertionError on any escape or unexpected answer)."""
    layout = make_exchange(base) if scenario == "exchange" else make_move_out(base)
    before = snapshot(base, exclude=("ws",))
    layout.outside_idents = {entry[2] for entry in before.values()}
    if scenario == "exchange":
        attacker = Attacker("exchange", os.path.join(layout.root, "sw"),
                            os.path.join(layout.root, "lnk"))
    else:
        attacker = Attacker("move", os.path.join(layout.root, "x"), os.path.join(base, "xo"))
    root = factory(layout.root)
    report: dict = {"scenario": scenario, "iterations": iterations, "ops": {}}
    started = time.monotonic()
    try:
        for op in ops or operations(scenario):
            counts: collections.Counter = collections.Counter()
            state: dict = {}
            examples: dict = {}
            op_started = time.monotonic()
            stats_before = dict(getattr(root, "stats", {}))
            for i in range(iterations):
                try:
                    counts[op.run(root, layout, i, state)] += 1
                except OSError as exc:
                    name = errno.errorcode.get(exc.errno, str(exc.errno))
                    if name not in op.allowed:
                        raise AssertionError(f"{scenario}/{op.name} #{i}: unexpected "
                                             f"{type(exc).__name__} {exc!r}") from exc
                    counts[name] += 1
                    examples.setdefault(name, f"{type(exc).__name__}: {exc}")
            stats = {k: v - stats_before.get(k, 0) for k, v in getattr(root, "stats", {}).items()}
            report["ops"][op.name] = {"outcomes": dict(counts), "examples": examples,
                                      "seconds": round(time.monotonic() - op_started, 2), **stats}
    finally:
        try:
            done, failed = attacker.stop()
        finally:
            attacker.kill()
        close = getattr(root, "close", None)
        if close:
            close()
    report["renames"] = done
    report["rename_failures"] = failed
    report["seconds"] = round(time.monotonic() - started, 2)
    diff = changes(before, snapshot(base, exclude=("ws",)))
    assert not diff, f"ESCAPE: outside changed: {diff[:5]}"
    return report
