"""Backends and a clock the tools tests control: a backend that fails chosen
calls with an errno (root ignores permission bits, so EACCES is injected),
one that runs a hook before chosen calls, and a fake deadline clock."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from typing import Any

from corral.contained import OsBackend


class FaultBackend(OsBackend):
    """``OsBackend`` that fails chosen calls with an errno.

    ``open_faults``: name -> errno for ``open_at`` of that name (a temporary
    file of ``write_bytes`` is matched by the name it stands for: ``.x.txt.*``
    matches ``x.txt``).  ``write_faults``: name -> errno for ``write`` to an
    fd opened for that name.
    """

    def __init__(self, *, open_faults: dict[str, int] | None = None,
                 write_faults: dict[str, int] | None = None) -> None:
        super().__init__(openat2=False)
        self.open_faults = dict(open_faults or {})
        self.write_faults = dict(write_faults or {})
        self._fd_names: dict[int, str] = {}

    @staticmethod
    def _target(name: str) -> str:
        if name.startswith(".") and name.endswith(".corral-tmp"):
            return name[1:].rsplit(".", 2)[0]
        return name

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        target = self._target(name)
        if target in self.open_faults:
            code = self.open_faults[target]
            raise OSError(code, os.strerror(code), name)
        fd = super().open_at(dir_fd, name, flags, mode)
        self._fd_names[fd] = target
        return fd

    def write(self, fd: int, data: bytes | memoryview) -> int:
        name = self._fd_names.get(fd)
        if name in self.write_faults:
            code = self.write_faults[name]
            raise OSError(code, os.strerror(code))
        return super().write(fd, data)

    def close(self, fd: int) -> None:
        self._fd_names.pop(fd, None)
        super().close(fd)


class HookBackend:
    """Any backend, with ``hooks``: method name -> callable run before each
    call of that method (to move a fake clock, set a cancel token, block)."""

    def __init__(self, inner: Any, hooks: dict[str, Callable[[], None]] | None = None,
                 on_fd: Callable[[int], bool] | None = None) -> None:
        self._inner = inner
        self.hooks = dict(hooks or {})
        # the hooks run only for calls on an fd this accepts (``None``: all
        # calls): a hook meant for a file's reads then skips other reads,
        # such as the tree lock's count of moves
        self._on_fd = on_fd

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        hook = self.hooks.get(name)
        if hook is None or not callable(value):
            return value
        on_fd = self._on_fd

        def hooked(*args: Any, **kwargs: Any) -> Any:
            if on_fd is None or (args and isinstance(args[0], int) and on_fd(args[0])):
                hook()
            return value(*args, **kwargs)

        return hooked


def on_file(path: str | os.PathLike[str]) -> Callable[[int], bool]:
    """An ``on_fd`` for :class:`HookBackend`: calls on an fd open on the
    file at ``path`` (its device and inode, looked up now)."""
    info = os.stat(path)
    mine = (info.st_dev, info.st_ino)

    def accepts(fd: int) -> bool:
        found = os.fstat(fd)
        return (found.st_dev, found.st_ino) == mine
    return accepts


class FakeClock:
    """Replaces the tools' deadline clock: ``advance`` moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = 3600.0) -> None:
        self.now += seconds


ENOSPC = errno.ENOSPC
EACCES = errno.EACCES
