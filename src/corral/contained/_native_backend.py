"""``NativeBackend``: the cffi module ``corral._native`` behind the backend interface.

What it adds to the ``os`` module, the same on every platform it builds on:

* ``openat2``: the Linux system call (cheaper through cffi than through
  ctypes); on Darwin ``openat`` with ``O_RESOLVE_BENEATH`` (and
  ``O_NOFOLLOW_ANY`` for the strict mode), used only after a probe shows the
  running kernel honours the flags: an older kernel may ignore an unknown
  flag, which would turn the fast path into a plain ``openat``.
* ``rename_at`` with flags: ``renameat2`` on Linux, ``renameatx_np``
  (``RENAME_EXCL`` / ``RENAME_SWAP``) on Darwin.
* ``create_directory_at``: ``mkdirat`` then an ``O_DIRECTORY|O_NOFOLLOW``
  open of what was made, in one C call.
* ``replace_file``: a file's whole atomic replace (the temporary file's
  open, write, owner and bits checked, ``fsync``, close, the replaced
  name's identity checked, ``rename``) in one C call, for a replace with
  nothing to carry over but what the temporary file is made with.
* The work of the layers above that a loop in Python would make slow, each
  one C call: read_file's numbered window (:meth:`NativeBackend.text_window`),
  grep's line scan and newline count, a directory's listing by kind
  (:class:`NativeLister`) or with sizes (:meth:`NativeBackend.list_sized`),
  and grep's per-file reads (:class:`FileScanner`).  Each wrapper checks its
  numbers before C sees them (positions clamped to the buffer, counts of any
  size clamped to ``INT64_MAX``, negatives refused) and the C checks them
  again (``native/*.cdef``).

Everything else is the ``os`` module's own call, on purpose: measured here
(CPython 3.11, cffi 2.1, Linux), ``lib.corral_openat`` costs 3.3 us against
2.9 us for ``os.open(name, flags, dir_fd=fd)`` (cffi releases the GIL and
saves errno around every call, and the wrapper must encode and check the
name), so re-implementing ``openat``/``fstatat``/``readlinkat``/``unlinkat``
in C would make the walk slower, not faster.  ``openat2`` is the exception
(5.1 us against 7.1 us through ctypes).

cffi passes a ``bytes`` object to C as a pointer, and C stops at the first
NUL: ``b"x\\0/../../evil"`` would create ``x``.  Every path is therefore
checked for NUL in Python before it reaches ``corral._native``
(:class:`InvalidPathError`, errno ``EINVAL``).

Never use this backend under pyfakefs: fake fds are small integers that
collide with real ones, and a real system call on one acts on a real
directory.  The constructor refuses, and so does ``Root``.
"""

from __future__ import annotations

import codecs
import errno
import fcntl
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

# ModuleNotFoundError with name "corral._native" when the module was not built
# (``from .. import _native`` would raise a plain ImportError instead)
from .._native import ffi as _ffi, lib as _lib
from . import _darwin, _linux
from ._backend import (IS_DARWIN, IS_LINUX, RENAME_EXCHANGE, RENAME_NOREPLACE,
                       Backend, Hit, KindListing, OpenStatBeneath, OpenTextBeneath, OsBackend,
                       ScanStatus, LeftDirectory, NotListed,
                       TextWindow,
                       _openat2_wanted, _under_pyfakefs, clamp_int64, fd_capabilities)
from ._errors import InvalidPathError

__all__ = ["NativeBackend", "NativeLister", "FileScanner"]

_ENCODING = sys.getfilesystemencoding()
_U64 = (1 << 64) - 1
_ENCODE_ERRORS = sys.getfilesystemencodeerrors()

RESOLVE_NO_XDEV = _lib.CORRAL_RESOLVE_NO_XDEV
RESOLVE_NO_MAGICLINKS = _lib.CORRAL_RESOLVE_NO_MAGICLINKS
RESOLVE_NO_SYMLINKS = _lib.CORRAL_RESOLVE_NO_SYMLINKS
RESOLVE_BENEATH = _lib.CORRAL_RESOLVE_BENEATH

# The module's rename flags are Linux's values on every platform, the same
# ones the rest of the core passes; a module built otherwise is a broken build.
if (_lib.CORRAL_RENAME_NOREPLACE, _lib.CORRAL_RENAME_EXCHANGE) != (RENAME_NOREPLACE,
                                                                  RENAME_EXCHANGE):
    raise ImportError("corral._native disagrees with corral on the RENAME_* flags; rebuild it")

# The statuses and listing codes the Python side uses are the C's; a module
# built otherwise is a broken build.
_C_SCAN_STATUSES = (_lib.CORRAL_SCAN_ABSENT, _lib.CORRAL_SCAN_OPEN, _lib.CORRAL_SCAN_BINARY,
                    _lib.CORRAL_SCAN_SPECIAL, _lib.CORRAL_SCAN_HARDLINK,
                    _lib.CORRAL_SCAN_OPEN_ERROR, _lib.CORRAL_SCAN_READ_ERROR)
_C_LIST_CODES = (_lib.CORRAL_LIST_DIR, _lib.CORRAL_LIST_SYMLINK, _lib.CORRAL_LIST_OTHER,
                 _lib.CORRAL_LIST_FILE)
if tuple(ScanStatus) != _C_SCAN_STATUSES or _C_LIST_CODES != (-1, -2, -3, -4):
    raise ImportError("corral._native disagrees with corral on its status codes; rebuild it")

_openat2 = _lib.corral_openat2
_list_below = _lib.corral_list_below
_open_beneath = _lib.corral_open_beneath
_one_replace = _lib.corral_watch_one_replace
_LINE_BATCH = 256  # hits fetched per corral_scan_lines call
_FIND_IN_C = 512  # bytes left to look through from which NativeBackend.find calls C


def _exported(function: str, *, names_as_utf8: bool) -> Any:
    """The module's own METH_FASTCALL ``function`` (corral_native.h's
    ``corral_export``: no cffi wrapper around it), or ``None`` where it
    cannot be had; one that reads names' UTF-8 bytes in C only where the
    file system encoding is UTF-8."""
    if names_as_utf8 and codecs.lookup(_ENCODING).name != "utf-8":
        return None
    name = _ffi_module_name()
    if _lib.corral_export(name.encode(), function.encode()) != 0:
        return None
    return getattr(sys.modules[name], function)


def _ffi_module_name() -> str:
    """``corral._native``, imported above (by name: importing the package
    here would be a cycle)."""
    return (__package__ or "corral.contained").rpartition(".")[0] + "._native"


#: Root.open's fast path, the path's UTF-8 bytes read in C
_open_text_beneath: OpenTextBeneath | None = _exported("open_text_beneath", names_as_utf8=True)


def _stat_layout_is_linux() -> bool:
    """Whether ``os.stat_result`` has the layout ``open_stat_beneath``
    fills (``corral_read.h``): the ten fields of the tuple, the float
    times, the ns times, then ``st_blksize``, ``st_blocks``, ``st_rdev``,
    nothing else.  Each field's index is what a result made of its own
    indices holds there."""
    fields = os.stat_result.n_fields
    if fields != 19 or os.stat_result.n_sequence_fields != 10:
        return False
    probe = os.stat_result(range(fields))
    return [getattr(probe, name) for name in _STAT_TAIL] == list(range(10, fields))


#: the fields of os.stat_result beyond its tuple, in Linux's order
_STAT_TAIL = ("st_atime", "st_mtime", "st_ctime", "st_atime_ns", "st_mtime_ns", "st_ctime_ns",
              "st_blksize", "st_blocks", "st_rdev")
#: Root.open_handle's read, the fd and the open's own fstat in one C call
_open_stat_beneath: OpenStatBeneath | None = _exported(
    "open_stat_beneath", names_as_utf8=True) if IS_LINUX and _stat_layout_is_linux() else None
#: NativeBackend.replace_held, the names' UTF-8 bytes read in C
_replace_held: Callable[..., int | list[str]] | None = _exported("replace_held",
                                                                 names_as_utf8=True)
#: NativeBackend.watch_read_replace, the read into a buffer of C's
_watch_read: Callable[[int, int, int, bytes], bytes | None] | None = _exported(
    "watch_read_replace", names_as_utf8=False)


#: the NUL byte as the int ``in`` looks for: ``b"\0" in data`` first tries the
#: needle as an int and makes (and drops) a TypeError, ten times the memchr
_NUL = 0


def c_path(path: str | bytes) -> bytes:
    """``path`` as the bytes C receives; :class:`InvalidPathError` for a NUL
    byte, which C would take as the end of the string."""
    data = path.encode(_ENCODING, _ENCODE_ERRORS) if isinstance(path, str) else os.fsencode(path)
    if _NUL in data:
        raise InvalidPathError("path contains a NUL byte")
    return data


def _fail(note: str = "") -> NoReturn:
    err = _ffi.errno
    raise OSError(err, os.strerror(err) + note)


class NativeBackend(Backend):
    """The ``os`` module's calls plus what ``corral._native`` adds (module doc).

    ``openat2=False`` (or ``CORRAL_OPENAT2=0``) turns the fast path off, as
    for :class:`OsBackend`.
    """

    name = "native"

    # The os module's own calls: as fast or faster than cffi (module doc).
    # Plain functions shared with OsBackend, not inheritance: a native
    # backend is not an os backend (Root refuses it under pyfakefs).
    open_at = OsBackend.open_at
    # the os function itself where its arguments are the method's: no Python
    # frame around the fd calls every step makes (OsBackend wraps them, for a
    # test patching os under pyfakefs, which this backend never runs under)
    close = staticmethod(os.close)
    fstat = staticmethod(os.fstat)
    # one fstat compared in C: no os.stat_result built for a yes or no
    stamps_held = staticmethod(_lib.corral_stamps_held)
    # the walk's containment check: both names read and compared in C
    fd_beneath = staticmethod(_lib.corral_fd_beneath)
    lstat_at = OsBackend.lstat_at
    exists_at = OsBackend.exists_at
    readlink_at = OsBackend.readlink_at
    mkdir_at = OsBackend.mkdir_at
    unlink_at = OsBackend.unlink_at
    rmdir_at = OsBackend.rmdir_at
    link_at = OsBackend.link_at
    symlink_at = OsBackend.symlink_at
    scandir = OsBackend.scandir
    read = staticmethod(os.read)
    pread = staticmethod(os.pread)
    flock = staticmethod(fcntl.flock)
    write = OsBackend.write
    fsync = OsBackend.fsync
    fchmod = OsBackend.fchmod
    mount_flags = OsBackend.mount_flags
    filesystem_type = OsBackend.filesystem_type
    protected_symlinks = OsBackend.protected_symlinks
    watches = OsBackend.watches
    watch_open = OsBackend.watch_open
    watch_add = OsBackend.watch_add
    watch_remove = OsBackend.watch_remove
    # FIONREAD in C: its count as it stands, the call's freshness check's one
    # system call with no buffer made and compared around it (-1: read instead)
    watch_waiting = staticmethod(_lib.corral_watch_queued)
    watch_limit = OsBackend.watch_limit

    def watch_one_replace(self, data: bytes, wd: int, arrival: bytes) -> bool:
        # (a watch number is the kernel's: an int32, as C takes it)
        taken: int = _one_replace(data, len(data), wd, arrival, len(arrival))
        return taken == 1
    fchown = OsBackend.fchown
    flistxattr = OsBackend.flistxattr
    fgetxattr = OsBackend.fgetxattr
    fsetxattr = OsBackend.fsetxattr
    batches = True

    def __init__(self, *, openat2: bool | None = None) -> None:
        self.avoids_symlink_attacks = fd_capabilities()
        if _under_pyfakefs():
            raise OSError(errno.EINVAL, "the native backend cannot run under pyfakefs (its fds "
                                        "are fake, the native module's system calls are real)")
        self.has_openat2 = False
        #: Darwin: the strict mode (RESOLVE_NO_SYMLINKS) can use O_NOFOLLOW_ANY.
        self.has_nofollow_any = False
        self.has_rename_flags = bool(_lib.CORRAL_HAS_RENAME_FLAGS)
        # Darwin has no O_PATH: a fast-path open is a real open, so it must
        # not wait on a FIFO or take a terminal (the walk uses O_NONBLOCK too).
        self._openat2_extra = os.O_NONBLOCK | os.O_NOCTTY if IS_DARWIN else 0
        # resolve bits this backend answers ENOSYS for (the walk runs instead)
        self._resolve_unsupported = 0
        if not _lib.CORRAL_HAS_OPENAT2:
            self.openat2_reason = "not available on this platform"
        elif not _openat2_wanted(openat2):
            self.openat2_reason = "disabled (CORRAL_OPENAT2=0 or openat2=False)"
        elif IS_LINUX:
            self._probe_linux()
        elif IS_DARWIN:
            self._probe_darwin()
        else:  # pragma: no cover - the C says "other" platforms have none
            self.openat2_reason = "not available on this platform"

    # -- probes ------------------------------------------------------------
    def _probe_linux(self) -> None:
        def opener(dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
            fd: int = _lib.corral_openat2(dir_fd, c_path(path), flags, mode, resolve)
            if fd < 0:
                _fail()
            return fd

        self.has_openat2, self.openat2_reason = _linux.probe_openat2(opener)
        if self.has_openat2:
            self.openat2_checks_dotdot = True
            self.open_beneath = _open_beneath  # Linux: every resolve bit is the kernel's
            self.open_text_beneath = _open_text_beneath or self._open_text_beneath
            self.open_stat_beneath = _open_stat_beneath

    def _probe_darwin(self) -> None:
        """Use O_RESOLVE_BENEATH only if this kernel refuses every way out of
        a scratch directory and still opens what is inside it."""
        beneath, nofollow_any, self.openat2_reason = _darwin.probe_beneath(
            _lib.corral_openat2, RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS)
        self.has_openat2 = beneath
        self.has_nofollow_any = beneath and nofollow_any
        if not self.has_nofollow_any:  # the strict mode then walks
            self._resolve_unsupported = RESOLVE_NO_SYMLINKS
        if beneath:
            self.open_beneath = self._open_beneath
            self.open_text_beneath = self._open_text_beneath

    # -- what the native module adds -----------------------------------------
    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        # the hot path of every Root.open and Root.stat: c_path inlined
        data = path.encode(_ENCODING, _ENCODE_ERRORS) if type(path) is str else c_path(path)
        if _NUL in data:
            raise InvalidPathError("path contains a NUL byte")
        if not self.has_openat2 or resolve & self._resolve_unsupported:
            raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
        fd: int = _openat2(dir_fd, data, flags | self._openat2_extra, mode, resolve)
        if fd < 0:
            _fail()
        return fd

    def openat2_or_errno(self, dir_fd: int, path: str, flags: int, mode: int,
                         resolve: int) -> int:
        data = path.encode(_ENCODING, _ENCODE_ERRORS)
        if _NUL in data:
            return -errno.EINVAL
        if not self.has_openat2 or resolve & self._resolve_unsupported:
            return -errno.ENOSYS
        fd: int = _openat2(dir_fd, data, flags | self._openat2_extra, mode, resolve)
        return fd if fd >= 0 else -_ffi.errno

    def _open_beneath(self, dir_fd: int, path: bytes, size: int, flags: int, mode: int,
                      resolve: int) -> int:
        if resolve & self._resolve_unsupported:
            return -1
        fd: int = _open_beneath(dir_fd, path, size, flags, mode, resolve)
        return fd

    def _open_text_beneath(self, dir_fd: int, path: object, flags: int, mode: int,
                           resolve: int) -> int:
        # where the module's own open_text_beneath is not used (Darwin: the
        # resolve bits to check first; a file system encoding other than UTF-8)
        if resolve & self._resolve_unsupported:
            return -1
        try:
            data = path.encode(_ENCODING, _ENCODE_ERRORS)  # type: ignore[attr-defined]
        except (AttributeError, UnicodeError):  # bytes, PathLike
            return -1
        if type(data) is not bytes:
            return -1
        fd: int = _open_beneath(dir_fd, data, len(data), flags, mode, resolve)
        return fd

    def rename_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                  flags: int = 0) -> None:
        if flags == 0:  # os.rename is as good, and the same on every platform
            os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
            return
        if _lib.corral_renameat(src_dir_fd, c_path(src), dst_dir_fd, c_path(dst), flags) != 0:
            _fail()

    def replace_file(self, dir_fd: int, tmp: str, name: str, data: bytes, flags: int,
                     mode: int, owner: tuple[int, int], expect: tuple[int, int]) -> int:
        # c_path inlined (a name with a NUL in it is refused: C would stop there)
        c_tmp = tmp.encode(_ENCODING, _ENCODE_ERRORS)
        c_name = name.encode(_ENCODING, _ENCODE_ERRORS)
        if _NUL in c_tmp or _NUL in c_name:
            raise InvalidPathError("path contains a NUL byte")
        # as C's uint64_t: a platform whose dev_t is signed (Darwin) may give a negative one
        answer: int = _lib.corral_replace_file(dir_fd, c_tmp, c_name, data, len(data), flags,
                                               mode, owner[0], owner[1], expect[0] & _U64,
                                               expect[1] & _U64)
        if answer < 0:
            _fail()
        return answer

    def replace_held(self, dir_fd: int, source_fd: int, tmp: str, name: str, data: bytes,
                     flags: int, mode: int, owner: tuple[int, int],
                     expect: tuple[int, int]) -> int | list[str] | None:
        if _replace_held is not None:  # the same in C, its arguments read there
            return _replace_held(dir_fd, source_fd, tmp, name, data, flags, mode, owner, expect)
        c_tmp = tmp.encode(_ENCODING, _ENCODE_ERRORS)
        c_name = name.encode(_ENCODING, _ENCODE_ERRORS)
        if _NUL in c_tmp or _NUL in c_name:
            raise InvalidPathError("path contains a NUL byte")
        names, listed = _held_scratch.buffers or _held_buffers()
        answer: int = _lib.corral_replace_held(dir_fd, source_fd, c_tmp, c_name, data, len(data),
                                               flags, mode, owner[0], owner[1],
                                               expect[0] & _U64, expect[1] & _U64, names,
                                               _HELD_NAMES, listed)
        if answer == _LISTED_SOME:
            got: int = listed[0]
            if got > 0:  # as os.listxattr decodes them
                return [os.fsdecode(raw) for raw in _ffi.unpack(names, got).split(b"\0")[:-1]]
            return got  # minus the errno (ERANGE: more names than the buffer holds)
        if answer < 0:
            _fail()
        return answer

    def watch_read_replace(self, watch_fd: int, size: int, wd: int,
                           arrival: bytes) -> bytes | None:
        if size > _WATCH_READ:
            return Backend.watch_read_replace(self, watch_fd, size, wd, arrival)
        if _watch_read is not None:  # the same in C, with no cffi wrapper
            return _watch_read(watch_fd, size, wd, arrival)
        buf, got = _watch_scratch.buffers or _watch_buffers()
        taken: int = _lib.corral_watch_read_replace(watch_fd, buf, size, wd, arrival,
                                                    len(arrival), got)
        if taken < 0:
            _fail()
        return None if taken else _ffi.unpack(buf, got[0])

    def open_stat(self, dir_fd: int, name: str, flags: int) -> tuple[int, os.stat_result] | None:
        # Backend.open_stat with the os module's calls made here (open_at's
        # and fstat's, as OsBackend makes them): two Python frames fewer
        try:
            fd = os.open(name, flags, 0o666, dir_fd=dir_fd)
        except OSError:
            return None
        try:
            return fd, os.fstat(fd)
        except OSError:
            os.close(fd)
            return None

    def create_directory_at(self, dir_fd: int, name: str, mode: int) -> int:
        step = _ffi.new("int *")
        fd: int = _lib.corral_create_directory_at(dir_fd, c_path(name), mode, self.dir_flags,
                                                  step)
        if fd < 0:
            # step 2: the directory was made, but what is at its name now
            # cannot be opened as one (say, a symlink planted in between)
            _fail(" (directory created, but reopening it failed)" if step[0] == 2 else "")
        return fd

    # -- work on buffers and batches, in C ------------------------------------------
    def text_window(self, data: bytes, offset: int, limit: int, cap: int, budget: int,
                    head: int = 0) -> TextWindow | None:
        # one look at the thread's own buffers: (out, facts, starts)
        out, facts, starts = _window_scratch.buffers or _window_buffers()
        if not (type(offset) is int and type(limit) is int and type(cap) is int
                and type(budget) is int and type(head) is int):  # a bool, a float: said
            return self._text_window_checked(data, offset, limit, cap, budget, head)
        length = len(data)
        # The most it writes: the budget or one line of at most cap bytes,
        # and never more than the buffer's bytes plus a number, a tab and a
        # line break (at most 22 bytes) per line shown.
        lines = limit if limit <= length else length + 1
        size = min(budget + cap + 32, length + 22 * lines)
        try:  # the common case: every number fits (C refuses a negative one: -2)
            if size > WINDOW_SCRATCH_BYTES:
                out = _ffi.new("char[]", size)
            if lines > WINDOW_SCRATCH_LINES:
                starts = _ffi.new("int64_t[]", lines)
            written: int = _lib.corral_text_window_rows(data, length, offset, limit, cap,
                                                        budget, head, out, size, facts, starts,
                                                        lines)
        except OverflowError:
            written = -2
        if written < 0:
            if written == -2:  # a number out of range: each said, or clamped
                return self._text_window_checked(data, offset, limit, cap, budget, head)
            return None
        total, shown, newline, controls, unusual = _ffi.unpack(facts, 5)
        # made as the tuple it is (its fields in order), without the
        # generated __new__'s frame; the starts copied: the scratch is the
        # next call's (8 bytes a line shown)
        return tuple.__new__(TextWindow, (
            str(_ffi.buffer(out, written), "utf-8"), total, shown, newline != 0, controls,
            memoryview(_ffi.buffer(starts, 8 * shown)[:]).cast("q"), not unusual))

    def _text_window_checked(self, data: bytes, offset: int, limit: int, cap: int, budget: int,
                             head: int) -> TextWindow | None:
        offset = clamp_int64(offset, "offset", low=1)
        limit, cap = clamp_int64(limit, "limit"), clamp_int64(cap, "cap")
        budget, head = clamp_int64(budget, "budget"), clamp_int64(head, "head")
        size = min(budget + cap + 32, len(data) + 22 * min(limit, len(data) + 1))
        scratch, facts, _ = _window_scratch.buffers or _window_buffers()
        out = scratch if size <= WINDOW_SCRATCH_BYTES else _ffi.new("char[]", size)
        written: int = _lib.corral_text_window_head(data, len(data), offset, limit, cap, budget,
                                                    head, out, size, facts)
        if written == -2:  # cannot be: every number was checked above
            _fail()
        if written < 0:
            return None
        return TextWindow(str(_ffi.buffer(out, written), "utf-8"), facts[0], facts[1],
                          bool(facts[2]), facts[3])

    def literal_lines(self, needle: bytes, buf: bytes, pos: int = 0, line: int = 1,
                      end: int | None = None) -> Iterator[Hit]:
        size = len(buf) if end is None else max(0, min(end, len(buf)))
        pos = max(0, min(pos, size))
        line = clamp_int64(line, "line")
        if line > (1 << 62):
            raise ValueError(f"line must be at most 2**62, not {line}")
        return _scan_lines(needle, buf, pos, line, size)

    def count_newlines(self, buf: bytes, start: int = 0, end: int | None = None) -> int:
        size = len(buf)
        stop = size if end is None else max(0, min(end, size))
        begin = max(0, min(start, size))
        count: int = _lib.corral_count_newlines(buf, size, begin, stop)
        return count

    def dir_above_is(self, fd: int, depth: int, dev: int, ino: int) -> bool:
        return bool(_lib.corral_dir_above_is(fd, depth, dev, ino))

    def dir_lister(self) -> NativeLister:
        # the step below by openat2 on Linux alone: Darwin's fast path takes
        # other flags and not every resolve bit (see openat2_or_errno)
        return NativeLister(below=IS_LINUX and self.has_openat2)

    def list_sized(self, fd: int) -> tuple[list[str], list[int]]:
        return _list_sized(fd)

    def file_scanner(self, needle: bytes | None, *, sniff: int, keep_links: bool, chunk: int
                     ) -> FileScanner:
        return FileScanner(needle, sniff=sniff, keep_links=keep_links, chunk=chunk)

    def info(self) -> dict[str, Any]:
        data = super().info()
        data.update(module=getattr(sys.modules.get("corral._native"), "__file__", None),
                    rename_flags=self.has_rename_flags,
                    create_directory_at="native (mkdirat + openat O_NOFOLLOW)")
        if IS_DARWIN:
            data["nofollow_any"] = self.has_nofollow_any
        return data

    def find(self, data: bytes, needle: bytes, start: int, /) -> int:
        # memmem skips where bytes.find steps a byte at a time: worth the
        # cffi call where more than a few hundred bytes are left to look at
        if len(data) - start < _FIND_IN_C or start < 0:
            return data.find(needle, start)
        found: int = _lib.corral_find_from(data, len(data), needle, len(needle), start)
        return found

    # Root.open's walk in one C call (Linux: the check reads /proc/self/fd)
    has_walk_open = IS_LINUX
    walk_open = staticmethod(_lib.corral_walk_open)
    # every other check of the walk: one kernel name and one stat, in C
    fd_beneath_at = staticmethod(_lib.corral_walk_beneath)

    def names_test(self, exact: frozenset[str], suffixes: Sequence[str],
                   prefixes: Sequence[str]) -> Callable[[str], bool]:
        entries = [(b"n", x) for x in sorted(exact)] + [(b"s", x) for x in suffixes] \
            + [(b"p", x) for x in prefixes]
        encoded = [(kind, text.encode("utf-8")) for kind, text in entries]
        if any(len(data) > 0xFFFF for _, data in encoded):  # past the C's two length bytes
            return super().names_test(exact, suffixes, prefixes)
        tests = b"".join(kind + len(data).to_bytes(2, "big") + data for kind, data in encoded)
        size, run_clear = len(tests), _lib.corral_names_clear

        def clear(run: str) -> bool:
            data = run.encode("ascii")
            # -1 (EINVAL) is not 1: a run the C could not test is tested in full by the caller
            answer: int = run_clear(tests, size, data, len(data))
            return answer == 1
        return clear


# -- the batches and buffers, in C ------------------------------------------------------

class _HeldScratch(threading.local):
    """Each thread's buffers for replace_held: the names listed, their size
    (made on first use; cffi lets the GIL go around the call)."""

    # cffi arrays (char[], int64_t *); cffi objects carry no static types
    buffers: tuple[Any, Any] | None = None


_held_scratch = _HeldScratch()
_HELD_NAMES = 4096  # bytes of extended attribute names listed in the call
_LISTED_SOME = 3  # corral_replace_held's answer: names listed, or the listing failed


class _WatchScratch(threading.local):
    """Each thread's buffers for watch_read_replace: the bytes read, their
    count (made on first use; cffi lets the GIL go around the call)."""

    # cffi arrays (char[], int64_t *); cffi objects carry no static types
    buffers: tuple[Any, Any] | None = None


_watch_scratch = _WatchScratch()
_WATCH_READ = 4096  # the most read into the buffer (a longer read: os.read's bytes)


def _watch_buffers() -> tuple[Any, Any]:
    """This thread's watch_read_replace buffers, made on its first read."""
    buffers = _watch_scratch.buffers = (_ffi.new("char[]", _WATCH_READ), _ffi.new("int64_t *"))
    return buffers


def _held_buffers() -> tuple[Any, Any]:
    """This thread's replace_held buffers, made on its first replace."""
    buffers = _held_scratch.buffers = (_ffi.new("char[]", _HELD_NAMES), _ffi.new("int64_t *"))
    return buffers


class _WindowScratch(threading.local):
    """Each thread's output buffer for text_window (made on first use)."""

    # cffi arrays (char[], int64_t[5], int64_t[]); cffi objects carry no static types
    buffers: tuple[Any, Any, Any] | None = None


_window_scratch = _WindowScratch()
WINDOW_SCRATCH_BYTES = 512 * 1024  # kept per thread; a window needing more gets its own
WINDOW_SCRATCH_LINES = 4096  # line starts kept per thread; likewise


def _window_buffers() -> tuple[Any, Any, Any]:
    """This thread's text_window buffers, made on its first window."""
    buffers = _window_scratch.buffers = (
        _ffi.new("char[]", WINDOW_SCRATCH_BYTES), _ffi.new("int64_t[5]"),
        _ffi.new("int64_t[]", WINDOW_SCRATCH_LINES))
    return buffers


def _scan_lines(needle: bytes, buf: bytes, pos: int, line: int, size: int) -> Iterator[Hit]:
    out = _ffi.new("int64_t[]", 4 * _LINE_BATCH)
    state = _ffi.new("int64_t[2]")
    nlen = len(needle)
    scan = _lib.corral_scan_lines
    while pos < size:
        hits = scan(buf, size, pos, line, needle, nlen, out, _LINE_BATCH, state)
        if hits < 0:
            _fail()
        values = _ffi.unpack(out, 4 * hits)
        for i in range(0, 4 * hits, 4):
            yield values[i], values[i + 1], values[i + 2], values[i + 3]
        if hits < _LINE_BATCH:
            return
        pos, line = state[0], state[1]


class _ListerRoom(threading.local):
    """The room a thread's last listing grew to (up to :data:`_LISTER_KEEP`
    bytes): its next walk starts there, not listing a large directory again
    and again into too little room.  A listing is decoded before its call
    returns, so the walks of one thread may share it."""
    size = 0
    buf: Any = None  # a cffi char[]


_lister_room = _ListerRoom()
_LISTER_KEEP = 1 << 22


class NativeLister:
    """Listings by ``corral_list_dir`` (native/corral_scan.h): one C call
    per directory fills a buffer with the names, split by kind, and Python
    only splits it, with no object per entry (:class:`._backend.DirLister`)."""

    def __init__(self, *, below: bool = False) -> None:
        room = _lister_room
        if room.size:
            self._size, self._buf = room.size, room.buf
        else:
            self._size = 1 << 16
            self._buf = _ffi.new("char[]", self._size)
        self._counts = _ffi.new("int64_t[4]")
        #: whether :meth:`list_below` can open by openat2 here
        self.below = below

    def list_below(self, root_fd: int, path: str, flags: int, resolve: int,
                   left: LeftDirectory | None) -> tuple[int, KindListing] | NotListed:
        """The search walk's step into a subdirectory, in one call
        (``corral_list_below``, native/corral_search.h): where ``left`` is
        given, the directory the walk just left is shown beneath the root
        first; then ``path`` is opened from ``root_fd`` by one ``openat2``
        (``resolve``) and listed.  The fd and its listing (the fd is the
        caller's), else ``NotListed.LEFT_NOT_SHOWN`` (the left directory not shown
        beneath, or no name to tell: nothing opened, the caller checks it
        its own way) or ``NotListed.NOT_OPENED`` (the ``openat2`` failed, or this
        lister takes no such step: the caller opens it its own way; a left
        directory was shown beneath).  Raises what the listing raises."""
        data = path.encode(_ENCODING, _ENCODE_ERRORS)
        if not self.below or _NUL in data:
            return NotListed.NOT_OPENED if left is None else NotListed.LEFT_NOT_SHOWN
        if left is None:
            low = _list_below(root_fd, data, len(data), flags, resolve, -1, _ffi.NULL, 0, -1,
                              _ffi.NULL, 0, 0, self._buf, self._size, self._counts)
        else:
            proc_fd, left_fd, left_path, root_name, root_dev, root_ino = left
            there = left_path.encode(_ENCODING, _ENCODE_ERRORS)
            low = _list_below(root_fd, data, len(data), flags, resolve, left_fd, there,
                              len(there), proc_fd, _ffi.NULL if root_name is None else root_name,
                              root_dev, root_ino, self._buf, self._size, self._counts)
        if low == -4:
            return NotListed.LEFT_NOT_SHOWN
        if low == -3:
            return NotListed.NOT_OPENED
        if low == -1:
            _fail()
        return self._opened(low)

    def open_list(self, dir_fd: int, name: str, flags: int) -> tuple[int, KindListing]:
        """Open the subdirectory ``name`` (one component; ``O_NOFOLLOW`` and
        ``O_DIRECTORY`` added) and list it, in one call; the fd is the caller's."""
        low = _lib.corral_list_at(dir_fd, name.encode("utf-8"), flags, self._buf, self._size,
                                  self._counts)
        if low == -1:
            _fail()
        return self._opened(low)

    def _opened(self, low: int) -> tuple[int, KindListing]:
        """The directory a one-call open and list opened (its fd, the
        caller's) and its listing; the fd closed where the listing fails."""
        fd = int(self._counts[2])
        try:
            return fd, self(fd) if low == -2 else self._listing(low)
        except BaseException:
            os.close(fd)
            raise

    def __call__(self, fd: int) -> KindListing:
        while True:
            low = _lib.corral_list_dir(fd, self._buf, self._size, self._counts)
            if low != -2:
                break
            self._size *= 4  # a large directory: list it again into more room
            self._buf = _ffi.new("char[]", self._size)
            if self._size <= _LISTER_KEEP:
                _lister_room.size, _lister_room.buf = self._size, self._buf
        if low < 0:
            _fail()
        return self._listing(low)

    def _listing(self, low: int) -> KindListing:
        raw = _ffi.buffer(self._buf, self._size)
        files = raw[0:low].decode("utf-8").split("\0")
        files.pop()  # after the last NUL
        kinds: dict[str, str] = {}
        dirs: list[str] = []
        others = raw[self._counts[1]:self._size].decode("utf-8").split("\0")
        others.pop()
        for item in others:
            name = item[1:]
            if item[0] == "d":
                dirs.append(name + "/")
            else:
                files.append(name)
                kinds[name] = "symlink" if item[0] == "l" else "other"
        return files, kinds, dirs, int(self._counts[0])


class _SizedBuffers(threading.local):
    size = 0
    # cffi arrays (char[], int64_t[], int64_t *); cffi objects carry no static types
    names: Any = None
    codes: Any = None
    count: Any = None


# Buffers are per thread: cffi releases the GIL around the call, so two
# threads' listings must not share one.  Grown for a large directory; kept
# only up to _SIZED_KEEP bytes of names (a larger one is the call's alone).
_sized_buffers = _SizedBuffers()
_SIZED_FIRST = 1 << 14  # bytes of names; room for _SIZED_FIRST // 16 codes
_SIZED_KEEP = 1 << 20
_DECODE_ERRORS = sys.getfilesystemencodeerrors()


def _list_sized(fd: int) -> tuple[list[str], list[int]]:
    bufs = _sized_buffers
    if bufs.size == 0:
        bufs.size = _SIZED_FIRST
        bufs.names = _ffi.new("char[]", _SIZED_FIRST)
        bufs.codes = _ffi.new("int64_t[]", _SIZED_FIRST // 16)
        bufs.count = _ffi.new("int64_t *")
    size, names, codes, count = bufs.size, bufs.names, bufs.codes, bufs.count
    while True:
        used = _lib.corral_list_sized(fd, names, size, codes, size // 16, count)
        if used != -2:
            break
        size *= 4  # a large directory: list it again into more room
        names = _ffi.new("char[]", size)
        codes = _ffi.new("int64_t[]", size // 16)
        if size <= _SIZED_KEEP:
            bufs.size, bufs.names, bufs.codes = size, names, codes
    if used < 0:
        _fail()
    text = _ffi.unpack(names, used).decode(_ENCODING, _DECODE_ERRORS).split("\0")
    text.pop()  # after the last NUL
    return text, _ffi.unpack(codes, count[0])


_read_buffers = threading.local()  # one read buffer per thread, reused by every grep call


def _read_buffer(size: int) -> Any:
    buf = getattr(_read_buffers, "buf", None)
    if buf is None or len(buf) < size:
        buf = _read_buffers.buf = _ffi.new("char[]", size)
    return buf


class FileScanner:
    """grep's per-file work for a directory's worth of files in one C call
    (``corral_scan_files``, native/corral_scan.h): open each name below the
    directory fd (``O_NOFOLLOW|O_NONBLOCK``), fstat it, and read a regular
    file ``chunk`` bytes at a time, looking for ``needle``, until found
    (:class:`._backend.FileScan`).  Files of :data:`BUDGET` bytes or more
    come back open and unread, so that one call never reads much more than
    that."""

    BATCH = 256  # files per call
    BUDGET = 32 << 20  # bytes read per call, so the caller's checkpoints come often

    def __init__(self, needle: bytes | None, *, sniff: int, keep_links: bool, chunk: int) -> None:
        self._needle = needle or b""
        self._sniff = clamp_int64(sniff, "sniff")
        self._keep = int(keep_links)
        self._size = max(1, clamp_int64(chunk, "chunk"))
        self._buf = _read_buffer(self._size)
        self._out = _ffi.new("int64_t[]", 4 * self.BATCH)
        self._consumed = _ffi.new("int64_t[1]")

    def scan(self, dir_fd: int, names: bytes, offset: int, count: int) -> tuple[list[int], int]:
        """Files from ``names[offset:]`` (``count`` names left, each
        NUL-terminated): the rows of those done, and the offset of the
        first name not done."""
        offset = max(0, min(offset, len(names)))
        start = _ffi.from_buffer(names) + offset
        done = _lib.corral_scan_files(dir_fd, start, len(names) - offset,
                                      max(0, min(count, self.BATCH)), self._needle,
                                      len(self._needle), self._sniff, self._keep, self._buf,
                                      self._size, self.BUDGET, self._out, self._consumed)
        if done < 0:
            _fail()
        return _ffi.unpack(self._out, 4 * done), offset + int(self._consumed[0])
