"""Where a surface operation acts: the one adapter between the surface
operations and the core's resolver (one resolver for every path, so no
operation can reach what another would refuse).

Two shapes, both resolved by the root (never by string algebra here):

* :func:`pin`: an ``O_PATH`` fd of what a path names (a final in-root
  symlink followed, or not), for operations that act on a pinned inode.
* :func:`open_parent`: a :meth:`Root.target` (the open directory holding the
  path's final name, and that name), for operations that act on a name
  without following it (``linkat``, ``unlinkat``, ``symlinkat``,
  ``*at(AT_SYMLINK_NOFOLLOW)``, a replace with streamed content).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, Protocol, Self

from .. import _paths
from .._backend import Backend
from .._errors import contained_error
from .._replace import Content

__all__ = ["RootAPI", "TargetAPI", "Parent", "pin", "open_parent", "named_error", "O_PATH"]

O_PATH = getattr(os, "O_PATH", 0)


class RootAPI(Protocol):
    """What the surface operations use of a ``Root`` (its public methods)."""

    @property
    def backend(self) -> Backend: ...
    follow_symlinks: bool
    allow_hardlinks: bool
    @classmethod
    def from_fd(cls, fd: int, *, borrow: bool = ..., follow_symlinks: bool = ...,
                backend: Backend | None = ..., fast_path: bool = ...,
                allow_hardlinks: bool = ...) -> Self: ...
    def info(self) -> dict[str, Any]: ...
    def close(self) -> None: ...
    def target(self, path: object, *, follow_final: bool = ...,
               create_parents: bool = ...) -> TargetAPI: ...
    def _dir_beneath(self, fd: int, path: str) -> bool: ...
    def open(self, path: object, flags: int = ..., mode: int = ..., *,
             dir_fd: int | None = ...) -> int: ...
    def stat(self, path: object, *, follow_symlinks: bool = ...) -> os.stat_result: ...
    def lstat(self, path: object) -> os.stat_result: ...
    def realpath(self, path: object, *, strict: bool = ...) -> str: ...
    def readlink(self, path: object) -> str: ...
    def remove(self, path: object) -> None: ...
    def rmdir(self, path: object) -> None: ...
    def rename(self, src: object, dst: object, *, replace: bool = ...,
               exchange: bool = ...) -> None: ...
    def mkdir(self, path: object, mode: int = ...) -> None: ...
    def makedirs(self, path: object, mode: int = ..., exist_ok: bool = ..., *,
                 dry_run: bool = ...) -> list[str]: ...
    def symlink(self, target: str, path: object) -> None: ...
    def exists(self, path: object) -> bool: ...
    def read_bytes(self, path: object) -> bytes: ...
    def write_bytes(self, path: object, data: bytes | bytearray | memoryview, *,
                    mode: int | None = ..., fsync: bool = ..., exclusive: bool = ...,
                    follow_symlinks: bool = ...) -> None: ...


class TargetAPI(Protocol):
    """What the surface operations use of a ``Target``."""

    path: str
    parent: str
    name: str | None

    @property
    def dir_fd(self) -> int: ...
    def lstat(self) -> os.stat_result | None: ...
    def opened_beneath(self, fd: int) -> bool: ...
    def open_below(self, parent_fd: int, name: str, path: str, flags: int) -> int: ...
    def make_parents(self, mode: int = ...) -> list[str]: ...
    def write_bytes(self, data: Content, *, exclusive: bool = ...,
                    expect: tuple[int, int] | None = ..., mode: int | None = ...,
                    fsync: bool = ...) -> None: ...
    def close(self) -> None: ...


class Parent(NamedTuple):
    """The directory holding a path's final name, open (``fd``), and the name."""

    fd: int
    name: str
    text: str  # the caller's path, for errors
    must_be_dir: bool  # the path ended in "/"
    path: str  # the canonical root-relative path of the entry
    target: TargetAPI


def named_error(exc: OSError, text: str) -> OSError:
    """An ``OSError`` from a call on a resolved name, as the root raises
    them: the caller's root-relative path as ``filename``."""
    if exc.filename is None or isinstance(exc.filename, int):
        return contained_error(exc.errno or errno.EIO, text, text)
    exc.filename = text
    return exc


@contextmanager
def open_parent(root: RootAPI, path: object, dot_errno: int, *, follow_final: bool = False,
                create_parents: bool = False) -> Iterator[Parent]:
    """``root.target(path)`` as a :class:`Parent` (closed on exit), its
    missing parents made with ``create_parents``.  Raises what
    ``Root.target`` raises, and ``dot_errno`` for a path that ends at a
    directory without naming an entry in it (``.``, ``a/..``)."""
    parsed = _paths.parse(path)
    target = root.target(path, follow_final=follow_final, create_parents=create_parents)
    try:
        if target.name is None:
            raise contained_error(dot_errno, parsed.text, target.path)
        if create_parents:
            target.make_parents()
        yield Parent(target.dir_fd, target.name, parsed.text, parsed.must_be_dir, target.path,
                     target)
    finally:
        target.close()


@contextmanager
def pin(root: RootAPI, path: object, *, follow: bool) -> Iterator[int]:
    """An ``O_PATH`` fd of what ``path`` names (closed on exit): a final
    in-root symlink is followed with ``follow``, else the link itself is
    pinned.  Linux only (``O_PATH``).  Raises what ``Root.open`` raises."""
    flags = O_PATH | (0 if follow else os.O_NOFOLLOW)
    fd = root.open(path, flags)
    try:
        yield fd
    finally:
        root.backend.close(fd)


