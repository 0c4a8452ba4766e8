"""A pathlib-style view of a root: ``root / "src" / "app.py"``.

A :class:`RootPath` is a root and a root-relative ``PurePosixPath``; every
method that touches the filesystem is one call on the root, so it resolves
beneath the root and never follows a symlink out.  The path algebra
(``/``, ``name``, ``parent``, ``with_suffix``...) is ``PurePosixPath``'s and
lexical: ``(root / "a/..").parent`` is ``root / "a"``, as in ``pathlib``;
where a path really leads is the root's to say when it is used.

Deliberately missing: ``__fspath__`` and ``absolute()`` (an ``os.PathLike``
would let ``open()`` and ``os`` resolve the path against the working
directory, outside the root's protection), ``cwd``/``home``/``expanduser``
and ``samefile`` (host paths).  ``symlink_to`` makes whatever link text it
is given, as ``Root.symlink`` does: resolution through the root never
follows it out.  ``exists``/``is_*`` say ``False`` for what leads outside.

``glob(pattern)`` is simple: the pattern is split on ``/``; ``**`` matches
any number of directories (itself included), any other component is matched
against entry names with ``fnmatch.fnmatchcase`` (``*``, ``?``, ``[...]``;
dot files included, as ``pathlib``).  Symlinks are matched as entries but
never descended into.  ``..`` and absolute patterns are refused
(``ValueError``).  Results are in no particular order.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat as st
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import IO, Any, Protocol

from ._errors import EscapeError, SymlinkError

__all__ = ["RootPath"]


def _ignore(exc: OSError) -> None:
    """``**`` below a missing or unreadable directory matches nothing."""

_GONE = (FileNotFoundError, NotADirectoryError, EscapeError, SymlinkError)


class ViewRoot(Protocol):
    """The part of ``Root`` a view uses."""

    def stat(self, path: object, *, follow_symlinks: bool = ...) -> os.stat_result: ...
    def exists(self, path: object) -> bool: ...
    def read_bytes(self, path: object) -> bytes: ...
    def write_bytes(self, path: object, data: bytes | bytearray | memoryview, *,
                    mode: int | None = ..., fsync: bool = ..., exclusive: bool = ...,
                    follow_symlinks: bool = ...) -> None: ...
    def read_text(self, path: object, encoding: str | None = ..., errors: str | None = ...,
                  newline: str | None = ...) -> str: ...
    def write_text(self, path: object, data: str, encoding: str | None = ...,
                   errors: str | None = ..., newline: str | None = ...) -> int: ...
    def open_file(self, path: object, mode: str = ..., buffering: int = ...,
                  encoding: str | None = ..., errors: str | None = ...,
                  newline: str | None = ...) -> IO[Any]: ...
    def listdir(self, path: object = ...) -> list[str]: ...
    def mkdir(self, path: object, mode: int = ...) -> None: ...
    def makedirs(self, path: object, mode: int = ..., exist_ok: bool = ...) -> list[str]: ...
    def remove(self, path: object) -> None: ...
    def rmdir(self, path: object) -> None: ...
    def rename(self, src: object, dst: object, *, replace: bool = ...) -> None: ...
    def realpath(self, path: object, *, strict: bool = ...) -> str: ...
    def readlink(self, path: object) -> str: ...
    def symlink(self, target: str, path: object) -> None: ...
    def walk(self, top: object = ..., topdown: bool = ...,
             onerror: Callable[[OSError], None] | None = ...
             ) -> Iterator[tuple[str, list[str], list[str]]]: ...
    def open(self, path: object, flags: int = ..., mode: int = ..., *,
             dir_fd: int | None = ...) -> int: ...
    def utime(self, path: object, times: tuple[float, float] | None = ..., *,
              ns: tuple[int, int] | None = ..., follow_symlinks: bool = ...) -> None: ...


class RootPath:
    """``root / "a" / "b"``: a root-relative path with ``pathlib``'s methods,
    each one call on the root (module docstring)."""

    __slots__ = ("_root", "_path")

    def __init__(self, root: ViewRoot, path: str | PurePosixPath = ".") -> None:
        self._root = root
        self._path = PurePosixPath(path)

    # -- pure path algebra (lexical, as PurePosixPath) ---------------------
    def _with(self, path: PurePosixPath) -> RootPath:
        return RootPath(self._root, path)

    def __truediv__(self, other: str | PurePosixPath | RootPath) -> RootPath:
        if isinstance(other, RootPath):
            other = other._path
        return self._with(self._path / other)

    def joinpath(self, *parts: str | PurePosixPath) -> RootPath:
        return self._with(self._path.joinpath(*parts))

    @property
    def root(self) -> ViewRoot:
        """The root this path is beneath."""
        return self._root

    @property
    def name(self) -> str:
        return self._path.name

    @property
    def suffix(self) -> str:
        return self._path.suffix

    @property
    def stem(self) -> str:
        return self._path.stem

    @property
    def parts(self) -> tuple[str, ...]:
        return self._path.parts

    @property
    def parent(self) -> RootPath:
        return self._with(self._path.parent)

    def with_name(self, name: str) -> RootPath:
        return self._with(self._path.with_name(name))

    def with_suffix(self, suffix: str) -> RootPath:
        return self._with(self._path.with_suffix(suffix))

    def as_posix(self) -> str:
        """The root-relative path as text (what the root is given)."""
        return self._path.as_posix()

    def __str__(self) -> str:
        return self._path.as_posix()

    def __repr__(self) -> str:
        return f"RootPath({self._path.as_posix()!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, RootPath) and other._root is self._root
                and other._path == self._path)

    def __hash__(self) -> int:
        return hash((id(self._root), self._path))

    # -- queries --------------------------------------------------------------
    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return self._root.stat(self._path, follow_symlinks=follow_symlinks)

    def lstat(self) -> os.stat_result:
        return self._root.stat(self._path, follow_symlinks=False)

    def exists(self) -> bool:
        """Whether the path resolves beneath the root (``False`` for an
        escape, as ``Root.exists``)."""
        return self._root.exists(self._path)

    def _mode_is(self, test: Callable[[int], bool], follow: bool = True) -> bool:
        try:
            return bool(test(self._root.stat(self._path, follow_symlinks=follow).st_mode))
        except _GONE:
            return False
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return False
            raise

    def is_dir(self) -> bool:
        return self._mode_is(st.S_ISDIR)

    def is_file(self) -> bool:
        return self._mode_is(st.S_ISREG)

    def is_symlink(self) -> bool:
        return self._mode_is(st.S_ISLNK, follow=False)

    def resolve(self) -> RootPath:
        """The canonical root-relative path (in-root links and ``..``
        resolved by the root; a missing final name kept)."""
        return self._with(PurePosixPath(self._root.realpath(self._path, strict=False)))

    def readlink(self) -> PurePosixPath:
        """The link's text, as a pure path (it may name anything; using it
        through the root resolves it beneath the root)."""
        return PurePosixPath(self._root.readlink(self._path))

    # -- content ---------------------------------------------------------------
    def read_bytes(self) -> bytes:
        return self._root.read_bytes(self._path)

    def write_bytes(self, data: bytes | bytearray | memoryview) -> int:
        """Atomic (``Root.write_bytes``); returns the length, as pathlib."""
        self._root.write_bytes(self._path, data)
        return len(memoryview(data).cast("B"))

    def read_text(self, encoding: str | None = None, errors: str | None = None) -> str:
        return self._root.read_text(self._path, encoding, errors)

    def write_text(self, data: str, encoding: str | None = None, errors: str | None = None,
                   newline: str | None = None) -> int:
        """Atomic (``Root.write_text``)."""
        return self._root.write_text(self._path, data, encoding, errors, newline)

    def open(self, mode: str = "r", buffering: int = -1, encoding: str | None = None,
             errors: str | None = None, newline: str | None = None) -> IO[Any]:
        return self._root.open_file(self._path, mode, buffering, encoding, errors, newline)

    # -- directories -------------------------------------------------------------
    def iterdir(self) -> Iterator[RootPath]:
        for name in self._root.listdir(self._path):
            yield self / name

    def mkdir(self, mode: int = 0o777, parents: bool = False, exist_ok: bool = False) -> None:
        if parents:
            self._root.makedirs(self._path, mode, exist_ok=exist_ok)
            return
        try:
            self._root.mkdir(self._path, mode)
        except FileExistsError:
            if not exist_ok or not self.is_dir():
                raise

    def glob(self, pattern: str) -> Iterator[RootPath]:
        """Entries matching ``pattern`` below this directory (module docstring)."""
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        if pattern.startswith("/"):
            raise ValueError("absolute glob patterns are not supported")
        if ".." in parts:
            raise ValueError("'..' is not supported in glob patterns")
        if not parts:
            raise ValueError(f"unacceptable pattern: {pattern!r}")
        yield from self._glob(self._path, parts)

    def rglob(self, pattern: str) -> Iterator[RootPath]:
        return self.glob(f"**/{pattern}")

    def _glob(self, base: PurePosixPath, parts: list[str]) -> Iterator[RootPath]:
        head, rest = parts[0], parts[1:]
        if head == "**":
            top: PurePosixPath | None = None
            for dirpath, _dirs, _files in self._root.walk(base, onerror=_ignore):
                real = PurePosixPath(dirpath)
                top = real if top is None else top  # walk names real paths: keep ours
                here = base / real.relative_to(top)
                if rest:
                    yield from self._glob(here, rest)
                else:
                    yield self._with(here)
            return
        for entry in self._entries(base):
            if not fnmatch.fnmatchcase(entry.name, head):
                continue
            if not rest:
                yield self._with(entry)
            elif self._with(entry)._mode_is(st.S_ISDIR, follow=False):
                yield from self._glob(entry, rest)

    def _entries(self, base: PurePosixPath) -> list[PurePosixPath]:
        try:
            return [base / name for name in self._root.listdir(base)]
        except _GONE:
            return []

    # -- changes ---------------------------------------------------------------------
    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self._root.remove(self._path)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def rmdir(self) -> None:
        self._root.rmdir(self._path)

    def rename(self, target: str | PurePosixPath | RootPath) -> RootPath:
        """Rename to ``target`` (a root-relative path or a RootPath of the
        same root; ``ValueError`` for another root's).  Replaces an existing
        target, as ``pathlib`` on POSIX."""
        dst = self._target(target)
        self._root.rename(self._path, dst._path)
        return dst

    def replace(self, target: str | PurePosixPath | RootPath) -> RootPath:
        return self.rename(target)

    def _target(self, target: str | PurePosixPath | RootPath) -> RootPath:
        if isinstance(target, RootPath):
            if target._root is not self._root:
                raise ValueError("the target is beneath another root")
            return target
        return self._with(PurePosixPath(target))

    def touch(self, mode: int = 0o666, exist_ok: bool = True) -> None:
        """As ``pathlib``: an existing file gets the current time (with
        ``exist_ok``), else an empty file is made with ``mode`` (less the
        umask; ``FileExistsError`` without ``exist_ok``)."""
        if exist_ok:
            try:
                self._root.utime(self._path)
                return
            except FileNotFoundError:
                pass
        flags = os.O_CREAT | os.O_WRONLY | (0 if exist_ok else os.O_EXCL)
        os.close(self._root.open(self._path, flags, mode))

    def symlink_to(self, target: str | PurePosixPath) -> None:
        """Make this path a symlink with text ``target`` (``Root.symlink``)."""
        self._root.symlink(str(target), self._path)

