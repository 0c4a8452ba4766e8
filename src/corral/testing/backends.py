"""Backends for tests: a real backend with chosen calls failing, one that
counts every call, and one that runs under pyfakefs.

:class:`FaultBackend` wraps a :class:`corral.contained.Backend` and passes
every call through, except the ones a :class:`Fault` names: those raise the
fault's errno (after the real call, for ``close``, which releases the fd
even when it reports an error), or run a hook first.  It can also state
kernel facts the machine does not have (``fs.protected_symlinks`` on, a
``nosymfollow`` mount), so the resolver's answer to them can be tested
anywhere.  Faults are injected below the core: the path a real kernel error
takes (the core's mapping, a tool's classification) is the one tested.

:class:`FakeFsBackend` is the one backend a Root accepts under pyfakefs:
it makes only the calls pyfakefs fakes (``os.open`` with ``dir_fd`` and the
like), and stands in for the two it does not fake (``pread`` by seek and
read, which moves the offset; ``fchmod`` by ``chmod`` of the fd).  Without
it, pyfakefs's small fake fd numbers would reach real system calls and act
on whatever real file holds that number.  No fast path under pyfakefs.

See :class:`CountingBackend` for pinning how many system calls an
operation makes.

Root ignores permission bits, and CI runs as root: inject ``EACCES`` here,
never by ``chmod``.  A fault names the method and optionally the name the
call is given (name-based calls: ``open_at``, ``openat2`` (its last
component), ``lstat_at``, ``readlink_at``, ``mkdir_at``,
``create_directory_at``, ``unlink_at``, ``rmdir_at``, ``rename_at`` and
``link_at`` (either end), ``symlink_at``); fd-based calls match the name the
fd was opened by.  A temporary file of an atomic write (``.name.<hex>.corral-
tmp``) counts as the name it stands for, or only it with ``temp=True``.
"""

from __future__ import annotations

import errno
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from corral.contained import Backend, DirEntries, OsBackend, ST_NOSYMFOLLOW
from corral.contained import under_pyfakefs as _under_pyfakefs

__all__ = ["Fault", "FaultBackend", "FakeFsBackend", "CountingBackend", "Tally",
           "SYSCALLS_PER_CALL"]

_TEMP_SUFFIX = ".corral-tmp"


@dataclass
class Fault:
    """One injected failure (see the module docstring)."""

    method: str
    err: int | None  # None: run the hook only
    name: str | None = None  # the name (or the target of a temporary file) to hit
    times: int = 1  # how many matching calls fail (-1: every one)
    hook: Callable[[], None] | None = None
    temp: bool = False  # only the temporary file standing for ``name``
    fired: int = field(default=0, init=False)


def stands_for(name: str) -> str:
    """The name a temporary file of an atomic write stands for (else ``name``)."""
    if name.startswith(".") and name.endswith(_TEMP_SUFFIX):
        return name[1:].rsplit(".", 2)[0]
    return name


class FaultBackend(Backend):
    """``inner`` with :class:`Fault` s injected and kernel facts overridden.

    ``protected_symlinks`` / ``nosymfollow``: ``None`` asks ``inner`` (the
    real kernel); ``True``/``False`` says so instead (``nosymfollow=True``
    makes every filesystem look mounted ``nosymfollow``).  The ``openat2``
    fast path is ``inner``'s unless ``openat2=False``: a fault on opening a
    name hits both ways of opening it.
    """

    def __init__(self, inner: Backend, *faults: Fault, protected_symlinks: bool | None = None,
                 nosymfollow: bool | None = None, openat2: bool | None = None) -> None:
        self.inner = inner
        self.faults = list(faults)
        self.fired: list[str] = []
        self._names: dict[int, str] = {}
        self._protected = protected_symlinks
        self._nosymfollow = nosymfollow
        self.name = inner.name
        self.dir_flags = inner.dir_flags
        self.has_openat2 = inner.has_openat2 if openat2 is None else openat2 and inner.has_openat2
        self.openat2_reason = inner.openat2_reason
        self.openat2_checks_dotdot = inner.openat2_checks_dotdot
        self.avoids_symlink_attacks = inner.avoids_symlink_attacks
        self.fake_fs_safe = inner.fake_fs_safe
        self.watches = inner.watches

    def add(self, fault: Fault) -> Fault:
        self.faults.append(fault)
        return fault

    def _check(self, method: str, *names: str | None) -> None:
        for fault in self.faults:
            if fault.method != method or fault.times == 0:
                continue
            if fault.name is not None and not any(
                    n is not None and stands_for(n) == fault.name for n in names):
                continue
            if fault.temp and not any((n or "").endswith(_TEMP_SUFFIX) for n in names):
                continue
            if fault.times > 0:
                fault.times -= 1
            fault.fired += 1
            self.fired.append(f"{method}:{names[0] if names else None}")
            if fault.hook is not None:
                fault.hook()
            if fault.err is not None:
                raise OSError(fault.err, os.strerror(fault.err))

    def _opened(self, fd: int, name: str) -> int:
        self._names[fd] = name
        return fd

    # -- name-based calls ---------------------------------------------------------
    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        self._check("open_at", name)
        return self._opened(self.inner.open_at(dir_fd, name, flags, mode), name)

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        name = path.rstrip("/").rsplit("/", 1)[-1]
        self._check("open_at", name)
        return self._opened(self.inner.openat2(dir_fd, path, flags, mode, resolve), name)

    def lstat_at(self, dir_fd: int, name: str) -> os.stat_result:
        self._check("lstat_at", name)
        return self.inner.lstat_at(dir_fd, name)

    def exists_at(self, dir_fd: int, name: str) -> bool:
        try:  # a fault on lstat_at is a fault here too, as the kernel's would be
            self._check("lstat_at", name)
        except OSError:
            return False
        return self.inner.exists_at(dir_fd, name)

    def readlink_at(self, dir_fd: int, name: str) -> str:
        self._check("readlink_at", name)
        return self.inner.readlink_at(dir_fd, name)

    def mkdir_at(self, dir_fd: int, name: str, mode: int) -> None:
        self._check("mkdir_at", name)
        self.inner.mkdir_at(dir_fd, name, mode)

    def create_directory_at(self, dir_fd: int, name: str, mode: int) -> int:
        self._check("create_directory_at", name)
        return self._opened(self.inner.create_directory_at(dir_fd, name, mode), name)

    def unlink_at(self, dir_fd: int, name: str) -> None:
        self._check("unlink_at", name)
        self.inner.unlink_at(dir_fd, name)

    def rmdir_at(self, dir_fd: int, name: str) -> None:
        self._check("rmdir_at", name)
        self.inner.rmdir_at(dir_fd, name)

    def rename_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                  flags: int = 0) -> None:
        self._check("rename_at", src, dst)
        self.inner.rename_at(src_dir_fd, src, dst_dir_fd, dst, flags)

    def link_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
        self._check("link_at", src, dst)
        self.inner.link_at(src_dir_fd, src, dst_dir_fd, dst)

    def symlink_at(self, target: str, dir_fd: int, name: str) -> None:
        self._check("symlink_at", name)
        self.inner.symlink_at(target, dir_fd, name)

    # -- fd-based calls ----------------------------------------------------------------
    def close(self, fd: int) -> None:
        name = self._names.pop(fd, None)
        try:
            self.inner.close(fd)
        finally:
            self._check("close", name)

    def fstat(self, fd: int) -> os.stat_result:
        self._check("fstat", self._names.get(fd))
        return self.inner.fstat(fd)

    def scandir(self, fd: int) -> DirEntries:
        self._check("scandir", self._names.get(fd))
        return self.inner.scandir(fd)

    def read(self, fd: int, size: int) -> bytes:
        self._check("read", self._names.get(fd))
        return self.inner.read(fd, size)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        self._check("pread", self._names.get(fd))
        return self.inner.pread(fd, size, offset)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        self._check("write", self._names.get(fd))
        return self.inner.write(fd, data)

    def fsync(self, fd: int) -> None:
        self._check("fsync", self._names.get(fd))
        self.inner.fsync(fd)

    def flock(self, fd: int, operation: int) -> None:
        self._check("flock", self._names.get(fd))
        self.inner.flock(fd, operation)

    def fchmod(self, fd: int, mode: int) -> None:
        self._check("fchmod", self._names.get(fd))
        self.inner.fchmod(fd, mode)

    def fchown(self, fd: int, uid: int, gid: int) -> None:
        self._check("fchown", self._names.get(fd))
        self.inner.fchown(fd, uid, gid)

    def flistxattr(self, fd: int) -> list[str]:
        self._check("flistxattr", self._names.get(fd))
        return self.inner.flistxattr(fd)

    def fgetxattr(self, fd: int, name: str) -> bytes:
        self._check("fgetxattr", self._names.get(fd))
        return self.inner.fgetxattr(fd, name)

    def fsetxattr(self, fd: int, name: str, value: bytes) -> None:
        self._check("fsetxattr", self._names.get(fd))
        self.inner.fsetxattr(fd, name, value)

    # -- kernel facts ----------------------------------------------------------------------
    def mount_flags(self, fd: int) -> int:
        self._check("mount_flags", self._names.get(fd))
        flags = self.inner.mount_flags(fd)
        if self._nosymfollow is None:
            return flags
        return flags | ST_NOSYMFOLLOW if self._nosymfollow else flags & ~ST_NOSYMFOLLOW

    def filesystem_type(self, fd: int) -> int:
        self._check("filesystem_type", self._names.get(fd))
        return self.inner.filesystem_type(fd)

    # -- the kernel's watch of directories ------------------------------------------
    def watch_open(self) -> int:
        self._check("watch_open")
        return self.inner.watch_open()

    def watch_add(self, watch_fd: int, dir_fd: int, mask: int) -> int:
        self._check("watch_add", self._names.get(dir_fd))
        return self.inner.watch_add(watch_fd, dir_fd, mask)

    def watch_remove(self, watch_fd: int, wd: int) -> None:
        self._check("watch_remove")
        self.inner.watch_remove(watch_fd, wd)

    def watch_waiting(self, watch_fd: int) -> int:
        self._check("watch_waiting")
        return self.inner.watch_waiting(watch_fd)

    def watch_limit(self) -> int:
        self._check("watch_limit")
        return self.inner.watch_limit()

    def protected_symlinks(self) -> bool:
        if self._protected is None:
            return self.inner.protected_symlinks()
        return self._protected

    def info(self) -> dict[str, object]:
        data = self.inner.info()
        data["faults"] = [f.method for f in self.faults]
        return data


#: System calls one backend call makes, where that is not one.  A directory
#: listing (``scandir``) counts as one: its ``getdents`` calls grow with the
#: directory, not with the operation.
SYSCALLS_PER_CALL: dict[str, int] = {
    "create_directory_at": 2,  # mkdirat, then the O_NOFOLLOW open of what was made
    "open_beneath": 2,  # openat2 (or openat of a single name), then fstat
    "protected_symlinks": 0,  # a sysctl the backend caches (read at most once a second)
}


@dataclass
class Tally:
    """The backend calls counted in one :meth:`CountingBackend.counting` block.

    ``calls`` maps each method name to how often it was called; ``order``
    lists the calls as they came.  ``tally["open_at"]`` is one count,
    :attr:`syscalls` the system calls they make (:data:`SYSCALLS_PER_CALL`).
    """

    calls: Counter[str] = field(default_factory=Counter)
    order: list[str] = field(default_factory=list)

    def __getitem__(self, method: str) -> int:
        return self.calls[method]

    @property
    def syscalls(self) -> int:
        """The system calls behind the counted calls."""
        return sum(count * SYSCALLS_PER_CALL.get(method, 1)
                   for method, count in self.calls.items())

    def __str__(self) -> str:
        parts = ", ".join(f"{method}={count}" for method, count in sorted(self.calls.items()))
        return f"{self.syscalls} syscalls ({parts})"


class CountingBackend(Backend):
    """``inner`` with every call counted, so a test can pin how many system
    calls an operation makes.  Counts are deterministic where times are not:
    a change that resolves a path once more fails the test that pins it.

    Every call the core makes through its backend is counted under the
    method's name: the resolver's (``open_at``, ``openat2``, ``close``,
    ``fstat``, ``lstat_at``, ``readlink_at``...), the operations'
    (``write``, ``fsync``, ``rename_at``...), the fd calls for metadata
    (``fchown``, the xattr calls), and the
    native one-call open (``open_beneath``, and ``open_text_beneath`` and
    ``open_stat_beneath`` under that name) where ``inner`` has one, so the
    fast paths stay the ones production takes.  The batches the native
    backend makes in C (a directory listed in one call, grep's reads) are
    not taken through this wrapper: each of their steps is a counted call
    instead, as through any wrapper::

        backend = CountingBackend(backend_by_name("native"))
        root = Root(path, backend=backend)
        with backend.counting() as tally:
            root.write_bytes("a/b/file", b"data")
        assert tally.syscalls <= 15, tally          # str(tally) lists the calls
        assert tally["openat2"] == 1

    :meth:`counting` blocks may nest and may run in several threads (each
    counts every call made while it is open).  :attr:`total` counts every
    call since the backend was made or :meth:`reset`.  System calls made
    without the backend (the open of the root directory itself, ``fcntl``
    on a file object's fd) are not counted.
    """

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name
        self.dir_flags = inner.dir_flags
        self.has_openat2 = inner.has_openat2
        self.openat2_reason = inner.openat2_reason
        self.openat2_checks_dotdot = inner.openat2_checks_dotdot
        self.avoids_symlink_attacks = inner.avoids_symlink_attacks
        self.fake_fs_safe = inner.fake_fs_safe
        self.watches = inner.watches
        self.total = Tally()
        self._open: list[Tally] = []
        self._lock = threading.Lock()
        native_open = inner.open_beneath
        if native_open is not None:
            def open_beneath(dir_fd: int, path: bytes, size: int, flags: int, mode: int,
                             resolve: int) -> int:
                self._count("open_beneath")
                return native_open(dir_fd, path, size, flags, mode, resolve)

            self.open_beneath = open_beneath
        native_text = inner.open_text_beneath
        if native_text is not None:
            def open_text_beneath(dir_fd: int, path: object, flags: int, mode: int,
                                  resolve: int) -> int:
                self._count("open_beneath")  # the same one-call open, the path a str
                return native_text(dir_fd, path, flags, mode, resolve)

            self.open_text_beneath = open_text_beneath
        native_stat = inner.open_stat_beneath
        if native_stat is not None:
            def open_stat_beneath(dir_fd: int, path: object, flags: int, mode: int,
                                  resolve: int) -> tuple[int, os.stat_result] | int:
                self._count("open_beneath")  # the same one-call open, its fstat given back
                return native_stat(dir_fd, path, flags, mode, resolve)

            self.open_stat_beneath = open_stat_beneath

    def _count(self, method: str) -> None:
        with self._lock:
            for tally in (self.total, *self._open):
                tally.calls[method] += 1
                tally.order.append(method)

    @contextmanager
    def counting(self) -> Iterator[Tally]:
        """A :class:`Tally` of the calls made while the block runs."""
        tally = Tally()
        with self._lock:
            self._open.append(tally)
        try:
            yield tally
        finally:
            with self._lock:
                self._open.remove(tally)

    def reset(self) -> None:
        """Start :attr:`total` again from zero."""
        with self._lock:
            self.total = Tally()

    # -- name-based calls ---------------------------------------------------------
    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        self._count("open_at")
        return self.inner.open_at(dir_fd, name, flags, mode)

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        self._count("openat2")
        return self.inner.openat2(dir_fd, path, flags, mode, resolve)

    def lstat_at(self, dir_fd: int, name: str) -> os.stat_result:
        self._count("lstat_at")
        return self.inner.lstat_at(dir_fd, name)

    def exists_at(self, dir_fd: int, name: str) -> bool:
        self._count("exists_at")
        return self.inner.exists_at(dir_fd, name)

    def readlink_at(self, dir_fd: int, name: str) -> str:
        self._count("readlink_at")
        return self.inner.readlink_at(dir_fd, name)

    def mkdir_at(self, dir_fd: int, name: str, mode: int) -> None:
        self._count("mkdir_at")
        self.inner.mkdir_at(dir_fd, name, mode)

    def create_directory_at(self, dir_fd: int, name: str, mode: int) -> int:
        self._count("create_directory_at")
        return self.inner.create_directory_at(dir_fd, name, mode)

    def unlink_at(self, dir_fd: int, name: str) -> None:
        self._count("unlink_at")
        self.inner.unlink_at(dir_fd, name)

    def rmdir_at(self, dir_fd: int, name: str) -> None:
        self._count("rmdir_at")
        self.inner.rmdir_at(dir_fd, name)

    def rename_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                  flags: int = 0) -> None:
        self._count("rename_at")
        self.inner.rename_at(src_dir_fd, src, dst_dir_fd, dst, flags)

    def link_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
        self._count("link_at")
        self.inner.link_at(src_dir_fd, src, dst_dir_fd, dst)

    def symlink_at(self, target: str, dir_fd: int, name: str) -> None:
        self._count("symlink_at")
        self.inner.symlink_at(target, dir_fd, name)

    # -- fd-based calls ----------------------------------------------------------------
    def close(self, fd: int) -> None:
        self._count("close")
        self.inner.close(fd)

    def fstat(self, fd: int) -> os.stat_result:
        self._count("fstat")
        return self.inner.fstat(fd)

    def scandir(self, fd: int) -> DirEntries:
        self._count("scandir")
        return self.inner.scandir(fd)

    def read(self, fd: int, size: int) -> bytes:
        self._count("read")
        return self.inner.read(fd, size)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        self._count("pread")
        return self.inner.pread(fd, size, offset)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        self._count("write")
        return self.inner.write(fd, data)

    def fsync(self, fd: int) -> None:
        self._count("fsync")
        self.inner.fsync(fd)

    def flock(self, fd: int, operation: int) -> None:
        self._count("flock")
        self.inner.flock(fd, operation)

    def fchmod(self, fd: int, mode: int) -> None:
        self._count("fchmod")
        self.inner.fchmod(fd, mode)

    def fchown(self, fd: int, uid: int, gid: int) -> None:
        self._count("fchown")
        self.inner.fchown(fd, uid, gid)

    def flistxattr(self, fd: int) -> list[str]:
        self._count("flistxattr")
        return self.inner.flistxattr(fd)

    def fgetxattr(self, fd: int, name: str) -> bytes:
        self._count("fgetxattr")
        return self.inner.fgetxattr(fd, name)

    def fsetxattr(self, fd: int, name: str, value: bytes) -> None:
        self._count("fsetxattr")
        self.inner.fsetxattr(fd, name, value)

    # -- kernel facts ----------------------------------------------------------------------
    def mount_flags(self, fd: int) -> int:
        self._count("mount_flags")
        return self.inner.mount_flags(fd)

    def filesystem_type(self, fd: int) -> int:
        self._count("filesystem_type")
        return self.inner.filesystem_type(fd)

    # -- the kernel's watch of directories ------------------------------------------
    def watch_open(self) -> int:
        self._count("watch_open")
        return self.inner.watch_open()

    def watch_add(self, watch_fd: int, dir_fd: int, mask: int) -> int:
        self._count("watch_add")
        return self.inner.watch_add(watch_fd, dir_fd, mask)

    def watch_remove(self, watch_fd: int, wd: int) -> None:
        self._count("watch_remove")
        self.inner.watch_remove(watch_fd, wd)

    def watch_waiting(self, watch_fd: int) -> int:
        self._count("watch_waiting")
        return self.inner.watch_waiting(watch_fd)

    def watch_limit(self) -> int:
        self._count("watch_limit")
        return self.inner.watch_limit()

    def protected_symlinks(self) -> bool:
        self._count("protected_symlinks")
        return self.inner.protected_symlinks()

    def info(self) -> dict[str, object]:
        data = self.inner.info()
        data["counting"] = True
        return data


class FakeFsBackend(OsBackend):
    """An os backend for pyfakefs (module docstring): no fast path, and
    ``pread``/``fchmod`` through calls pyfakefs fakes."""

    name = "os"
    fake_fs_safe = True

    watches = False  # (pyfakefs fakes no inotify)

    def __init__(self) -> None:
        super().__init__(openat2=False)

    def exists_at(self, dir_fd: int, name: str) -> bool:
        return Backend.exists_at(self, dir_fd, name)  # pyfakefs fakes lstat, not faccessat

    def rename_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                  flags: int = 0) -> None:
        if flags:
            # pyfakefs fakes os.rename alone: a rename with flags would be a
            # real system call on the fake fd numbers
            raise OSError(errno.ENOSYS, "pyfakefs has no rename with flags")
        super().rename_at(src_dir_fd, src, dst_dir_fd, dst)

    def close(self, fd: int) -> None:
        # An object made under pyfakefs and collected after the patcher is
        # gone must not close the real fd that has its number now.
        if _under_pyfakefs():
            os.close(fd)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, size)

    def fchmod(self, fd: int, mode: int) -> None:
        os.chmod(fd, mode)

    def mount_flags(self, fd: int) -> int:
        return 0  # pyfakefs fakes no statvfs

    def filesystem_type(self, fd: int) -> int:
        return 0  # nor statfs

    def info(self) -> dict[str, object]:
        data = super().info()
        data["pyfakefs"] = True
        return data
