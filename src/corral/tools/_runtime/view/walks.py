"""What the read-side walks look at: canonical paths probed, small files
read, directories opened to list or walk, the files a listing showed."""

from __future__ import annotations

import errno
import os
import posixpath
import stat as st
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from ....contained import (FileScan, Tree, TreeVisitor, adopt_entry, batches_natively,
                           open_entry)
from ..._policy.rules import Op
from ..._refusals.catalogue import swapped
from ..view_read import OpenFile
from ..view_walk import LinkEnd, OpenDirectory
from .call import CallView
from .decide import View
from .locks import _TREE

WalkState = TypeVar("WalkState")

# openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS (the same
# bits in every backend): a canonical path is probed in one call, no link followed
_CANONICAL_ONLY = 0x08 | 0x04 | 0x02
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR})
_PROBE_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_PROBE_ANY = getattr(os, "O_PATH", 0) | os.O_NOFOLLOW | os.O_CLOEXEC


class _ViewFacts:
    """A fact about each view that never changes once looked up, read
    without a lock or a new weak reference on every call (a listing asks
    it each time): keyed by the view's id, each entry keeps a weak
    reference to check it is still that view, and leaves with it."""

    def __init__(self) -> None:
        self._facts: dict[int, tuple[weakref.ref[View], bool]] = {}
        # re-entrant: a view collected while put holds it runs gone() in that thread
        self._guard = threading.RLock()

    def get(self, view: View) -> bool | None:
        entry = self._facts.get(id(view))  # one lookup: atomic without the lock
        if entry is not None and entry[0]() is view:
            return entry[1]
        return None

    def put(self, view: View, fact: bool) -> None:
        key = id(view)

        def gone(ref: weakref.ref[View]) -> None:
            with self._guard:
                if self._facts.get(key, (None, False))[0] is ref:
                    del self._facts[key]
        with self._guard:
            self._facts[key] = (weakref.ref(view, gone), fact)


_REPOSITORY_ABOVE = _ViewFacts()
_PROBE_FAST = _ViewFacts()


def _probes_fast(view: View) -> bool:
    """Whether a canonical path is probed with one ``openat2`` from this
    view's root (fixed when the root was opened: asked once)."""
    fast = _PROBE_FAST.get(view)
    if fast is None:
        root = view.root
        fast = bool(root.backend.has_openat2 and _PROBE_ANY and root.info().get("fast_path"))
        _PROBE_FAST.put(view, fast)
    return fast


def _probe(call: CallView, canonical: str, flags: int) -> int | None:
    """An fd of what is at the canonical path ``canonical`` from one
    ``openat2`` of the root fd (no link followed anywhere), ``None`` when
    nothing is there; raises ``LookupError`` when one call cannot say (no
    openat2, a link on the way, a rename racing it): the caller then asks
    the core the long way."""
    view = call.shared
    root = view.root
    backend = root.backend
    if not _probes_fast(view):
        raise LookupError(canonical)
    # a miss (the common case) is answered as -errno, without an exception
    fd = backend.openat2_or_errno(root.fileno(), canonical, flags, 0, _CANONICAL_ONLY)
    if fd >= 0:
        return fd
    if -fd in _ABSENT:
        return None
    raise LookupError(canonical)


def entry_exists(call: CallView, canonical: str) -> bool:
    """Whether an entry of any kind (a final link counts) is at the
    canonical root-relative path ``canonical``: one system call when there
    is none, two when there is; one in either case for a name in the root."""
    if "/" not in canonical and canonical not in (".", "..", ""):
        root = call.shared.root  # a name looked up in the root itself: nothing traversed
        try:  # one call, a miss answered without an exception (the common case)
            return root.backend.exists_at(root.fileno(), canonical)
        except ValueError:
            return False
    try:
        fd = _probe(call, canonical, _PROBE_ANY)
    except LookupError:
        try:
            call.shared.root.lstat(canonical)
        except OSError:
            return False
        return True
    if fd is None:
        return False
    call.shared.root.backend.close(fd)
    return True


def read_regular_file(call: CallView, canonical: str, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of the regular file at the canonical path
    ``canonical``; ``None`` when there is none, it is a link, another kind
    or unreadable (an ignore file: git follows no link to one either).
    One system call when there is none."""
    from ....contained import adopt_entry

    root = call.shared.root
    try:
        fd = _probe(call, canonical, _PROBE_FILE)
    except LookupError:
        try:
            handle = root.open_handle(canonical, _PROBE_FILE)
        except OSError:
            return None
    else:
        if fd is None:
            return None
        handle = adopt_entry(root, fd, canonical)
    with handle:
        try:
            if not st.S_ISREG(handle.stat().st_mode):
                return None
            return handle.read(limit)
        except OSError:
            return None


def root_in_repository(view: View) -> bool:
    """Whether the root is inside a git work tree whose top is above it:
    the host's own path to the root has a ``.git`` in one of its parent
    directories (looked once per view, by the host's path, never by a
    model's; nothing above the root is read beyond that name)."""
    known = _REPOSITORY_ABOVE.get(view)
    if known is not None:
        return known
    path = os.path.abspath(os.fsdecode(view.root.path))
    found = False
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
        if os.path.lexists(os.path.join(path, ".git")):
            found = True
            break
    _REPOSITORY_ABOVE.put(view, found)
    return found


def open_directory(call: CallView, rel: str, op: Op) -> OpenDirectory:
    """Open ``rel`` as a directory to list it, as one step: one resolution
    (a final link followed, as ``ls`` does) and ``op`` decided on what was
    opened and on the names leading to it (:meth:`CallView.open_handle`).
    ``NotADirectoryError`` (or the core's special-file error) for anything
    else."""
    handle = call.open_handle(rel, op, os.O_RDONLY | os.O_DIRECTORY)
    return OpenDirectory(handle, rel.rstrip("/") or ".")


def open_below(call: CallView, canonical: str, identity: tuple[int, int]) -> OpenDirectory | None:
    """A directory a listing met below one :func:`open_directory` opened,
    by its canonical path with no link followed anywhere, or ``None`` when
    it is gone or no longer the directory the listing saw (``identity``)
    at that path (a link put on the way would move its canonical path).
    The caller decided on it already: it was listed as visible."""
    try:
        handle = call.shared.root.open_handle(canonical, os.O_RDONLY | os.O_DIRECTORY
                                              | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = handle.stat()
    except OSError:
        handle.close()
        return None
    if (info.st_dev, info.st_ino) != identity or handle.path != canonical:
        handle.close()
        return None
    return OpenDirectory(handle, canonical)


def kind_of(call: CallView, rel: str) -> os.stat_result:
    """The ``stat`` of what ``rel`` leads to, to say why it cannot be
    listed (a file, a FIFO): facts for a refusal, decided on already."""
    return call.shared.root.stat(rel)


def open_searched(call: CallView, rel: str, before: os.stat_result
                  ) -> tuple[OpenDirectory, os.stat_result]:
    """The directory a search was decided and authorized on, opened (one
    resolution, a final link followed) to walk it, and its ``fstat``;
    ``STALE`` (closed again) if it is no longer what was stat-ed then: the
    walk acts on the directory decided on, or on nothing."""
    shown = rel.rstrip("/") or "."
    handle = call.shared.root.open_handle(rel, os.O_RDONLY | os.O_DIRECTORY)
    try:
        info = handle.stat()
        if (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
            raise swapped(shown)
    except BaseException:
        handle.close()
        raise
    return OpenDirectory(handle, shown), info


class _TreeHeld:
    """:func:`holding_tree`'s hold (a plain class: every file_info and
    listing takes one, and a generator's context manager costs more than
    the lock)."""

    __slots__ = ("_checkpoint",)

    def __init__(self, checkpoint: Callable[[], None]) -> None:
        self._checkpoint = checkpoint

    def __enter__(self) -> None:
        _TREE.take_shared(self._checkpoint)

    def __exit__(self, *exc: object) -> None:
        _TREE.drop_shared()


def holding_tree(call: CallView) -> _TreeHeld:
    """This process's tree lock, shared, for a look made of several reads
    (a listing and what it says of each entry, a directory's links): no
    move, delete or making of parents, each of which holds it alone, is
    seen half done.  Take it after the host was asked, never around that."""
    return _TreeHeld(call.checkpoint)


@contextmanager
def walking(call: CallView, directory: OpenDirectory) -> Iterator[None]:
    """Hold the tree for a walk below ``directory`` (this process's tree
    lock, shared: no move or delete of this process, each of which holds it
    alone, changes the tree meanwhile, so the walk answers one state of it,
    as some one-at-a-time order of the calls would); ``STALE`` when the
    directory left its path before the lock was had (the walk enters what
    lies below it by that path).  Writes hold it shared too: one lands
    whole, its temporary file no listing shows, or not at all."""
    with _TREE.shared(call.checkpoint):
        if directory.path not in (".", ""):
            try:
                info = call.shared.root.lstat(directory.path)
            except OSError:
                info = None
            if info is None or (info.st_dev, info.st_ino) != directory.identity():
                raise swapped(directory.shown)
        yield


class _HeldTree(Tree[WalkState]):
    """A :class:`Tree` holding the tree lock while it is used as a context
    manager (:func:`walking`)."""

    def __init__(self, call: CallView, directory: OpenDirectory, start: WalkState,
                 visitor: TreeVisitor[WalkState], *, yield_dirs: bool,
                 max_entries: int | None) -> None:
        super().__init__(call.shared.root, directory.fileno(), start, visitor,
                         yield_dirs=yield_dirs, max_entries=max_entries, where=directory.path)
        self._held = walking(call, directory)

    def __enter__(self) -> _HeldTree[WalkState]:
        self._held.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        try:
            super().__exit__(kind, *exc)
        finally:
            self._held.__exit__(None, None, None)


def walk_tree(call: CallView, directory: OpenDirectory, start: WalkState,
              visitor: TreeVisitor[WalkState], *, yield_dirs: bool = False,
              max_entries: int | None = None) -> Tree[WalkState]:
    """The core's walk below ``directory`` (never through a link; the
    visitor decides what is entered and shown), the tree held while it is
    used as a context manager (:func:`walking`)."""
    return _HeldTree(call, directory, start, visitor, yield_dirs=yield_dirs,
                     max_entries=max_entries)


def read_listed_file(call: CallView, dir_fd: int, name: str, canonical: str, limit: int
                     ) -> bytes | None:
    """Up to ``limit`` bytes of the regular file ``name`` that a listing of
    the directory ``dir_fd`` (one a walk holds, at the canonical path of
    ``canonical``'s parent) showed: one open of that name, no link
    followed; ``None`` when it is gone, a link, another kind or unreadable."""
    try:
        handle, info = open_entry(call.shared.root, dir_fd, name, canonical)
    except OSError:
        return None
    with handle:
        if not st.S_ISREG(info.st_mode):
            return None
        try:
            return handle.read(limit)
        except OSError:
            return None


def listed_file_scanner(call: CallView, needle: bytes | None, *, sniff: int,
                        keep_links: bool, chunk: int) -> FileScan | None:
    """The backend's scanner of the files a walk listed, in batches, where
    it has one (none for a backend that must see every call); the fds it
    leaves open are taken with :func:`adopt_listed`."""
    root = call.shared.root
    if not batches_natively(root):
        return None
    return root.backend.file_scanner(needle, sniff=sniff, keep_links=keep_links, chunk=chunk)


def adopt_listed(call: CallView, fd: int, canonical: str, shown: str) -> OpenFile:
    """The file the scanner opened (one name of a directory a walk holds,
    no link followed) at the canonical path ``canonical``; owns ``fd``."""
    root = call.shared.root
    return OpenFile(adopt_entry(root, fd, canonical), root.backend, shown)


def open_listed(call: CallView, dir_fd: int, name: str, canonical: str, shown: str
                ) -> tuple[OpenFile, os.stat_result]:
    """Open the entry ``name`` a listing of the directory ``dir_fd`` (one a
    walk holds) showed, for reading: one name, no link followed, never
    blocking; with its ``fstat``.  Raises the open's ``OSError``."""
    root = call.shared.root
    handle, info = open_entry(root, dir_fd, name, canonical)
    return OpenFile(handle, root.backend, shown), info


def link_ends(call: CallView, dir_fd: int, directory: str, names: list[str],
              op: Op = Op.SEARCH) -> dict[str, LinkEnd]:
    """:meth:`CallView.link_end` of each symlink ``names`` of the canonical
    ``directory`` a walk holds open as ``dir_fd``: the link's text read
    there, then one ``openat2`` of it from the root where no other link is
    on the way and something is there (its ``..`` are then lexical, so the
    spelling names the canonical path); every other case is
    :meth:`CallView.spelled_link_end`'s.  Decided on the canonical path
    before the kind, as there.  What every link shares (the root's fd, the
    backend) is looked up once for the directory."""
    view = call.shared
    root = view.root
    backend = root.backend
    fast = _probes_fast(view)
    root_fd = root.fileno()
    probe, fstat, close = backend.openat2_or_errno, backend.fstat, backend.close
    visible, normpath = view.visible, posixpath.normpath
    ends: dict[str, LinkEnd] = {}
    for name in names:
        spelled = call.link_spelling(dir_fd, directory, name)
        if spelled is None:
            ends[name] = LinkEnd.OTHER
            continue
        # the common case: no other link on the way, one openat2 says where it lands
        # (EAGAIN: a rename somewhere raced its '..', asked once more)
        fd = probe(root_fd, spelled, _PROBE_ANY, 0, _CANONICAL_ONLY) if fast else -errno.ENOSYS
        if fd == -errno.EAGAIN:
            fd = probe(root_fd, spelled, _PROBE_ANY, 0, _CANONICAL_ONLY)
        if fd < 0:  # a link on the way, nothing there, no openat2: the core resolves it
            ends[name] = call.spelled_link_end(spelled, op)
            continue
        try:
            regular = st.S_ISREG(fstat(fd).st_mode)
        except OSError:
            regular = False
        finally:
            close(fd)
        # no link was followed on the way (the directory is canonical), so
        # the path it reached is the spelling with its '..' taken lexically
        if not visible(normpath(spelled), op):
            ends[name] = LinkEnd.HIDDEN
        else:
            ends[name] = LinkEnd.FILE if regular else LinkEnd.OTHER
    return ends
