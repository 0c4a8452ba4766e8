"""Helpers every layer's tests share."""

from __future__ import annotations

import os
import sys
from typing import Any
from pathlib import Path

from corral.contained import available_backends, backend_by_name


def tree_snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry below ``root``, root-relative: a file's bytes, a link's
    ``-> text``, ``dir``, or ``special`` (a FIFO, socket or device), to
    compare before and after a call that must change nothing."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = path.read_bytes()
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = "special"
    return out


_FD_DIR = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"  # Linux, macOS


def open_fds() -> set[int]:
    """This process's open fds.  The listing's own fd is among them, but it
    takes the lowest free number: the same each time unless something changed.
    corral's held ``/proc/self/fd`` (opened once a process, at its first
    containment check, never closed) is opened first: else the first call
    a process checks would seem to leave it open."""
    if sys.platform == "linux":
        from corral.contained import _linux
        _linux.proc_fds()
    return {int(name) for name in os.listdir(_FD_DIR)}


def fds_opened_since(before: set[int]) -> set[int]:
    """The fds open now that were not open at ``before``: what a call left
    open.  Not a count: between the two looks another thread of the process
    may close an fd of its own (an earlier Toolbox's background walk, ending,
    drops the last reference to its root), and a count that fell would hide
    a leak or fail a call that leaked nothing."""
    return open_fds() - before


def remove_level_by_level(top: Path) -> None:
    """Remove the tree at ``top`` without recursing a frame a level:
    pytest's own removal of old temporary directories does, and a chain
    of 2,000 levels would stop every later session's clean-up there."""
    if not os.path.lexists(top):
        return
    stack = [os.fsencode(top)]
    while stack:
        with os.scandir(stack[-1]) as listing:
            entries = list(listing)
        below = [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        if below:
            stack.extend(below)
        else:
            os.rmdir(stack.pop())


def make_repository(top: Path) -> Path:
    """A git work tree at ``top`` in git's minimal layout (``.git/HEAD``,
    ``objects/``, ``refs/``: what ``git rev-parse`` accepts), for fixtures
    whose .gitignore files must apply: outside a work tree none does, as in
    git and ripgrep; ``top``."""
    git = top / ".git"
    for sub in ("objects", "refs/heads"):
        (git / sub).mkdir(parents=True, exist_ok=True)
    if not (git / "HEAD").exists():
        (git / "HEAD").write_text("ref: refs/heads/main\n")
    return top


def bare_repository(path: Path, *, head_moved: bool = False, hooks: bool = True) -> None:
    """What ``git init --bare`` makes at ``path``, as git's repository test
    sees it; ``head_moved``: its ``HEAD`` written beside it and renamed in
    (no event makes ``HEAD`` there but the move); ``hooks=False``: what
    ``git init --bare --template=`` makes, with no ``hooks/``."""
    subs = ("info", "objects/ab", "refs/heads", "refs/tags", "logs/refs/heads")
    for sub in ("hooks", *subs) if hooks else subs:
        (path / sub).mkdir(parents=True, exist_ok=True)
    (path / "config").write_text("[core]\n\tbare = true\n")
    if head_moved:
        (path.parent / "HEAD.new").write_text("ref: refs/heads/main\n")
        os.rename(path.parent / "HEAD.new", path / "HEAD")
    else:
        (path / "HEAD").write_text("ref: refs/heads/main\n")


def burst(place: Path, count: int) -> None:
    """Events of another program in ``place``: ``count`` names made and removed."""
    place.mkdir(exist_ok=True)
    for i in range(count):
        made = place / f"n{i}"
        made.write_bytes(b"")
        made.unlink()


def deep_tree(base: Path, depth: int) -> None:
    """``base/a/a/.../a/f.txt``, ``depth`` directories, each made by fd
    (the way a tree deeper than the host's path limit is made)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("a", dir_fd=fd)
            inner = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(os.open("f.txt", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def backend_configs() -> list[tuple[str, bool]]:
    """The (backend, fast path) pairs present here: every backend, or the
    one ``CORRAL_BACKEND`` names, with and without openat2 where it has it."""
    forced = os.environ.get("CORRAL_BACKEND", "").strip().lower()
    configs = []
    for name in [forced] if forced else available_backends():
        if backend_by_name(name).has_openat2:
            configs.append((name, True))
        configs.append((name, False))
    return configs


BACKEND_CONFIGS = backend_configs()
BACKEND_IDS = [f"{name}-{'openat2' if fast else 'walk'}" for name, fast in BACKEND_CONFIGS]


#: a patch of one section, for the call lists below
ONE_SECTION_PATCH = "*** Begin Patch\n*** Update File: d/a.txt\n@@\n-alpha\n+beta\n*** End Patch"
#: a call of every tool over a tree holding d/a.txt ("alpha") and d/b.txt:
#: reads, listings, searches, writes into new folders, an edit, a delete,
#: moves of a file and of a folder, a make_directory and a patch
EVERY_TOOL_CALL: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "d/a.txt"}),
    ("read_files", {"paths": ["d/a.txt", "d/b.txt"]}),
    ("file_info", {"path": "d/a.txt"}),
    ("list_directory", {"path": "d"}),
    ("list_directory", {"path": ".", "depth": 3}),
    ("glob", {"pattern": "**/*.txt"}),
    ("grep", {"pattern": "alpha"}),
    ("write_file", {"path": "d/a.txt", "content": "new\n", "overwrite": True}),
    ("write_file", {"path": "n/m/new.txt", "content": "new\n"}),
    ("edit_file", {"path": "d/a.txt", "oldText": "alpha", "newText": "beta"}),
    ("delete_file", {"path": "d/b.txt"}),
    ("move_file", {"source": "d/a.txt", "destination": "e/f/a.txt"}),
    ("move_file", {"source": "d", "destination": "e/d"}),
    ("make_directory", {"path": "n/m/o"}),
    ("apply_patch", {"input": ONE_SECTION_PATCH}),
]
