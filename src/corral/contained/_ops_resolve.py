"""Where a surface operation acts: the one adapter between the surface
operations and the core's resolver.

Two shapes, both resolved by the root (never by string algebra here):

* :func:`pin`: an ``O_PATH`` fd of what a path names (a final in-root
  symlink followed, or not), for operations that act on a pinned inode.
* :func:`open_parent`: the open directory holding the path's final name, and
  that name, for operations that act on a name without following it
  (``linkat``, ``unlinkat``, ``*at(AT_SYMLINK_NOFOLLOW)``).

Both are built on ``Root.open``: the parent is the path without its last
component, opened as a directory beneath the root, so every in-root symlink,
``..`` and escape on the way is the resolver's business.
"""

from __future__ import annotations

import errno
import os
import stat as st
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple, Protocol

from . import _paths
from ._backend import Backend
from ._errors import EscapeError, contained_error

__all__ = ["RootAPI", "Parent", "pin", "open_parent", "parent_of", "rename_error", "O_PATH",
           "DIR_SEARCH"]

O_PATH = getattr(os, "O_PATH", 0)
# a directory that is only searched: O_PATH on Linux, O_SEARCH or O_RDONLY elsewhere
DIR_SEARCH = (O_PATH or getattr(os, "O_SEARCH", 0) or os.O_RDONLY) | os.O_DIRECTORY


class RootAPI(Protocol):
    """What the surface operations use of a ``Root`` (its public methods)."""

    @property
    def backend(self) -> Backend: ...
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


class Parent(NamedTuple):
    """The directory holding a path's final name, open (``fd``), and the name."""

    fd: int
    name: str
    text: str  # the caller's path, for errors
    must_be_dir: bool  # the path ended in "/"


def _renamed(exc: OSError, text: str) -> OSError:
    """``exc`` naming the caller's whole path (it named the parent)."""
    exc.filename = text
    return exc


def rename_error(exc: OSError, text: str) -> OSError:
    """An ``OSError`` from a call on a resolved name, as the root raises
    them: the caller's root-relative path as ``filename``."""
    if exc.filename is None or isinstance(exc.filename, int):
        return contained_error(exc.errno or errno.EIO, text, text)
    return _renamed(exc, text)


def parent_of(path: object, dot_errno: int) -> tuple[_paths.ParsedPath, str, str]:
    """Parse ``path``; return it, the spelling of its parent and its final
    name.  Raises :class:`InvalidPathError`, :class:`EscapeError` for an
    absolute path, ``ENOENT`` for an empty one; a path whose last component
    is ``.``/``..`` has no name to act on: ``dot_errno`` (after the root
    said whether the directory exists at all, which the caller checks)."""
    parsed = _paths.parse(path)
    if parsed.absolute:
        raise EscapeError("absolute paths are outside the root", parsed.text, component="/",
                          reason="absolute")
    if not parsed.names:
        raise contained_error(dot_errno if parsed.text else errno.ENOENT, parsed.text,
                              parsed.text)
    return parsed, _paths.join(parsed.names[:-1]), parsed.names[-1]


@contextmanager
def open_parent(root: RootAPI, path: object, dot_errno: int) -> Iterator[Parent]:
    """The open parent directory of ``path`` and its final name (closed on
    exit).  Raises what ``Root.open`` raises for the parent, naming
    ``path``, and ``dot_errno`` for a path ending in ``.`` or ``..``."""
    parsed = _paths.parse(path)
    if parsed.final_is_dot and parsed.names and not parsed.absolute:
        root.stat(parsed.text)  # a missing or escaping directory says so first
        raise contained_error(dot_errno, parsed.text, parsed.text)
    parsed, parent, name = parent_of(path, dot_errno)
    try:
        fd = root.open(parent, DIR_SEARCH)
    except OSError as exc:
        raise _renamed(exc, parsed.text) from None
    try:
        yield Parent(fd, name, parsed.text, parsed.must_be_dir)
    finally:
        root.backend.close(fd)


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


def is_symlink(info: os.stat_result) -> bool:
    return st.S_ISLNK(info.st_mode)
