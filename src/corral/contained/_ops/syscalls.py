"""System calls the surface operations need that the Backend protocol lacks.

Every call here acts on an fd the caller already holds (or on a name in a
directory fd it holds), never on a path string: the resolver in the core
decided where the fd is, and nothing here looks a path up again.

:func:`fd_calls` gives the calls for a backend: the backend itself when it
defines all of :class:`FdCalls` (a fault-injecting or recording backend in
tests does, so it sees every step), else :class:`OsFdCalls`, the ``os``
module's calls.  Under pyfakefs the ``os`` module is a fake whose fds are
small integers that collide with real ones; :class:`OsFdCalls` then refuses
(``ENOTSUP``) rather than hand a fake fd to a real system call, and the
operations treat that as "not permitted here" (metadata is not carried).
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from .._backend import Backend, _under_pyfakefs

__all__ = ["IS_LINUX", "NOT_PERMITTED", "FdCalls", "OsFdCalls", "fd_calls", "copy_stream"]

CHUNK = 1 << 20

IS_LINUX = sys.platform.startswith("linux")

#: errnos meaning "this metadata cannot be set here by this caller", which a
#: copy of metadata tolerates (the operation goes on without it)
NOT_PERMITTED = frozenset({errno.EPERM, errno.EACCES, errno.ENOTSUP, errno.EOPNOTSUPP,
                           errno.ENODATA, errno.EINVAL, errno.ENOSYS})


@runtime_checkable
class FdCalls(Protocol):
    """fd-level calls (each raises ``OSError`` with the kernel's errno)."""

    def fchown(self, fd: int, uid: int, gid: int) -> None: ...
    def flistxattr(self, fd: int) -> list[str]: ...
    def fgetxattr(self, fd: int, name: str) -> bytes: ...
    def fsetxattr(self, fd: int, name: str, value: bytes) -> None: ...


def _unsupported(what: str) -> OSError:
    return OSError(errno.ENOTSUP, f"{what} is not available here")


class OsFdCalls:
    """:class:`FdCalls` through the ``os`` module.

    ``os`` has extended attributes on Linux only; elsewhere the xattr calls
    raise ``ENOTSUP`` (so xattrs are not carried on macOS: documented in
    ``_replace``).
    """

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


_OS_CALLS = OsFdCalls()


def fd_calls(backend: Backend) -> FdCalls:
    """The fd calls to use with ``backend`` (see the module docstring)."""
    if isinstance(backend, FdCalls):
        return backend
    return _OS_CALLS


def copy_stream(read: Callable[[int], bytes], fd: int) -> None:
    """Write to ``fd`` everything ``read(n)`` gives until it gives ``b""``."""
    while chunk := read(CHUNK):
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view):]
