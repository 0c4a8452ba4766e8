"""Linux system calls the ``os`` module lacks, through ctypes.

Only what :class:`corral.contained._backend.OsBackend` needs: ``openat2`` and
``renameat2``.  The native backend (``corral._native``, cffi) provides the
same calls faster; this module is the fallback when it is not built.  Paths
are checked for NUL before they get here (ctypes would cut the string).
"""

from __future__ import annotations

import ctypes
import os
import sys

RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08

RENAME_NOREPLACE = 1 << 0
RENAME_EXCHANGE = 1 << 1

# openat2 has the same number on every architecture (it came after the
# syscall tables were unified); renameat2 does not, so use glibc's wrapper.
_SYS_OPENAT2 = 437


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


_libc = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    except OSError:  # pragma: no cover - static or unusual libc
        _libc = None

_renameat2 = getattr(_libc, "renameat2", None)
if _renameat2 is not None:
    _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                           ctypes.c_uint]
    _renameat2.restype = ctypes.c_int


def openat2(dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
    """``openat2(2)``; raises ``OSError`` (``ENOSYS`` where the kernel lacks it)."""
    if _libc is None:
        raise OSError(38, os.strerror(38))
    how = _OpenHow(flags, mode, resolve)
    fd = _libc.syscall(_SYS_OPENAT2, ctypes.c_int(dir_fd), os.fsencode(path),
                       ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return fd


def renameat2(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str, flags: int) -> None:
    """``renameat2(2)`` with ``RENAME_NOREPLACE`` / ``RENAME_EXCHANGE``."""
    if _renameat2 is None:
        raise OSError(38, os.strerror(38))
    if _renameat2(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst), flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
