"""Where a path really leads, for the policy: what the core's one resolver reached.

A :class:`Location` is the canonical root-relative path of the entry, the
directories a call that creates parents would make, and the directories the
path enters and leaves again, all taken from a
:class:`~corral.contained.Target` or :class:`~corral.contained.Handle`
(contract C1): nothing here reads the spelling.  A location that cannot be
established raises the core's error, so the call is refused (fail closed).
"""

from __future__ import annotations

import os
import stat as st
from dataclasses import dataclass

from ..contained import Root, Target

__all__ = ["Location", "locate", "of_target", "git_dirs"]

_GITDIR_BYTES = 4096  # a ".git" file is one short line


@dataclass(frozen=True)
class Location:
    """``path``: the canonical root-relative path of the entry (``"."``, the
    root); ``creates``: canonical directories that do not exist yet, outermost
    first; ``passed``: canonical directories entered and left on the way."""

    path: str
    creates: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()


def locate(root: Root, rel: str, *, follow: bool = True) -> Location:
    """Where ``rel`` leads, as the core's resolver reached it (a
    :class:`~corral.contained.Target` planning the directories it would
    create): with ``follow`` a final symlink is followed (a read), else the
    entry itself is meant (a move, a delete, a write that refuses links)."""
    with root.target(rel, follow_final=follow, create_parents=True) as target:
        return of_target(target)


def of_target(target: Target) -> Location:
    return Location(target.path, target.creates, target.passed)


def git_dirs(root: Root) -> tuple[str, ...]:
    """The canonical directories inside the root that a ``.git`` *file* at
    the root points to (``gitdir: ...``: a worktree or a submodule checkout
    keeps its repository elsewhere; when that is inside the root, it is
    protected like ``.git/`` itself)."""
    try:
        with root.target(".git") as entry:
            info = entry.lstat()
            if info is None or not st.S_ISREG(info.st_mode):
                return ()
            with entry.open(os.O_RDONLY) as handle:
                text = handle.pread(_GITDIR_BYTES, 0).decode("utf-8", "replace")
    except OSError:
        return ()
    target = _gitdir_line(text)
    if target is None:
        return ()
    relative = _inside(root, target)
    if relative is None:
        return ()
    try:
        found = locate(root, relative).path
    except OSError:
        return ()
    return () if found == "." else (found,)


def _gitdir_line(text: str) -> str | None:
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "gitdir" and value.strip():
            return value.strip()
    return None


def _inside(root: Root, target: str) -> str | None:
    """``target`` (from a ``.git`` file, relative to the root or absolute)
    as a path relative to the root, or ``None`` when it lies outside."""
    if not target.startswith("/"):
        return target
    for prefix in {root.path.rstrip("/"), os.path.realpath(root.path).rstrip("/")}:
        if target.startswith(prefix + "/"):
            return target[len(prefix) + 1:]
    return None
