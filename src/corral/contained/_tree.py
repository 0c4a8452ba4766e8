"""A sorted, fd-relative walk below one open directory, for searches.

:class:`Tree` lists the entries below a directory fd in code-point order of
the full path (a directory sorts as ``name/``, so ``a.txt`` < ``a/b``), so a
capped search can stop at the cap plus one and still be sorted.  Each
directory is listed once through its own fd (``scandir`` of the fd, the
entry kinds from ``d_type``) and entered as :meth:`Root.fwalk` does: one
plain name opened ``O_NOFOLLOW|O_DIRECTORY`` relative to its parent's fd,
so a symlink is never followed, nothing outside the root (and no directory
twice) is walked, and nothing is re-resolved from the root per entry.

What to enter, and what each directory carries, is the caller's
(:class:`TreeVisitor`): a state per directory (a glob's automaton states,
say), computed once when it is entered, and hooks for when a directory is
listed and left (.gitignore files are pushed and popped there).  ``tick``
runs once per directory and every :data:`TICK_EVERY` entries, for the
caller's deadline checks.  At most :data:`MAX_DEPTH` directories are open
at once; deeper ones are counted in :attr:`TreeStats.too_deep`.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from ._handle import Handle

if TYPE_CHECKING:
    from ._root import Root

__all__ = ["MAX_DEPTH", "Tree", "TreeItem", "TreeStats", "TreeVisitor", "open_entry"]

MAX_DEPTH = 128  # directories below the base; each level holds one fd
TICK_EVERY = 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

S = TypeVar("S")
# (dir_sub, dir_fd, state, entries): a run of consecutive entries of one
# directory, in order, as (name, kind); dir_sub is "" or "a/b/", kind is
# "file", "symlink", "other" (and "dir" when directories are yielded); the
# state is the directory's, and dir_fd is valid until the next step
TreeItem = tuple[str, int, S, list[tuple[str, str]]]
_Listed = list[tuple[str, str, str]]  # (sort key, name, kind)


def open_entry(root: Root, dir_fd: int, name: str, path: str) -> tuple[Handle, os.stat_result]:
    """Open the entry ``name`` of a directory a :class:`Tree` yielded, for
    reading: one name, never following a symlink, never blocking (a FIFO
    swapped in since the listing opens, and shows in the ``fstat``).
    ``path`` is its canonical root-relative path (the directory's, which
    the walk reached by fd, plus the name).  Returns the :class:`Handle` and
    its ``fstat``; the caller checks the kind and closes the handle."""
    fd = root.backend.open_at(dir_fd, name, _FILE_FLAGS)
    handle = Handle(root, root.backend, fd, path)
    try:
        return handle, handle.stat()
    except BaseException:
        handle.close()
        raise


@dataclass
class TreeStats:
    unreadable_dirs: int = 0
    too_deep: int = 0
    undecodable: int = 0  # names that are not UTF-8 on disk: no model can name them
    entries: int = 0
    incomplete: bool = False  # stopped at max_entries


class TreeVisitor(Generic[S]):
    """The caller's side of a :class:`Tree`; the defaults enter everything."""

    def admit_dir(self, dir_sub: str, name: str) -> bool:
        """Whether the directory ``dir_sub + name`` is seen at all (yielded
        and entered); e.g. ``False`` for an ignored one."""
        return True

    def enter(self, state: S, dir_sub: str, name: str) -> S | None:
        """The state of the child directory ``name``, or ``None`` to not enter it."""
        return state

    #: names whose presence in a directory :meth:`listed` is told of
    watch: frozenset[str] = frozenset()

    def listed(self, fd: int, dir_sub: str, present: frozenset[str]) -> bool:
        """A directory was listed (``present``: which :attr:`watch` names it
        holds); return ``True`` if :meth:`left` must be called for it."""
        return False

    def left(self, dir_sub: str) -> None:
        """Called, innermost first, for each directory :meth:`listed` returned ``True`` for."""

    def tick(self) -> None:
        """A point where the caller may stop the walk (by raising)."""


class Tree(Generic[S]):
    """Entries below the directory ``fd`` (borrowed, not closed), sorted by
    full path, never through a symlink (module doc).  Use as a context
    manager so that a search stopping early closes its fds at once."""

    def __init__(self, root: Root, fd: int, start: S, visitor: TreeVisitor[S], *,
                 yield_dirs: bool = False, max_depth: int = MAX_DEPTH,
                 max_entries: int | None = None) -> None:
        self._root = root
        self._fd = fd
        self._start = start
        self._visitor = visitor
        self._yield_dirs = yield_dirs
        self._max_depth = max_depth
        self._left = max_entries  # entries that may still be yielded
        self.stats = TreeStats()
        self._gen: Generator[TreeItem[S], None, None] | None = None

    def __iter__(self) -> Iterator[TreeItem[S]]:
        self._gen = self._walk()
        return self._capped(self._gen) if self._left is not None else self._gen

    def _capped(self, items: Iterator[TreeItem[S]]) -> Iterator[TreeItem[S]]:
        """At most ``max_entries`` entries in all; then :attr:`TreeStats.incomplete`."""
        for dir_sub, fd, state, run in items:
            left = self._left or 0
            if len(run) > left:
                self.stats.incomplete = True
                if left:
                    yield dir_sub, fd, state, run[:left]
                return
            self._left = left - len(run)
            yield dir_sub, fd, state, run

    def __enter__(self) -> Tree[S]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._gen is not None:
            self._gen.close()  # runs the walk's finally: every fd it opened is closed

    def _list(self, fd: int) -> tuple[_Listed, frozenset[str]]:
        entries: _Listed = []
        append = entries.append
        stats = self.stats
        watch, present = self._visitor.watch, set()
        with self._root.backend.scandir(fd) as it:
            for entry in it:
                name = entry.name
                if name in watch:
                    present.add(name)
                if not name.isascii():
                    try:
                        name.encode("utf-8")
                    except UnicodeEncodeError:
                        stats.undecodable += 1
                        continue
                if entry.is_file(follow_symlinks=False):
                    append((name, name, "file"))
                elif entry.is_dir(follow_symlinks=False):
                    append((name + "/", name, "dir"))
                elif entry.is_symlink():
                    append((name, name, "symlink"))
                else:
                    append((name, name, "other"))
        entries.sort()
        stats.entries += len(entries)
        return entries, frozenset(present)

    def _open(self, fd: int, name: str, dir_sub: str) -> tuple[int, _Listed, bool] | None:
        """Open, list and announce the child directory; ``None`` if it is
        gone or unreadable (or was swapped for a link since listing)."""
        root, visitor = self._root, self._visitor
        try:
            # as fwalk: one name, O_NOFOLLOW|O_DIRECTORY, so only a real
            # directory opens (a symlink swapped in since listing does not)
            child = root.backend.open_at(fd, name, _DIR_FLAGS)
        except OSError:
            self.stats.unreadable_dirs += 1
            return None
        try:
            entries, present = self._list(child)
        except OSError:
            root.backend.close(child)
            self.stats.unreadable_dirs += 1
            return None
        try:
            pushed = visitor.listed(child, dir_sub, present)
        except BaseException:
            root.backend.close(child)
            raise
        return child, entries, pushed

    def _walk(self) -> Generator[TreeItem[S], None, None]:
        visitor, backend, base = self._visitor, self._root.backend, self._fd
        yield_dirs, max_depth = self._yield_dirs, self._max_depth
        # frames: (fd, dir_sub, state, entries iterator, left() owed)
        stack: list[tuple[int, str, S, Iterator[tuple[str, str, str]], bool]] = []
        try:
            visitor.tick()
            entries, present = self._list(base)
            pushed = visitor.listed(base, "", present)
            stack.append((base, "", self._start, iter(entries), pushed))
            while stack:
                fd, dir_sub, state, it, pushed = stack[-1]
                run: list[tuple[str, str]] = []
                for _key, name, kind in it:
                    if kind != "dir":
                        run.append((name, kind))
                        if len(run) >= TICK_EVERY:
                            yield dir_sub, fd, state, run
                            visitor.tick()
                            run = []
                        continue
                    if not visitor.admit_dir(dir_sub, name):
                        continue
                    if yield_dirs:
                        run.append((name, kind))
                    child_state = visitor.enter(state, dir_sub, name)
                    if child_state is None:
                        continue
                    if len(stack) > max_depth:
                        self.stats.too_deep += 1
                        continue
                    if run:
                        yield dir_sub, fd, state, run
                        run = []
                    sub = dir_sub + name + "/"
                    visitor.tick()
                    opened = self._open(fd, name, sub)
                    if opened is None:
                        continue
                    child, child_entries, child_pushed = opened
                    stack.append((child, sub, child_state, iter(child_entries), child_pushed))
                    break
                else:
                    if run:
                        yield dir_sub, fd, state, run
                    stack.pop()
                    if pushed:
                        visitor.left(dir_sub)
                    if fd != base:
                        backend.close(fd)
        finally:
            for fd, _, _, _, _ in stack:
                if fd != base:
                    backend.close(fd)
