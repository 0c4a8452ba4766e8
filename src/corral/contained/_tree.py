"""A sorted, fd-relative walk below one open directory, for searches.

:class:`Tree` lists the entries below a directory fd in code-point order of
the full path (a directory sorts as ``name/``, so ``a.txt`` < ``a/b``), so a
capped search can stop at the cap plus one and still be sorted.  Each
directory is listed once through its own fd (``scandir`` of the fd, the
entry kinds from ``d_type``, no ``stat``) and entered as :meth:`Root.fwalk`
does: one plain name ``O_NOFOLLOW|O_DIRECTORY``, so a symlink is never
followed and no directory is walked twice.  A directory held may be moved
out of the root meanwhile and a name in it swapped for a directory that
never was beneath, so where the caller says where the top is (``where``)
each subdirectory is shown beneath as it is opened
(:func:`._resolve.open_dir_below`: one ``openat2`` of its path from the
root on the fast path, else the name in its parent's fd, then checked);
one that is not is skipped as unreadable.  A directory entered stays the
walk's if it is moved out afterwards, but a name in it may then be swapped
for a file that never was beneath: a caller that opens entries by name in
a directory yielded says so (:meth:`Tree.opened_in`; a directory holding a
watched name counts where the visitor reads those), and that directory is shown
beneath again after those reads, when the walk leaves it or stops, before
the caller answers anything it read there (``EscapeError``, reason
``moved``, where it is not).  On the native fast path that check rides on
the walk's next step into a subdirectory, made before it is opened, in one
C call with its ``openat2`` and listing (no entry is read in between);
with no such step next, it is made before the walk yields anything more.
There the check first looks up the directory's parents (one ``fstatat`` of
``../..``, as many levels as its path has components): the root found
there was its ancestor at that look, so it was beneath (no name is read,
no link followed: a directory has one parent); anything else asks the
kernel's names as :func:`._resolve.still_beneath` does (moved inside the
root to another depth is no refusal).

The walk does no work per entry beyond listing and sorting: it yields runs
of consecutive non-directory entries as slices of the directory's sorted
name list (plain strings), with a small map of the names that are not
regular files, so a search can filter a whole run with one comprehension.

What to enter, and what each directory carries, is the caller's
(:class:`TreeVisitor`): an immutable state per directory (a glob's
automaton states, the policy and .gitignore scopes...), derived from its
parent's once when it is met, and updated once when it has been listed
(its own .gitignore).  ``tick`` runs once per directory and every
:data:`TICK_EVERY` entries, for the caller's deadline checks.  At most
:data:`MAX_DEPTH` directories are open at once; deeper ones are counted in
:attr:`TreeStats.too_deep`.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from ._backend import LeftDirectory, NotListed, makes_batches
from ._errors import EscapeError, PathError, contained_error
from ._handle import Handle
from ._linux import RESOLVE_NO_SYMLINKS, proc_fds
from ._resolve import open_dir_below, still_beneath

if TYPE_CHECKING:
    from ._backend import Backend
    from ._root import Root

__all__ = ["FILE_FLAGS", "MAX_DEPTH", "Listing", "Tree", "TreeItem", "TreeStats", "TreeVisitor",
           "is_native", "open_entry"]

MAX_DEPTH = 128  # directories below the base; each level holds one fd
TICK_EVERY = 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

S = TypeVar("S")
# (dir_sub, dir_fd, state, names, kinds): a run of consecutive entries of one
# directory, in order.  dir_sub is "" or "a/b/"; names are plain names;
# kinds maps each name that is not a regular file to "symlink" or "other"
# (and "dir" for a directory yielded with yield_dirs); the state is the
# directory's, and dir_fd is valid until the next step.
TreeItem = tuple[str, int, S, list[str], dict[str, str]]


@dataclass
class Listing:
    """One directory's entries: ``files`` every non-directory name, sorted;
    ``kinds`` those that are not regular files; ``dirs`` the directories as
    sort keys (``name/``), sorted."""

    files: list[str]
    kinds: dict[str, str]
    dirs: list[str]

    def has(self, name: str) -> bool:
        """Whether a non-directory entry ``name`` was listed."""
        files = self.files
        i = bisect_left(files, name)
        return i < len(files) and files[i] == name

    def has_any(self, name: str) -> bool:
        """Whether an entry ``name`` of any kind was listed (directories
        are listed with their '/')."""
        files = self.files
        i = bisect_left(files, name)
        if i < len(files) and files[i] == name:
            return True
        dirs, entry = self.dirs, name + "/"
        i = bisect_left(dirs, entry)
        return i < len(dirs) and dirs[i] == entry


_NONE_PRESENT: frozenset[str] = frozenset()


def is_native(backend: Backend) -> bool:
    """Whether ``backend`` makes batches of system calls in C, so a search
    may too (any other backend is asked for every call, so a test's
    fault-injecting backend sees them all)."""
    return makes_batches(backend)


def open_entry(root: Root, dir_fd: int, name: str, path: str) -> tuple[Handle, os.stat_result]:
    """Open the entry ``name`` of a directory a :class:`Tree` yielded, for
    reading: one name, never following a symlink, never blocking (a FIFO
    swapped in since the listing opens, and shows in the ``fstat``).
    ``path`` is its canonical root-relative path (the directory's, which
    the walk reached by fd, plus the name).  Returns the :class:`Handle` and
    its ``fstat``; the caller checks the kind and closes the handle."""
    fd = root.backend.open_at(dir_fd, name, FILE_FLAGS)
    handle = Handle(root, root.backend, fd, path)
    try:
        return handle, handle.stat()
    except BaseException:
        handle.close()
        raise


def batches_natively(root: Root) -> bool:
    """Whether a search over ``root`` may batch its system calls in C
    (:func:`is_native` of the root's backend)."""
    return is_native(root.backend)


def adopt_entry(root: Root, fd: int, path: str) -> Handle:
    """A :class:`Handle` for an fd the native file scanner opened on an
    entry of a directory a :class:`Tree` yielded (one name, ``O_NOFOLLOW``,
    as :func:`open_entry` opens it); ``path`` is its canonical root-relative
    path, as for :func:`open_entry`.  The handle owns ``fd``."""
    return Handle(root, root.backend, fd, path)


@dataclass
class TreeStats:
    """What a :class:`Tree` walk left out or could not read, and how many entries it gave."""

    unreadable_dirs: int = 0
    too_deep: int = 0
    undecodable: int = 0  # names that are not UTF-8 on disk: no model can name them
    entries: int = 0
    incomplete: bool = False  # stopped at max_entries


class TreeVisitor(Generic[S]):
    """The caller's side of a :class:`Tree`; the defaults enter everything."""

    def child(self, state: S, dir_sub: str, name: str) -> S | None:
        """The state of the subdirectory ``name`` of the directory
        ``dir_sub`` (in ``state``), or ``None`` if it is not seen at all
        (neither yielded nor entered; e.g. an ignored one)."""
        return state

    def enters(self, state: S) -> bool:
        """Whether a seen directory (in the state :meth:`child` gave) is
        walked; ``False`` when nothing below it can be wanted."""
        return True

    #: names whose presence in a directory :meth:`listed` is told of
    watch: frozenset[str] = frozenset()
    #: whether :meth:`listed` may open the watched names it is told of (by
    #: name, in the directory's fd): that directory is then shown beneath
    #: after, as for :meth:`Tree.opened_in`
    reads_watched: bool = False

    def listed(self, fd: int, state: S, dir_sub: str, present: frozenset[str]) -> S:
        """A directory was listed (``present``: which :attr:`watch` names it
        holds); returns the state its entries are seen in."""
        return state

    def tick(self) -> None:
        """A point where the caller may stop the walk (by raising)."""


class _Frame(Generic[S]):
    """An open directory of the walk and how far its entries were yielded."""

    __slots__ = ("fd", "sub", "state", "listing", "next_dir", "next_file", "opened")

    def __init__(self, fd: int, sub: str, state: S, listing: Listing, opened: bool) -> None:
        self.fd = fd
        self.sub = sub
        self.state = state
        self.listing = listing
        self.next_dir = 0
        self.next_file = 0
        # entries were opened by name in it: shown beneath before it is left
        self.opened = opened


class Tree(Generic[S]):
    """Entries below the directory ``fd`` (borrowed, not closed), sorted by
    full path, never through a symlink (module doc).  Use as a context
    manager so that a search stopping early closes its fds at once."""

    def __init__(self, root: Root, fd: int, start: S, visitor: TreeVisitor[S], *,
                 yield_dirs: bool = False, max_depth: int = MAX_DEPTH,
                 max_entries: int | None = None, where: str | None = None) -> None:
        self._root = root
        self._where = where  # the top's root-relative path: an error listing it names it
        self._prefix = "" if where in (None, ".", "") else f"{where}/"
        anchor = root._anchor
        # openat2's resolve bits for a directory below, opened by its path
        # from the root (0: no fast path, the name is opened and checked)
        self._resolve = anchor.resolve | RESOLVE_NO_SYMLINKS if anchor.fast else 0
        self._fd = fd
        self._start = start
        self._visitor = visitor
        self._yield_dirs = yield_dirs
        self._max_depth = max_depth
        self._left = max_entries  # entries that may still be yielded
        self.stats = TreeStats()
        self._gen: Generator[TreeItem[S], None, None] | None = None
        self._stack: list[_Frame[S]] = []  # the open directories, the top first
        self._native = root.backend.dir_lister() if is_native(root.backend) else None
        # the step into a subdirectory on the fast path in one native call
        # (DirLister.list_below): the check of the directory just left, in
        # which entries were read by name, rides on it, with /proc/self/fd
        native = self._native
        self._below = native is not None and native.below and bool(self._resolve) and \
            where is not None
        self._proc = proc_fds() if self._below else -1
        self._defers = self._below and self._proc >= 0  # a left directory's check rides
        # a directory left whose check rides on the next step into a
        # subdirectory (no entry read in between), else made before the
        # walk yields anything more
        self._pending: _Frame[S] | None = None
        self._backend = root.backend
        # the root fd's device and inode, and that fd
        self._root_ids: tuple[int, int, int] | None = None
        # the last of the watched names as a file and as a directory sorts: a
        # listing whose first name sorts after them holds none of them
        watch = visitor.watch
        self._watch_last = (max(watch), max(name + "/" for name in watch)) if watch else ("", "")

    def __iter__(self) -> Iterator[TreeItem[S]]:
        self._gen = self._walk()
        return self._gen

    def __enter__(self) -> Tree[S]:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self._gen is None:
            return
        try:
            if kind is None or issubclass(kind, Exception):
                # stopped early (full, out of time, refused): what the caller
                # read in a directory still open is answered only if it is
                # beneath (a partial answer included)
                for frame in self._stack:
                    self._show(frame)
        finally:
            self._gen.close()  # runs the walk's finally: every fd it opened is closed

    def opened_in(self, dir_fd: int) -> None:
        """The caller opens (or opened) entries by name in the directory
        ``dir_fd`` the walk yielded: it is shown beneath the root after
        those reads, when the walk leaves it or stops (module doc)."""
        stack = self._stack
        for i in range(len(stack) - 1, -1, -1):  # the top or the one below it
            if stack[i].fd == dir_fd:
                stack[i].opened = True
                return

    def _show(self, frame: _Frame[S]) -> None:
        """``EscapeError`` (reason ``moved``) unless ``frame``, in which
        entries were opened by name, is beneath the root now.  The root
        itself needs no look (nothing between them to move out), nor a walk
        not told where its top is (nothing to check it against)."""
        if not frame.opened or self._where is None:
            return
        frame.opened = False
        path = self._prefix + frame.sub[:-1] if frame.sub else self._where
        if path in (".", ""):
            return
        anchor = self._root._anchor
        root_fd = anchor.acquire(path)
        try:
            # on the native fast path first one look up its parents (the
            # root as many levels above it as its path has components shows
            # it beneath); else the kernel's names
            beneath = root_fd == frame.fd or (
                self._below and self._backend.dir_above_is(frame.fd, path.count("/") + 1,
                                                           *self._ids_of(root_fd))
            ) or still_beneath(anchor, root_fd, frame.fd, path)
        finally:
            anchor.release()
        if not beneath:
            raise EscapeError("a directory the search read in is no longer inside the root",
                              path, component=path, reason="moved")

    def _list(self, fd: int) -> Listing:
        if self._native is not None:
            try:
                names, odd, subdirs, undecodable = self._native(fd)
            except FileNotFoundError:
                # removed while held: nothing in it, as the os backend lists it
                names, odd, subdirs, undecodable = [], {}, [], 0
            names.sort()
            subdirs.sort()
            self.stats.undecodable += undecodable
            self.stats.entries += len(names) + len(subdirs)
            return Listing(names, odd, subdirs)
        files: list[str] = []
        dirs: list[str] = []
        kinds: dict[str, str] = {}
        add_file, add_dir = files.append, dirs.append
        stats = self.stats
        with self._root.backend.scandir(fd) as it:
            for entry in it:
                name = entry.name
                if not name.isascii():
                    try:
                        name.encode("utf-8")
                    except UnicodeEncodeError:
                        stats.undecodable += 1
                        continue
                if entry.is_file(follow_symlinks=False):
                    add_file(name)
                elif entry.is_dir(follow_symlinks=False):
                    add_dir(name + "/")
                else:
                    add_file(name)
                    kinds[name] = "symlink" if entry.is_symlink() else "other"
        files.sort()
        dirs.sort()
        stats.entries += len(files) + len(dirs)
        return Listing(files, kinds, dirs)

    def _top(self, fd: int) -> _Frame[S]:
        """The top directory listed; an error listing it (the host refusing
        to read it) names it where the caller said where it is."""
        try:
            return self._listed(fd, self._start, "")
        except OSError as exc:
            if self._where is None or isinstance(exc, PathError):
                raise
            raise contained_error(exc.errno, self._where, self._where) from None

    def _listed(self, fd: int, state: S, sub: str, listing: Listing | None = None) -> _Frame[S]:
        if listing is None:
            listing = self._list(fd)
        else:
            self.stats.entries += len(listing.files) + len(listing.dirs)
        visitor = self._visitor
        watch = visitor.watch
        present = _NONE_PRESENT
        files, dirs = listing.files, listing.dirs
        last_file, last_dir = self._watch_last
        if watch and ((files and files[0] <= last_file) or (dirs and dirs[0] <= last_dir)):
            has_any = listing.has_any
            found = [name for name in watch if has_any(name)]
            if found:
                present = frozenset(found)
        # a watched name there may be read by the visitor: shown beneath after
        return _Frame(fd, sub, visitor.listed(fd, state, sub, present), listing,
                      bool(present) and visitor.reads_watched)

    def _open(self, parent: _Frame[S], name: str, state: S) -> _Frame[S] | None:
        """Open and list the child directory; ``None`` if it is gone or
        unreadable (or was swapped for a link since listing)."""
        backend = self._root.backend
        self._visitor.tick()
        sub = parent.sub + name + "/"
        left, self._pending = self._pending, None
        try:
            # as fwalk: one name, O_NOFOLLOW|O_DIRECTORY, so only a real
            # directory opens (a symlink swapped in since listing does not)
            if self._below:
                child, listing = self._list_below(parent.fd, name, sub, left)
            elif self._where is not None:
                # the parent may have been moved out of the root since it
                # was opened and the name swapped for a directory never
                # beneath: the one opened is shown beneath (one openat2 of
                # its path from the root on the fast path); one that is not
                # is skipped as unreadable
                child, listing = self._open_below(parent.fd, name, sub), None
            elif self._native is not None:
                child, (files, kinds, dirs, undecodable) = \
                    self._native.open_list(parent.fd, name, _DIR_FLAGS)
                files.sort()
                dirs.sort()
                if undecodable:
                    self.stats.undecodable += undecodable
                listing = Listing(files, kinds, dirs)
            else:
                child, listing = backend.open_at(parent.fd, name, _DIR_FLAGS), None
        except OSError:
            if left is not None:
                self._leave(left)
            self.stats.unreadable_dirs += 1
            return None
        except BaseException as exc:
            if left is not None:
                self._leave(left, check=isinstance(exc, Exception))
            raise
        if left is not None:
            try:
                self._leave(left)  # shown beneath by the step, else checked now
            except BaseException:
                backend.close(child)
                raise
        try:
            return self._listed(child, state, sub, listing)
        except OSError:
            backend.close(child)
            self.stats.unreadable_dirs += 1
            return None
        except BaseException:
            backend.close(child)
            raise

    def _list_below(self, parent_fd: int, name: str, sub: str, left: _Frame[S] | None
                    ) -> tuple[int, Listing | None]:
        """The subdirectory ``name`` of ``parent_fd`` (``sub`` below the
        top), shown beneath the root, and its listing: one native call
        (:meth:`.DirLister.list_below`), which first shows ``left`` (the
        directory just left, entries read in it) beneath the root, as
        :meth:`_show` would; a ``left`` shown so is marked checked, any
        other is left to :meth:`_show`.  Where that call opens nothing,
        :func:`._resolve.open_dir_below`, and no listing (the caller lists)."""
        path = self._prefix + sub[:-1]
        anchor = self._root._anchor
        lister = self._native
        assert lister is not None  # self._below
        root_fd = anchor.acquire(path)
        try:
            check: LeftDirectory | None = None
            if left is not None:
                known = anchor.walk_root if root_fd == anchor.fd else None
                root_name: bytes | None = None
                if known is not None:
                    root_name, root_dev, root_ino = known
                else:
                    root_dev, root_ino = self._ids_of(root_fd)
                check = LeftDirectory(self._proc, left.fd, self._prefix + left.sub[:-1],
                                      root_name, root_dev, root_ino)
            got = lister.list_below(root_fd, path, _DIR_FLAGS, self._resolve, check)
            if got is NotListed.LEFT_NOT_SHOWN:  # left to _show, after: the step alone
                got = lister.list_below(root_fd, path, _DIR_FLAGS, self._resolve, None)
            elif left is not None:
                left.opened = False  # shown beneath
        finally:
            anchor.release()
        if isinstance(got, tuple):
            fd, (files, kinds, dirs, undecodable) = got
            files.sort()
            dirs.sort()
            if undecodable:
                self.stats.undecodable += undecodable
            return fd, Listing(files, kinds, dirs)
        return open_dir_below(anchor, parent_fd, name, path, _DIR_FLAGS), None

    def _ids_of(self, root_fd: int) -> tuple[int, int]:
        """The root fd's device and inode (one ``fstat`` a walk)."""
        ids = self._root_ids
        if ids is None or ids[0] != root_fd:
            info = self._backend.fstat(root_fd)
            ids = self._root_ids = (root_fd, info.st_dev, info.st_ino)
        return ids[1], ids[2]

    def _leave(self, frame: _Frame[S], *, check: bool = True) -> None:
        """Close a directory the walk left (not its top), shown beneath
        first (:meth:`_show`) unless ``check`` is false (a walk stopped by
        an interrupt: nothing is answered)."""
        try:
            if check:
                self._show(frame)
        finally:
            self._backend.close(frame.fd)

    def _open_below(self, parent_fd: int, name: str, sub: str) -> int:
        """The subdirectory ``name`` of ``parent_fd`` (``sub`` below the
        top), shown beneath the root: :func:`._resolve.open_dir_below`,
        its fast path's one ``openat2`` made here first (no frame around it)."""
        path = self._prefix + sub[:-1]
        anchor = self._root._anchor
        resolve = self._resolve
        if resolve:
            root_fd = anchor.acquire(path)
            try:
                fd = anchor.backend.openat2_or_errno(root_fd, path, _DIR_FLAGS, 0, resolve)
            finally:
                anchor.release()
            if fd >= 0:
                return fd
        return open_dir_below(anchor, parent_fd, name, path, _DIR_FLAGS)

    def _runs(self, frame: _Frame[S], end: int, out: list[TreeItem[S]]) -> None:
        """The frame's non-directory entries up to ``end`` into ``out``, in
        runs of at most :data:`TICK_EVERY`."""
        start = frame.next_file
        if start >= end:
            return
        files, kinds = frame.listing.files, frame.listing.kinds
        while start < end:
            stop = min(end, start + TICK_EVERY)
            out.append((frame.sub, frame.fd, frame.state, files[start:stop], kinds))
            start = stop
        frame.next_file = end

    def _step(self, frame: _Frame[S], depth: int) -> tuple[list[TreeItem[S]], _Frame[S] | None]:
        """Advance ``frame`` to its next subdirectory that is entered: the
        runs of entries before it, and its frame (``None``: the frame is
        done, every entry in the runs)."""
        visitor, listing = self._visitor, frame.listing
        out: list[TreeItem[S]] = []
        dirs, files = listing.dirs, listing.files
        while frame.next_dir < len(dirs):
            key = dirs[frame.next_dir]
            frame.next_dir += 1
            name = key[:-1]
            state = visitor.child(frame.state, frame.sub, name)
            if state is None:
                continue
            if self._yield_dirs:
                end = bisect_left(files, key, frame.next_file)
                if end > frame.next_file:
                    self._runs(frame, end, out)
                out.append((frame.sub, frame.fd, frame.state, [name], {name: "dir"}))
            if not visitor.enters(state):
                continue
            if depth > self._max_depth:
                self.stats.too_deep += 1
                continue
            end = bisect_left(files, key, frame.next_file)
            if end > frame.next_file:
                self._runs(frame, end, out)
            child = self._open(frame, name, state)
            if child is not None:
                return out, child
        if frame.next_file < len(files):
            self._runs(frame, len(files), out)
        return out, None

    def _walk(self) -> Generator[TreeItem[S], None, None]:
        backend, base, tick = self._root.backend, self._fd, self._visitor.tick
        stack = self._stack
        try:
            tick()
            stack.append(self._top(base))
            while stack:
                frame = stack[-1]
                runs, child = self._step(frame, len(stack))
                if child is not None:
                    # on the stack before the runs ahead of it are yielded: a
                    # caller that stops at one of them closes it with the rest
                    stack.append(child)
                if self._pending is not None:  # a directory left: checked before any yield
                    self._settle()
                for run in runs:
                    if self._left is not None:  # at most max_entries entries in all
                        left = self._left
                        if len(run[3]) > left:
                            self.stats.incomplete = True
                            if left:
                                yield run[0], run[1], run[2], run[3][:left], run[4]
                            for open_frame in stack:  # what was read in them, shown
                                self._show(open_frame)
                            return
                        self._left = left - len(run[3])
                    yield run
                    if len(run[3]) >= TICK_EVERY:
                        tick()
                if child is not None:
                    continue
                # left: what was read in it, shown beneath (by the next step
                # into a subdirectory where that is one native call)
                stack.pop()
                if frame.fd == base:
                    self._show(frame)
                elif self._defers and frame.opened:
                    self._pending = frame
                else:
                    self._leave(frame)
            self._settle()
        except Exception:
            self._settle()  # stopped: what was read in it, shown beneath first
            raise
        finally:
            pending, self._pending = self._pending, None
            if pending is not None:
                backend.close(pending.fd)
            for frame in stack:
                if frame.fd != base:
                    backend.close(frame.fd)
            stack.clear()

    def _settle(self) -> None:
        """The check of a directory left that no step into a subdirectory
        made (:meth:`_leave`)."""
        left, self._pending = self._pending, None
        if left is not None:
            self._leave(left)
