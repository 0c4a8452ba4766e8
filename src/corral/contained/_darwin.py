"""Darwin system calls and probes the ``os`` module lacks, through ctypes.

* :func:`renameatx_np`: ``renameat2``'s flags on Darwin (``RENAME_EXCL``,
  ``RENAME_SWAP``), for the os backend (the native backend calls it in C).
* :func:`probe_beneath`: whether the running kernel honours
  ``O_RESOLVE_BENEATH`` (macOS 15) and ``O_NOFOLLOW_ANY`` (macOS 11) for an
  ``openat``-like call: an older kernel may ignore an unknown flag, which
  would turn the fast path into a plain ``openat``, so neither is used until
  this says so.

Paths are checked for NUL before they reach C (:func:`._paths.refuse_nul`).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
from collections.abc import Callable

from ._paths import refuse_nul

__all__ = ["renameatx_np", "probe_beneath", "fd_path", "RENAME_EXCL", "RENAME_SWAP"]

RENAME_SWAP = 0x2
RENAME_EXCL = 0x4
_LINUX_NOREPLACE, _LINUX_EXCHANGE = 1 << 0, 1 << 1

_renameatx: Callable[..., int] | None = None
_MAXPATHLEN = 1024  # F_GETPATH's buffer: the kernel writes at most this many bytes
_F_GETPATH: int | None = getattr(fcntl, "F_GETPATH", None)


def fd_path(fd: int) -> str | None:
    """The path the kernel has for ``fd`` now (``fcntl(F_GETPATH)``), or
    ``None`` where the call is missing."""
    if _F_GETPATH is None:
        return None
    try:
        raw = fcntl.fcntl(fd, _F_GETPATH, bytes(_MAXPATHLEN))
    except OSError:  # a path longer than MAXPATHLEN, a revoked fd: no name
        return None
    return os.fsdecode(raw.split(b"\0", 1)[0])

#: ``open(dir_fd, path_bytes, flags, mode, resolve) -> fd or -1``, the call probed
Opener = Callable[[int, bytes, int, int, int], int]


def renameatx_np(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str, flags: int) -> None:
    """``renameatx_np``; ``flags`` are Linux's ``RENAME_*`` (the core's
    vocabulary), mapped to ``RENAME_EXCL`` / ``RENAME_SWAP``."""
    global _renameatx
    if flags & ~(_LINUX_NOREPLACE | _LINUX_EXCHANGE):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
    refuse_nul(src)
    refuse_nul(dst)
    if _renameatx is None:
        fn = ctypes.CDLL(None, use_errno=True).renameatx_np
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                       ctypes.c_uint]
        fn.restype = ctypes.c_int
        _renameatx = fn
    xflags = (RENAME_EXCL if flags & _LINUX_NOREPLACE else 0) | \
        (RENAME_SWAP if flags & _LINUX_EXCHANGE else 0)
    if _renameatx(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst), xflags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def probe_beneath(opener: Opener, beneath: int, no_symlinks: int) -> tuple[bool, bool, str]:
    """(``O_RESOLVE_BENEATH`` honoured, ``O_NOFOLLOW_ANY`` honoured, why),
    tried with ``opener`` (resolve bits ``beneath`` / ``no_symlinks``) in a
    scratch directory: every way out must be refused and what is inside
    still opened."""
    import shutil  # here: only Darwin probes, once
    import tempfile

    base = tempfile.mkdtemp(prefix="corral-probe-")
    try:
        ok, nofollow_any = _probe_in(base, opener, beneath, no_symlinks)
    except OSError as exc:
        return False, False, f"probe could not run: {exc}"
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if not ok:
        return False, False, ("kernel does not honour O_RESOLVE_BENEATH (older than macOS "
                              "15?): the walk runs")
    return True, nofollow_any, "kernel honours O_RESOLVE_BENEATH"


def _probe_in(base: str, opener: Opener, b: int, nosym: int) -> tuple[bool, bool]:
    root = os.path.join(base, "root")
    os.mkdir(root)
    os.mkdir(os.path.join(root, "sub"))
    with open(os.path.join(root, "file"), "wb"):
        pass
    os.symlink("..", os.path.join(root, "up"))
    os.symlink("sub", os.path.join(root, "link"))
    os.symlink("../made", os.path.join(root, "dangling"))
    rfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    read_flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK
    dir_flags = read_flags | os.O_DIRECTORY

    def opens(path: str, flags: int, resolve: int) -> bool:
        fd = opener(rfd, os.fsencode(path), flags, 0o600, resolve)
        if fd < 0:
            return False
        os.close(fd)
        return True

    try:
        beneath = (opens("file", read_flags, b) and opens("sub", dir_flags, b)
                   and not opens("..", dir_flags, b)
                   and not opens("up/root/file", read_flags, b)
                   and not opens(os.path.join(root, "file"), read_flags, b)
                   and not opens("dangling", read_flags | os.O_WRONLY | os.O_CREAT, b)
                   and not os.path.lexists(os.path.join(base, "made")))
        nofollow_any = (opens("sub/.", dir_flags, b | nosym)
                        and not opens("link/.", dir_flags, b | nosym))
    finally:
        os.close(rfd)
    return beneath, nofollow_any
