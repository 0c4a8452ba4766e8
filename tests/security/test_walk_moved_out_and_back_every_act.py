"""Every act and every look of the walk, while a directory on its path is
moved out of the root and back (test_walk_moved_out_and_back.py's attack,
which there takes ``Root.open``).

The attacker renames ``a`` out of the root, puts the outside directory
``s`` in place of the deepest ``q``, and puts both back, over and over.  A
walk that entered ``s`` meanwhile hands its callers a directory that was
never beneath the root.  Nothing may be made, removed, renamed, changed or
looked at in ``s``: its entries (``f``, and ``g``, ``gd``, ``gl``, which
only ``s`` has) must be as they were at the end, and no call may answer
with a fact only ``s`` holds (``g``'s metadata, ``gl``'s text, a listing
naming ``g``).  On every backend config, through a plain spelling and
through an in-root link ``l -> a`` (which sends openat2 configs to the
walk too), with the kernel's names as the check the walk's result meets (a few
calls with each check: ``check``).

``CALLS`` calls per case (2,000 by default); ``CORRAL_RACE_ITERATIONS``
scales it (the soak profile runs more).
"""

from __future__ import annotations

import os
import shutil
import stat as st
from collections.abc import Callable

import pytest

from .test_walk_moved_out_and_back import DEPTH, INSIDE, OUTSIDE, attacking, check  # noqa: F401

CALLS = max(2000, int(os.environ.get("CORRAL_RACE_ITERATIONS", "0") or 0) // 5)
OUTSIDE_ONLY = {"f", "g", "gd", "gl"}  # s's entries; "g", "gd", "gl" are only there
G_MODE = 0o644


def _tree(base: str) -> tuple[str, str, str]:
    root, out = os.path.join(base, "root"), os.path.join(base, "out")
    deep = "/".join(["q"] * DEPTH)
    os.makedirs(os.path.join(root, "a", deep))
    s = os.path.join(out, "s")
    os.makedirs(os.path.join(s, "gd"))
    with open(os.path.join(root, "a", deep, "f"), "wb") as fh:
        fh.write(INSIDE)
    with open(os.path.join(s, "f"), "wb") as fh:
        fh.write(OUTSIDE)
    with open(os.path.join(s, "g"), "wb") as fh:
        fh.write(OUTSIDE)
    os.chmod(os.path.join(s, "g"), G_MODE)
    os.symlink("f", os.path.join(s, "gl"))
    os.symlink("a", os.path.join(root, "l"))
    with open(os.path.join(root, "x0"), "wb") as fh:
        fh.write(INSIDE)
    return root, out, deep


# Each call takes the root, the directory's spelling (".../q", the one that
# may be s) and the root's host path; it answers True when what it got back
# is a fact only s holds.  Its errors (refused, moved away) are no answer.
Call = Callable[[object, str, str], bool]


def _names_g(names: object) -> bool:
    return "g" in list(names)  # type: ignore[call-overload]


def _refill_x0(root_dir: str) -> None:
    """x0, at the top of the root (no dance there), back for the next call."""
    path = os.path.join(root_dir, "x0")
    if not os.path.lexists(path):
        with open(path, "wb") as fh:
            fh.write(INSIDE)


def _rename_dst(root, d: str, root_dir: str) -> bool:
    try:
        root.rename("x0", f"{d}/y")
    finally:
        _refill_x0(root_dir)
    return False


def _link(root, d: str, root_dir: str) -> bool:
    root.link("x0", f"{d}/h")
    return False


def _open_creat(root, d: str, root_dir: str) -> bool:
    os.close(root.open(f"{d}/c", os.O_CREAT | os.O_WRONLY, 0o644))
    return False


def _target_look(root, d: str, root_dir: str) -> bool:
    with root.target(f"{d}/g") as target:
        return target.lstat() is not None


def _fwalk(root, d: str, root_dir: str) -> bool:
    return any("g" in files or "gd" in dirs for _p, dirs, files in root.walk(d))


CALLS_BY_NAME: dict[str, Call] = {
    # looks: a fact only s holds
    "stat": lambda root, d, _r: root.stat(f"{d}/g") is not None,
    "lstat": lambda root, d, _r: root.lstat(f"{d}/gl") is not None,
    "exists": lambda root, d, _r: root.exists(f"{d}/g"),
    "realpath": lambda root, d, _r: bool(root.realpath(f"{d}/g")),
    "readlink": lambda root, d, _r: root.readlink(f"{d}/gl") == "f",
    "listdir": lambda root, d, _r: _names_g(root.listdir(d)),
    "scandir": lambda root, d, _r: _names_g(e.name for e in root.scandir(d)),
    "walk": _fwalk,
    "target_lstat": _target_look,
    # acts: a change in s
    "mkdir": lambda root, d, _r: root.mkdir(f"{d}/m") and False,
    "makedirs": lambda root, d, _r: bool(root.makedirs(f"{d}/mm/n", exist_ok=True)) and False,
    "write_bytes": lambda root, d, _r: root.write_bytes(f"{d}/w", b"x", fsync=False) and False,
    "open_creat": _open_creat,
    "symlink": lambda root, d, _r: root.symlink("f", f"{d}/sl") and False,
    "remove": lambda root, d, _r: root.remove(f"{d}/g") and False,
    "rmdir": lambda root, d, _r: root.rmdir(f"{d}/gd") and False,
    "rmtree": lambda root, d, _r: root.rmtree(f"{d}/gd") and False,
    "rename_src": lambda root, d, _r: root.rename(f"{d}/g", "got") and False,
    "rename_dst": _rename_dst,
    "link": _link,
    "chmod": lambda root, d, _r: root.chmod(f"{d}/g", 0o600) and False,
    "utime": lambda root, d, _r: root.utime(f"{d}/g", (1, 1)) and False,
}


def _undo_the_dance(root_dir: str, out: str, deep: str) -> None:
    """Put every name back where the attacker, stopped mid-round, took it from."""
    oa, held, s = (os.path.join(out, n) for n in ("a", "held", "s"))
    ob = os.path.join(oa, deep)
    if not os.path.lexists(s) and os.path.lexists(ob):
        os.rename(ob, s)
    if os.path.lexists(held):
        _put(held, ob)
    if os.path.lexists(oa):
        _put(oa, os.path.join(root_dir, "a"))


def _put(src: str, dst: str) -> None:
    """Rename ``src`` to ``dst``, over what a call made there meanwhile."""
    try:
        os.rename(src, dst)
    except OSError:
        shutil.rmtree(dst)
        os.rename(src, dst)


def _outside_changes(out: str) -> list[str]:
    """What differs in s from how it was made."""
    s = os.path.join(out, "s")
    changes = sorted(set(os.listdir(s)) ^ OUTSIDE_ONLY)
    g = os.path.join(s, "g")
    if os.path.lexists(g):
        info = os.lstat(g)
        if st.S_IMODE(info.st_mode) != G_MODE:
            changes.append(f"g mode {st.S_IMODE(info.st_mode):o}")
        if int(info.st_mtime) == 1:
            changes.append("g mtime")
    with open(os.path.join(s, "f"), "rb") as fh:
        if fh.read() != OUTSIDE:
            changes.append("f content")
    return changes


# makedirs through "a" makes a new "a" while the real one is out (as it
# should); through "l" (a link's names are never created) it makes nothing
# but the names below the deep directory
CASES = [(top, call) for call in sorted(CALLS_BY_NAME) for top in ("a", "l")
         if (top, call) != ("a", "makedirs")]


@pytest.mark.parametrize(("top", "call"), CASES)
def test_no_act_in_and_no_fact_about_a_directory_moved_out_and_back(make_root, tmp_path, top,
                                                                    call):
    _race(make_root, tmp_path, top, call)


# a look and an act of each shape (a name in the parent, the parent itself,
# a walk that creates) with each check the result may meet
@pytest.mark.parametrize("call", ["stat", "mkdir", "makedirs", "rename_dst", "target_lstat"])
def test_the_same_with_each_check(make_root, tmp_path, check, call):  # noqa: F811
    _race(make_root, tmp_path, "l", call)


def _race(make_root, tmp_path, top: str, call: str) -> None:
    root_dir, out, deep = _tree(str(tmp_path))
    root = make_root(root_dir)
    run = CALLS_BY_NAME[call]
    seen: dict[str, int] = {}
    try:
        with attacking(root_dir, out, deep):
            for _ in range(CALLS):
                try:
                    key = "OUTSIDE" if run(root, f"{top}/{deep}", root_dir) else "inside"
                except OSError as exc:  # refused, or moved away right now: typed
                    key = type(exc).__name__
                seen[key] = seen.get(key, 0) + 1
    finally:
        _undo_the_dance(root_dir, out, deep)
    assert "OUTSIDE" not in seen, seen
    assert _outside_changes(out) == [], seen
