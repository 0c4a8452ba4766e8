"""The system-call interface the resolver is written against, and its backends.

A backend is a small object of ``*_at`` calls that take a directory fd and one
name (never a path with ``/`` in it, except ``openat2``).  The resolver
(``_resolve.py``) owns every security decision; a backend only makes calls,
states facts about the kernel (:meth:`Backend.mount_flags`,
:meth:`Backend.protected_symlinks`) and raises ``OSError`` with the kernel's
errno.  That keeps the platforms apart and lets tests wrap a backend to
inject faults (``corral.testing.backends.FaultBackend``).

Backends:

* :class:`OsBackend`: the ``os`` module's ``dir_fd`` calls, plus what each
  platform's module adds through ctypes: ``_linux.py`` (``openat2``,
  ``renameat2``, the kernel's symlink rules), ``_darwin.py``
  (``renameatx_np``).
* ``NativeBackend`` (``_native_backend.py``): the cffi module
  ``corral._native``, required on Darwin, built on Linux when a compiler is
  present; adds Root.open's one-call fast path.  It is the only module that
  imports ``corral._native``: the layers above reach native speed through
  the methods below, never through the module.

Besides the ``*_at`` calls, a backend gives the work the native module does
in C, each with a Python default here that every other backend inherits:
the fd calls for metadata (``fchown``, the xattr calls), an ``openat2``
that answers a failure as ``-errno`` (:meth:`Backend.openat2_or_errno`: a
probe expected to fail often), the work on a buffer
(:meth:`Backend.text_window`, :meth:`Backend.literal_lines`,
:meth:`Backend.count_newlines`) and batches of system calls
(:meth:`Backend.dir_lister`, :meth:`Backend.list_sized`,
:meth:`Backend.file_scanner`; ``None`` from the defaults: the caller then
makes each call through the backend, so a test's wrapper sees them all).

Which one a Root uses is chosen in ``_select`` (``CORRAL_BACKEND=os|native``
forces it); ``CORRAL_OPENAT2=0`` turns the fast path off (the walk then
runs).

Under pyfakefs (its fds are small integers that collide with real ones, so a
real system call on one acts on a real file) no backend here runs: pass
``corral.testing.backends.FakeFsBackend()``, which makes only calls pyfakefs
fakes.
"""

from __future__ import annotations

import enum
import errno
import fcntl
import os
import re
import struct
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, Protocol

from . import _darwin, _linux
from ._paths import refuse_nul

__all__ = ["Backend", "DirEntries", "DirLister", "FileScan", "Hit", "KindListing",
           "LeftDirectory", "NotListed",
           "OpenBeneath", "OpenStatBeneath", "OpenTextBeneath", "OsBackend", "ScanStatus",
           "TextWindow",
           "clamp_int64", "fd_capabilities",
           "makes_batches", "RENAME_NOREPLACE", "RENAME_EXCHANGE", "FAKE_FS_REFUSAL",
           "REPLACED", "NOT_REPLACED", "TARGET_CHANGED"]

RENAME_NOREPLACE = _linux.RENAME_NOREPLACE
RENAME_EXCHANGE = _linux.RENAME_EXCHANGE

#: :meth:`Backend.replace_file`'s answers
REPLACED, NOT_REPLACED, TARGET_CHANGED = 0, 1, 2

IS_LINUX = sys.platform.startswith("linux")
IS_DARWIN = sys.platform == "darwin"

# Intermediate directories only need to be searched: O_PATH on Linux (cheaper,
# and works on search-only directories); O_SEARCH where the os module has it.
# inotify's event header (struct inotify_event: watch, mask, cookie, name
# length) and the masks of one replace's events
_EVENT = struct.Struct("iIII")
_EVENT_SIZE = _EVENT.size
_MOVE = struct.Struct("iI")
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE = 0x40, 0x80, 0x100
_SEARCH = getattr(os, "O_PATH", 0) or getattr(os, "O_SEARCH", 0) or os.O_RDONLY
DIR_FLAGS = _SEARCH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# walk_open: the flags it takes (corral_walk.h's), those it adds to the final open
_O_PATH = getattr(os, "O_PATH", 0)
_WALK_FLAGS = (os.O_ACCMODE | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
               | os.O_DIRECTORY | getattr(os, "O_NOATIME", 0) | getattr(os, "O_LARGEFILE", 0))
_WALK_FINAL = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_S_IFMT, _S_IFREG, _S_IFDIR = 0o170000, 0o100000, 0o040000

#: ``open_beneath(dir_fd, path, len(path), flags, mode, resolve) -> fd or -1``
OpenBeneath = Callable[[int, bytes, int, int, int, int], int]
#: ``open_text_beneath(dir_fd, path, flags, mode, resolve) -> fd or -1``: the
#: path as given to Root.open (-1 for one that is not a ``str``)
OpenTextBeneath = Callable[[int, object, int, int, int], int]
#: ``open_stat_beneath(dir_fd, path, flags, mode, resolve) -> (fd, stat) or -1``:
#: ``open_text_beneath``, answering with the fd the fstat its file-type check
#: took (a reader deciding on what it opened needs no second one)
OpenStatBeneath = Callable[[int, object, int, int, int], "tuple[int, os.stat_result] | int"]

#: A line of a buffer holding a match: its start, its end (the offset of its
#: ``\n``, or the end), the offset of the match in it, its 1-based number.
Hit = tuple[int, int, int, int]
#: One directory's entries by kind: the names of non-directories, those of
#: them that are not regular files (``"symlink"`` or ``"other"``), the
#: directories as ``name/``, and how many names were left out for not being
#: UTF-8.  Unsorted.
KindListing = tuple[list[str], dict[str, str], list[str], int]

INT64_MAX = 2**63 - 1


class TextWindow(NamedTuple):
    """The numbered window of lines :meth:`Backend.text_window` rendered."""

    content: str  # "N\tline" for each line shown, joined by "\n"
    total: int  # the lines in the buffer
    shown: int  # the lines in content
    has_newline: bool  # whether the buffer holds a "\n"
    controls: int = 0  # control bytes text does not hold among the first ``head``
    #: where each line shown begins in the buffer (its offset), when the
    #: backend noted it (a renderer then cuts the buffer at a few lines
    #: instead of splitting it at every one); empty when not
    starts: Sequence[int] = ()
    #: the lines shown are ASCII whose only characters a JSON string escapes
    #: are tabs, line feeds, quotes and backslashes (when the backend looked)
    plain: bool = False


class LeftDirectory(NamedTuple):
    """A directory the search walk left, to be shown beneath the root
    before its next step (:meth:`DirLister.list_below`)."""

    proc_fd: int  # this process's /proc/self/fd
    fd: int
    path: str  # canonical, root-relative
    root_name: bytes | None  # the root's kernel name where read once (``Anchor.walk_root``)
    root_dev: int  # the root fd's device and inode
    root_ino: int


class NotListed(enum.IntEnum):
    """:meth:`DirLister.list_below`'s answers other than a listing."""

    LEFT_NOT_SHOWN = -1  # the left directory not shown beneath: nothing opened
    NOT_OPENED = -2  # the step not taken (a left directory was shown beneath)


class DirLister(Protocol):
    """Lists directories in one call each (:meth:`Backend.dir_lister`)."""

    #: whether :meth:`list_below` can open a directory by ``openat2``
    below: bool

    def __call__(self, fd: int) -> KindListing: ...
    def open_list(self, dir_fd: int, name: str, flags: int) -> tuple[int, KindListing]: ...
    def list_below(self, root_fd: int, path: str, flags: int, resolve: int,
                   left: LeftDirectory | None) -> tuple[int, KindListing] | NotListed: ...


class FileScan(Protocol):
    """grep's per-file work for a directory's files (:meth:`Backend.file_scanner`).

    :meth:`scan` takes ``names`` (each NUL-terminated) from ``offset`` and
    gives four values per file done: a :class:`ScanStatus`, the fd of an
    open file (the caller's to close) or an errno or -1, ``st_size``,
    ``st_nlink``; and the offset of the first name not done."""

    def scan(self, dir_fd: int, names: bytes, offset: int, count: int
             ) -> tuple[list[int], int]: ...


class ScanStatus(enum.IntEnum):
    """What :meth:`FileScan.scan` did with a file."""

    ABSENT = 0  # read: no needle in it (closed)
    OPEN = 1  # to be searched by the caller: its fd is given
    BINARY = 2  # a NUL in its first bytes (closed)
    SPECIAL = 3  # not a regular file (closed)
    HARDLINK = 4  # more than one link, and links are not kept (closed)
    OPEN_ERROR = 5  # the open failed: its errno is given
    READ_ERROR = 6  # the fstat or a read failed: its errno is given (closed)


def makes_batches(backend: Backend) -> bool:
    """Whether ``backend`` itself makes batches of system calls in C (its
    class says so): only then are :meth:`Backend.dir_lister`,
    :meth:`Backend.list_sized` and :meth:`Backend.file_scanner` used, so a
    test's wrapper around a native backend still sees every call."""
    return getattr(type(backend), "batches", False) is True


def clamp_int64(value: int, name: str, *, low: int = 0) -> int:
    """``value`` checked for a native call: an ``int`` of at least ``low``
    (``TypeError`` / ``ValueError`` otherwise), clamped to ``INT64_MAX``
    (any larger count or position means "all of it", and a C ``int64_t``
    cannot hold it)."""
    if type(value) is not int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        value = int(value)
    if value < low:
        raise ValueError(f"{name} must be at least {low}, not {value}")
    return value if value <= INT64_MAX else INT64_MAX


class DirEntries(Protocol):
    """What ``os.scandir(fd)`` returns: entries, and a context manager."""

    def __iter__(self) -> Iterator[os.DirEntry[str]]: ...
    def __next__(self) -> os.DirEntry[str]: ...
    def __enter__(self) -> DirEntries: ...
    def __exit__(self, *exc: object) -> None: ...


def fd_capabilities() -> bool:
    """Whether this Python can resolve beneath a directory fd at all, as
    ``shutil`` decides ``rmtree.avoids_symlink_attacks``: every ``*at`` call
    the resolver makes takes ``dir_fd``, ``os.scandir`` takes an fd, ``stat``
    can refuse to follow, and ``O_NOFOLLOW``/``O_DIRECTORY`` exist."""
    needed = {os.open, os.stat, os.mkdir, os.unlink, os.rmdir, os.rename, os.readlink,
              os.symlink, os.link}
    return (needed <= os.supports_dir_fd and os.scandir in os.supports_fd
            and os.stat in os.supports_follow_symlinks
            and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY"))


def _unsupported(what: str) -> OSError:
    return OSError(errno.ENOTSUP, f"{what} is not available here")


def _unimplemented(method: str) -> NotImplementedError:
    return NotImplementedError(f"this backend does not implement {method}")


class Backend:
    """The interface of a backend (documentation; see the module doc).

    Every call raises ``OSError`` carrying the kernel's errno and nothing
    else; a method a backend does not provide raises
    ``NotImplementedError``.  ``openat2_reason`` says why the fast path is or
    is not in use; ``avoids_symlink_attacks`` whether the platform gives
    what resolution beneath an fd needs (:func:`fd_capabilities`).
    """

    name = "abstract"
    dir_flags = DIR_FLAGS
    has_openat2 = False
    openat2_reason = "not probed"
    #: ``openat2`` answers EAGAIN to a ``..`` raced by a rename (Linux's
    #: RESOLVE_BENEATH), so a result opened without following links is
    #: where its spelling says.
    openat2_checks_dotdot = False
    #: Root.open's fast path in one native call (see ``corral_native.h``),
    #: where the backend has one; ``None``: the fast path is Python's.
    open_beneath: OpenBeneath | None = None
    #: The same, taking the path as Root.open was given it (encoded in C where
    #: the backend can): set wherever ``open_beneath`` is.
    open_text_beneath: OpenTextBeneath | None = None
    #: The same, answering ``(fd, stat)``: the fstat the open took, as
    #: ``os.fstat`` gives it (``None``: the backend's open takes none to give,
    #: and a reader's first :meth:`fstat` is its own).
    open_stat_beneath: OpenStatBeneath | None = None
    avoids_symlink_attacks = False
    #: Only a backend that says so runs under pyfakefs (module doc).
    fake_fs_safe = False

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        raise _unimplemented("open_at")

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        raise _unimplemented("openat2")

    def openat2_or_errno(self, dir_fd: int, path: str, flags: int, mode: int,
                         resolve: int) -> int:
        """:meth:`openat2`, answering a failure as ``-errno`` rather than
        raising it: for a probe that is expected to fail often (raising
        costs as much as the system call).  A backend may answer it in one
        call; this one is :meth:`openat2`, so a wrapper counting or failing
        that sees it too."""
        try:
            return self.openat2(dir_fd, path, flags, mode, resolve)
        except OSError as exc:
            return -(exc.errno or errno.EIO)

    def close(self, fd: int) -> None:
        raise _unimplemented("close")

    def fstat(self, fd: int) -> os.stat_result:
        raise _unimplemented("fstat")

    def stamps_held(self, fd: int, size: int, mtime_ns: int, ctime_ns: int) -> int:
        """Whether the file open at ``fd`` still has the ``st_size``,
        ``st_mtime_ns`` and ``st_ctime_ns`` an earlier :meth:`fstat` gave:
        ``1`` if so, ``0`` if one moved, ``-1`` if the fstat failed (one
        ``fstat``; a backend may answer without building a ``stat_result``)."""
        try:
            now = self.fstat(fd)
        except OSError:
            return -1
        return int((now.st_size, now.st_mtime_ns, now.st_ctime_ns) == (size, mtime_ns, ctime_ns))

    def lstat_at(self, dir_fd: int, name: str) -> os.stat_result:
        raise _unimplemented("lstat_at")

    def exists_at(self, dir_fd: int, name: str) -> bool:
        """Whether ``name`` is in ``dir_fd`` (a final link not followed),
        answered without raising: for a probe that is expected to miss often
        (raising costs as much as the system call).  Any error is ``False``.
        This default is :meth:`lstat_at`, so a wrapper counting or failing
        that sees it too."""
        try:
            self.lstat_at(dir_fd, name)
        except OSError:
            return False
        return True

    def flock(self, fd: int, operation: int, /) -> None:
        """``flock(fd, operation)`` (``fcntl.LOCK_*``): the view's locks on
        a directory it acts in and on a root's lock file go through here, so
        a wrapper counting system calls counts them (positional only, as
        ``fcntl.flock``: the native backend binds that itself)."""
        fcntl.flock(fd, operation)

    def readlink_at(self, dir_fd: int, name: str) -> str:
        raise _unimplemented("readlink_at")

    def mkdir_at(self, dir_fd: int, name: str, mode: int) -> None:
        raise _unimplemented("mkdir_at")

    def create_directory_at(self, dir_fd: int, name: str, mode: int) -> int:
        raise _unimplemented("create_directory_at")

    def unlink_at(self, dir_fd: int, name: str) -> None:
        raise _unimplemented("unlink_at")

    def rmdir_at(self, dir_fd: int, name: str) -> None:
        raise _unimplemented("rmdir_at")

    def rename_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                  flags: int = 0) -> None:
        raise _unimplemented("rename_at")

    def link_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
        raise _unimplemented("link_at")

    def symlink_at(self, target: str, dir_fd: int, name: str) -> None:
        raise _unimplemented("symlink_at")

    def scandir(self, fd: int) -> DirEntries:
        raise _unimplemented("scandir")

    # positional only, as os.read and os.pread are: a backend may bind those
    # themselves (NativeBackend), with no Python frame around each read
    def read(self, fd: int, size: int, /) -> bytes:
        raise _unimplemented("read")

    def pread(self, fd: int, size: int, offset: int, /) -> bytes:
        raise _unimplemented("pread")

    def write(self, fd: int, data: bytes | memoryview) -> int:
        raise _unimplemented("write")

    def fsync(self, fd: int) -> None:
        raise _unimplemented("fsync")

    def fchmod(self, fd: int, mode: int) -> None:
        raise _unimplemented("fchmod")

    def mount_flags(self, fd: int) -> int:
        """``statvfs.f_flag`` of the filesystem holding the open ``fd``
        (``ST_NOSYMFOLLOW`` is the one the resolver reads); 0 where unknown."""
        return 0

    def filesystem_type(self, fd: int) -> int:
        """The kind of filesystem holding the open ``fd``: Linux's
        ``statfs.f_type`` magic number (``PROC_SUPER_MAGIC``...); 0 where
        unknown."""
        return 0

    # -- fd calls for metadata (a replace carries owner and xattrs over) ---------
    def fchown(self, fd: int, uid: int, gid: int) -> None:
        raise _unimplemented("fchown")

    def flistxattr(self, fd: int) -> list[str]:
        raise _unimplemented("flistxattr")

    def fgetxattr(self, fd: int, name: str) -> bytes:
        raise _unimplemented("fgetxattr")

    def fsetxattr(self, fd: int, name: str, value: bytes) -> None:
        raise _unimplemented("fsetxattr")

    # -- work on buffers: Python here, C in the native backend --------------------
    def text_window(self, data: bytes, offset: int, limit: int, cap: int, budget: int,
                    head: int = 0) -> TextWindow | None:
        """The lines ``[offset, offset+limit)`` of ``data`` (valid UTF-8, no
        NUL: the caller checked), numbered ``"N\tline"``, keeping those whose
        text fits ``budget`` bytes and at least one; ``None`` when the caller
        must render the window itself (a byte order mark, any ``\r``, a line
        longer than ``cap`` bytes in the window, or a backend that has no
        fast way: this default).  ``controls`` counts the control bytes
        text does not hold (C0 other than backspace, tab, line feed,
        vertical tab, form feed, carriage return and escape; and DEL) among
        the first ``head`` bytes, in the same pass.  ``ValueError`` for an
        ``offset`` below 1 or a negative ``limit``, ``cap``, ``budget`` or
        ``head``; any larger value is taken as "all"."""
        clamp_int64(offset, "offset", low=1)
        for value, name in ((limit, "limit"), (cap, "cap"), (budget, "budget"), (head, "head")):
            clamp_int64(value, name)
        return None

    def literal_lines(self, needle: bytes, buf: bytes, pos: int = 0, line: int = 1,
                      end: int | None = None) -> Iterator[Hit]:
        """The lines of ``buf[pos:end]`` (``pos`` a line start numbered
        ``line``; ``end`` a line end or the buffer's) that hold ``needle``
        (not empty); positions past the buffer are clamped to it."""
        size = len(buf) if end is None else max(0, min(end, len(buf)))
        pos = max(0, min(pos, size))
        return _python_literal_lines(needle, buf, pos, line, size)

    def count_newlines(self, buf: bytes, start: int = 0, end: int | None = None) -> int:
        """The number of ``\n`` in ``buf[start:end]``, both clamped to the buffer."""
        size = len(buf)
        stop = size if end is None else max(0, min(end, size))
        return buf.count(b"\n", max(0, min(start, size)), stop)

    # -- batches of system calls: None here (the caller makes each call) --------
    #: Whether this backend's class makes batches of system calls in C (a
    #: listing, a directory's worth of grep reads) instead of one call per
    #: step.  Read from the class (:func:`makes_batches`): a wrapper that
    #: forwards attributes to a native backend is asked for every call.
    batches = False

    def replace_file(self, dir_fd: int, tmp: str, name: str, data: bytes, flags: int,
                     mode: int, owner: tuple[int, int], expect: tuple[int, int]) -> int:
        """A file's whole atomic replace in one call, where the backend has
        one: ``tmp`` made in ``dir_fd`` (``flags``, ``mode``), ``data``
        written, its owner ``owner`` and permission bits ``mode`` checked,
        ``fsync``, ``close``, ``name`` checked to be the file ``expect``
        (``st_dev``, ``st_ino``), ``tmp`` renamed over ``name``.
        :data:`REPLACED`; :data:`NOT_REPLACED` where its owner or bits are
        not those, or the backend has no such call (this default: the
        caller then makes each call through the backend, so a test's
        wrapper sees them all); :data:`TARGET_CHANGED` where ``name`` is
        no longer that file.  ``OSError`` for a failure; whenever it is not
        :data:`REPLACED`, ``tmp`` is left not made or removed."""
        return NOT_REPLACED

    def dir_above_is(self, fd: int, depth: int, dev: int, ino: int) -> bool:
        """Whether the directory ``depth`` levels above the directory ``fd``
        (``..`` from it, each the parent as it is then) is the one of device
        ``dev`` and inode ``ino``, in one look: where those are the root's,
        ``True`` shows ``fd`` beneath the root.  ``False`` shows nothing
        (moved inside the root to another depth, or no such look here):
        the caller asks :meth:`fd_beneath`.  This default has no such look."""
        return False

    def dir_lister(self) -> DirLister | None:
        """A lister of whole directories in one call each, or ``None``: list
        through :meth:`scandir`."""
        return None

    def list_sized(self, fd: int) -> tuple[list[str], list[int]] | None:
        """The names of the directory ``fd`` and a code per name (a regular
        file's size, else a negative kind: see ``_listing``) in one call, or
        ``None``: list through :meth:`scandir` and :meth:`lstat_at`."""
        return None

    def file_scanner(self, needle: bytes | None, *, sniff: int, keep_links: bool, chunk: int
                     ) -> FileScan | None:
        """grep's per-file reads in batches (:class:`FileScan`), or ``None``:
        open and read each file through the backend."""
        return None

    def protected_symlinks(self) -> bool:
        """Whether the kernel's ``fs.protected_symlinks`` rule is in force."""
        return False

    # -- the kernel's watch of directories (inotify): none here ------------------
    #: Whether :meth:`watch_open` can give a watch on this platform.
    watches = False

    def watch_open(self) -> int:
        """A new watch of directories: an fd (non-blocking, closed on exec)
        whose :meth:`read` gives the kernel's events (``struct
        inotify_event``; ``BlockingIOError`` when none waits), closed by
        :meth:`close`.  ``OSError`` where none can be had (``ENOSYS``: none
        on this platform, this default)."""
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    def watch_add(self, watch_fd: int, dir_fd: int, mask: int) -> int:
        """Watch the directory open at ``dir_fd`` (by the fd: whatever its
        path is now) for inotify's events ``mask``: the watch number (the
        same for a directory watched already)."""
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    def watch_remove(self, watch_fd: int, wd: int) -> None:
        """Remove the watch numbered ``wd``."""
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    def watch_waiting(self, watch_fd: int) -> int:
        """How many bytes of events wait to be read on the watch
        ``watch_fd``, asked without reading (``0``: a :meth:`read` now finds
        none; negative: the kernel could not say, the read tells).  This
        default says ``1``: the read tells."""
        return 1

    def watch_limit(self) -> int:
        """How many directories all of the user's processes may watch at
        once (the kernel's limit, shared with every other program the
        user runs); 0 where it is not known."""
        return 0

    def watch_one_replace(self, data: bytes, wd: int, arrival: bytes) -> bool:
        """Whether ``data`` (one read of a watch) holds exactly three events
        of the watch ``wd``: ``IN_CREATE`` of a name of one byte at least
        (no cookie), ``IN_MOVED_FROM`` of that name (its length and padded
        bytes the same) and ``IN_MOVED_TO`` whose length field and padded
        name are ``arrival`` (the cookies not compared): a temporary file
        renamed onto the name ``arrival`` holds.  Work on a buffer: Python
        here, C in the native backend."""
        size = len(data)
        if size < 3 * _EVENT_SIZE or len(arrival) < 4:
            return False
        made_wd, made, cookie, length = _EVENT.unpack_from(data, 0)
        second = _EVENT_SIZE + length  # the move away, of a name as long
        third = second + second  # the arrival
        if (made_wd, made, cookie) != (wd, _IN_CREATE, 0) or not length or \
                size != third + 12 + len(arrival) or not data[_EVENT_SIZE]:
            return False
        gone_wd, gone = _MOVE.unpack_from(data, second)
        came_wd, came = _MOVE.unpack_from(data, third)
        return (gone_wd, gone, came_wd, came) == (wd, _IN_MOVED_FROM, wd, _IN_MOVED_TO) and \
            data[12:second] == data[second + 12:third] and data.endswith(arrival)

    def info(self) -> dict[str, Any]:
        return {"backend": self.name, "openat2": self.has_openat2,
                "openat2_reason": self.openat2_reason}

    def fd_beneath(self, proc_fd: int, root_fd: int, fd: int) -> int:
        """The walk's containment check (``_resolve.still_beneath``): the
        kernel's name of ``fd``, read as its number's entry in ``proc_fd``
        (this process's ``/proc/self/fd``, open), then the root's; ``1``
        when the first is the second or below it, ``0`` when not, ``-1``
        when a name cannot be had (a look refused).  C in the native backend."""
        try:
            mine = os.readlink(str(fd), dir_fd=proc_fd)
            root = os.readlink(str(root_fd), dir_fd=proc_fd)
        except OSError:
            return -1
        prefix = root if root.endswith("/") else root + "/"
        return int(mine == root or mine.startswith(prefix))

    def fd_beneath_at(self, proc_fd: int, root_fd: int, fd: int, path: bytes, size: int,
                      root_name: bytes, root_dev: int, root_ino: int) -> int:
        """:meth:`fd_beneath` for ``fd`` opened by the walk at the canonical
        root-relative ``path`` (``size`` bytes): ``1`` where its kernel name
        is ``root_name`` (the root's, read once) then ``/`` and ``path`` and
        ``root_name`` is still the root's directory (``root_dev``,
        ``root_ino``), one name and one ``lstat`` where :meth:`fd_beneath`
        reads two (native/corral_walk.h says why that is as sound); any
        other answer is :meth:`fd_beneath`'s, which alone may say no.  This
        default asks :meth:`fd_beneath` (a test's wrapper sees it); the os
        backend looks in Python, the native one in C."""
        return self.fd_beneath(proc_fd, root_fd, fd)

    def replace_held(self, dir_fd: int, source_fd: int, tmp: str, name: str, data: bytes,
                     flags: int, mode: int, owner: tuple[int, int],
                     expect: tuple[int, int]) -> int | list[str] | None:
        """:meth:`flistxattr` of ``source_fd`` (the file at ``name``, open)
        then, where it lists none, :meth:`replace_file` with the other
        arguments, in one call where the backend has one: that replace's
        answer; the names listed where there are some, or minus the errno
        where the listing failed (nothing made either way).  ``None``: the
        backend has no such call (this default: the caller lists and
        replaces through the backend, so a test's wrapper sees each call)."""
        return None

    def watch_read_replace(self, watch_fd: int, size: int, wd: int,
                           arrival: bytes) -> bytes | None:
        """One :meth:`read` of the watch ``watch_fd`` (at most ``size``
        bytes) and :meth:`watch_one_replace` of what it read: ``None``
        where it is exactly that replace (nothing else read), else the
        bytes read.  This default makes both calls (a test's wrapper sees
        the read); the native backend makes them in one C call."""
        data = self.read(watch_fd, size)
        return None if self.watch_one_replace(data, wd, arrival) else data

    def open_stat(self, dir_fd: int, name: str, flags: int) -> tuple[int, os.stat_result] | None:
        """:meth:`open_at` of ``name`` in ``dir_fd`` with ``flags`` and
        :meth:`fstat` of what it opened: the fd (the caller's to close) and
        its ``fstat``; ``None`` where either failed (the fd closed again,
        nothing raised).  This default makes each call through the backend
        (a test's wrapper sees them); the native backend makes them in one
        Python frame."""
        try:
            fd = self.open_at(dir_fd, name, flags)
        except OSError:
            return None
        try:
            return fd, self.fstat(fd)
        except OSError:
            self.close(fd)
            return None

    def find(self, data: bytes, needle: bytes, start: int, /) -> int:
        """``data.find(needle, start)``, ``start`` at least 0: where an
        edit's text is looked for in a file's bytes (the native backend
        looks in C where what is left to look through is long)."""
        return data.find(needle, start)

    #: :meth:`walk_open` makes the walk in one call (``False``: it answers -1)
    has_walk_open = False

    def walk_open(self, root_fd: int, path: bytes, size: int, flags: int, proc_fd: int,
                  root_name: bytes, root_dev: int, root_ino: int) -> int:
        """``Root.open``'s walk (the openat2 fast path off) in one call, for
        ``path`` (``size`` bytes) of plain names, opened with
        ``flags`` that create and truncate nothing: each directory opened
        ``O_NOFOLLOW`` in the one before, the final name, and a result
        below a directory shown beneath the root (its kernel name through
        ``proc_fd`` is ``root_name``, the root's kernel name read once, then
        ``/`` and ``path``, and ``root_name`` is the root's directory,
        ``root_dev`` and ``root_ino``; else :meth:`fd_beneath`;
        native/corral_walk.h says why that is as sound).
        The fd of a regular file or a directory, or -1 for anything else:
        the caller's walk then runs and says why.  This default answers -1
        (the walk runs through this backend's calls, which a test's wrapper
        sees); C in the native backend (native/corral_walk.h)."""
        return -1

    def names_test(self, exact: frozenset[str], suffixes: Sequence[str],
                   prefixes: Sequence[str]) -> Callable[[str], bool]:
        """A test of a run of ASCII names joined by NUL (a directory's
        worth): ``True`` when no name, lower-cased, is one of ``exact``,
        ends with one of ``suffixes``, starts with one of ``prefixes``, ends
        with a dot or a space, or holds ``~1``; ``False`` when one may (a
        policy's quick name tests: tools/_policy/rules.py).  This default
        is plain Python; the native backend tests a run in one C call, with
        the same answers."""
        # one regex search of the run reversed between NULs finds every
        # name's end right after a NUL, and a prefix as a look back from it
        ends = [re.escape(x[::-1]) for x in (*suffixes, ".", " ")]
        starts = [f"(?<={re.escape(x[::-1])}\0)" for x in prefixes]
        search = re.compile("\0(?:" + "|".join(ends + starts) + ")").search

        def clear(run: str) -> bool:
            lowered = run.lower()
            return "~1" not in run and exact.isdisjoint(lowered.split("\0")) \
                and search(f"\0{lowered}\0"[::-1]) is None
        return clear


class OsBackend(Backend):
    """The ``os`` module with ``dir_fd``; each platform's extras through ctypes."""

    name = "os"

    def __init__(self, *, openat2: bool | None = None) -> None:
        self.avoids_symlink_attacks = fd_capabilities()
        self.has_openat2 = False
        if not IS_LINUX:
            self.openat2_reason = "not Linux"
        elif not _openat2_wanted(openat2):
            self.openat2_reason = "disabled (CORRAL_OPENAT2=0 or openat2=False)"
        else:
            self.has_openat2, self.openat2_reason = _linux.probe_openat2(_linux.openat2)
            self.openat2_checks_dotdot = self.has_openat2
        # the walk in one call (walk_open): Linux's O_PATH and /proc; not for a subclass
        self.has_walk_open = IS_LINUX and bool(_O_PATH) and type(self) is OsBackend

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        refuse_nul(path)
        if not self.has_openat2:
            raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
        return _linux.openat2(dir_fd, path, flags, mode, resolve)

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        return os.open(name, flags, mode, dir_fd=dir_fd)

    # Plain methods, not staticmethod(os.x): a test may patch the os module,
    # and a function bound at import would bypass it.
    def close(self, fd: int) -> None:
        os.close(fd)

    def fstat(self, fd: int) -> os.stat_result:
        return os.fstat(fd)

    def lstat_at(self, dir_fd: int, name: str) -> os.stat_result:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)

    def exists_at(self, dir_fd: int, name: str) -> bool:
        # faccessat(F_OK, AT_SYMLINK_NOFOLLOW): one call, a miss is False, not an exception
        return os.access(name, os.F_OK, dir_fd=dir_fd, follow_symlinks=False)

    def readlink_at(self, dir_fd: int, name: str) -> str:
        return os.readlink(name, dir_fd=dir_fd)

    def mkdir_at(self, dir_fd: int, name: str, mode: int) -> None:
        os.mkdir(name, mode, dir_fd=dir_fd)

    def create_directory_at(self, dir_fd: int, name: str, mode: int) -> int:
        # mkdirat cannot refuse a symlink, so the open that follows does: a
        # link planted between the two calls fails the O_NOFOLLOW open.
        os.mkdir(name, mode, dir_fd=dir_fd)
        return os.open(name, self.dir_flags, dir_fd=dir_fd)

    def unlink_at(self, dir_fd: int, name: str) -> None:
        os.unlink(name, dir_fd=dir_fd)

    def rmdir_at(self, dir_fd: int, name: str) -> None:
        os.rmdir(name, dir_fd=dir_fd)

    def rename_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                  flags: int = 0) -> None:
        if flags == 0:
            os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        elif IS_LINUX:
            refuse_nul(src)
            refuse_nul(dst)
            _linux.renameat2(src_dir_fd, src, dst_dir_fd, dst, flags)
        elif IS_DARWIN:
            _darwin.renameatx_np(src_dir_fd, src, dst_dir_fd, dst, flags)
        else:
            raise OSError(errno.ENOSYS, "rename flags are not supported on this platform")

    def link_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
        os.link(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd, follow_symlinks=False)

    def symlink_at(self, target: str, dir_fd: int, name: str) -> None:
        os.symlink(target, name, dir_fd=dir_fd)

    def scandir(self, fd: int) -> DirEntries:
        return os.scandir(fd)

    def read(self, fd: int, size: int, /) -> bytes:
        return os.read(fd, size)

    def pread(self, fd: int, size: int, offset: int, /) -> bytes:
        return os.pread(fd, size, offset)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        os.fchmod(fd, mode)

    # Under pyfakefs the os module is a fake whose fds collide with real ones:
    # these refuse (ENOTSUP) rather than hand a fake fd to a real system call,
    # and a replace treats that as "not permitted here".  os has extended
    # attributes on Linux only: elsewhere ENOTSUP (xattrs are not carried).
    def fchown(self, fd: int, uid: int, gid: int) -> None:
        if _under_pyfakefs():
            raise _unsupported("fchown under pyfakefs")
        os.fchown(fd, uid, gid)

    def flistxattr(self, fd: int) -> list[str]:
        if not hasattr(os, "listxattr") or _under_pyfakefs():
            raise _unsupported("listxattr")
        return os.listxattr(fd)

    def fgetxattr(self, fd: int, name: str) -> bytes:
        if not hasattr(os, "getxattr") or _under_pyfakefs():
            raise _unsupported("getxattr")
        return os.getxattr(fd, name)

    def fsetxattr(self, fd: int, name: str, value: bytes) -> None:
        if not hasattr(os, "setxattr") or _under_pyfakefs():
            raise _unsupported("setxattr")
        os.setxattr(fd, name, value)

    def mount_flags(self, fd: int) -> int:
        return _linux.mount_flags(fd) if IS_LINUX else 0

    def filesystem_type(self, fd: int) -> int:
        return _linux.filesystem_type(fd) if IS_LINUX else 0

    def protected_symlinks(self) -> bool:
        return IS_LINUX and _linux.protected_symlinks()

    # inotify where the kernel has it (and /proc names a directory by its fd)
    watches = IS_LINUX and _linux.can_watch()

    def watch_open(self) -> int:
        if not self.watches or _under_pyfakefs():
            raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
        return _linux.watch_open()

    def watch_add(self, watch_fd: int, dir_fd: int, mask: int) -> int:
        if not self.watches:
            raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
        return _linux.watch_add(watch_fd, dir_fd, mask)

    def watch_remove(self, watch_fd: int, wd: int) -> None:
        if not self.watches:
            raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
        _linux.watch_remove(watch_fd, wd)

    def watch_waiting(self, watch_fd: int) -> int:
        if not self.watches:
            raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
        return _linux.watch_waiting(watch_fd)

    def watch_limit(self) -> int:
        return _linux.watch_limit() if self.watches else 0

    def walk_open(self, root_fd: int, path: bytes, size: int, flags: int, proc_fd: int,
                  root_name: bytes, root_dev: int, root_ino: int) -> int:
        """:meth:`Backend.walk_open` in Python: the C's calls
        (native/corral_walk.h) without the walk's bookkeeping per name.
        Only this class's own instances take it (:meth:`__init__`): a
        subclass (a test's faults, the fake file system) overrides calls
        the walk must then make one by one, through its methods."""
        names = path.split(b"/")
        if flags & ~_WALK_FLAGS or flags & os.O_ACCMODE == os.O_ACCMODE or proc_fd < 0 \
                or size != len(path) or b"" in names or b"." in names or b".." in names:
            return -1
        final = names.pop()
        opener, closer = os.open, os.close
        top = root_fd
        try:
            for name in names:
                fd = opener(name, DIR_FLAGS, dir_fd=top)
                if top != root_fd:
                    closer(top)
                top = fd
            fd = opener(final, flags | _WALK_FINAL, dir_fd=top)
        except OSError:
            return -1
        finally:
            if top != root_fd:
                closer(top)
        try:
            info = os.fstat(fd)
            # one name, looked up in the root's own fd, needs no check (as in Walk)
            if (info.st_mode & _S_IFMT == _S_IFREG or
                    (info.st_mode & _S_IFMT == _S_IFDIR and info.st_nlink)) \
                    and (not names or
                         self.fd_beneath_at(proc_fd, root_fd, fd, path, size,
                                            root_name, root_dev, root_ino) == 1):
                return fd
        except BaseException:
            closer(fd)
            raise
        closer(fd)
        return -1

    def fd_beneath_at(self, proc_fd: int, root_fd: int, fd: int, path: bytes, size: int,
                      root_name: bytes, root_dev: int, root_ino: int) -> int:
        """corral_walk.h's corral_walk_beneath in Python (see
        :meth:`Backend.fd_beneath_at`)."""
        try:
            # the root's name, "/" and path, exactly (one comparison)
            whole = b"%s/%s" % (root_name, path)
            if root_name and os.readlink(b"%d" % fd, dir_fd=proc_fd) == whole:
                there = os.lstat(root_name)
                if (there.st_dev, there.st_ino) == (root_dev, root_ino):
                    return 1
        except OSError:
            pass
        return self.fd_beneath(proc_fd, root_fd, fd)


def _python_literal_lines(needle: bytes, buf: bytes, pos: int, line: int, size: int
                          ) -> Iterator[Hit]:
    find = buf.find
    while pos < size:
        at = find(needle, pos, size)
        if at < 0 or not needle:
            return
        start = buf.rfind(b"\n", pos, at) + 1 or pos
        end = buf.find(b"\n", at, size)
        line += buf.count(b"\n", pos, start)
        hit = (start, size if end < 0 else end, at, line)
        yield hit
        pos, line = hit[1] + 1, line + 1


def _openat2_wanted(explicit: bool | None) -> bool:
    if explicit is not None:
        return explicit
    return os.environ.get("CORRAL_OPENAT2", "1").strip().lower() not in ("0", "no", "false", "off")


FAKE_FS_REFUSAL = ("under pyfakefs, corral needs backend=corral.testing.backends.FakeFsBackend() "
                   "(pyfakefs's fds collide with real ones: a real system call on one acts on "
                   "a real file)")


def _under_pyfakefs() -> bool:
    # pyfakefs replaces this module's ``os`` with its fake while patching
    return type(os).__module__.startswith("pyfakefs")
