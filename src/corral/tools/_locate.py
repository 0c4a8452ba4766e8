"""Where a path really leads, for the policy: the adapter to the core's resolver.

:func:`locate` answers with the canonical root-relative path of the entry,
the directories a call that creates parents would make, and the directories
the path enters and leaves again.  Until the core's ``Root.target`` (contract
C1) lands it is built on ``Root.realpath``, one component at a time: every
component that exists is resolved by the core (symlinks, ``..``), and only a
``..`` right after a directory that does not exist yet (and so would be
created, then left) is taken from the spelling.  A location that cannot be
established raises the core's error, so the call is refused (fail closed).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat as st
import sys
from dataclasses import dataclass

from ..contained import Root

__all__ = ["Location", "locate", "fd_location", "root_path", "git_dirs"]

_GITDIR_BYTES = 4096  # a ".git" file is one short line
_F_GETPATH = 50  # macOS fcntl: the path of an open fd
_MAXPATHLEN = 1024


@dataclass(frozen=True)
class Location:
    """``path``: the canonical root-relative path of the entry (``"."``, the
    root); ``creates``: canonical directories that do not exist yet, outermost
    first; ``passed``: canonical directories entered and left on the way."""

    path: str
    creates: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()


def _join(base: str, name: str) -> str:
    return name if base == "." else f"{base}/{name}"


def locate(root: Root, rel: str, *, follow: bool = True) -> Location:
    """Where ``rel`` leads: with ``follow`` a final symlink is followed (a
    read), else the entry itself is meant (a move, a delete, a write that
    refuses links)."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts:
        return Location(".")
    if ".." not in parts:
        try:
            if follow:
                return Location(root.realpath("/".join(parts), strict=False))
            parent = "/".join(parts[:-1]) or "."
            return Location(_join(root.realpath(parent), parts[-1]))
        except FileNotFoundError:
            pass  # a directory on the way does not exist (yet)
    return _stepwise(root, parts, follow)


def _stepwise(root: Root, parts: list[str], follow: bool) -> Location:
    """:func:`locate` one component at a time, noting what would be created
    and what was passed.  While nothing is missing the core resolves the
    path as spelled so far (its errors name the model's own spelling)."""
    last = len(parts) - 1
    canon = "."
    spelled: str | None = ""  # the spelling so far, while the core can resolve it
    pending: list[str] = []  # names below canon that do not exist (yet)
    creates: list[str] = []
    passed: list[str] = []
    for index, part in enumerate(parts):
        if pending:
            spelled = None
            if part == "..":
                passed.append(_join(canon, "/".join(pending)))
                pending.pop()
            else:
                pending.append(part)
                creates.append(_join(canon, "/".join(pending)))
            continue
        if index == last and not follow and part != "..":
            return Location(_join(canon, part), (), tuple(passed))
        if part == "..":
            passed.append(canon)
        step = _join(canon, part) if spelled is None else _join(spelled or ".", part)
        try:
            canon = root.realpath(step)
        except FileNotFoundError:
            pending.append(part)
            creates.append(_join(canon, part))
            continue
        if spelled is not None:
            spelled = step
    if pending:
        creates.pop()  # the last name is the entry itself, not a directory to create
        return Location(_join(canon, "/".join(pending)), tuple(creates), tuple(passed))
    return Location(canon, (), tuple(passed))


def fd_location(root: Root, fd: int, top: str | None = None) -> str | None:
    """The canonical root-relative path of what ``fd`` (opened beneath
    ``root``) is, as the kernel names it now, or ``None`` when that cannot
    be said (no such interface, a deleted file, a root that moved away).
    ``top``: the root's own path as the kernel named it before (see
    :func:`root_path`); a stale one only makes this answer ``None``."""
    here = _fd_path(fd)
    if top is None:
        top = _fd_path(root.fileno())
    if here is None or top is None:
        return None
    if here == top:
        return "."
    if top == "/":
        return here[1:] or None
    if here.startswith(top + "/"):
        return here[len(top) + 1:]
    return None


def root_path(root: Root) -> str | None:
    """The root directory's path as the kernel names it now."""
    return _fd_path(root.fileno())


def _fd_path(fd: int) -> str | None:
    try:
        if sys.platform == "darwin":
            raw = fcntl.fcntl(fd, _F_GETPATH, bytes(_MAXPATHLEN))
            text = os.fsdecode(raw.split(b"\0", 1)[0])
        else:
            text = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    if not text.startswith("/") or text.endswith(" (deleted)"):
        return None
    return text


def git_dirs(root: Root) -> tuple[str, ...]:
    """The canonical directories inside the root that a ``.git`` *file* at
    the root points to (``gitdir: ...``: a worktree or a submodule checkout
    keeps its repository elsewhere; when that is inside the root, it is
    protected like ``.git/`` itself)."""
    try:  # one name in the root directory itself: nothing to resolve
        if not st.S_ISREG(os.stat(".git", dir_fd=root.fileno(), follow_symlinks=False).st_mode):
            return ()
        fd = root.open(".git", os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return ()
    try:
        info = root.backend.fstat(fd)
        if not st.S_ISREG(info.st_mode):
            return ()
        text = root.backend.pread(fd, _GITDIR_BYTES, 0).decode("utf-8", "replace")
    finally:
        root.backend.close(fd)
    target = _gitdir_line(text)
    if target is None:
        return ()
    relative = _inside(root, target)
    if relative is None:
        return ()
    try:
        found = root.realpath(relative)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return (locate(root, relative).path,)  # not there yet: protect the name
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
