"""The system-call interface the resolver is written against, and its backends.

A backend is a small object of ``*_at`` calls that take a directory fd and one
name (never a path with ``/`` in it, except ``openat2``).  The resolver in
``_root.py`` owns every security decision; a backend only makes calls and
raises ``OSError`` with the kernel's errno.  That keeps the platforms apart
(one backend each) and lets tests wrap a backend to inject faults.

Backends:

* :class:`OsBackend`: the ``os`` module's ``dir_fd`` calls, plus ``openat2``
  and ``renameat2`` through ctypes on Linux.
* ``NativeBackend`` (``_native_backend.py``): the cffi module
  ``corral._native``, required on Darwin, built on Linux when a compiler is
  present.

:func:`default_backend` picks one; ``CORRAL_BACKEND=os|native`` forces it and
``CORRAL_OPENAT2=0`` turns the fast path off (the walk then runs).
:func:`backend_report` says which is in use, which fast paths, and why.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from typing import Iterator

from . import _linux
from ._errors import InvalidPathError

__all__ = ["Backend", "OsBackend", "default_backend", "available_backends", "backend_by_name",
           "backend_report", "RENAME_NOREPLACE", "RENAME_EXCHANGE"]

RENAME_NOREPLACE = _linux.RENAME_NOREPLACE
RENAME_EXCHANGE = _linux.RENAME_EXCHANGE

IS_LINUX = sys.platform.startswith("linux")
IS_DARWIN = sys.platform == "darwin"

# Intermediate directories only need to be searched: O_PATH on Linux (cheaper,
# and works on search-only directories); O_SEARCH where the os module has it.
_SEARCH = getattr(os, "O_PATH", 0) or getattr(os, "O_SEARCH", 0) or os.O_RDONLY
DIR_FLAGS = _SEARCH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Backend:
    """Interface of a backend (documentation and defaults; see module doc).

    Every method raises ``OSError`` carrying the kernel's errno and nothing
    else.  ``openat2_reason`` says why the fast path is or is not in use.
    """

    name = "abstract"
    dir_flags = DIR_FLAGS
    has_openat2 = False
    openat2_reason = "not probed"
    #: ``openat2`` answers EAGAIN to a ``..`` raced by a rename (Linux's
    #: RESOLVE_BENEATH), so a result opened without following links is
    #: where its spelling says.
    openat2_checks_dotdot = False

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int: ...
    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int: ...
    def close(self, fd: int) -> None: ...
    def fstat(self, fd: int) -> os.stat_result: ...
    def lstat_at(self, dir_fd: int, name: str) -> os.stat_result: ...
    def readlink_at(self, dir_fd: int, name: str) -> str: ...
    def mkdir_at(self, dir_fd: int, name: str, mode: int) -> None: ...
    def create_directory_at(self, dir_fd: int, name: str, mode: int) -> int: ...
    def unlink_at(self, dir_fd: int, name: str) -> None: ...
    def rmdir_at(self, dir_fd: int, name: str) -> None: ...
    def rename_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                  flags: int = 0) -> None: ...
    def link_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None: ...
    def symlink_at(self, target: str, dir_fd: int, name: str) -> None: ...
    def scandir(self, fd: int) -> Iterator[os.DirEntry]: ...
    def read(self, fd: int, size: int) -> bytes: ...
    def pread(self, fd: int, size: int, offset: int) -> bytes: ...
    def write(self, fd: int, data: bytes | memoryview) -> int: ...
    def fsync(self, fd: int) -> None: ...
    def fchmod(self, fd: int, mode: int) -> None: ...

    def info(self) -> dict:
        return {"backend": self.name, "openat2": self.has_openat2,
                "openat2_reason": self.openat2_reason}


class OsBackend(Backend):
    """The ``os`` module with ``dir_fd``; Linux extras through ctypes."""

    name = "os"

    def __init__(self, *, openat2: bool | None = None) -> None:
        self._openat2_wanted = _openat2_wanted(openat2)
        self.has_openat2 = False
        self.openat2_reason = "not Linux" if not IS_LINUX else "not probed"
        if IS_LINUX:
            self._probe()

    # -- the fast path -------------------------------------------------
    def _probe(self) -> None:
        if not self._openat2_wanted:
            self.openat2_reason = "disabled (CORRAL_OPENAT2=0 or openat2=False)"
            return
        try:
            fd = self._raw_openat2(-100, ".", os.O_PATH | os.O_CLOEXEC, 0,
                                   _linux.RESOLVE_BENEATH | _linux.RESOLVE_NO_MAGICLINKS)
        except OSError as exc:
            self.openat2_reason = f"probe failed: {errno.errorcode.get(exc.errno, exc.errno)}"
            return
        os.close(fd)
        self.has_openat2 = True
        self.openat2_checks_dotdot = True
        self.openat2_reason = "kernel supports openat2(RESOLVE_BENEATH)"

    def _raw_openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        return _linux.openat2(dir_fd, path, flags, mode, resolve)

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        refuse_nul(path)
        if not self.has_openat2:
            raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
        return self._raw_openat2(dir_fd, path, flags, mode, resolve)

    # -- plain calls ---------------------------------------------------
    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        return os.open(name, flags, mode, dir_fd=dir_fd)

    # Plain methods, not staticmethod(os.x): pyfakefs patches the os module,
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
            _darwin_renameatx_np(src_dir_fd, src, dst_dir_fd, dst, flags)
        else:
            raise OSError(errno.ENOSYS, "rename flags are not supported on this platform")

    def link_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
        os.link(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd, follow_symlinks=False)

    def symlink_at(self, target: str, dir_fd: int, name: str) -> None:
        os.symlink(target, name, dir_fd=dir_fd)

    def scandir(self, fd: int) -> Iterator[os.DirEntry]:
        return os.scandir(fd)

    def read(self, fd: int, size: int) -> bytes:
        return os.read(fd, size)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        if _under_pyfakefs():
            # pyfakefs fakes no pread: the real one would read whatever real
            # file holds the same fd number.  Seek and read (the offset moves).
            os.lseek(fd, offset, os.SEEK_SET)
            return os.read(fd, size)
        return os.pread(fd, size, offset)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        if _under_pyfakefs():
            os.chmod(fd, mode)  # pyfakefs fakes no fchmod (the real one: a real file)
            return
        os.fchmod(fd, mode)


_renameatx_np = None


def _darwin_renameatx_np(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                         flags: int) -> None:
    """``renameatx_np`` through ctypes, so the os backend keeps the rename
    flags on Darwin too (the native backend calls it directly).  ``flags``
    are Linux's ``RENAME_*``, mapped to ``RENAME_EXCL`` / ``RENAME_SWAP``."""
    global _renameatx_np
    import ctypes
    if _renameatx_np is None:
        fn = ctypes.CDLL(None, use_errno=True).renameatx_np
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                       ctypes.c_uint]
        fn.restype = ctypes.c_int
        _renameatx_np = fn
    if flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
    xflags = (0x4 if flags & RENAME_NOREPLACE else 0) | (0x2 if flags & RENAME_EXCHANGE else 0)
    refuse_nul(src)
    refuse_nul(dst)
    if _renameatx_np(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst), xflags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def refuse_nul(path: str | bytes) -> None:
    """:class:`InvalidPathError` (``EINVAL``) for a NUL in ``path``.

    For every call that hands a path to C through an FFI (ctypes, cffi): C
    takes the NUL as the end of the string, so ``"x\\0/../../evil"`` would
    silently become ``"x"``.  The ``os`` module refuses NUL itself
    (``ValueError``)."""
    if ("\0" if isinstance(path, str) else b"\0") in path:
        raise InvalidPathError("path contains a NUL byte")


def _openat2_wanted(explicit: bool | None) -> bool:
    if explicit is not None:
        return explicit
    return os.environ.get("CORRAL_OPENAT2", "1").strip().lower() not in ("0", "no", "false", "off")


# -- selection ---------------------------------------------------------------

_cache: dict[str, Backend] = {}
_cache_lock = threading.Lock()
_fake_safe: Backend | None = None
#: Why ``corral._native`` cannot be used here, once selection has looked
#: (``None`` while it is usable or has not been looked for).
native_unavailable_reason: str | None = None


def _under_pyfakefs() -> bool:
    # pyfakefs replaces this module's ``os`` with its fake while patching
    return type(os).__module__.startswith("pyfakefs")


def _native_missing_reason() -> str:
    """Why ``corral._native`` is not installed, as far as can be told now."""
    reason = "corral._native was not built"
    flag = os.environ.get("CORRAL_NATIVE", "").strip().lower()
    if flag in ("0", "no", "false", "off"):
        return reason + " (CORRAL_NATIVE=0 is set: it skips the build at install time)"
    import shlex
    import shutil
    import sysconfig
    cc = (sysconfig.get_config_var("CC") or "cc").strip()
    compiler = shlex.split(cc)[0] if cc else "cc"
    if shutil.which(compiler) is None and shutil.which("cc") is None:
        return reason + f" (no C compiler: {compiler!r} is not on PATH; install one and reinstall)"
    return reason + (" (a C compiler is present now: the install ran with CORRAL_NATIVE=0, "
                     "without a compiler, or its build failed; reinstall and read pip's log)")


def _load_native() -> Backend | None:
    """The native backend, or ``None`` with :data:`native_unavailable_reason` set.

    A native module that exists but fails to import is an error, not a quiet
    fallback (that is how a broken build hides): only "``corral._native`` is
    not installed" counts as unavailable.  On Darwin even that is an error.
    """
    global native_unavailable_reason
    try:
        from ._native_backend import NativeBackend
    except ModuleNotFoundError as exc:
        if exc.name != "corral._native":
            raise
        native_unavailable_reason = _native_missing_reason()
        if IS_DARWIN:
            raise ImportError("corral needs its native module on macOS: "
                              + native_unavailable_reason) from exc
        return None
    native_unavailable_reason = None
    return NativeBackend()


def backend_by_name(name: str) -> Backend:
    """A shared backend instance: ``"os"`` or ``"native"``.

    Raises ``OSError`` (``ENOSYS``) for ``"native"`` when the module was not
    built, ``ImportError`` when it was built but cannot load, ``ValueError``
    for an unknown name.
    """
    with _cache_lock:
        if name in _cache:
            return _cache[name]
        if name == "os":
            backend: Backend | None = OsBackend()
        elif name == "native":
            backend = _load_native()
            if backend is None:
                raise OSError(errno.ENOSYS, f"native backend unavailable: {native_unavailable_reason}")
        else:
            raise ValueError(f"unknown backend {name!r}; expected 'os' or 'native'")
        _cache[name] = backend
        return backend


def available_backends() -> list[str]:
    """Names of the backends that work here, the default first."""
    names = []
    for name in ("native", "os"):
        try:
            backend_by_name(name)
        except OSError:
            continue
        names.append(name)
    return names


def default_backend() -> Backend:
    """``CORRAL_BACKEND`` if set, else native when built, else os.

    Under pyfakefs (tests of code above the core) the default is an os
    backend without the fast path, whose calls pyfakefs can see; the native
    module's real system calls on fake fds would act on real files.
    """
    forced = os.environ.get("CORRAL_BACKEND", "").strip().lower()
    if forced:
        return backend_by_name(forced)
    if _under_pyfakefs():
        global _fake_safe
        if _fake_safe is None:
            _fake_safe = OsBackend(openat2=False)
        return _fake_safe
    try:
        return backend_by_name("native")
    except OSError:
        return backend_by_name("os")


def backend_report() -> dict:
    """What this process uses and why, for ``corral doctor`` and bug reports.

    Keys: ``platform``; ``backend`` (the default's name, or ``None`` with
    ``error`` when it cannot be had); ``forced`` (``CORRAL_BACKEND`` or
    ``None``); ``available`` (backend names); ``native`` (``built`` and, when
    not usable, ``reason``); ``fast_path`` (the default backend's
    :meth:`Backend.info`: ``openat2`` and ``openat2_reason``, plus the native
    module's extras).  Never raises.
    """
    report: dict = {"platform": sys.platform,
                    "forced": os.environ.get("CORRAL_BACKEND", "").strip().lower() or None,
                    "pyfakefs": _under_pyfakefs()}
    native: dict = {"built": False, "reason": None}
    try:
        backend_by_name("native")
    except OSError as exc:  # not built; or refused here (pyfakefs)
        native["reason"] = native_unavailable_reason or str(exc)
    except Exception as exc:  # a broken build: say so, do not hide it
        native["reason"] = f"corral._native is installed but cannot load: {exc!r}"
        native["built"] = True
    else:
        native["built"] = True
    report["native"] = native
    available = ["native"] if native["built"] and native["reason"] is None else []
    try:
        backend_by_name("os")
    except Exception:
        pass
    else:
        available.append("os")
    report["available"] = available
    try:
        backend = default_backend()
    except Exception as exc:
        report.update(backend=None, error=f"{type(exc).__name__}: {exc}", fast_path=None)
        return report
    report["backend"] = backend.name
    report["fast_path"] = backend.info()
    return report
