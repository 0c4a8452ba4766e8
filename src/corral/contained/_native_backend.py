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

import errno
import os
import sys
from typing import Any, NoReturn

# ModuleNotFoundError with name "corral._native" when the module was not built
# (``from .. import _native`` would raise a plain ImportError instead)
from .._native import ffi as _ffi, lib as _lib
from . import _darwin, _linux
from ._backend import (IS_DARWIN, IS_LINUX, RENAME_EXCHANGE, RENAME_NOREPLACE, Backend,
                       OsBackend, _openat2_wanted, _under_pyfakefs, fd_capabilities)
from ._errors import InvalidPathError

__all__ = ["NativeBackend"]

_ENCODING = sys.getfilesystemencoding()
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

_openat2 = _lib.corral_openat2
_open_beneath = _lib.corral_open_beneath


def c_path(path: str | bytes) -> bytes:
    """``path`` as the bytes C receives; :class:`InvalidPathError` for a NUL
    byte, which C would take as the end of the string."""
    data = path.encode(_ENCODING, _ENCODE_ERRORS) if isinstance(path, str) else os.fsencode(path)
    if b"\0" in data:
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
    close = OsBackend.close
    fstat = OsBackend.fstat
    lstat_at = OsBackend.lstat_at
    readlink_at = OsBackend.readlink_at
    mkdir_at = OsBackend.mkdir_at
    unlink_at = OsBackend.unlink_at
    rmdir_at = OsBackend.rmdir_at
    link_at = OsBackend.link_at
    symlink_at = OsBackend.symlink_at
    scandir = OsBackend.scandir
    read = OsBackend.read
    pread = OsBackend.pread
    write = OsBackend.write
    fsync = OsBackend.fsync
    fchmod = OsBackend.fchmod
    mount_flags = OsBackend.mount_flags
    protected_symlinks = OsBackend.protected_symlinks

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

    # -- what the native module adds -----------------------------------------
    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        # the hot path of every Root.open and Root.stat: c_path inlined
        data = path.encode(_ENCODING, _ENCODE_ERRORS) if type(path) is str else c_path(path)
        if b"\0" in data:
            raise InvalidPathError("path contains a NUL byte")
        if not self.has_openat2 or resolve & self._resolve_unsupported:
            raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
        fd: int = _openat2(dir_fd, data, flags | self._openat2_extra, mode, resolve)
        if fd < 0:
            _fail()
        return fd

    def _open_beneath(self, dir_fd: int, path: bytes, size: int, flags: int, mode: int,
                      resolve: int) -> int:
        if resolve & self._resolve_unsupported:
            return -1
        fd: int = _open_beneath(dir_fd, path, size, flags, mode, resolve)
        return fd

    def rename_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                  flags: int = 0) -> None:
        if flags == 0:  # os.rename is as good, and the same on every platform
            os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
            return
        if _lib.corral_renameat(src_dir_fd, c_path(src), dst_dir_fd, c_path(dst), flags) != 0:
            _fail()

    def create_directory_at(self, dir_fd: int, name: str, mode: int) -> int:
        step = _ffi.new("int *")
        fd: int = _lib.corral_create_directory_at(dir_fd, c_path(name), mode, self.dir_flags,
                                                  step)
        if fd < 0:
            # step 2: the directory was made, but what is at its name now
            # cannot be opened as one (say, a symlink planted in between)
            _fail(" (directory created, but reopening it failed)" if step[0] == 2 else "")
        return fd

    def info(self) -> dict[str, Any]:
        data = super().info()
        data.update(module=getattr(sys.modules.get("corral._native"), "__file__", None),
                    rename_flags=self.has_rename_flags,
                    create_directory_at="native (mkdirat + openat O_NOFOLLOW)")
        if IS_DARWIN:
            data["nofollow_any"] = self.has_nofollow_any
        return data
