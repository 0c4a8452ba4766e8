"""Linux system calls and kernel facts the ``os`` module lacks.

* :func:`openat2` and :func:`renameat2` through ctypes, for the os backend
  (the native backend, ``corral._native``, makes the same calls in C, faster).
* :func:`probe_openat2`: whether ``openat2(RESOLVE_BENEATH)`` works here.
* :func:`mount_flags` (``ST_NOSYMFOLLOW``) and :func:`protected_symlinks`
  (``fs.protected_symlinks``): the kernel's rules for following a symlink,
  which the walk must keep too.
* :func:`watch_open`, :func:`watch_add`, :func:`watch_remove`: inotify, the
  kernel's watch of directories (for both backends: none is hot).

Paths are checked for NUL by the caller (the backend, :func:`._paths.refuse_nul`)
before they get here: ctypes would cut the string at the NUL.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import sys
import termios
import time
from collections.abc import Callable
from typing import Any

__all__ = ["RESOLVE_NO_XDEV", "RESOLVE_NO_MAGICLINKS", "RESOLVE_NO_SYMLINKS", "RESOLVE_BENEATH",
           "RENAME_NOREPLACE", "RENAME_EXCHANGE", "openat2", "renameat2", "probe_openat2",
           "mount_flags", "filesystem_type", "protected_symlinks", "watch_open", "watch_add",
           "watch_remove", "can_watch", "watch_limit", "fd_path", "proc_fds"]

RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08

RENAME_NOREPLACE = 1 << 0
RENAME_EXCHANGE = 1 << 1

# openat2 has the same number on every architecture (it came after the
# syscall tables were unified); renameat2 does not, so use glibc's wrapper.
_SYS_OPENAT2 = 437
_AT_FDCWD = -100


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


_libc: Any = None
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
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    how = _OpenHow(flags, mode, resolve)
    fd: int = _libc.syscall(_SYS_OPENAT2, ctypes.c_int(dir_fd), os.fsencode(path),
                            ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return fd


def renameat2(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str, flags: int) -> None:
    """``renameat2(2)`` with ``RENAME_NOREPLACE`` / ``RENAME_EXCHANGE``."""
    if _renameat2 is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    if _renameat2(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst), flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def probe_openat2(opener: Callable[[int, str, int, int, int], int]) -> tuple[bool, str]:
    """(whether ``opener`` (an ``openat2``) resolves beneath, why)."""
    try:
        fd = opener(_AT_FDCWD, ".", os.O_PATH | os.O_CLOEXEC, 0,
                    RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
    except OSError as exc:
        return False, f"probe failed: {errno.errorcode.get(exc.errno or 0, exc.errno)}"
    os.close(fd)
    return True, "kernel supports openat2(RESOLVE_BENEATH)"


def mount_flags(fd: int) -> int:
    """``statvfs.f_flag`` of the filesystem holding ``fd`` (O_PATH fds too)."""
    return os.fstatvfs(fd).f_flag


class _StatFs(ctypes.Structure):
    # f_type leads struct statfs (a word); the rest is room enough for any
    # architecture's layout (120 bytes on 64-bit ones)
    _fields_ = [("f_type", ctypes.c_long), ("rest", ctypes.c_byte * 256)]


_fstatfs = getattr(_libc, "fstatfs", None)
if _fstatfs is not None:
    _fstatfs.argtypes = [ctypes.c_int, ctypes.POINTER(_StatFs)]
    _fstatfs.restype = ctypes.c_int


def filesystem_type(fd: int) -> int:
    """``statfs.f_type`` of the filesystem holding ``fd`` (its magic
    number: ``PROC_SUPER_MAGIC``...); 0 where it cannot be had."""
    if _fstatfs is None:
        return 0
    found = _StatFs()
    if _fstatfs(fd, ctypes.byref(found)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(found.f_type) & 0xFFFFFFFF


PROC_SUPER_MAGIC = 0x9FA0
_proc_is_procfs: list[bool] = []  # asked once: a mount does not turn into procfs later
# this process's /proc/self/fd, held open once known to be procfs: a name is
# then read relative to it (readlinkat), without looking up /proc, self (a
# link to /proc/<pid>) and fd again at every call (an fd of the library's, as
# a Root's own: a program that closes fds it does not own breaks both)
_proc_fds: list[int] = []


# no answer about /proc, only about this moment: raised, nothing remembered
_NOT_NOW = (errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EINTR)


def _open_proc_fds() -> int:
    """``/proc/self/fd`` opened, where ``/proc`` is procfs (else -1).  Out
    of fds or memory it raises: remembered as "no procfs", the first look
    made while a process was out of fds would take the check's kernel names
    away for the rest of its life."""
    try:
        probe = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in _NOT_NOW:
            raise
        return -1
    try:
        if filesystem_type(probe) == PROC_SUPER_MAGIC:
            return probe
    except OSError:
        pass
    os.close(probe)
    return -1


def _forget_proc_fds() -> None:
    """In a forked child: the held directory is the parent's fd table."""
    if _proc_fds:
        held = _proc_fds.pop()
        if held >= 0:
            try:
                os.close(held)
            except OSError:
                pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_proc_fds)


def proc_fds() -> int:
    """This process's ``/proc/self/fd``, held open (not to be closed), or
    -1 where ``/proc`` is not procfs."""
    if not _proc_is_procfs:
        if not _proc_fds:
            _proc_fds.append(_open_proc_fds())
        _proc_is_procfs.append(_proc_fds[0] >= 0)
    if not _proc_is_procfs[0]:
        return -1
    if not _proc_fds:  # forked since
        _proc_fds.append(_open_proc_fds())
    return _proc_fds[0]


def fd_path(fd: int) -> str | None:
    """The path the kernel has for ``fd`` now (``/proc/self/fd/N``), or
    ``None`` where ``/proc`` is not procfs (not mounted, or something
    else mounted there that could answer anything)."""
    proc = proc_fds()
    if not _proc_is_procfs[0]:
        return None
    try:
        if proc < 0:
            return os.readlink(f"/proc/self/fd/{fd}")
        return os.readlink(str(fd), dir_fd=proc)
    except OSError:  # a security module refusing the look: no name
        return None


_PROTECTED_SYMLINKS = "/proc/sys/fs/protected_symlinks"
_sysctl_cache: list[float] = [0.0, 0.0]  # (read at, value)


def protected_symlinks() -> bool:
    """``fs.protected_symlinks``, read again at most once a second (the
    kernel checks it at every link it follows; it seldom changes)."""
    now = time.monotonic()
    if _sysctl_cache[0] == 0.0 or now - _sysctl_cache[0] > 1.0:
        try:
            with open(_PROTECTED_SYMLINKS, "rb") as f:
                value = float(f.read().strip() or b"0")
        except (OSError, ValueError):
            value = 0.0
        _sysctl_cache[:] = [now, value]
    return _sysctl_cache[1] != 0.0


# -- inotify: what other programs change in directories ---------------------------------

_inotify_init1 = getattr(_libc, "inotify_init1", None)
_inotify_add_watch = getattr(_libc, "inotify_add_watch", None)
_inotify_rm_watch = getattr(_libc, "inotify_rm_watch", None)
if _inotify_add_watch is not None:
    _inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    _inotify_add_watch.restype = ctypes.c_int


def can_watch() -> bool:
    """Whether inotify is here, and ``/proc`` to name a directory by its fd."""
    return _inotify_init1 is not None and _inotify_add_watch is not None and \
        _inotify_rm_watch is not None and os.path.isdir("/proc/self/fd")


_MAX_USER_WATCHES = "/proc/sys/fs/inotify/max_user_watches"


def watch_limit() -> int:
    """``fs.inotify.max_user_watches``: the directories all of the user's
    processes may watch at once (0 where it cannot be read)."""
    try:
        with open(_MAX_USER_WATCHES, "rb") as f:
            return max(0, int(f.read().strip() or b"0"))
    except (OSError, ValueError):
        return 0


def _raise_errno() -> None:
    err = ctypes.get_errno()
    raise OSError(err, os.strerror(err))


def watch_open() -> int:
    """A new inotify instance: non-blocking, closed on exec."""
    if _inotify_init1 is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    fd: int = _inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        _raise_errno()
    return fd


def watch_add(watch_fd: int, dir_fd: int, mask: int) -> int:
    """Watch the directory open at ``dir_fd`` (by the fd: whatever its path
    now): the watch number (the same for a directory watched already)."""
    if _inotify_add_watch is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    wd: int = _inotify_add_watch(watch_fd, f"/proc/self/fd/{dir_fd}".encode(), mask)
    if wd < 0:
        _raise_errno()
    return wd


def watch_waiting(watch_fd: int) -> int:
    """The bytes of events queued on the inotify instance ``watch_fd`` (by
    ``FIONREAD``): a quiet one answered without a read that fails (a raised
    ``BlockingIOError`` costs several times the call).  The count is
    written into a buffer of the call's own: ``ioctl`` takes a writable one
    at its first try (given bytes, it makes and drops a TypeError before it
    takes them)."""
    queued = bytearray(4)  # FIONREAD's count, a C int
    fcntl.ioctl(watch_fd, termios.FIONREAD, queued)
    return int.from_bytes(queued, sys.byteorder, signed=True)


def watch_remove(watch_fd: int, wd: int) -> None:
    if _inotify_rm_watch is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    if _inotify_rm_watch(watch_fd, wd) < 0:
        _raise_errno()
