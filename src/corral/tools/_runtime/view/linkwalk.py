"""The walk that learns the symlinks below a directory: the view's walk
past the look at open, and freshness's of a directory that appeared."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from ....contained import Handle, Root, Tree, TreeVisitor
from ..._policy.hostconfig import config_tops
from .links import MAX_WALK_DEPTH, LinkMap, LinkReader, Mounts

_AROUND = -1  # a Tree state: the directory lies in a kernel's filesystem, nothing learnt

# told of each directory a walk listed: its path, its times, a time before its listing began
Stamp = Callable[[str, os.stat_result, int], None]


def walk_links(root: Root, links: LinkMap, starts: Iterable[tuple[str, int]], *,
               entering: Callable[[str], None] | None = None,
               most: int | None = None,
               stamp: Stamp | None = None,
               places: dict[str, frozenset[str]] | None = None
               ) -> tuple[list[tuple[str, int]], bool]:
    """Learn every symlink below each directory of ``starts`` (its canonical
    path and its depth below the root), at any depth, leaving out git's
    ``.git`` directories.  Each start is opened by the resolver, every
    directory below it shown beneath the root as the Tree opens it (never
    through a link; one ``openat2`` of its path from the root on the fast
    path, else its name in its parent's fd, checked: a directory costs one
    open and one listing), down to :data:`MAX_WALK_DEPTH` levels
    below the start (each level holds a descriptor); a directory deeper
    is a start of its own (so the walk reaches every directory whose path
    the resolver opens: shorter than ``PATH_MAX``), by the core's
    :class:`~corral.contained.Tree` (names alone, one native call per
    directory where the backend batches), or entry by entry where a name
    is not UTF-8 (a Tree leaves it out).  ``entering`` is told of each
    directory before it is listed; with ``most``, at most that many are
    listed; ``stamp`` is told of each directory listed (by the ``fstat``
    the walk makes of it anyway); ``places`` gets each directory listed
    that holds a host's config, with the names it may lie under.  Returns
    the directories left unlisted (each with its depth) and whether an
    entry named ``.git`` was met."""
    left: list[tuple[str, int]] = []
    git = [False]
    budget = [most if most is not None else -1]
    mounts, reader = Mounts(root.backend), LinkReader(root)
    kept = _Kept(stamp, time.time_ns(), [], places)
    queue = deque(starts)
    while queue:
        where, depth = queue.popleft()
        if budget[0] == 0:
            left.append((where, depth))
            continue
        if entering is not None:
            entering(where)
        try:
            top = root.open_handle(where, os.O_RDONLY | os.O_DIRECTORY)
        except (OSError, ValueError):
            continue  # gone, or not a directory: nothing below it to learn
        spent = budget[0]
        deeper: list[tuple[str, int]] = []
        with top:
            whole = _walk_tree(root, reader, links, top, depth, entering, budget, left, git, mounts,
                               kept._replace(deeper=deeper))
        if not whole:
            budget[0] = spent  # walked again, entry by entry
            deeper.clear()
            try:
                top = root.open_handle(where, os.O_RDONLY | os.O_DIRECTORY)
            except (OSError, ValueError):
                continue
            _walk_below(root, reader, links, top, depth, entering, budget, left, git, mounts,
                        kept._replace(deeper=deeper))
        queue.extend(deeper)
    return left, git[0]


class _Kept(NamedTuple):
    """Where a walk tells the times of each directory it lists, a time
    before it began (before any of its listings), where it puts the
    directories below what one start holds open (walked as starts), and
    where it notes the host configs each directory listed holds."""

    stamp: Stamp | None
    since: int
    deeper: list[tuple[str, int]]
    places: dict[str, frozenset[str]] | None = None


class _LinkVisitor(TreeVisitor[int]):
    """A Tree's walk for links: every directory but a work tree's ``.git``
    and those of the kernel's filesystems, each told of before it is
    listed, as many as the budget allows.  A directory's state is the
    device it lies on (:data:`_AROUND`: a kernel's filesystem)."""

    watch = frozenset({".git"})

    def __init__(self, root: Root, prefix: str, depth: int,
                 entering: Callable[[str], None] | None, budget: list[int],
                 left: list[tuple[str, int]], git: list[bool], mounts: Mounts,
                 kept: _Kept, top: str) -> None:
        self._fstat = root.backend.fstat
        self._prefix, self._depth, self._entering = prefix, depth, entering
        self._budget, self._left, self._git = budget, left, git
        self._mounts = mounts
        self._stamp, self._since, self._top = kept.stamp, kept.since, top
        self._deeper = kept.deeper
        self._places = kept.places

    def child(self, state: int, dir_sub: str, name: str) -> int | None:
        if name == ".git" or state == _AROUND:
            return None
        path = self._prefix + dir_sub + name
        below = dir_sub.count("/") + 1
        level = self._depth + below
        if below > MAX_WALK_DEPTH:
            self._deeper.append((path, level))  # a start of its own: a walk holds so many open
            return None
        if self._budget[0] == 0:
            self._left.append((path, level))
            return None
        if self._budget[0] > 0:
            self._budget[0] -= 1
        if self._entering is not None:
            self._entering(path)
        return state

    def listed(self, fd: int, state: int, dir_sub: str, present: frozenset[str]) -> int:
        info = self._fstat(fd)
        device = info.st_dev
        if device != state and self._mounts.kernels(fd, device):
            return _AROUND
        if self._stamp is not None:
            self._stamp(self._prefix + dir_sub[:-1] if dir_sub else self._top, info, self._since)
        if present:
            self._git[0] = True
            if self._places is not None:  # a work tree: its config and hooks are read too
                where = self._prefix + dir_sub[:-1] if dir_sub else self._top
                self._places[where] = self._places.get(where, frozenset()) | {".git"}
        return device


def _walk_tree(root: Root, reader: LinkReader, links: LinkMap, top: Handle, depth: int,
               entering: Callable[[str], None] | None, budget: list[int],
               left: list[tuple[str, int]], git: list[bool], mounts: Mounts,
               kept: _Kept) -> bool:
    """:func:`walk_links` below ``top`` by a Tree; whether it met every name."""
    if budget[0] > 0:
        budget[0] -= 1
    prefix = "" if top.path in (".", "") else top.path + "/"
    visitor = _LinkVisitor(root, prefix, depth, entering, budget, left, git, mounts, kept,
                           top.path)
    # where: each directory entered is shown beneath the root (THREATS row 35b)
    with Tree(root, top.fd, -2, visitor, max_depth=MAX_WALK_DEPTH,
              where=top.path) as tree:
        for sub, fd, state, names, kinds in tree:
            if kept.places is not None and state != _AROUND:
                tops = config_tops(names)
                if tops:
                    where = prefix + sub[:-1] if sub else top.path
                    kept.places[where] = kept.places.get(where, frozenset()) | tops
            if kinds and state != _AROUND:
                for name in names:
                    if kinds.get(name) == "symlink":
                        reader.learn(links, prefix + sub + name, fd, name)
    return not tree.stats.undecodable


def _walk_below(root: Root, reader: LinkReader, links: LinkMap, top: Handle, depth: int,
                entering: Callable[[str], None] | None, budget: list[int],
                left: list[tuple[str, int]], git: list[bool], mounts: Mounts,
                kept: _Kept) -> None:
    # frames: (the open directory, its depth, the names of its directories
    # not entered yet); every handle is closed in the finally
    stack: list[tuple[Handle, int, Iterator[str]]] = []
    start = depth
    try:
        handle: Handle | None = top
        while handle is not None or stack:
            if handle is not None:
                stack.append((handle, depth, iter(_listed(reader, links, handle, depth - start,
                                                          entering, budget, git, mounts,
                                                          kept))))
                handle = None
            parent, level, names = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                parent.close()
                continue
            if budget[0] == 0:
                prefix = "" if parent.path in (".", "") else parent.path + "/"
                left.append((prefix + name, level + 1))
                left.extend((prefix + rest, level + 1) for rest in names)
                continue
            try:
                handle = parent.open_directory(name)
            except OSError:
                continue  # removed, or a link now, since it was listed: not followed
            depth = level + 1
    finally:
        for frame, _, _ in stack:
            frame.close()
        if handle is not None:
            handle.close()


def _listed(reader: LinkReader, links: LinkMap, handle: Handle, below: int,
            entering: Callable[[str], None] | None, budget: list[int],
            git: list[bool], mounts: Mounts, kept: _Kept) -> list[str]:
    """List one directory (``below`` levels under its walk's start): its
    links learnt; the names of the directories below it the walk enters
    (those deeper than it holds open: in ``kept.deeper``, walked as starts)."""
    if entering is not None:
        entering(handle.path)
    if budget[0] > 0:
        budget[0] -= 1
    try:
        info = handle.stat()
        if mounts.kernels(handle.fd, info.st_dev):
            return []
        if kept.stamp is not None:
            kept.stamp(handle.path, info, kept.since)
        entries = handle.scandir()
    except OSError:
        return []
    if kept.places is not None:
        tops = config_tops([entry.name for entry in entries])
        if any(entry.name == ".git" for entry in entries):
            tops = tops | {".git"}
        if tops:
            kept.places[handle.path] = tops
    entered = []
    for entry in entries:
        name = entry.name
        if name == ".git":
            git[0] = True  # (a .git file too: a git directory elsewhere)
        if entry.is_symlink():
            reader.learn(links, entry.path, handle.fd, name)
        elif name != ".git" and entry.is_dir(follow_symlinks=False):
            if below < MAX_WALK_DEPTH:
                entered.append(name)
            else:
                kept.deeper.append((entry.path, entry.path.count("/") + 1))
    return entered
