"""Reading archives for :mod:`.extract`: tar and zip members as one shape.

Everything here reads the archive and nothing touches the tree: which
members there are (narrowed by ``members=`` and the caller's filter), what
kind each is, its data, and what a zip's central directory says of where
each entry's data lies (entries whose data overlap another's are marked:
CVE-2024-0450's zip bombs, checked here on every Python version).
"""

from __future__ import annotations

import io
import lzma
import math
import os
import stat as st
import struct
import tarfile
import time
import zipfile
import zlib
from collections.abc import Callable, Collection, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import IO, NamedTuple, Protocol, Self, TypeVar, cast

__all__ = ["Archive", "ArchiveInfo", "FilterFunction", "MAX_LINK_TARGET", "Member", "Readable",
           "Selection", "Source", "UNREADABLE", "open_source"]

Archive = tarfile.TarFile | zipfile.ZipFile | IO[bytes] | str | os.PathLike[str]
ArchiveInfo = tarfile.TarInfo | zipfile.ZipInfo
#: tarfile's filter shape: ``(member, destination path) -> member or None``.
FilterFunction = Callable[[ArchiveInfo, str], ArchiveInfo | None]
#: ``members=``: names, or the archive's own ``TarInfo`` / ``ZipInfo`` objects.
Selection = Collection[str | ArchiveInfo]

MAX_LINK_TARGET = 4096  # bytes of a zip symlink entry read as its target (PATH_MAX)

# What reading an archive raises for data it cannot read, beyond the
# documented tarfile.ReadError / zipfile.BadZipFile: an encrypted zip entry
# (RuntimeError), an unknown compression method (NotImplementedError), a
# corrupt or truncated stream (zlib.error, lzma.LZMAError, EOFError).
UNREADABLE = (RuntimeError, NotImplementedError, zlib.error, lzma.LZMAError, EOFError)

#: Bytes of headers read to find one tar member: its PAX and GNU long-name
#: headers and a sparse map stored before its data (Go's archive/tar bound
#: for a special header since CVE-2022-2879).  A header claiming more is damage: its size comes from
#: the archive, so it is never read into memory.
MAX_HEADER_BYTES = 1 << 20

# What tarfile's parsing raises on a number no file or memory holds (a
# base-256 size of 2**70, a PAX size of thirty digits, a sparse map cut short)
_NUMBERS = (ValueError, OverflowError)

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip local file header (APPNOTE 4.3.7)
_LOCAL_MAGIC = b"PK\x03\x04"

_T = TypeVar("_T")


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...
    def close(self) -> object: ...


class Member(NamedTuple):
    """One member, as the extractor makes it (a tuple: one is made for every
    member, and a frozen dataclass takes twice as long to make)."""

    name: str
    kind: str  # "file", "dir", "symlink", "hardlink" or "special"
    mode: int | None  # the member's permission bits (None: the default)
    mtime: float | None
    linkname: str = ""
    open: Callable[[], Readable] | None = None  # a file's data (a zip symlink's: its target)
    # (offset, length) of a sparse member's blocks (``open`` gives them one after the other)
    sparse: tuple[tuple[int, int], ...] | None = None
    size: int = 0  # the file's size (a sparse member's, holes included)
    overlap: bool = False  # a zip entry whose data overlaps another's
    # the data ends after ``size`` bytes with nothing left to check at its
    # end (a tar member; a zip entry's CRC is checked by the read finding it)
    sized: bool = False


@dataclass(frozen=True)
class Filtered:
    """A member the caller's filter left out (``reason``: what it raised, if anything)."""

    name: str
    reason: str = ""


def _nowhere() -> int:
    return 0


class Source:
    """An open archive: its members in order, how many there are when the
    archive says so up front (a zip), and its size in bytes (``None``:
    not known) for the compression ratio; ``read_to()``: how far its
    (inflated) stream will have been read once the next member is found,
    the data of the last one passed over too (a zip's: 0, its entries are
    found by seeking)."""

    def __init__(self, members: Iterator[Member | Filtered], total: int | None,
                 size: int | None, read_to: Callable[[], int] = _nowhere) -> None:
        self.members, self.total, self.size = members, total, size
        self.read_to = read_to


# -- tar --------------------------------------------------------------------------------

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


class _Span:
    """A regular member's data, read straight from the archive's stream
    (what ``tarfile.extractfile`` reads through a buffered wrapper made for
    each member, which costs more than copying a small file); a short read
    is the archive ending early (``tarfile.ReadError``, as tarfile says)."""

    def __init__(self, tf: tarfile.TarFile, info: tarfile.TarInfo) -> None:
        self.stream = tf.fileobj
        self.left = info.size
        self.stream.seek(info.offset_data)

    def read(self, size: int, /) -> bytes:
        size = min(size, self.left)
        if size <= 0:
            return b""
        data: bytes = self.stream.read(size)
        if len(data) < size:
            raise tarfile.ReadError("unexpected end of data")
        self.left -= size
        return data

    def close(self) -> None:
        pass


# seconds either side of 1970 a clock (a 64-bit time_t) can be set to, with
# room for the rounding of a float
_CLOCK_LIMIT = 2.0 ** 62


def _tar_mtime(info: tarfile.TarInfo) -> float | None:
    """A tar member's time, or ``None`` (the member keeps the time it is
    made at, as GNU tar leaves a time it cannot set) for one no clock holds:
    a PAX ``nan``, ``inf`` or ``1e20``, a base-256 number of 80 bits."""
    try:
        seconds = float(info.mtime)
    except (OverflowError, ValueError, TypeError):
        return None
    return info.mtime if math.isfinite(seconds) and abs(seconds) < _CLOCK_LIMIT else None


def _tar_member(tf: tarfile.TarFile, info: tarfile.TarInfo) -> Member:
    if info.isreg():
        # tarfile keeps (offset, length) pairs (typeshed says tuple[int, ...]),
        # unused header slots among them as (0, 0)
        blocks = cast("list[tuple[int, int]] | None", info.sparse)
        sparse = None if blocks is None else tuple(block for block in blocks if block[1])

        def reader() -> Readable:
            return _Stored(tf, info) if sparse is not None else _Span(tf, info)

        return Member(info.name, "file", info.mode, _tar_mtime(info), open=reader, sparse=sparse,
                      size=info.size, sized=sparse is None)
    if info.isdir():
        return Member(info.name, "dir", None, _tar_mtime(info))
    if info.issym():
        return Member(info.name, "symlink", None, None, info.linkname)
    if info.islnk():
        return Member(info.name, "hardlink", info.mode, _tar_mtime(info), info.linkname)
    return Member(info.name, "special", None, None)


class _TarStream(Protocol):
    """What ``tarfile`` reads headers from (its ``fileobj``)."""

    def read(self, size: int, /) -> bytes: ...
    def tell(self) -> int: ...
    def seek(self, pos: int, /) -> object: ...


class _HeaderBound:
    """The archive's stream while ``tarfile`` reads one member's headers:
    reads past :data:`MAX_HEADER_BYTES` in all raise ``tarfile.ReadError``
    before anything is read."""

    __slots__ = ("stream", "left")

    def __init__(self, stream: _TarStream) -> None:
        self.stream = stream
        self.left = MAX_HEADER_BYTES

    def read(self, size: int = -1, /) -> bytes:
        if size < 0 or size > self.left:
            raise tarfile.ReadError(f"a tar header of more than {MAX_HEADER_BYTES} bytes")
        data = self.stream.read(size)
        self.left -= len(data)
        return data

    def tell(self) -> int:
        return self.stream.tell()

    def seek(self, pos: int, /) -> object:
        return self.stream.seek(pos)


class _BoundedHeaders(tarfile.TarInfo):
    """A ``TarInfo`` whose headers are read through :class:`_HeaderBound`."""

    @classmethod
    def fromtarfile(cls, tarfile: tarfile.TarFile) -> Self:
        stream = tarfile.fileobj
        if stream is None or isinstance(stream, _HeaderBound):  # a PAX or long-name member
            return super().fromtarfile(tarfile)
        tarfile.fileobj = cast(IO[bytes], _HeaderBound(stream))
        try:
            return super().fromtarfile(tarfile)
        finally:
            tarfile.fileobj = stream


def _bounded(kind: type[tarfile.TarInfo]) -> type[tarfile.TarInfo]:
    """``kind`` (a TarFile's ``tarinfo`` class) reading its headers bounded."""
    if issubclass(kind, _BoundedHeaders):
        return kind
    return type(f"Bounded{kind.__name__}", (_BoundedHeaders, kind), {})


def _tar_infos(tf: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """``tf``'s members, each found reading :data:`MAX_HEADER_BYTES` of
    headers at most; a number no file holds is ``tarfile.ReadError``."""
    kind = tf.tarinfo
    tf.tarinfo = _bounded(kind)
    try:
        infos = iter(tf)
        while True:
            try:
                info = next(infos)
            except StopIteration:
                return
            except _NUMBERS as exc:
                raise tarfile.ReadError(f"the archive is damaged: {type(exc).__name__}: "
                                        f"{exc}") from exc
            yield info
    finally:
        tf.tarinfo = kind


def _tar_members(tf: tarfile.TarFile, pick: _Pick) -> Iterator[Member | Filtered]:
    if pick.takes_all:
        for info in _tar_infos(tf):
            yield _tar_member(tf, info)
        return
    for info in _tar_infos(tf):
        got = pick(info)
        if got is None or isinstance(got, Filtered):
            yield Filtered(info.name) if got is None else got
            continue
        assert isinstance(got, tarfile.TarInfo)
        yield _tar_member(tf, got)


# -- zip --------------------------------------------------------------------------------

def _zip_mtime(info: zipfile.ZipInfo) -> float | None:
    """A zip entry's time (local time, as ``unzip`` reads it); ``None``
    for one that is no date."""
    try:
        return time.mktime((*info.date_time, 0, 0, -1))
    except (OverflowError, ValueError):
        return None


def _zip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, overlap: bool) -> Member:
    unix = info.external_attr >> 16 if info.create_system == 3 else 0
    kind = st.S_IFMT(unix)
    mtime = _zip_mtime(info)

    def reader() -> Readable:
        return zf.open(info)

    if kind == st.S_IFLNK:
        return Member(info.filename, "symlink", None, None, open=reader, overlap=overlap)
    if info.filename.endswith("/") or kind == st.S_IFDIR:  # is_dir(), which fails on ""
        return Member(info.filename, "dir", None, mtime)
    if kind in (0, st.S_IFREG):
        return Member(info.filename, "file", unix or None, mtime, open=reader,
                      size=info.file_size, overlap=overlap)
    return Member(info.filename, "special", None, None)


def _overlapping(zf: zipfile.ZipFile) -> set[int]:
    """The header offsets of entries whose data reaches into the next
    entry (or the central directory), or that share their offset with
    another: what CPython checks since 3.12.3 / 3.11.9 (CVE-2024-0450),
    here on every version.  An entry whose local header cannot be read is
    among them: its data cannot be placed."""
    infos = sorted(zf.infolist(), key=lambda info: info.header_offset)
    fp = zf.fp
    assert fp is not None  # an open ZipFile read from a file
    end_of_data = getattr(zf, "start_dir", None)
    if not isinstance(end_of_data, int):
        end_of_data = fp.seek(0, io.SEEK_END)
    bad: set[int] = set()
    for at, info in enumerate(infos):
        offset = info.header_offset
        limit = infos[at + 1].header_offset if at + 1 < len(infos) else end_of_data
        if offset < 0 or limit == offset or (at and infos[at - 1].header_offset == offset):
            bad.add(offset)
            continue
        fp.seek(offset)
        raw = fp.read(_LOCAL_HEADER.size)
        if len(raw) != _LOCAL_HEADER.size:
            bad.add(offset)
            continue
        fields = _LOCAL_HEADER.unpack(raw)
        start = offset + _LOCAL_HEADER.size + fields[10] + fields[11]
        if fields[0] != _LOCAL_MAGIC or start + info.compress_size > limit:
            bad.add(offset)
    return bad


def _zip_members(zf: zipfile.ZipFile, pick: _Pick) -> Iterator[Member | Filtered]:
    bad = _overlapping(zf)  # on the first member asked for: not for an archive refused whole
    for info in zf.infolist():
        got = pick(info)
        if got is None or isinstance(got, Filtered):
            yield Filtered(info.filename) if got is None else got
            continue
        assert isinstance(got, zipfile.ZipInfo)
        yield _zip_member(zf, got, got.header_offset in bad)


# -- choosing members ----------------------------------------------------------------------

class _Pick:
    """``members=`` then the caller's filter: the info to extract, ``None``
    (not selected, or the filter said no) or :class:`Filtered`."""

    def __init__(self, selection: Selection | None, chosen: FilterFunction | None,
                 dest: str) -> None:
        self.names: set[str] | None = None
        self.infos: set[int] = set()  # id() of the infos given (kept alive by the selection)
        if selection is not None:
            if isinstance(selection, (str, bytes)):
                raise TypeError("members must be a collection of names or infos, not a string")
            self.names = set()
            for item in selection:
                if isinstance(item, str):
                    self.names.add(item)
                elif isinstance(item, (tarfile.TarInfo, zipfile.ZipInfo)):
                    self.infos.add(id(item))
                else:
                    raise TypeError(f"members holds names (str), TarInfo or ZipInfo objects, "
                                    f"not {type(item).__name__}")
        self.selection = selection
        self.chosen, self.dest = chosen, dest
        #: every member is taken as it is (no ``members=``, no filter)
        self.takes_all = selection is None and chosen is None

    def __call__(self, info: ArchiveInfo) -> ArchiveInfo | Filtered | None:
        if self.names is not None:
            name = info.name if isinstance(info, tarfile.TarInfo) else info.filename
            if name not in self.names and id(info) not in self.infos:
                return None
        if self.chosen is None:
            return info
        try:
            got = self.chosen(info, self.dest)
        except tarfile.FilterError as exc:
            name = info.name if isinstance(info, tarfile.TarInfo) else info.filename
            return Filtered(name, f"{type(exc).__name__}: {exc}")
        if got is None:
            return Filtered(info.name if isinstance(info, tarfile.TarInfo) else info.filename)
        if type(got) is not type(info):
            raise TypeError(f"the filter returned a {type(got).__name__} for a "
                            f"{type(info).__name__}")
        return got


# -- opening ------------------------------------------------------------------------------------

def _damaged(members: Iterator[_T], error: type[Exception]) -> Iterator[_T]:
    """``members``, with what finding the next one raises beyond the
    documented types (a truncated or corrupt stream) raised as ``error``:
    the one place an archive's structure is read."""
    while True:
        try:
            member = next(members)
        except StopIteration:
            return
        except UNREADABLE as exc:
            raise error(f"the archive is damaged: {type(exc).__name__}: {exc}") from exc
        yield member


_PLAIN = (io.BytesIO, io.BufferedReader, io.BufferedRandom, io.FileIO)


def _size_of(stream: object) -> int | None:
    """The size in bytes of an archive's file object, its position kept
    (``None``: not known; a decompressing wrapper is never seeked to its
    end, which would inflate it all)."""
    if stream is None:
        return None
    try:
        fileno = getattr(stream, "fileno", None)
        if fileno is not None:
            info = os.fstat(fileno())
            if st.S_ISREG(info.st_mode):
                return info.st_size
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
    if not isinstance(stream, _PLAIN):
        inner = getattr(stream, "fileobj", None)  # gzip's and tarfile's stream wrappers
        return None if inner is None or inner is stream else _size_of(inner)
    try:
        here = stream.tell()
        end = stream.seek(0, io.SEEK_END)
        stream.seek(here)
        return end
    except (OSError, ValueError, io.UnsupportedOperation):
        return None


def _check_file_object(archive: object) -> None:
    """``TypeError`` for a file object extraction cannot read: text, or one
    that cannot seek (a pipe, a socket: tar and zip both need to go back)."""
    if isinstance(archive, io.TextIOBase):
        raise TypeError("an archive file object must be binary, not text")
    seekable = getattr(archive, "seekable", None)
    try:
        can_seek = bool(seekable()) if seekable is not None else hasattr(archive, "seek")
    except (OSError, ValueError) as exc:
        raise TypeError(f"the archive file object cannot seek: {exc}") from None
    if not can_seek:
        raise TypeError("the archive file object must be seekable (read a pipe or socket "
                        "into a temporary file first)")


def _tar_source(tf: tarfile.TarFile, pick: _Pick, size: int | None) -> Source:
    def read_to() -> int:
        return tf.offset  # where tarfile finds the next header

    return Source(_damaged(_tar_members(tf, pick), tarfile.ReadError), None, size, read_to)


def _zip_source(zf: zipfile.ZipFile, pick: _Pick, size: int | None) -> Source:
    return Source(_damaged(_zip_members(zf, pick), zipfile.BadZipFile),
                  len(zf.infolist()), size)


@contextmanager
def open_source(archive: Archive, selection: Selection | None, chosen: FilterFunction | None,
                dest: str) -> Iterator[Source]:
    """The members of ``archive``; archives opened here are closed on exit,
    ones passed in are left open.  Raises ``TypeError`` for what is no
    archive (or a text or unseekable file object), ``tarfile.ReadError`` /
    ``zipfile.BadZipFile`` for one that cannot be read."""
    pick = _Pick(selection, chosen, dest)
    if isinstance(archive, tarfile.TarFile):
        yield _tar_source(archive, pick, _size_of(archive.fileobj))
        return
    if isinstance(archive, zipfile.ZipFile):
        yield _zip_source(archive, pick, _size_of(archive.fp))
        return
    path: str | os.PathLike[str] | None = None
    stream: IO[bytes] | None = None
    if isinstance(archive, (str, os.PathLike)):
        path = archive
    elif hasattr(archive, "read"):
        _check_file_object(archive)
        stream = archive
    else:
        raise TypeError(f"an archive must be a TarFile, a ZipFile, a binary file or a path, "
                        f"not {type(archive).__name__}")
    with ExitStack() as stack:
        size = os.stat(path).st_size if path is not None else _size_of(stream)
        source = path if path is not None else stream
        assert source is not None
        if zipfile.is_zipfile(source):
            with _unreadable_as(zipfile.BadZipFile):
                zf = stack.enter_context(zipfile.ZipFile(source))
            yield _zip_source(zf, pick, size)
            return
        with _unreadable_as(tarfile.ReadError):
            if path is not None:
                tf = stack.enter_context(tarfile.open(path, tarinfo=_BoundedHeaders))
            else:
                assert stream is not None
                stream.seek(0)
                tf = stack.enter_context(tarfile.open(fileobj=stream, tarinfo=_BoundedHeaders))
        yield _tar_source(tf, pick, size)


@contextmanager
def _unreadable_as(error: type[Exception]) -> Iterator[None]:
    """What opening an archive raises beyond the documented types (an
    unknown zip version, a truncated compressed header) raised as ``error``."""
    try:
        yield
    except (*UNREADABLE, *_NUMBERS) as exc:
        raise error(f"the archive is damaged: {type(exc).__name__}: {exc}") from exc
