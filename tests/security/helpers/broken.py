"""Deliberately broken resolvers, to show the checks catch them (test_meta.py).

* :class:`NaiveRoot`: ``os.path.realpath(os.path.join(root, path))`` and a
  string-prefix check, then plain ``os`` calls by path: the shape of the
  2025 MCP filesystem-server bugs (sibling ``ws-evil`` passes the prefix
  check; a trailing ``/`` is dropped by ``realpath``; FIFOs are opened).
* :func:`clamp_dotdot`: corral's own walk with ``..`` at the root clamped
  (treated as ``.``) instead of refused, libpathrs' ``IN_ROOT`` behaviour
  where BENEATH is promised.
* :func:`ignore_trailing_slash`: corral with trailing ``/`` stripped from
  every path before parsing, so ``file/`` opens a file (Go's
  CVE-2026-39822 class).
* for the race harness, read-only: :class:`CheckThenUseRoot` (validate with
  corral, then open by host path) and :class:`DotDotWalkRoot` (a careful
  walk that hands ``..`` to the kernel).

The two corral mutations are context managers that patch corral's modules
and restore them.  :class:`NaiveRoot` refuses (``EACCES``) to touch anything
outside the test's own temporary directory, so running it cannot damage
the machine; the checks then see a wrong answer, which is what they must
catch anyway.
"""

from __future__ import annotations

import contextlib
import errno
import os
from typing import Iterator

from corral.contained import EscapeError, Root, backend_by_name
from corral.contained import _paths, _resolve, _root
from .harness import Config


class NaiveRoot:
    """The resolver every path-sandbox CVE of 2025 had (module docstring)."""

    def __init__(self, path: str) -> None:
        self.path = os.path.realpath(path)
        # the harness base: <base>/<world>/ws
        self.sandbox = os.path.dirname(os.path.dirname(self.path))
        self.stats: dict = {}

    def _full(self, path: str) -> str:
        # the input checks corral makes, so that only resolution can differ
        if path == "":
            raise FileNotFoundError(errno.ENOENT, "empty path", path)
        _paths.parse(path)  # NUL, too long
        full = os.path.realpath(os.path.join(self.path, path))
        if not full.startswith(self.path):  # the bug: no separator check
            raise EscapeError("outside", path)
        if full != self.sandbox and not full.startswith(self.sandbox + "/"):
            raise PermissionError(errno.EACCES, "test guard: outside the sandbox", path)
        return full

    def open(self, path, flags=os.O_RDONLY, mode=0o777):
        # O_NONBLOCK only so that a FIFO cannot hang the test run
        return os.open(self._full(path), flags | os.O_CLOEXEC | os.O_NONBLOCK, mode)

    def stat(self, path, follow_symlinks=True):
        return os.stat(self._full(path), follow_symlinks=follow_symlinks)

    def lstat(self, path):
        return os.lstat(self._full(path))

    def listdir(self, path="."):
        return os.listdir(self._full(path))

    def mkdir(self, path, mode=0o777):
        os.mkdir(self._full(path), mode)

    def makedirs(self, path, mode=0o777, exist_ok=False, **kwargs):
        full = self._full(path)
        os.makedirs(full, mode, exist_ok=exist_ok)
        return []

    def remove(self, path):
        os.remove(self._full(path))

    def rename(self, src, dst):
        os.rename(self._full(src), self._full(dst))

    def write_bytes(self, path, data, **kwargs):
        fd = os.open(self._full(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK
                     | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def read_bytes(self, path):
        with open(self._full(path), "rb") as fh:
            return fh.read()

    def symlink(self, target, path):
        os.symlink(target, self._full(path))

    def readlink(self, path):
        return os.readlink(self._full(path))

    def close(self) -> None:
        pass


NAIVE = Config("naive-join-realpath", NaiveRoot)


class CheckThenUseRoot:
    """Validate with corral, then act by host path: ``Root.realpath`` (correct)
    names the target, and a plain ``os.open`` of ``root + that`` uses it.
    The check-then-use shape the MCP filesystem servers kept after their
    2025 fixes; any rename between the two calls redirects the open.  Read
    operations only (it exists for the race harness)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.root = Root(path)
        self.stats: dict = {}

    def open(self, path, flags=os.O_RDONLY, mode=0o777):
        if flags & ~(os.O_RDONLY | os.O_CLOEXEC):
            raise PermissionError(errno.EACCES, "test guard: read-only resolver", path)
        full = os.path.join(self.path, self.root.realpath(path))
        return os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)

    def stat(self, path):
        return os.stat(os.path.join(self.path, self.root.realpath(path)))

    def close(self) -> None:
        self.root.close()


class DotDotWalkRoot:
    """A component walk that does everything right but hand ``..`` to the
    kernel (``openat(fd, "..")``) instead of popping its own stack: safe
    until a directory on the way is moved out of the root mid-walk.  Read
    operations only (it exists for the race harness)."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.stats: dict = {}

    def _parent(self, path: str) -> tuple[int, str]:
        *dirs, name = [c for c in path.split("/") if c not in ("", ".")]
        fd = os.dup(self.fd)
        try:
            for part in dirs:
                nxt = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=fd)
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd, name

    def open(self, path, flags=os.O_RDONLY, mode=0o777):
        if flags & ~(os.O_RDONLY | os.O_CLOEXEC):
            raise PermissionError(errno.EACCES, "test guard: read-only resolver", path)
        fd, name = self._parent(path)
        try:
            return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                           dir_fd=fd)
        finally:
            os.close(fd)

    def stat(self, path):
        fd, name = self._parent(path)
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)

    def close(self) -> None:
        os.close(self.fd)


def _walk_config(label: str) -> Config:
    backend = backend_by_name("os")
    return Config(label, lambda p: Root(p, backend=backend, fast_path=False))


CLAMP = _walk_config("clamp-dotdot")
TRAILING = _walk_config("ignore-trailing-slash")


class _ClampWalk(_resolve.Walk):
    """corral's resolver with ``..`` at the root staying at the root."""

    __slots__ = ()

    def _up(self) -> None:
        if len(self.fds) > 1:
            super()._up()


@contextlib.contextmanager
def clamp_dotdot() -> Iterator[Config]:
    """corral's walk with ``..`` clamped at the root (use :data:`CLAMP`)."""
    saved = _root.Walk
    _root.Walk = _ClampWalk
    try:
        yield CLAMP
    finally:
        _root.Walk = saved


@contextlib.contextmanager
def ignore_trailing_slash() -> Iterator[Config]:
    """corral with trailing slashes dropped before parsing (use :data:`TRAILING`)."""
    saved = _paths.parse

    def parse(path: object):
        text = _paths.as_text(path)
        stripped = text.rstrip("/")
        return saved(stripped if stripped else text)

    _paths.parse = parse
    try:
        yield TRAILING
    finally:
        _paths.parse = saved


@contextlib.contextmanager
def naive() -> Iterator[Config]:
    yield NAIVE


BROKEN = {"naive": naive, "clamp": clamp_dotdot, "trailing": ignore_trailing_slash}
