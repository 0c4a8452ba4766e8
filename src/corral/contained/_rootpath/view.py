"""``RootPath``: ``pathlib.Path`` inside a root (``root / "src" / "app.py"``).

A :class:`RootPath` is a root and a root-relative ``PurePosixPath``.  It has
the API of ``pathlib.Path`` of the newest Python for every method whose
meaning stays inside the root, and each method that touches the filesystem
is done by the root's own operations (resolution beneath the root, walks on
its fds, atomic writes and copies, its metadata rules), so every guarantee
of the root holds.  Where Python versions differ (``glob``'s rules), the
running Python's ``pathlib`` is followed.  The path algebra (``/``,
``name``, ``parent``, ``with_suffix``, ``relative_to``...) is
``PurePosixPath``'s and lexical: ``(root / "a/..").parent`` is
``root / "a"``; where a path leads is the root's to say when it is used.

Deliberate differences from ``pathlib.Path``, one sentence each:

* ``__fspath__`` is absent, so ``open()``, ``os`` and ``shutil`` refuse a
  RootPath (``TypeError``) rather than resolve it against the working
  directory, outside the root's protection.
* ``absolute()``, ``cwd()``, ``home()``, ``expanduser()`` of ``~``,
  ``as_uri()`` and ``from_uri()`` would name host paths, so they raise
  ``NotImplementedError`` (``pathlib.UnsupportedOperation`` where the
  running Python has it).
* ``samefile()`` compares with another RootPath of the same root only; a
  ``str`` or ``os.PathLike`` would be a host path (``NotImplementedError``).
* What leads out of the root (an absolute path, ``..`` past the root, a
  symlink pointing out) reads as absent: ``exists()`` and the ``is_*()``
  queries answer ``False``, ``glob``/``walk`` neither list nor descend it,
  ``resolve()`` keeps such a link as written, and every other method raises
  the root's ``EscapeError``.
* A ``str`` or ``os.PathLike`` given as a target (``rename``, ``copy``,
  ``hardlink_to``...) is root-relative, as every path of the root is, and
  a RootPath of another root is ``ValueError``.
* ``symlink_to(RootPath)`` writes the text that leads from the link's
  directory to that path (pathlib writes ``str(target)``); a ``str`` target
  is written as given.
* ``readlink()`` returns the link's text as a ``PurePosixPath``, since the
  text is relative to the link's directory, not to the root.
* ``resolve()`` follows Python 3.13 on every version: a symlink loop is kept
  as written (``OSError`` ``ELOOP`` with ``strict=True``), never
  ``RuntimeError``.
* ``write_bytes``, ``write_text`` and ``copy`` replace the target file
  atomically (``Root.write_bytes``, ``Root.copyfile``): a hard-linked
  target gets a new inode rather than being written through.
* ``.root`` is pathlib's string (``""`` for a root-relative path); the
  Root itself is :attr:`RootPath.corral_root`.
* A RootPath cannot be pickled (``TypeError``): it holds an open Root;
  pickle ``str(path)`` and join it to a Root opened again.
* Equality, hashing and ordering hold between RootPaths of the same Root
  object only (ordering another root's is ``TypeError``).
"""

from __future__ import annotations

import errno
import grp
import os
import pathlib
import posixpath
import pwd
import stat as st
import sys
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import IO, Any, NoReturn, TypeAlias

from . import globbing as _pathglob
from . import ops as _pathops
from .._errors import ContainedError, RootVanishedError
from .root import ViewRoot, root_unusable

__all__ = ["RootPath", "RootPathInfo", "ViewRoot"]

_UNSUPPORTED_BASE: type[NotImplementedError] = getattr(pathlib, "UnsupportedOperation",
                                                       NotImplementedError)


class _HostPathError(_UNSUPPORTED_BASE):  # type: ignore[valid-type,misc]
    """A method that would name a host path (module docstring)."""


Segment: TypeAlias = "str | os.PathLike[str] | RootPath"
# errors meaning "not there" for the queries, as pathlib ignores them (but
# EBADF: a closed root is reported); from 3.14 pathlib answers False for any
_ABSENT_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG})
_ANY_ERROR_IS_ABSENT = sys.version_info >= (3, 14)


def _is_absent(exc: OSError) -> bool:
    if isinstance(exc, RootVanishedError):
        return False
    if isinstance(exc, ContainedError):
        return True  # escape, strict-mode link, NUL, special file
    if exc.errno == errno.EBADF:
        return False  # a closed root is a mistake to report, not an absent file
    return _ANY_ERROR_IS_ABSENT or exc.errno in _ABSENT_ERRNOS


def _unsupported(what: str) -> NoReturn:
    raise _HostPathError(f"RootPath.{what}() would name a host path outside the root; "
                         "a RootPath is root-relative (docs/rootpath.md)")


class RootPathInfo:
    """``Path.info`` (3.14): what the path is, asked of the root once and
    kept (a fresh ``path.joinpath()`` asks again)."""

    __slots__ = ("_path", "_lstat", "_stat", "_have_lstat", "_have_stat")

    def __init__(self, path: RootPath) -> None:
        self._path = path
        self._lstat: os.stat_result | None = None
        self._stat: os.stat_result | None = None
        self._have_lstat = self._have_stat = False

    def _mode(self, follow: bool) -> int | None:
        if follow:
            if not self._have_stat:
                self._stat = self._path._query(True)
                self._have_stat = True
            info = self._stat
        else:
            if not self._have_lstat:
                self._lstat = self._path._query(False)
                self._have_lstat = True
            info = self._lstat
        return None if info is None else info.st_mode

    def exists(self, *, follow_symlinks: bool = True) -> bool:
        return self._mode(follow_symlinks) is not None

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        mode = self._mode(follow_symlinks)
        return mode is not None and st.S_ISDIR(mode)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        mode = self._mode(follow_symlinks)
        return mode is not None and st.S_ISREG(mode)

    def is_symlink(self) -> bool:
        mode = self._mode(False)
        return mode is not None and st.S_ISLNK(mode)

    def __repr__(self) -> str:
        return f"<RootPathInfo {self._path!r}>"


class RootPath:
    """``pathlib.Path`` beneath a root: each method one operation (or a few)
    of the root; the differences are listed in the module docstring."""

    __slots__ = ("_root", "_path", "_info")
    parser = posixpath

    def __init__(self, root: ViewRoot, *segments: Segment) -> None:
        self._root = root
        self._path = PurePosixPath(*(self._segment(s) for s in segments))
        self._info: RootPathInfo | None = None

    def _segment(self, segment: Segment) -> str | os.PathLike[str]:
        if isinstance(segment, RootPath):
            if segment._root is not self._root:
                raise ValueError(f"{segment!r} is beneath another root")
            return segment._path
        return segment

    def with_segments(self, *segments: Segment) -> RootPath:
        """A new RootPath of the same root (``pathlib``'s constructor hook)."""
        return RootPath(self._root, *segments)

    def _with(self, path: PurePosixPath) -> RootPath:
        return RootPath(self._root, path)

    # -- the root -----------------------------------------------------------
    @property
    def corral_root(self) -> ViewRoot:
        """The :class:`~corral.contained.Root` this path is beneath (``.root``
        is pathlib's string)."""
        return self._root

    # -- pure path algebra (lexical, as PurePosixPath) --------------------------
    def __truediv__(self, other: Segment) -> RootPath:
        try:
            return self._with(self._path / self._segment(other))
        except TypeError:
            return NotImplemented

    def __rtruediv__(self, other: str | os.PathLike[str]) -> RootPath:
        try:
            return self._with(other / self._path)
        except TypeError:
            return NotImplemented

    def joinpath(self, *segments: Segment) -> RootPath:
        return self._with(self._path.joinpath(*(self._segment(s) for s in segments)))

    @property
    def drive(self) -> str:
        return self._path.drive

    @property
    def root(self) -> str:
        """pathlib's: ``"/"`` for an absolute path, else ``""`` (the Root is
        :attr:`corral_root`)."""
        return self._path.root

    @property
    def anchor(self) -> str:
        return self._path.anchor

    @property
    def name(self) -> str:
        return self._path.name

    @property
    def suffix(self) -> str:
        return self._path.suffix

    @property
    def suffixes(self) -> list[str]:
        return self._path.suffixes

    @property
    def stem(self) -> str:
        return self._path.stem

    @property
    def parts(self) -> tuple[str, ...]:
        return self._path.parts

    @property
    def parent(self) -> RootPath:
        return self._with(self._path.parent)

    @property
    def parents(self) -> tuple[RootPath, ...]:
        return tuple(self._with(p) for p in self._path.parents)

    def with_name(self, name: str) -> RootPath:
        return self._with(self._path.with_name(name))

    def with_stem(self, stem: str) -> RootPath:
        return self._with(self._path.with_stem(stem))

    def with_suffix(self, suffix: str) -> RootPath:
        return self._with(self._path.with_suffix(suffix))

    def _pure(self, other: Segment) -> PurePosixPath:
        return PurePosixPath(self._segment(other))

    def relative_to(self, other: Segment, *, walk_up: bool = False) -> RootPath:
        """As pathlib (3.12's ``walk_up`` on every version)."""
        base = self._pure(other)
        if not walk_up:
            return self._with(self._path.relative_to(base))
        if self._path.anchor != base.anchor:
            raise ValueError(f"{str(self)!r} and {str(base)!r} have different anchors")
        ups = 0
        for step in (base, *base.parents):
            if self._path.is_relative_to(step):
                break
            if step.name == "..":
                raise ValueError(f"'..' segment in {str(base)!r} cannot be walked")
            ups += 1
        else:
            raise ValueError(f"{str(self)!r} and {str(base)!r} have different anchors")
        rest = self._path.parts[len(step.parts):]
        return self._with(PurePosixPath(*([".."] * ups), *rest))

    def is_relative_to(self, other: Segment) -> bool:
        return self._path.is_relative_to(self._pure(other))

    def is_absolute(self) -> bool:
        """Whether the spelling is absolute (the root refuses it as an escape)."""
        return self._path.is_absolute()

    def is_reserved(self) -> bool:
        return False  # never on POSIX

    def match(self, path_pattern: str | os.PathLike[str], *,
              case_sensitive: bool | None = None) -> bool:
        return _pathglob.match_right(self._path, os.fspath(path_pattern),
                                     case_sensitive is not False)

    def full_match(self, pattern: str | os.PathLike[str], *,
                   case_sensitive: bool | None = None) -> bool:
        return _pathglob.full_match(self._path.parts, os.fspath(pattern),
                                    case_sensitive is not False)

    def as_posix(self) -> str:
        """The root-relative path as text (what the root is given)."""
        return self._path.as_posix()

    def __str__(self) -> str:
        return self._path.as_posix()

    def __bytes__(self) -> bytes:
        return os.fsencode(self._path.as_posix())

    def __repr__(self) -> str:
        return f"RootPath({self._path.as_posix()!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RootPath):
            return NotImplemented
        return other._root is self._root and other._path == self._path

    def __hash__(self) -> int:
        return hash((id(self._root), self._path))

    def _ordered(self, other: object) -> PurePosixPath | None:
        if isinstance(other, RootPath) and other._root is self._root:
            return other._path
        return None

    def __lt__(self, other: object) -> bool:
        theirs = self._ordered(other)
        return NotImplemented if theirs is None else self._path < theirs

    def __le__(self, other: object) -> bool:
        theirs = self._ordered(other)
        return NotImplemented if theirs is None else self._path <= theirs

    def __gt__(self, other: object) -> bool:
        theirs = self._ordered(other)
        return NotImplemented if theirs is None else self._path > theirs

    def __ge__(self, other: object) -> bool:
        theirs = self._ordered(other)
        return NotImplemented if theirs is None else self._path >= theirs

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a RootPath holds an open Root and cannot be pickled; pickle "
                        "str(path) and join it to a Root opened again")

    def __copy__(self) -> RootPath:
        return self  # immutable; the Root is shared, as equality needs

    def __deepcopy__(self, memo: dict[int, Any]) -> RootPath:
        return self

    # -- host paths (deliberately unsupported) ------------------------------------
    def absolute(self) -> NoReturn:
        _unsupported("absolute")

    @classmethod
    def cwd(cls) -> NoReturn:
        _unsupported("cwd")

    @classmethod
    def home(cls) -> NoReturn:
        _unsupported("home")

    @classmethod
    def from_uri(cls, uri: str) -> NoReturn:
        _unsupported("from_uri")

    def as_uri(self) -> NoReturn:
        _unsupported("as_uri")

    def expanduser(self) -> RootPath:
        """Itself, unless it starts with ``~`` (a host home: unsupported)."""
        if self._path.parts[:1] and self._path.parts[0].startswith("~"):
            _unsupported("expanduser")
        return self

    def samefile(self, other_path: RootPath) -> bool:
        """Whether both name one file (``other_path``: a RootPath of this root)."""
        if not isinstance(other_path, RootPath):
            _unsupported("samefile")
        other = self._target(other_path)
        mine, theirs = self.stat(), other.stat()
        return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)

    # -- queries ---------------------------------------------------------------------
    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return self._root.stat(self._path, follow_symlinks=follow_symlinks)

    def lstat(self) -> os.stat_result:
        return self._root.stat(self._path, follow_symlinks=False)

    def _query(self, follow: bool) -> os.stat_result | None:
        """The stat, or ``None`` where pathlib's queries answer ``False``."""
        try:
            return self._root.stat(self._path, follow_symlinks=follow)
        except ValueError:  # a lone surrogate cannot be encoded
            return None
        except OSError as exc:
            if _is_absent(exc):
                return None
            raise

    def _mode_is(self, test: Callable[[int], bool], follow: bool = True) -> bool:
        info = self._query(follow)
        return info is not None and bool(test(info.st_mode))

    def exists(self, *, follow_symlinks: bool = True) -> bool:
        """Whether the path resolves beneath the root (``False`` for what
        leads out, as for what is missing)."""
        return self._query(follow_symlinks) is not None

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self._mode_is(st.S_ISDIR, follow_symlinks)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return self._mode_is(st.S_ISREG, follow_symlinks)

    def is_symlink(self) -> bool:
        return self._mode_is(st.S_ISLNK, follow=False)

    def is_fifo(self) -> bool:
        return self._mode_is(st.S_ISFIFO)

    def is_socket(self) -> bool:
        return self._mode_is(st.S_ISSOCK)

    def is_block_device(self) -> bool:
        return self._mode_is(st.S_ISBLK)

    def is_char_device(self) -> bool:
        return self._mode_is(st.S_ISCHR)

    def is_junction(self) -> bool:
        return False  # a Windows notion

    def is_mount(self) -> bool:
        """``os.path.ismount`` through the root: a directory on another
        device than its parent.  The root itself answers ``False``: its
        parent is outside."""
        mine = self._query(False)
        if mine is None or st.S_ISLNK(mine.st_mode):
            return False
        try:
            parent = _pathops.resolve_in(self._root, self._path / "..", strict=False)
        except (OSError, ValueError):
            return False
        theirs = self._with(PurePosixPath(parent))._query(False)
        if theirs is None:
            return False
        return mine.st_dev != theirs.st_dev or mine.st_ino == theirs.st_ino

    @property
    def info(self) -> RootPathInfo:
        """``Path.info`` (3.14): cached answers of what this path is."""
        if self._info is None:
            self._info = RootPathInfo(self)
        return self._info

    def owner(self, *, follow_symlinks: bool = True) -> str:
        return pwd.getpwuid(self.stat(follow_symlinks=follow_symlinks).st_uid).pw_name

    def group(self, *, follow_symlinks: bool = True) -> str:
        return grp.getgrgid(self.stat(follow_symlinks=follow_symlinks).st_gid).gr_name

    def resolve(self, strict: bool = False) -> RootPath:
        """The canonical root-relative path, as Python 3.13's ``resolve``
        (module docstring): in-root links and ``..`` resolved by root calls,
        a missing tail kept unless ``strict``."""
        return self._with(PurePosixPath(_pathops.resolve_in(self._root, self._path,
                                                            strict=strict)))

    def readlink(self) -> PurePosixPath:
        """The link's text, as a pure path (relative to the link's
        directory; used through the root it resolves beneath the root)."""
        return PurePosixPath(self._root.readlink(self._path))

    # -- content ---------------------------------------------------------------------
    def read_bytes(self) -> bytes:
        return self._root.read_bytes(self._path)

    def write_bytes(self, data: bytes | bytearray | memoryview) -> int:
        """Atomic (``Root.write_bytes``); returns the length, as pathlib."""
        view = memoryview(data).cast("B")
        self._root.write_bytes(self._path, view)
        return len(view)

    def read_text(self, encoding: str | None = None, errors: str | None = None,
                  newline: str | None = None) -> str:
        return self._root.read_text(self._path, encoding, errors, newline)

    def write_text(self, data: str, encoding: str | None = None, errors: str | None = None,
                   newline: str | None = None) -> int:
        """Atomic (``Root.write_text``)."""
        if not isinstance(data, str):
            raise TypeError(f"data must be str, not {type(data).__name__}")
        return self._root.write_text(self._path, data, encoding, errors, newline)

    def open(self, mode: str = "r", buffering: int = -1, encoding: str | None = None,
             errors: str | None = None, newline: str | None = None) -> IO[Any]:
        return self._root.open_file(self._path, mode, buffering, encoding, errors, newline)

    # -- directories ---------------------------------------------------------------------
    def iterdir(self) -> Iterator[RootPath]:
        """The entries, listed now (a file or a missing path raises here)."""
        names = self._root.listdir(self._path)
        return iter([self._with(self._path / name) for name in names])

    def mkdir(self, mode: int = 0o777, parents: bool = False, exist_ok: bool = False) -> None:
        """As pathlib: ``mode`` is for this directory only; missing parents
        (``parents=True``) get the default mode."""
        try:
            self._root.mkdir(self._path, mode)
        except FileNotFoundError:
            if not parents or self.parent == self:
                raise
            self._make_parents()
            self.mkdir(mode, parents=False, exist_ok=exist_ok)
        except OSError:
            if not exist_ok or not self.is_dir():
                raise

    def _make_parents(self) -> None:
        """``self.parent.mkdir(parents=True, exist_ok=True)`` as pathlib
        does it, by a loop rather than a recursion (a path of more
        components than Python's recursion limit is made too)."""
        missing: list[RootPath] = []
        here = self.parent
        while True:
            try:
                self._root.mkdir(here._path)
                break
            except FileNotFoundError:
                if here.parent == here:
                    raise
                missing.append(here)
                here = here.parent
            except OSError:
                if not here.is_dir():
                    raise
                break
        for path in reversed(missing):
            try:
                self._root.mkdir(path._path)
            except OSError:
                if not path.is_dir():
                    raise

    def glob(self, pattern: str | os.PathLike[str], *, case_sensitive: bool | None = None,
             recurse_symlinks: bool = False) -> Iterator[RootPath]:
        """Entries matching ``pattern`` below this directory, by pathlib's
        rules (``_pathglob``), through the root."""
        parts, dir_only = _pathglob.parse_pattern(pattern)
        return self._globbed(parts, dir_only, case_sensitive, recurse_symlinks)

    def rglob(self, pattern: str | os.PathLike[str], *, case_sensitive: bool | None = None,
              recurse_symlinks: bool = False) -> Iterator[RootPath]:
        """``glob("**/" + pattern)``."""
        text = _pathglob.pattern_text(pattern)
        if text.startswith("/"):
            raise _pathglob.NonRelativePatternError(
                f"Non-relative patterns are unsupported: {text!r}")
        parts, dir_only = _pathglob.parse_pattern("**/" + text)
        return self._globbed(parts, dir_only, case_sensitive, recurse_symlinks)

    def _globbed(self, parts: tuple[str, ...], dir_only: bool, case_sensitive: bool | None,
                 recurse_symlinks: bool) -> Iterator[RootPath]:
        run = _pathglob.Glob(self._root, parts, dir_only, case_sensitive=case_sensitive,
                             recurse_symlinks=recurse_symlinks)
        for found in run.select(self._path):
            yield self._with(found)

    def walk(self, top_down: bool = True, on_error: Callable[[OSError], None] | None = None,
             follow_symlinks: bool = False
             ) -> Iterator[tuple[RootPath, list[str], list[str]]]:
        """``Path.walk`` on the root's fd-based walk (``_pathops.walk_rows``);
        with ``top_down`` pruning ``dirnames`` in place prunes the walk."""
        for here, dirnames, filenames in _pathops.walk_rows(
                self._root, self._path, top_down=top_down, on_error=on_error,
                follow_symlinks=follow_symlinks):
            yield self._with(here), dirnames, filenames

    # -- changes ---------------------------------------------------------------------------
    def touch(self, mode: int = 0o666, exist_ok: bool = True) -> None:
        """As ``pathlib``: an existing file gets the current time (with
        ``exist_ok``), else an empty file is made with ``mode`` (less the
        umask; ``FileExistsError`` without ``exist_ok``)."""
        if exist_ok:
            try:
                self._root.utime(self._path)
                return
            except OSError as exc:
                if root_unusable(exc):
                    raise
                # as pathlib: whatever stops the time bump, the open says again
        flags = os.O_CREAT | os.O_WRONLY | (0 if exist_ok else os.O_EXCL)
        os.close(self._root.open(self._path, flags, mode))

    def chmod(self, mode: int, *, follow_symlinks: bool = True) -> None:
        """``Root.chmod`` (its rules for links and hard links)."""
        self._root.chmod(self._path, mode, follow_symlinks=follow_symlinks)

    def lchmod(self, mode: int) -> None:
        self.chmod(mode, follow_symlinks=False)

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self._root.remove(self._path)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def rmdir(self) -> None:
        self._root.rmdir(self._path)

    def rename(self, target: Segment) -> RootPath:
        """Rename to ``target`` (root-relative, or a RootPath of this root);
        replaces an existing target, as ``pathlib`` on POSIX."""
        dst = self._target(target)
        self._root.rename(self._path, dst._path)
        return dst

    def replace(self, target: Segment) -> RootPath:
        return self.rename(target)

    def _target(self, target: Segment) -> RootPath:
        if isinstance(target, RootPath):
            if target._root is not self._root:
                raise ValueError(f"{target!r} is beneath another root")
            return target
        return self._with(PurePosixPath(target))

    def symlink_to(self, target: Segment, target_is_directory: bool = False) -> None:
        """Make this path a symlink.  A ``str`` or ``PathLike`` target is the
        link's text as given; a RootPath target gets the text that leads to
        it from this link's directory.  ``target_is_directory`` is for
        Windows and ignored, as pathlib on POSIX."""
        if isinstance(target, RootPath):
            dst = self._target(target)
            text = _pathops.link_text(self._root, self._path, dst._path)
        else:
            text = os.fspath(target)
            if not isinstance(text, str):
                raise TypeError("a symlink target is str, os.PathLike[str] or RootPath")
        self._root.symlink(text, self._path)

    def hardlink_to(self, target: Segment) -> None:
        """Make this path a hard link to ``target`` (``Root.link``)."""
        self._root.link(self._target(target)._path, self._path)

    def copy(self, target: Segment, *, follow_symlinks: bool = True,
             preserve_metadata: bool = False) -> RootPath:
        """``Path.copy`` (3.14): a file, or a directory tree, to ``target``;
        returns the new path.  Files go through ``Root.copyfile``."""
        dst = self._target(target)
        if dst._path == self._path:
            raise _einval("Source and target are the same path", self, dst)
        if self._path in dst._path.parents:
            raise _einval("Source path is a parent of target path", self, dst)
        _pathops.copy_tree(self._root, self._path, dst._path, follow_symlinks=follow_symlinks,
                           preserve_metadata=preserve_metadata)
        return dst.joinpath()

    def copy_into(self, target_dir: Segment, *, follow_symlinks: bool = True,
                  preserve_metadata: bool = False) -> RootPath:
        return self.copy(self._into(target_dir), follow_symlinks=follow_symlinks,
                         preserve_metadata=preserve_metadata)

    def _into(self, target_dir: Segment) -> RootPath:
        if not self.name:
            raise ValueError(f"{self!r} has an empty name")
        return self._target(target_dir) / self.name

    def move(self, target: Segment) -> RootPath:
        """``Path.move`` (3.14): ``Root.rename``; across devices, a copy
        (links kept, metadata preserved) then the source removed."""
        dst = self._target(target)
        mine, theirs = self._query(False), dst._query(False)
        if mine is not None and theirs is not None and \
                (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino):
            raise _einval("Source and target are the same file", self, dst)
        try:
            self._root.rename(self._path, dst._path)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        else:
            return dst.joinpath()
        moved = self.copy(dst, follow_symlinks=False, preserve_metadata=True)
        if self.is_dir(follow_symlinks=False):
            self._root.rmtree(self._path)
        else:
            self._root.remove(self._path)
        return moved

    def move_into(self, target_dir: Segment) -> RootPath:
        return self.move(self._into(target_dir))


def _einval(message: str, source: RootPath, target: RootPath) -> OSError:
    return OSError(errno.EINVAL, message, str(source), None, str(target))
