"""Archive extraction beneath a root, with tarfile's "data" filter semantics.

:func:`extract` takes a ``tarfile.TarFile``, a ``zipfile.ZipFile``, a binary
file object holding either, or a host path to either, and creates every
member through the root.  Nothing is decided on a member's spelling: each
name is resolved by the root when the member is made, so a symlink planted
by an earlier member (or already in the tree) can redirect a later member
nowhere outside, and path-length or link-chain tricks that defeat lexical
checks (CVE-2025-4517 and its siblings) meet the resolver instead.

Per member, as ``tarfile``'s ``filter="data"`` (PEP 706):

* names: absolute names are refused (``tarfile`` strips the leading ``/``;
  a root never takes absolute paths), and so is any name that resolves
  outside (``..``, a symlinked directory leading out);
* regular files: mode masked to 0o755 and made owner-read/writable,
  execute bits dropped unless the owner's is set (setuid, setgid and sticky
  never survive); content written to a temporary file and renamed into
  place (a final symlink is replaced, never followed; an existing file keeps
  its owner and xattrs); tar's mtime kept; a sparse member is written as
  its stored blocks at their offsets, its holes left holes (as ``tarfile``);
* directories: made with the default mode (the member's is ignored);
  their mtimes are set last, deepest first;
* symlinks: an absolute target is refused; the link is made under a
  temporary name, the root resolves it, and it is renamed into place only if
  it leads inside (a dangling link whose text climbs with ``..`` cannot be
  judged yet and is refused);
* hard links: the target (relative to the extraction root, as tar's) must
  resolve inside and not be a directory; ``linkat`` without following, so a
  link to a symlink links the symlink (which must then lead inside, as a
  symlink member must); a copy where the filesystem cannot link; the
  member's mode and mtime are given to the file only if this extraction
  made it (an earlier member), never to a file that was in the tree (it
  may be a second name of an inode outside);
* devices, FIFOs, sockets and unknown member types are refused; owners
  (uid/gid/uname/gname) are ignored.

Zip members are read the same way: Unix modes from ``external_attr`` are
masked as above, an entry whose Unix mode says symlink becomes a symlink
(as Info-ZIP's ``unzip`` does; ``zipfile.extractall`` writes them as
files; its target is read up to :data:`MAX_LINK_TARGET` bytes, a longer one
refused unread), and zip times are not set (as ``zipfile``).

A refusal is reported (:class:`Refused`) and extraction goes on, or stops
with ``stop_on_refusal``.  Refusals are about the archive's content against
the tree: escapes, invalid names, conflicts (a file where a directory is),
refused types, and members whose data cannot be read (encrypted, an
unsupported compression method, corrupt or truncated data: reason
``unreadable``; nothing of the member is left).  A damaged archive whose
next member cannot be found raises ``tarfile.ReadError`` or
``zipfile.BadZipFile`` whatever the decompressor raised (``EOFError``,
``zlib.error``...).  Errors of the environment (``ENOSPC``, ``EIO``,
``EACCES``) are raised: the extraction is then incomplete and the exception
says why.
"""

from __future__ import annotations

import errno
import lzma
import os
import stat as st
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import IO, Protocol, TypeVar, cast

from .._errors import (EscapeError, InvalidPathError, SpecialFileError, SymlinkError,
                       contained_error)
from .meta import utime
from .resolve import Parent, RootAPI, open_parent
from .syscalls import CHUNK, copy_stream
from .._replace import temp_name

__all__ = ["MAX_LINK_TARGET", "Extraction", "ExtractReason", "Refused", "extract"]

Archive = tarfile.TarFile | zipfile.ZipFile | IO[bytes] | str | os.PathLike[str]

MAX_LINK_TARGET = 4096  # bytes of a zip symlink entry read as its target (PATH_MAX)

# What reading an archive raises for data it cannot read, beyond the
# documented tarfile.ReadError / zipfile.BadZipFile: an encrypted zip entry
# (RuntimeError), an unknown compression method (NotImplementedError), a
# corrupt or truncated stream (zlib.error, lzma.LZMAError, EOFError).
_UNREADABLE = (RuntimeError, NotImplementedError, zlib.error, lzma.LZMAError, EOFError)


_T = TypeVar("_T")


class _Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...
    def close(self) -> object: ...


class ExtractReason(str, Enum):
    """Why a member was refused (``Refused.reason``)."""

    ABSOLUTE = "absolute"  # an absolute name
    OUTSIDE = "outside"  # the name resolves outside the extraction root
    LINK_ABSOLUTE = "link_absolute"  # a symlink or hard link to an absolute path
    LINK_OUTSIDE = "link_outside"  # a link whose target resolves outside (or cannot be told)
    LINK_MISSING = "link_missing"  # a hard link to nothing
    LINK_DIRECTORY = "link_directory"  # a hard link to a directory
    SPECIAL = "special"  # a device, FIFO, socket or unknown member type
    CONFLICT = "conflict"  # what is in the tree is in the way (a file where a dir goes...)
    INVALID_NAME = "invalid_name"  # empty, NUL, too long
    LOOP = "loop"  # symlinks loop, or too many of them
    SYMLINK = "symlink"  # a strict root (follow_symlinks=False) met a symlink
    UNREADABLE = "unreadable"  # encrypted, an unknown compression method, corrupt or truncated


@dataclass(frozen=True)
class Refused:
    """One member not extracted: its name in the archive, why, and the
    error behind it (if any) with root-relative names."""

    name: str
    reason: ExtractReason
    message: str
    error: OSError | None = None


@dataclass
class Extraction:
    """What :func:`extract` did: member names extracted and refused, in
    archive order; ``stopped`` when ``stop_on_refusal`` ended it early."""

    extracted: list[str] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    stopped: bool = False

    @property
    def ok(self) -> bool:
        return not self.refused


@dataclass(frozen=True)
class _Member:
    name: str
    kind: str  # "file", "dir", "symlink", "hardlink" or "special"
    mode: int | None  # permission bits to give a file (None: the default)
    mtime: float | None
    linkname: str = ""
    open: Callable[[], _Readable] | None = None  # a file's data (a zip symlink's: its target)
    # (offset, length) of a sparse member's blocks (``open`` gives them one after the other)
    sparse: tuple[tuple[int, int], ...] | None = None
    size: int = 0  # a sparse member's size


class _Refusal(Exception):
    def __init__(self, reason: ExtractReason, message: str, error: OSError | None = None) -> None:
        super().__init__(message)
        self.reason, self.message, self.error = reason, message, error


class _Data:
    """A member's data as the archive gives it, whose read errors refuse the
    member: they say the data is unreadable, not the environment failing
    (an ``OSError`` without an errno is a decompressor's complaint)."""

    def __init__(self, open_data: Callable[[], _Readable]) -> None:
        self.stream = self.guarded(open_data)

    @staticmethod
    def guarded(call: Callable[[], _T]) -> _T:
        try:
            return call()
        except (*_UNREADABLE, tarfile.ReadError, zipfile.BadZipFile) as exc:
            raise _Refusal(ExtractReason.UNREADABLE, f"the member's data cannot be read: {exc}"
                           ) from exc
        except OSError as exc:
            if exc.errno is not None:
                raise
            raise _Refusal(ExtractReason.UNREADABLE, f"the member's data cannot be read: {exc}"
                           ) from exc

    def read(self, size: int) -> bytes:
        return self.guarded(lambda: self.stream.read(size))

    def __enter__(self) -> _Data:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.close()


def _data_mode(mode: int) -> int:
    """A file's mode under the data filter (module docstring)."""
    mode &= 0o755
    if not mode & 0o100:
        mode &= ~0o111
    return mode | 0o600


# -- reading archives ------------------------------------------------------------------

class _Stored:
    """A sparse member's stored blocks, one after the other, read from the
    archive's own stream (as ``tarfile`` writes them out: no seek within the
    member, so a stream-mode archive works too); closing leaves the
    archive open."""

    def __init__(self, tf: tarfile.TarFile, info: tarfile.TarInfo) -> None:
        self.stream = tf.fileobj
        self.stream.seek(info.offset_data)

    def read(self, size: int, /) -> bytes:
        return self.stream.read(size)

    def close(self) -> None:
        pass


def _tar_file(tf: tarfile.TarFile, info: tarfile.TarInfo) -> _Member:
    """A regular tar member (sparse or not)."""
    # tarfile keeps (offset, length) pairs (typeshed says tuple[int, ...]),
    # unused header slots among them as (0, 0)
    blocks = cast("list[tuple[int, int]] | None", info.sparse)
    sparse = None if blocks is None else tuple(block for block in blocks if block[1])

    def reader() -> _Readable:
        if sparse is not None:
            return _Stored(tf, info)
        got = tf.extractfile(info)
        assert got is not None  # a regular member always has data
        return got

    return _Member(info.name, "file", _data_mode(info.mode), info.mtime, open=reader,
                   sparse=sparse, size=info.size)


def _tar_members(tf: tarfile.TarFile) -> Iterator[_Member]:
    for info in tf:
        if info.isreg():
            yield _tar_file(tf, info)
        elif info.isdir():
            yield _Member(info.name, "dir", None, info.mtime)
        elif info.issym():
            yield _Member(info.name, "symlink", None, None, info.linkname)
        elif info.islnk():
            yield _Member(info.name, "hardlink", _data_mode(info.mode), info.mtime, info.linkname)
        else:
            yield _Member(info.name, "special", None, None)


def _zip_members(zf: zipfile.ZipFile) -> Iterator[_Member]:
    for info in zf.infolist():
        unix = info.external_attr >> 16 if info.create_system == 3 else 0
        kind = st.S_IFMT(unix)
        def reader(info: zipfile.ZipInfo = info) -> _Readable:
            return zf.open(info)
        if kind == st.S_IFLNK:
            yield _Member(info.filename, "symlink", None, None, open=reader)  # read when made
        elif info.is_dir() or kind == st.S_IFDIR:
            yield _Member(info.filename, "dir", None, None)
        elif kind in (0, st.S_IFREG):
            mode = _data_mode(unix) if unix else None  # no Unix mode: the default
            yield _Member(info.filename, "file", mode, None, open=reader)
        else:
            yield _Member(info.filename, "special", None, None)


def _damaged(members: Iterator[_Member], error: type[Exception]) -> Iterator[_Member]:
    """``members``, with what finding the next one raises beyond the
    documented types (a truncated or corrupt stream) raised as ``error``:
    the one place an archive's structure is read."""
    while True:
        try:
            member = next(members)
        except StopIteration:
            return
        except _UNREADABLE as exc:
            raise error(f"the archive is damaged: {type(exc).__name__}: {exc}") from exc
        yield member


@contextmanager
def _members(archive: Archive) -> Iterator[Iterator[_Member]]:
    """The members of ``archive`` (module docstring); archives opened here
    are closed on exit, ones passed in are left open."""
    if isinstance(archive, tarfile.TarFile):
        yield _damaged(_tar_members(archive), tarfile.ReadError)
    elif isinstance(archive, zipfile.ZipFile):
        yield _damaged(_zip_members(archive), zipfile.BadZipFile)
    elif isinstance(archive, (str, os.PathLike)) or hasattr(archive, "read"):
        with ExitStack() as stack:
            if zipfile.is_zipfile(archive):
                zf = stack.enter_context(zipfile.ZipFile(archive))
                yield _damaged(_zip_members(zf), zipfile.BadZipFile)
            else:
                if not isinstance(archive, (str, os.PathLike)):
                    archive.seek(0)
                    tf = stack.enter_context(tarfile.open(fileobj=archive))
                else:
                    tf = stack.enter_context(tarfile.open(archive))
                yield _damaged(_tar_members(tf), tarfile.ReadError)
    else:
        raise TypeError(f"an archive must be a TarFile, a ZipFile, a binary file or a path, "
                        f"not {type(archive).__name__}")


# -- the extraction ------------------------------------------------------------------------

_CONFLICTS = frozenset({errno.EEXIST, errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY})


def _classify(exc: OSError) -> ExtractReason | None:
    """The refusal an error of a member means; ``None``: an environment
    error, which is raised."""
    if isinstance(exc, EscapeError):
        return ExtractReason.ABSOLUTE if exc.reason == "absolute" else ExtractReason.OUTSIDE
    if isinstance(exc, InvalidPathError) or exc.errno == errno.ENAMETOOLONG:
        return ExtractReason.INVALID_NAME
    if isinstance(exc, SymlinkError):
        return ExtractReason.SYMLINK
    if isinstance(exc, SpecialFileError) or exc.errno in _CONFLICTS:
        return ExtractReason.CONFLICT
    if exc.errno == errno.ELOOP:
        return ExtractReason.LOOP
    if exc.errno == errno.ENOENT:
        return ExtractReason.CONFLICT  # a dangling in-root link on the way: nothing to create in
    return None


class _Extractor:
    def __init__(self, root: RootAPI) -> None:
        self.root = root
        self.backend = root.backend
        self.result = Extraction()
        self.dirs: list[tuple[str, float]] = []  # (name, mtime), set at the end
        self.made: set[tuple[int, int]] = set()  # (st_dev, st_ino) of the files made here

    def member(self, member: _Member) -> Refused | None:
        try:
            if not member.name:
                raise _Refusal(ExtractReason.INVALID_NAME, "a member has an empty name")
            if member.kind == "special":
                raise _Refusal(ExtractReason.SPECIAL,
                               "devices, FIFOs and sockets are not extracted")
            getattr(self, f"make_{member.kind}")(member)
        except _Refusal as refusal:
            return Refused(member.name, refusal.reason, refusal.message, refusal.error)
        except OSError as exc:
            reason = _classify(exc)
            if reason is None:
                raise
            return Refused(member.name, reason, str(exc), exc)
        self.result.extracted.append(member.name)
        return None

    def make_dir(self, member: _Member) -> None:
        self.root.makedirs(member.name, exist_ok=True)
        if member.mtime is not None:
            self.dirs.append((member.name, member.mtime))

    def make_file(self, member: _Member) -> None:
        assert member.open is not None
        with _Data(member.open) as src, open_parent(self.root, member.name, errno.EISDIR,
                                                    create_parents=True) as parent:
            def fill(fd: int) -> None:
                self.made_here(fd)
                if member.sparse is None:
                    copy_stream(src.read, fd)
                else:
                    _write_sparse(src, fd, member.sparse, member.size)
                if member.mtime is not None:
                    os.utime(fd, (member.mtime, member.mtime))

            # a directory or special file there is refused, a symlink replaced
            parent.target.write_bytes(fill, mode=member.mode, fsync=False)

    def made_here(self, fd: int) -> None:
        """Note the file open as ``fd`` as one this extraction made."""
        info = os.fstat(fd)
        self.made.add((info.st_dev, info.st_ino))

    def in_the_way(self, parent: Parent) -> os.stat_result | None:
        """What is at the name now (``None``: nothing); a directory there is
        a conflict (it is never replaced)."""
        try:
            current = self.backend.lstat_at(parent.fd, parent.name)
        except FileNotFoundError:
            return None
        if st.S_ISDIR(current.st_mode):
            raise contained_error(errno.EISDIR, parent.text, parent.text)
        return current

    def make_symlink(self, member: _Member) -> None:
        target = member.linkname if member.open is None else _link_target(member.open)
        if not target or "\x00" in target:
            raise _Refusal(ExtractReason.INVALID_NAME, "a symlink with an empty or invalid target")
        if target.startswith("/"):
            raise _Refusal(ExtractReason.LINK_ABSOLUTE, "a symlink to an absolute path")
        with open_parent(self.root, member.name, errno.EEXIST, create_parents=True) as parent:
            self.in_the_way(parent)
            tmp = temp_name(parent.name)
            self.backend.symlink_at(target, parent.fd, tmp)
            self.into_place(parent, tmp, lambda: self.check_link(
                f"{parent.target.parent}/{tmp}", target))

    def into_place(self, parent: Parent, tmp: str,
                   check: Callable[[], None] | None = None) -> None:
        """Rename the entry made as ``tmp`` over ``parent.name`` (never over a
        directory), after ``check``; on any failure ``tmp`` is removed."""
        try:
            if check is not None:
                check()
            self.in_the_way(parent)
            self.backend.rename_at(parent.fd, tmp, parent.fd, parent.name)
        except BaseException:
            self.backend.unlink_at(parent.fd, tmp)
            raise

    def check_link(self, where: str, text: str) -> None:
        """Refuse the symlink at ``where`` unless the root resolves it inside."""
        try:
            self.root.realpath(where)
        except EscapeError as exc:
            raise _Refusal(ExtractReason.LINK_OUTSIDE, "a symlink leading outside", exc) from None
        except (FileNotFoundError, NotADirectoryError):
            # dangling: where it will lead cannot be resolved yet; plain names
            # below an in-root directory can only lead inside
            if ".." in text.split("/"):
                raise _Refusal(ExtractReason.LINK_OUTSIDE, "a dangling symlink climbing with '..'; "
                               "where it leads cannot be told") from None

    def make_hardlink(self, member: _Member) -> None:
        target = member.linkname
        if target.startswith("/"):
            raise _Refusal(ExtractReason.LINK_ABSOLUTE, "a hard link to an absolute path")
        try:
            info = self.root.lstat(target)
        except EscapeError as exc:
            raise _Refusal(ExtractReason.LINK_OUTSIDE, "a hard link to a file outside",
                           exc) from None
        except FileNotFoundError as exc:
            raise _Refusal(ExtractReason.LINK_MISSING, "a hard link to nothing", exc) from None
        if st.S_ISDIR(info.st_mode):
            raise _Refusal(ExtractReason.LINK_DIRECTORY, "a hard link to a directory")
        if st.S_ISLNK(info.st_mode):
            # linkat never follows: the result is one more name for this
            # symlink, so it must lead inside as a symlink member must
            self.check_link(target, self.root.readlink(target))
        with open_parent(self.root, target, errno.EPERM) as src, \
                open_parent(self.root, member.name, errno.EEXIST, create_parents=True) as dst:
            current = self.in_the_way(dst)
            if current is None or (current.st_dev, current.st_ino) != (info.st_dev, info.st_ino):
                self.link_into(src, dst, target)
        if st.S_ISREG(info.st_mode):
            self.date_link(member)

    def date_link(self, member: _Member) -> None:
        """As tarfile, give the member's (filtered) mode and mtime to the file
        it names, on a pinned fd, if this extraction made that file: a file
        that was in the tree may be a second name of an inode outside."""
        def made(info: os.stat_result) -> bool:
            return st.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) in self.made

        if not made(self.root.lstat(member.name)):
            return  # not opened: a file that was in the tree may not be readable
        fd = self.root.open(member.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if not made(os.fstat(fd)):
                return  # swapped since
            if member.mode is not None:
                os.fchmod(fd, member.mode)
            if member.mtime is not None:
                os.utime(fd, (member.mtime, member.mtime))
        finally:
            self.backend.close(fd)

    def link_into(self, src: Parent, dst: Parent, target: str) -> None:
        """Hard-link ``src`` at ``dst`` (under a temporary name, renamed into
        place); a copy where the filesystem cannot link."""
        tmp = temp_name(dst.name)
        try:
            self.backend.link_at(src.fd, src.name, dst.fd, tmp)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise
            self.copy(target, dst)  # the filesystem cannot link: copy, as tarfile does
            return
        self.into_place(dst, tmp)

    def copy(self, source: str, dst: Parent) -> None:
        fd = self.root.open(source, os.O_RDONLY)

        def fill(out: int) -> None:
            self.made_here(out)
            copy_stream(lambda size: self.backend.read(fd, size), out)

        try:
            dst.target.write_bytes(fill, fsync=False)
        finally:
            self.backend.close(fd)

    def finish(self) -> None:
        """Directory mtimes, deepest (latest) first: making their content
        changed them."""
        for name, mtime in reversed(self.dirs):
            try:
                utime(self.root, name, (mtime, mtime))
            except OSError:
                pass  # gone since (a concurrent change): nothing to date


def _write_sparse(src: _Data, fd: int, blocks: tuple[tuple[int, int], ...], size: int) -> None:
    """Write a sparse member's stored ``blocks`` at their offsets in ``fd``
    and give it its ``size``: the holes between stay holes.  A map whose
    blocks overlap or pass the size is refused: it describes no file."""
    ends = [0] + [start + length for start, length in blocks]
    if any(start < end for (start, _), end in zip(blocks, ends, strict=False)) \
            or ends[-1] > size:
        raise _Refusal(ExtractReason.UNREADABLE, "a sparse member whose map of blocks overlaps "
                       "or passes its size")
    for start, length in blocks:
        at, end = start, start + length
        while at < end:
            chunk = src.read(min(CHUNK, end - at))
            if not chunk:
                raise _Refusal(ExtractReason.UNREADABLE, "a sparse member's data ends early")
            view = memoryview(chunk)
            while view:
                written = os.pwrite(fd, view, at)
                view, at = view[written:], at + written
    os.ftruncate(fd, size)


def _link_target(open_data: Callable[[], _Readable]) -> str:
    """A zip symlink entry's target, read up to MAX_LINK_TARGET bytes (an
    entry inflating to more is refused, the rest never read)."""
    with _Data(open_data) as src:
        raw = src.read(MAX_LINK_TARGET + 1)
    if len(raw) > MAX_LINK_TARGET:
        raise _Refusal(ExtractReason.INVALID_NAME,
                       f"a symlink whose target is longer than {MAX_LINK_TARGET} bytes")
    return raw.decode("utf-8", "surrogateescape")


def extract(root: RootAPI, archive: Archive, *, stop_on_refusal: bool = False) -> Extraction:
    """Extract ``archive`` beneath ``root`` (module docstring); return what
    was extracted and refused.

    Raises ``TypeError`` for something that is no archive,
    ``tarfile.ReadError`` / ``zipfile.BadZipFile`` for a damaged one (one
    whose members cannot be listed or found: whatever its decompressor
    raised), and ``OSError`` for errors of the environment (``ENOSPC``,
    ``EIO``, ``EACCES``...), with the extraction then incomplete.  A member
    whose own data cannot be read (encrypted, an unsupported compression
    method, corrupt) is refused (``unreadable``) and extraction goes on.
    """
    extractor = _Extractor(root)
    result = extractor.result
    try:
        with _members(archive) as members:
            for member in members:
                refused = extractor.member(member)
                if refused is not None:
                    result.refused.append(refused)
                    if stop_on_refusal:
                        result.stopped = True
                        break
    finally:
        extractor.finish()
    return result
