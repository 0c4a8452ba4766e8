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
  present; adds Root.open's one-call fast path.

Which one a Root uses is chosen in ``_select`` (``CORRAL_BACKEND=os|native``
forces it); ``CORRAL_OPENAT2=0`` turns the fast path off (the walk then
runs).

Under pyfakefs (its fds are small integers that collide with real ones, so a
real system call on one acts on a real file) no backend here runs: pass
``corral.testing.backends.FakeFsBackend()``, which makes only calls pyfakefs
fakes.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from . import _darwin, _linux
from ._paths import refuse_nul

__all__ = ["Backend", "DirEntries", "OpenBeneath", "OsBackend", "fd_capabilities",
           "RENAME_NOREPLACE", "RENAME_EXCHANGE", "FAKE_FS_REFUSAL"]

RENAME_NOREPLACE = _linux.RENAME_NOREPLACE
RENAME_EXCHANGE = _linux.RENAME_EXCHANGE

IS_LINUX = sys.platform.startswith("linux")
IS_DARWIN = sys.platform == "darwin"

# Intermediate directories only need to be searched: O_PATH on Linux (cheaper,
# and works on search-only directories); O_SEARCH where the os module has it.
_SEARCH = getattr(os, "O_PATH", 0) or getattr(os, "O_SEARCH", 0) or os.O_RDONLY
DIR_FLAGS = _SEARCH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

#: ``open_beneath(dir_fd, path, len(path), flags, mode, resolve) -> fd or -1``
OpenBeneath = Callable[[int, bytes, int, int, int, int], int]


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
    avoids_symlink_attacks = False
    #: Only a backend that says so runs under pyfakefs (module doc).
    fake_fs_safe = False

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        raise _unimplemented("open_at")

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        raise _unimplemented("openat2")

    def close(self, fd: int) -> None:
        raise _unimplemented("close")

    def fstat(self, fd: int) -> os.stat_result:
        raise _unimplemented("fstat")

    def lstat_at(self, dir_fd: int, name: str) -> os.stat_result:
        raise _unimplemented("lstat_at")

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

    def read(self, fd: int, size: int) -> bytes:
        raise _unimplemented("read")

    def pread(self, fd: int, size: int, offset: int) -> bytes:
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

    def protected_symlinks(self) -> bool:
        """Whether the kernel's ``fs.protected_symlinks`` rule is in force."""
        return False

    def info(self) -> dict[str, Any]:
        return {"backend": self.name, "openat2": self.has_openat2,
                "openat2_reason": self.openat2_reason}


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

    def read(self, fd: int, size: int) -> bytes:
        return os.read(fd, size)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        return os.pread(fd, size, offset)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        os.fchmod(fd, mode)

    def mount_flags(self, fd: int) -> int:
        return _linux.mount_flags(fd) if IS_LINUX else 0

    def protected_symlinks(self) -> bool:
        return IS_LINUX and _linux.protected_symlinks()


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
