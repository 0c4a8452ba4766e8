"""``Handle`` (an open fd and where it really is) and ``DirEntry``."""

from __future__ import annotations

import errno
import hashlib
import os
import stat as st
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ._acts import SAFE
from ._closing import Closing
from ._errors import PathError, contained_error
from ._listing import SizedListing, list_sized
from ._resolve import open_dir_below

if TYPE_CHECKING:
    from ._backend import Backend
    from ._root import Root

__all__ = ["Handle", "DirEntry", "entries"]

_CHUNK = 1 << 20


class Handle(Closing):
    """An fd opened beneath a :class:`~corral.contained.Root`, and the
    canonical root-relative ``path`` of what it is (``"."`` for the root),
    as resolution reached it: in-root symlinks and ``..`` resolved, never the
    caller's spelling.  Decisions about the file (policy, locks, identity)
    belong on ``path`` and :meth:`stat`.

    Made by :meth:`Root.open_handle` and :meth:`Target.open`.  Owns ``fd``:
    :meth:`close` (or leaving a ``with`` block) closes it, idempotently;
    ``fd`` is ``-1`` afterwards and every other method raises ``OSError``
    (``EBADF``, naming ``path``).  Reads raise what ``read(2)`` raises
    (``EISDIR`` for a directory), with ``path`` as the filename.  Not
    thread-safe.
    """

    __slots__ = ("fd", "path", "_root", "_backend", "_opened")

    def __init__(self, root: Root, backend: Backend, fd: int, path: str,
                 opened: os.stat_result | None = None) -> None:
        self.fd = fd
        self.path = path
        self._root = root
        self._backend = backend
        self._opened = opened  # the fstat the open itself took, if it gave one

    def fileno(self) -> int:
        return self._fd()

    def open_root(self) -> Root:
        """A :class:`Root` of the directory this handle holds, with its
        Root's options (backend, fast path, strict mode), on a duplicate of
        ``fd`` (the handle stays open and is closed as before).  Nothing
        reached through it leaves *that* directory; decisions about where it
        lies belong on :attr:`path`.  ``NotADirectoryError`` if the handle is
        not a directory."""
        root = self._root
        return type(root).from_fd(self._fd(), follow_symlinks=root.follow_symlinks,
                                  backend=self._backend,
                                  fast_path=bool(root.info()["fast_path"]))

    def stat(self) -> os.stat_result:
        """``fstat`` of the open file (nothing is resolved again)."""
        try:
            return self._backend.fstat(self._fd())
        except OSError as exc:
            raise self._error(exc) from None

    def opened_stat(self) -> os.stat_result:
        """The ``fstat`` of the file as it was opened, for a decision about
        what was opened before a byte of it is read: the one the open took
        where the backend's open gives it (the native one-call open's file
        type check, ``Backend.open_stat_beneath``), else :meth:`stat` now.
        Either is of this fd, taken after it was opened; what changes later
        is :meth:`stat`'s to say."""
        opened = self._opened
        return opened if opened is not None else self.stat()

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes from the current offset (all of the rest for a
        negative ``size``); fewer only at the end of the file."""
        fd = self._fd()
        chunks: list[bytes] = []
        left = size
        try:
            while left != 0:
                chunk = self._backend.read(fd, _CHUNK if left < 0 else min(left, _CHUNK))
                if not chunk:
                    break
                chunks.append(chunk)
                if left > 0:
                    left -= len(chunk)
        except OSError as exc:
            raise self._error(exc) from None
        return b"".join(chunks)

    def pread(self, size: int, offset: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (one ``pread(2)``; the offset of
        the fd does not move)."""
        fd = self.fd
        try:
            return self._backend.pread(fd if fd >= 0 else self._fd(), size, offset)
        except OSError as exc:
            raise self._error(exc) from None

    def sha256(self) -> str:
        """Hex SHA-256 of the whole content, streamed with ``pread`` from 0."""
        fd = self._fd()
        digest = hashlib.sha256()
        offset = 0
        try:
            while True:
                chunk = self._backend.pread(fd, _CHUNK, offset)
                if not chunk:
                    break
                digest.update(chunk)
                offset += len(chunk)
        except OSError as exc:
            raise self._error(exc) from None
        return digest.hexdigest()

    def scandir(self, *, stat: bool = False) -> list[DirEntry]:
        """The entries of this directory handle, as :meth:`Root.scandir`
        gives them (paths beneath this handle's ``path``)."""
        try:
            return entries(self._root, self._backend, self._fd(), self.path, stat=stat)
        except OSError as exc:
            raise self._error(exc) from None

    def sized_listing(self) -> SizedListing:
        """The entries of this directory handle with their kinds and the
        sizes of its regular files, in one pass through the open fd: one
        ``fstatat`` per regular file, none per other entry, nothing
        resolved again (:class:`SizedListing`: parallel lists of names and
        codes, in directory order; every name kept, decoded as
        ``os.fsdecode`` does).  The cheap form of ``scandir(stat=True)``
        when only kinds and sizes are wanted."""
        try:
            return list_sized(self._backend, self._fd())
        except OSError as exc:
            raise self._error(exc) from None

    def open_directory(self, name: str) -> Handle:
        """The subdirectory ``name`` of this directory handle, as a walk
        enters a directory it listed (``O_DIRECTORY|O_NOFOLLOW``: a symlink
        is never followed); its ``path`` is this handle's joined with
        ``name``.  This directory may have been moved out of the root since
        it was opened and the name swapped for a directory never beneath,
        so the one opened is shown beneath
        (:func:`._resolve.open_dir_below`: one ``openat2`` of its path from
        the root on the fast path, else the name in this fd, checked):
        ``EscapeError`` (reason ``moved``) for one that is not."""
        path = name if self.path in (".", "") else f"{self.path}/{name}"
        if not name or "/" in name or name in (".", ".."):
            raise contained_error(errno.EINVAL, path, path)
        try:
            fd = open_dir_below(self._root._anchor, self._fd(), name, path,
                                os.O_RDONLY | os.O_DIRECTORY | SAFE)
        except OSError as exc:
            if isinstance(exc, PathError) and exc.component is not None:
                raise  # refused as moved out, typed
            raise contained_error(exc.errno, path, path) from None
        return Handle(self._root, self._backend, fd, path)

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            self._backend.close(fd)

    def __del__(self) -> None:
        # Closing's finalizer, without its call of close() for a handle
        # closed already (every handle a step ends with)
        try:
            if self.fd >= 0:
                self.close()
        except Exception:  # a finalizer must not raise (nor a half-made handle's)
            pass

    def __repr__(self) -> str:
        return f"<corral Handle {self.path!r} fd={self.fd}>"

    def _fd(self) -> int:
        if self.fd < 0:
            raise OSError(errno.EBADF, "the handle is closed", self.path)
        return self.fd

    def _error(self, exc: OSError) -> OSError:
        if isinstance(exc, PathError) and exc.component is not None:
            return exc
        return contained_error(exc.errno, self.path, self.path)


class DirEntry:
    """One entry of :meth:`Root.scandir`, detached from any fd.

    ``name`` is the entry's name and ``path`` its root-relative path.  The
    ``is_*`` methods answer without following symlinks unless asked; a link
    is followed only beneath the root (an outward link is not a directory).
    """

    __slots__ = ("name", "path", "_kind", "_root", "_lstat")

    def __init__(self, root: Root, path: str, name: str, kind: str,
                 lstat: os.stat_result | None = None) -> None:
        self.name, self.path, self._kind, self._root = name, path, kind, root
        self._lstat = lstat

    @property
    def kind(self) -> str:
        """``"file"``, ``"dir"``, ``"symlink"`` or ``"other"`` (not following links)."""
        return self._kind

    def is_symlink(self) -> bool:
        return self._kind == "symlink"

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        if self._kind == "symlink" and follow_symlinks:
            return self._followed_mode(st.S_ISDIR)
        return self._kind == "dir"

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        if self._kind == "symlink" and follow_symlinks:
            return self._followed_mode(st.S_ISREG)
        return self._kind == "file"

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        """The entry's stat: taken while listing when ``scandir(stat=True)``
        (and not a link to follow), else resolved again beneath the root."""
        if self._lstat is not None and not (follow_symlinks and self._kind == "symlink"):
            return self._lstat
        return self._root.stat(self.path, follow_symlinks=follow_symlinks)

    def _followed_mode(self, test: Callable[[int], bool]) -> bool:
        try:
            return test(self._root.stat(self.path).st_mode)
        except OSError:
            return False

    def __repr__(self) -> str:
        return f"<corral DirEntry {self.path!r} {self._kind}>"


def kinds(backend: Backend, fd: int) -> Iterator[tuple[str, str]]:
    """(name, kind) of each entry of the directory fd, from d_type."""
    with backend.scandir(fd) as it:
        for entry in it:
            if entry.is_symlink():
                kind = "symlink"
            elif entry.is_dir(follow_symlinks=False):
                kind = "dir"
            elif entry.is_file(follow_symlinks=False):
                kind = "file"
            else:
                kind = "other"
            yield entry.name, kind


def entries(root: Root, backend: Backend, fd: int, where: str, *,
            stat: bool) -> list[DirEntry]:
    """The :class:`DirEntry` list of the directory fd at canonical ``where``.

    ``stat=True`` also takes each entry's ``lstat`` relative to the open
    directory (one ``fstatat`` each, no re-resolution); an entry removed
    meanwhile is left out."""
    prefix = "" if where == "." else where + "/"
    if not stat:
        return [DirEntry(root, prefix + name, name, kind) for name, kind in kinds(backend, fd)]
    out = []
    for name, kind in kinds(backend, fd):
        try:
            info = backend.lstat_at(fd, name)
        except FileNotFoundError:
            continue
        out.append(DirEntry(root, prefix + name, name, kind, info))
    return out
