"""Archive extraction beneath a root, with tarfile's "data" filter semantics,
checked on the tree the extraction leaves.

:func:`extract` takes a ``tarfile.TarFile``, a ``zipfile.ZipFile``, a
seekable binary file object holding either, or a host path to either, and
creates every member through the root.  Nothing is decided on a member's
spelling: each name is resolved by the root when the member is made, so a
symlink planted by an earlier member (or already in the tree) can redirect
a later member nowhere outside, and path-length or link-chain tricks that
defeat lexical checks (CVE-2025-4517 and its siblings) meet the resolver.

The guarantee is on the finished tree: no symlink the extraction made is
left leading outside the destination, whatever order members come in and
whatever later members replace or add.  Each symlink is checked when it is
made, and every one still there is checked again once the last member is
in (a later member may have replaced a link an earlier link's text walks
through: ``link -> a``, ``escape -> link/../x``, then ``link -> .``); one
that now leads out is removed and its member reported refused.  A hard
link member never makes a symlink (below).  Links that were in the
destination before are the host's and are neither checked nor changed:
extract into an empty directory to have the guarantee cover the whole tree.

Per member, as ``tarfile``'s ``filter="data"`` (PEP 706):

* names: absolute names are refused (``tarfile`` strips the leading ``/``;
  a root never takes absolute paths), and so is any name that resolves
  outside (``..``, a symlinked directory leading out); symlinked parent
  directories inside are followed;
* an existing symlink at a member's own name is replaced, never written
  through (a file, a directory, a link member takes the name itself);
* regular files: mode masked to 0o755 and made owner-read/writable,
  execute bits dropped unless the owner's is set (setuid, setgid and sticky
  never survive); content written to a temporary file and renamed into
  place (an existing file keeps its owner and xattrs); the mtime kept; a
  sparse member is written as its stored blocks at their offsets, its
  holes left holes (as ``tarfile``);
* directories: made with the default mode (the member's is ignored);
  their mtimes are set last, deepest first;
* symlinks: an absolute target is refused; the text as written must lead
  inside, and it is stored normalized as the data filter does
  (``link/../x`` is stored as ``x``, which must lead inside too); the link
  is made under a temporary name and renamed into place.  A
  dangling link is judged by where its text leads: through what exists,
  then the missing rest as written, so one that stays inside is made (as
  the data filter) and one that climbs out is refused; a loop is refused,
  and so is a link whose judging takes more than :data:`MAX_LEADS_WORK`
  steps, or comes after the extraction's links took
  :data:`MAX_EXTRACT_LEADS_WORK` in all;
* hard links: the target (relative to the extraction root, as tar's) is
  resolved inside, in-root symlinks followed (a hard link to a symlink
  links the symlink's file, as CPython 3.14); it must not be a directory;
  ``linkat`` of what was resolved, a copy where the filesystem cannot
  link; the member's mode and mtime go to the file only if this extraction
  made it, never to a file that was in the tree (it may be a second name
  of an inode outside);
* devices, FIFOs, sockets and unknown member types are refused; owners
  (uid/gid/uname/gname) are ignored.

Zip members are read the same way: Unix modes from ``external_attr`` are
masked as above, an entry whose Unix mode says symlink becomes a symlink
(as Info-ZIP's ``unzip`` does; its target read up to
:data:`MAX_LINK_TARGET` bytes, a longer one refused unread), zip times are
set (local time, as ``unzip``), and an entry whose data overlaps another's
is refused (``overlap``; CVE-2024-0450, on every Python version).

``filter`` is ``"data"`` or a callable in tarfile's shape, ``(member,
destination path) -> member or None``, given the archive's own
``TarInfo`` / ``ZipInfo`` and the destination's host path (so
``tarfile.data_filter`` works as one): it can leave members out or change
them, and what it returns is extracted under the rules above, so it only
ever narrows.  ``tarfile.FilterError`` from it leaves the member out
(``Extraction.skipped``); anything else it raises is raised.

:class:`ExtractLimits` bound the bytes written, the members read and the
compression ratio (bytes written over the archive's size, past the first
MiB); exceeding one stops the extraction, with the member being written
removed (nothing half-written is left) and :attr:`Extraction.stop` saying
which.  A zip whose directory lists more members than the limit is stopped
before anything is made.  ``cancel`` (anything with a ``cancelled``
attribute, as the tools' ``CancelToken``) is checked before each member
and between chunks of its data, the same way.  ``progress`` receives an
:class:`ExtractProgress` after each member.

A file member's directory stays open for the file members spelled in it
after it (up to :data:`HELD_DIRS` directories): they are written in that fd,
and the directory is shown beneath the root once after the last of them;
one that left the root by then has every member written in it since
reported refused (``outside``), never landed (THREATS row 55).

A refusal is reported (:class:`Refused`) and extraction goes on, or stops
with ``stop_on_refusal``.  Refusals are about the archive's content against
the tree: escapes, invalid names, conflicts (a file where a directory is),
refused types, and members whose data cannot be read (encrypted, an
unsupported compression method, corrupt or truncated: ``unreadable``;
nothing of the member is left).  A damaged archive whose next member
cannot be found raises ``tarfile.ReadError`` or ``zipfile.BadZipFile``
whatever the decompressor raised.  Errors of the environment (``ENOSPC``,
``EIO``, ``EACCES``) are raised: the extraction is then incomplete and the
exception says why.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as st
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal, Protocol, TypeVar, cast

from .._acts import write_checks
from .._backend import Backend
from .._errors import (EscapeError, InvalidPathError, PathError, SpecialFileError, SymlinkError,
                       contained_error)
from .extract_read import (MAX_LINK_TARGET, UNREADABLE, Archive, FilterFunction, Filtered,
                           Member, Readable, Selection, Source, open_source)
from .meta import utime
from .resolve import Parent, RootAPI, open_parent
from .syscalls import CHUNK
from .._replace import replace_in, temp_name
from .._resolve import MAX_SYMLINKS

__all__ = ["MAX_LINK_TARGET", "Cancellable", "Extraction", "FilterFunction", "ProgressCallback",
           "Selection", "ExtractLimits", "ExtractProgress", "ExtractReason",
           "ExtractStop", "Landed", "Refused", "extract"]

_T = TypeVar("_T")
_Kind = Literal["file", "dir", "symlink", "hardlink"]

#: Bytes written before the compression ratio is judged: a small archive of
#: very compressible text is not a bomb.
RATIO_FLOOR = 1 << 20

#: The largest offset a file can have (off_t's); a sparse map past it describes no file.
_MAX_FILE = (1 << 63) - 1


class ExtractReason(str, Enum):
    """Why a member was refused (``Refused.reason``)."""

    ABSOLUTE = "absolute"  # an absolute name
    OUTSIDE = "outside"  # the name resolves outside the extraction root
    LINK_ABSOLUTE = "link_absolute"  # a symlink or hard link to an absolute path
    LINK_OUTSIDE = "link_outside"  # a link whose target resolves outside (now, or once finished)
    LINK_MISSING = "link_missing"  # a hard link to nothing
    LINK_DIRECTORY = "link_directory"  # a hard link to a directory
    SPECIAL = "special"  # a device, FIFO, socket or unknown member type
    CONFLICT = "conflict"  # what is in the tree is in the way (a file where a dir goes...)
    INVALID_NAME = "invalid_name"  # empty, NUL, too long
    LOOP = "loop"  # symlinks loop, or too many of them
    SYMLINK = "symlink"  # a strict root (follow_symlinks=False) met a symlink
    UNREADABLE = "unreadable"  # encrypted, an unknown compression method, corrupt or truncated
    OVERLAP = "overlap"  # a zip entry whose data overlaps another entry's (a zip bomb)
    LIMIT = "limit"  # a limit was reached while it was written (see Extraction.stop)
    CANCELLED = "cancelled"  # cancelled while it was written


class ExtractStop(str, Enum):
    """Why an extraction ended before the archive's end (``Extraction.stop``)."""

    REFUSAL = "refusal"  # a member was refused and stop_on_refusal was given
    BYTES = "bytes"  # ExtractLimits.max_bytes
    MEMBERS = "members"  # ExtractLimits.max_members
    RATIO = "ratio"  # ExtractLimits.max_ratio
    CANCELLED = "cancelled"  # the cancel token was set


@dataclass(frozen=True)
class ExtractLimits:
    """Bounds for an untrusted archive (``None``: no bound).

    ``max_bytes``: file data written in all (holes of sparse members not
    counted); ``max_members``: members read from the archive, refused and
    filtered ones included; ``max_ratio``: bytes written over the archive's
    size in bytes, judged once :data:`RATIO_FLOOR` bytes were written and
    only where the size is known (a path, a seekable file object); for a
    tar, also the bytes its (inflated) stream is read to, the data of
    refused and filtered members passed over included."""

    max_bytes: int | None = 1 << 30
    max_members: int | None = 50_000
    max_ratio: float | None = 100.0

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_members", "max_ratio"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not value >= 0):
                raise ValueError(f"ExtractLimits.{name} must be a number >= 0 or None")


@dataclass(frozen=True)
class ExtractProgress:
    """How far an extraction is: ``done`` members of ``total`` (``None``:
    a tar does not say), the last one's name as ``message`` (the shape of
    the tools' ``Progress``)."""

    done: int
    total: int | None
    message: str


class Cancellable(Protocol):
    """What ``cancel`` is: anything whose ``cancelled`` becomes true (the
    tools' ``CancelToken``)."""

    @property
    def cancelled(self) -> bool: ...


ProgressCallback = Callable[[ExtractProgress], object]


@dataclass(frozen=True)
class Refused:
    """One member not extracted: its name in the archive, why, and the
    error behind it (if any) with root-relative names."""

    name: str
    reason: ExtractReason
    message: str
    error: OSError | None = None


@dataclass(frozen=True)
class Landed:
    """One member extracted: its name in the archive, the canonical path
    (relative to the extraction root) it landed at, and what was made there."""

    name: str
    path: str
    kind: _Kind


@dataclass
class Extraction:
    """What :func:`extract` did, in archive order: members that landed
    (and where), members refused (and why), members the filter left out;
    ``stop`` when it ended before the archive's end; ``written``: bytes of
    file data written."""

    landed: list[Landed] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    stop: ExtractStop | None = None
    written: int = 0

    @property
    def extracted(self) -> list[str]:
        """The names of the members that landed."""
        return [one.name for one in self.landed]

    @property
    def stopped(self) -> bool:
        return self.stop is not None

    @property
    def ok(self) -> bool:
        """Every member selected landed, and the archive was read to its end."""
        return not self.refused and self.stop is None


class _Refusal(Exception):
    def __init__(self, reason: ExtractReason, message: str, error: OSError | None = None) -> None:
        super().__init__(message)
        self.reason, self.message, self.error = reason, message, error


class _Stop(Exception):
    """A limit or the cancel token ends the extraction."""

    def __init__(self, stop: ExtractStop) -> None:
        super().__init__(stop.value)
        self.stop = stop


_FAILURES = (*UNREADABLE, tarfile.ReadError, zipfile.BadZipFile, OSError)


def _unreadable(exc: Exception) -> _Refusal:
    return _Refusal(ExtractReason.UNREADABLE, f"the member's data cannot be read: {exc}")


class _Data:
    """A member's data as the archive gives it, whose read errors refuse the
    member: they say the data is unreadable, not the environment failing
    (an ``OSError`` without an errno is a decompressor's complaint)."""

    def __init__(self, open_data: Callable[[], Readable]) -> None:
        try:
            self.stream = open_data()
        except _FAILURES as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise  # the environment failing
            raise _unreadable(exc) from exc

    def read(self, size: int) -> bytes:
        try:
            return self.stream.read(size)
        except _FAILURES as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise
            raise _unreadable(exc) from exc

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


# -- where a symlink leads ---------------------------------------------------------------

_OUTSIDE, _LOOP = "outside", "loop"

#: Work one judgment of a symlink's text may take: one per component of its
#: text and of the texts it follows, plus the components of every path
#: looked up (each ``lstat`` resolves its path from the root).  Twice the
#: components of the longest member name: an ordinary link takes a few
#: hundred at most; a chain of links walking down a deep directory and back
#: out took millions, for every member naming it.
MAX_LEADS_WORK = 1 << 13
#: The same work for every symlink of one extraction, judged when made and
#: again at the end: an ordinary link takes tens, so 50,000 of them stay far
#: below; past it, every symlink still to judge is refused as a loop.
MAX_EXTRACT_LEADS_WORK = 1 << 24


class _Budget:
    """The judging work an extraction has left (``MAX_EXTRACT_LEADS_WORK``
    at the start, read when the extraction starts)."""

    def __init__(self) -> None:
        self.left = MAX_EXTRACT_LEADS_WORK


def _leads(root: RootAPI, where: str, text: str, budget: _Budget,
           name: str | None = None) -> str:
    """Where the symlink text ``text`` in the directory ``where`` (canonical,
    root-relative) leads: the canonical path of its end, through what exists
    with every symlink followed, then the missing rest as written (what the
    kernel would reach once it exists); or ``_OUTSIDE`` (it leaves the root
    at any step) or ``_LOOP`` (more than MAX_SYMLINKS links, or more than
    MAX_LEADS_WORK work to judge, or more than ``budget`` has left, which
    pays for it).  ``name``: the link is about to be made as that entry of
    ``where`` (a walk through it meets the link itself)."""
    own = None if name is None else "/".join(
        part for part in (*where.split("/"), name) if part not in ("", "."))
    if text.startswith("/"):
        return _OUTSIDE
    parts = [part for part in where.split("/") if part not in ("", ".")]
    pending = list(reversed(text.split("/")))
    hops, missing, work = 0, False, 0
    bound = min(MAX_LEADS_WORK, budget.left)
    try:
        while pending:
            part = pending.pop()
            work += 1
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    return _OUTSIDE
                parts.pop()  # ``parts`` holds no symlink: ".." of it is its parent
                continue
            parts.append(part)
            if missing:
                continue
            path = "/".join(parts)
            link: str | None = text if path == own else None
            if link is None:
                work += len(parts)
                if work > bound:
                    return _LOOP
                try:
                    info = root.lstat(path)
                except (FileNotFoundError, NotADirectoryError):
                    missing = True
                    continue
                if st.S_ISLNK(info.st_mode):
                    link = root.readlink(path)
                elif not st.S_ISDIR(info.st_mode):
                    missing = True  # "file/..": nothing the kernel resolves; judged as written
            if link is not None:
                hops += 1
                if hops > MAX_SYMLINKS:
                    return _LOOP
                if link.startswith("/"):
                    return _OUTSIDE
                parts.pop()
                pending.extend(reversed(link.split("/")))
        return "/".join(parts) or "."
    finally:
        budget.left -= work


#: Directories a file member was written in, held open for the members
#: after it in the same directory (at most this many, the oldest let go first).
HELD_DIRS = 256


class _HeldDir:
    """A directory the extraction resolved for one file member and keeps
    open for the next ones spelled in it (``_Extractor.held``): its fd, its
    canonical path, and the members written in it since (name, landed path),
    reported landed only once it is shown beneath the root after them."""

    __slots__ = ("fd", "path", "written")

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path
        self.written: list[tuple[str, str]] = []


def _spelled_parent(name: str) -> str | None:
    """The directory part of a member's name made of plain names only
    (``a/b`` of ``a/b/f``), the key of a held directory; ``None`` for a
    name at the top or any other spelling (``.``, ``..``, ``//``, a
    trailing ``/``: they are resolved each time)."""
    spelled, _, last = name.rpartition("/")
    if not spelled or not last or "\x00" in name or last in (".", ".."):
        return None
    for part in spelled.split("/"):
        if part in ("", ".", ".."):
            return None
    return spelled


class _Extractor:
    def __init__(self, root: RootAPI, limits: ExtractLimits, cancel: Cancellable | None,
                 archive_size: int | None) -> None:
        self.root = root
        self.backend = root.backend
        self.result = Extraction()
        self.limits = limits
        self.cancel = cancel
        self.archive_size = archive_size
        self.dirs: list[tuple[str, float]] = []  # (name, mtime), set at the end
        self.made: set[tuple[int, int]] = set()  # (st_dev, st_ino) of the files made here
        self.links: dict[str, str] = {}  # canonical path of each symlink made -> member name
        self.budget = _Budget()  # the work judging symlinks may still take
        # spelled parent -> the directory it resolved to, held (make_file)
        self.held: dict[str, _HeldDir] = {}

    # -- bounds ----------------------------------------------------------------------
    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.cancelled:
            raise _Stop(ExtractStop.CANCELLED)

    def count(self, size: int) -> None:
        """Count ``size`` more bytes written; stop past a limit."""
        written = self.result.written + size
        self.result.written = written
        limits = self.limits
        if limits.max_bytes is not None and written > limits.max_bytes:
            raise _Stop(ExtractStop.BYTES)
        if limits.max_ratio is not None and self.archive_size is not None \
                and written > RATIO_FLOOR \
                and written > limits.max_ratio * max(self.archive_size, 1):
            raise _Stop(ExtractStop.RATIO)

    def check_read_to(self, read_to: int) -> None:
        """Stop on the ratio before the archive's stream is inflated to
        ``read_to`` bytes past it: data passed over (a refused or filtered
        tar member's) is inflated as much as data written."""
        limits = self.limits
        if limits.max_ratio is not None and self.archive_size is not None \
                and read_to > RATIO_FLOOR \
                and read_to > limits.max_ratio * max(self.archive_size, 1):
            raise _Stop(ExtractStop.RATIO)

    def copy_data(self, src: _Data, fd: int, size: int | None) -> None:
        """Copy ``src`` into ``fd``, looking at the cancel token before each
        read; ``size``: where the data ends (no read is made to find it)."""
        left = size
        while left is None or left > 0:
            self.check_cancel()
            chunk = src.read(CHUNK if left is None else min(CHUNK, left))
            if not chunk:
                return
            self.count(len(chunk))
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
            if left is not None:
                left -= len(chunk)

    # -- members ---------------------------------------------------------------------
    def member(self, member: Member) -> Refused | None:
        try:
            if not member.name:
                raise _Refusal(ExtractReason.INVALID_NAME, "a member has an empty name")
            if member.kind == "special":
                raise _Refusal(ExtractReason.SPECIAL,
                               "devices, FIFOs and sockets are not extracted")
            if member.overlap:
                raise _Refusal(ExtractReason.OVERLAP, "a zip entry whose data overlaps another "
                               "entry's (CVE-2024-0450)")
            path = getattr(self, f"make_{member.kind}")(member)
        except _Refusal as refusal:
            return Refused(member.name, refusal.reason, refusal.message, refusal.error)
        except OSError as exc:
            reason = _classify(exc)
            if reason is None:
                raise
            return Refused(member.name, reason, str(exc), exc)
        self.result.landed.append(Landed(member.name, path, cast(_Kind, member.kind)))
        return None

    def make_dir(self, member: Member) -> str:
        target = self.root.target(member.name, create_parents=True)
        try:
            target.make_parents()
            if target.name is not None:  # not ".", "a/..": a directory that is there
                self.dir_at(target.dir_fd, target.name, member.name, target.path)
            path = target.path
        finally:
            target.close()
        if member.mtime is not None:
            self.dirs.append((path, member.mtime))
        return path

    def dir_at(self, dir_fd: int, name: str, text: str, path: str) -> None:
        """A directory at ``name``: made, or kept; a symlink there replaced."""
        backend = self.backend
        try:
            current: os.stat_result | None = backend.lstat_at(dir_fd, name)
        except FileNotFoundError:
            current = None
        if current is not None and st.S_ISLNK(current.st_mode):
            backend.unlink_at(dir_fd, name)  # replaced, never followed
            self.let_go_all()  # a spelled parent may have led through that link
            current = None
        if current is None:
            try:
                backend.mkdir_at(dir_fd, name, 0o777)
                return
            except FileExistsError:
                current = backend.lstat_at(dir_fd, name)
        if not st.S_ISDIR(current.st_mode):
            raise contained_error(errno.EEXIST, text, path)

    def make_file(self, member: Member) -> str:
        assert member.open is not None
        mode = None if member.mode is None else _data_mode(member.mode)
        spelled = _spelled_parent(member.name)
        held = None if spelled is None else self.held.get(spelled)
        if held is not None:
            return self.file_in_held(member, held, mode)
        with _Data(member.open) as src, open_parent(self.root, member.name, errno.EISDIR,
                                                    create_parents=True) as parent:
            current = parent.target.lstat()
            # a directory or special file there is refused, a symlink replaced
            parent.target.write_bytes(self.filler(src, member), mode=mode, fsync=False)
            if current is not None and st.S_ISLNK(current.st_mode):
                self.let_go_all()  # a spelled parent may have led through that link
            elif spelled is not None and parent.target.parent != ".":
                self.hold(spelled, parent)
            return parent.path

    def filler(self, src: _Data, member: Member) -> Callable[[int], None]:
        """What writes ``member``'s data into the new file's fd."""
        def fill(fd: int) -> None:
            self.made_here(fd)
            if member.sparse is None:
                self.copy_data(src, fd, member.size if member.sized else None)
            else:
                self.write_sparse(src, fd, member.sparse, member.size)
            if member.mtime is not None:
                os.utime(fd, (member.mtime, member.mtime))
        return fill

    # -- held directories ------------------------------------------------------------
    # A file member's parent, resolved (and shown beneath the root) for it,
    # stays open for the members spelled in the same directory after it:
    # they are written by name in that fd, unchecked one by one, and the
    # directory is shown beneath the root once after the last of them (when
    # it is let go: the cache full, a symlink the extraction replaced, the
    # archive's end).  Not beneath then: every member written in it since it
    # was held is reported refused (moved), not landed.  As a check after
    # each act, that proves the directory beneath at an instant after each
    # write, which is all a check after one act proves (it may leave the
    # next moment): a file written while the directory was out and that is
    # beneath again is beneath; one that is not is never reported landed.
    # Nothing is read from a held directory into the root (hard links and
    # their copies resolve each time).  Spellings are cached, so a symlink
    # this extraction removes or replaces lets every held directory go
    # (a spelled parent may lead through it); another program's change
    # meanwhile leaves members written in the directory as it was resolved,
    # as a Target's parent renamed is still acted on.
    def hold(self, spelled: str, parent: Parent) -> None:
        """Keep ``parent``'s directory open for the members spelled in
        ``spelled`` after this one."""
        held = self.held
        if len(held) >= HELD_DIRS:
            self.let_go(held.pop(next(iter(held))))
        try:
            fd = self.backend.open_at(parent.fd, ".", self.backend.dir_flags)
        except OSError:
            return  # (out of descriptors...): the members after it resolve each time
        held[spelled] = _HeldDir(fd, parent.target.parent)

    def file_in_held(self, member: Member, held: _HeldDir, mode: int | None) -> str:
        """Write a file member in a held directory (as ``Target.write_bytes``)."""
        assert member.open is not None
        name = member.name.rpartition("/")[2]
        path = f"{held.path}/{name}"
        backend = self.backend
        with _Data(member.open) as src:
            try:
                try:
                    current: os.stat_result | None = backend.lstat_at(held.fd, name)
                except FileNotFoundError:
                    current = None
                write_checks(current, exclusive=False, text=member.name, where=path)
                replace_in(backend, held.fd, name, self.filler(src, member), current=current,
                           mode=mode, fsync=False, exclusive=False)
            except PathError:
                raise
            except OSError as exc:
                raise contained_error(exc.errno, member.name, path) from None
        held.written.append((member.name, path))
        if current is not None and st.S_ISLNK(current.st_mode):
            self.let_go_all()  # a spelled parent may have led through that link
        return path

    def let_go(self, held: _HeldDir) -> None:
        """Close a held directory, shown beneath the root first if anything
        was written in it (else its members are refused)."""
        try:
            if held.written:
                try:
                    beneath = self.root._dir_beneath(held.fd, held.path)
                except OSError:
                    beneath = False  # a look refused: not shown beneath
                if not beneath:
                    self.moved_out(held)
        finally:
            self.backend.close(held.fd)

    def let_go_all(self) -> None:
        """Let every held directory go (:meth:`let_go`), all closed even if one raises."""
        held, self.held = self.held, {}
        failed: BaseException | None = None
        for one in held.values():
            try:
                self.let_go(one)
            except BaseException as exc:
                failed = exc
        if failed is not None:
            raise failed

    def moved_out(self, held: _HeldDir) -> None:
        """The members written in ``held`` since it was held, reported
        refused: it left the root after them."""
        written = set(held.written)
        self.result.landed = [one for one in self.result.landed
                              if not (one.kind == "file" and (one.name, one.path) in written)]
        for name, path in held.written:
            error = EscapeError("the directory written in is no longer inside the root", name,
                                component=held.path, reason="moved")
            self.result.refused.append(Refused(
                name, ExtractReason.OUTSIDE, f"{path}: the directory this file was written in "
                "left the root while the archive was extracted; left where it went", error))

    def write_sparse(self, src: _Data, fd: int, blocks: tuple[tuple[int, int], ...],
                     size: int) -> None:
        """Write a sparse member's stored ``blocks`` at their offsets in
        ``fd`` and give it its ``size``: the holes between stay holes.  A map
        whose blocks overlap or pass the size is refused: it describes no file."""
        ends = [0] + [start + length for start, length in blocks]
        if any(start < end for (start, _), end in zip(blocks, ends, strict=False)) \
                or ends[-1] > size:
            raise _Refusal(ExtractReason.UNREADABLE, "a sparse member whose map of blocks "
                           "overlaps or passes its size")
        if size > _MAX_FILE:
            raise _Refusal(ExtractReason.UNREADABLE, "a sparse member larger than a file can be")
        try:
            for start, length in blocks:
                at, end = start, start + length
                while at < end:
                    self.check_cancel()
                    chunk = src.read(min(CHUNK, end - at))
                    if not chunk:
                        raise _Refusal(ExtractReason.UNREADABLE,
                                       "a sparse member's data ends early")
                    self.count(len(chunk))
                    view = memoryview(chunk)
                    while view:
                        written = os.pwrite(fd, view, at)
                        view, at = view[written:], at + written
            os.ftruncate(fd, size)
        except OSError as exc:  # the archive's offsets, past this filesystem's largest file
            if exc.errno != errno.EFBIG:
                raise
            raise _Refusal(ExtractReason.UNREADABLE, "a sparse member larger than a file on "
                           "this filesystem can be", exc) from None

    def made_here(self, fd: int) -> None:
        """Note the file open as ``fd`` as one this extraction made."""
        info = os.fstat(fd)
        self.made.add((info.st_dev, info.st_ino))

    def in_the_way(self, parent: Parent) -> os.stat_result | None:
        """What is at the name now (``None``: nothing); a directory there is
        a conflict (it is never replaced)."""
        current = _lstat_or_none(self.backend, parent)
        if current is not None and st.S_ISDIR(current.st_mode):
            raise contained_error(errno.EISDIR, parent.text, parent.path)
        return current

    def make_symlink(self, member: Member) -> str:
        target = member.linkname if member.open is None else self.link_target(member.open)
        if not target or "\x00" in target:
            raise _Refusal(ExtractReason.INVALID_NAME, "a symlink with an empty or invalid target")
        if target.startswith("/"):
            raise _Refusal(ExtractReason.LINK_ABSOLUTE, "a symlink to an absolute path")
        # as the data filter: the text as written must lead inside, and it is
        # stored normalized ("x/.." never stays in it, so a later member
        # replacing "x" cannot change where the link leads through it)
        normalized = posixpath.normpath(target)
        with open_parent(self.root, member.name, errno.EEXIST, create_parents=True) as parent:
            replaced = self.in_the_way(parent)
            where = parent.target.parent
            self.check_link(where, target, parent.name)
            if normalized != target:
                self.check_link(where, normalized, parent.name)
            target = normalized
            tmp = temp_name(parent.name)
            self.backend.symlink_at(target, parent.fd, tmp)
            self.into_place(parent, tmp)
            self.links[parent.path] = member.name
            if replaced is not None and st.S_ISLNK(replaced.st_mode):
                self.let_go_all()  # a spelled parent may have led through that link
            return parent.path

    def link_target(self, open_data: Callable[[], Readable]) -> str:
        """A zip symlink entry's target, read up to MAX_LINK_TARGET bytes (an
        entry inflating to more is refused, the rest never read)."""
        with _Data(open_data) as src:
            raw = src.read(MAX_LINK_TARGET + 1)
        if len(raw) > MAX_LINK_TARGET:
            raise _Refusal(ExtractReason.INVALID_NAME,
                           f"a symlink whose target is longer than {MAX_LINK_TARGET} bytes")
        return raw.decode("utf-8", "surrogateescape")

    def into_place(self, parent: Parent, tmp: str) -> None:
        """Rename the entry made as ``tmp`` over ``parent.name`` (never over a
        directory); on any failure ``tmp`` is removed."""
        try:
            self.in_the_way(parent)
            self.backend.rename_at(parent.fd, tmp, parent.fd, parent.name)
        except BaseException:
            self.backend.unlink_at(parent.fd, tmp)
            raise

    def check_link(self, where: str, text: str, name: str) -> None:
        """Refuse a symlink ``name`` with ``text`` in the directory ``where``
        unless it leads inside (module docstring)."""
        leads = _leads(self.root, where, text, self.budget, name)
        if leads == _OUTSIDE:
            raise _Refusal(ExtractReason.LINK_OUTSIDE, "a symlink leading outside")
        if leads == _LOOP:
            raise _Refusal(ExtractReason.LOOP, f"a symlink through more than {MAX_SYMLINKS} "
                           f"symlinks (a loop), or more than {MAX_LEADS_WORK} steps to judge "
                           f"(or past the archive's {MAX_EXTRACT_LEADS_WORK} in all)")

    def make_hardlink(self, member: Member) -> str:
        target = member.linkname
        if target.startswith("/"):
            raise _Refusal(ExtractReason.LINK_ABSOLUTE, "a hard link to an absolute path")
        try:
            info = self.root.stat(target)  # a symlink: its file, as CPython 3.14
        except EscapeError as exc:
            raise _Refusal(ExtractReason.LINK_OUTSIDE, "a hard link to a file outside",
                           exc) from None
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise _Refusal(ExtractReason.LINK_MISSING, "a hard link to nothing", exc) from None
        if st.S_ISDIR(info.st_mode):
            raise _Refusal(ExtractReason.LINK_DIRECTORY, "a hard link to a directory")
        with open_parent(self.root, target, errno.EPERM, follow_final=True) as src, \
                open_parent(self.root, member.name, errno.EEXIST, create_parents=True) as dst:
            current = self.in_the_way(dst)
            linked = self.backend.lstat_at(src.fd, src.name)
            if st.S_ISLNK(linked.st_mode) or st.S_ISDIR(linked.st_mode):
                # swapped since it was resolved: nothing is linked but a file
                raise contained_error(errno.EAGAIN, dst.text, dst.path)
            if current is None or (current.st_dev, current.st_ino) != (linked.st_dev,
                                                                        linked.st_ino):
                self.link_into(src, dst)
                if current is not None and st.S_ISLNK(current.st_mode):
                    self.let_go_all()  # a spelled parent may have led through that link
            path = dst.path
        if st.S_ISREG(info.st_mode):
            self.date_link(member, path)
        return path

    def date_link(self, member: Member, path: str) -> None:
        """As tarfile, give the member's (filtered) mode and mtime to the file
        it names, on a pinned fd, if this extraction made that file: a file
        that was in the tree may be a second name of an inode outside."""
        def made(info: os.stat_result) -> bool:
            return st.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) in self.made

        if not made(self.root.lstat(path)):
            return  # not opened: a file that was in the tree may not be readable
        fd = self.root.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if not made(os.fstat(fd)):
                return  # swapped since
            if member.mode is not None:
                os.fchmod(fd, _data_mode(member.mode))
            if member.mtime is not None:
                os.utime(fd, (member.mtime, member.mtime))
        finally:
            self.backend.close(fd)

    def link_into(self, src: Parent, dst: Parent) -> None:
        """Hard-link ``src`` at ``dst`` (under a temporary name, renamed into
        place); a copy where the filesystem cannot link."""
        tmp = temp_name(dst.name)
        try:
            self.backend.link_at(src.fd, src.name, dst.fd, tmp)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise
            self.copy(src, dst)  # the filesystem cannot link: copy, as tarfile does
            return
        self.into_place(dst, tmp)

    def copy(self, src: Parent, dst: Parent) -> None:
        fd = self.backend.open_at(src.fd, src.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)

        def fill(out: int) -> None:
            self.made_here(out)
            while chunk := self.backend.read(fd, CHUNK):
                self.check_cancel()
                self.count(len(chunk))
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]

        try:
            if not st.S_ISREG(os.fstat(fd).st_mode):
                raise contained_error(errno.EAGAIN, dst.text, dst.path)
            dst.target.write_bytes(fill, fsync=False)
        finally:
            self.backend.close(fd)

    # -- the finished tree -----------------------------------------------------------------
    def recheck_links(self) -> None:
        """Check every symlink this extraction made that is still there,
        now that every member is in: one a later member turned outward (or
        into a loop) is removed and its member refused.  Removing one can
        only make another dangle, which is judged again: repeat until none."""
        removed = True
        while removed:
            removed = False
            for path, name in list(self.links.items()):
                where, _, last = path.rpartition("/")
                try:
                    info = self.root.lstat(path)
                    if not st.S_ISLNK(info.st_mode):
                        del self.links[path]  # replaced by a later member
                        continue
                    leads = _leads(self.root, where or ".", self.root.readlink(path),
                                   self.budget)
                except FileNotFoundError:
                    del self.links[path]
                    continue
                except OSError as exc:
                    if _classify(exc) is None:
                        raise  # an error of the environment
                    self.out_of_reach(path, name, last)
                    continue
                if leads not in (_OUTSIDE, _LOOP):
                    continue
                self.root.remove(path)
                del self.links[path]
                removed = True
                self.result.landed = [one for one in self.result.landed
                                      if not (one.path == path and one.kind == "symlink")]
                self.result.refused.append(Refused(
                    name, ExtractReason.LINK_OUTSIDE if leads == _OUTSIDE else ExtractReason.LOOP,
                    f"{last}: once later members were extracted, this symlink led "
                    f"{'outside' if leads == _OUTSIDE else 'into a loop'}; removed"))

    def out_of_reach(self, path: str, name: str, last: str) -> None:
        """The symlink made at ``path`` can no longer be reached there (another
        program moved or replaced a directory on the way): it cannot be
        checked again, so it is reported refused, not landed."""
        del self.links[path]
        self.result.landed = [one for one in self.result.landed
                              if not (one.path == path and one.kind == "symlink")]
        self.result.refused.append(Refused(
            name, ExtractReason.CONFLICT, f"{last}: a directory on the way to this symlink "
            "was moved or replaced while the archive was extracted, so it could not be "
            "checked once later members were in; left where it went"))

    def finish(self) -> None:
        """Directory mtimes, deepest (latest) first: making their content
        changed them."""
        for name, mtime in reversed(self.dirs):
            try:
                utime(self.root, name, (mtime, mtime))
            except OSError:
                pass  # gone since (a concurrent change): nothing to date


def _lstat_or_none(backend: Backend, parent: Parent) -> os.stat_result | None:
    try:
        return backend.lstat_at(parent.fd, parent.name)
    except FileNotFoundError:
        return None


def _host_path(root: RootAPI) -> str:
    path = getattr(root, "path", "")
    return path if isinstance(path, str) else ""


def extract(root: RootAPI, archive: Archive, *, filter: Literal["data"] | FilterFunction = "data",
            members: Selection | None = None, limits: ExtractLimits | None = None,
            progress: ProgressCallback | None = None, cancel: Cancellable | None = None,
            stop_on_refusal: bool = False) -> Extraction:
    """Extract ``archive`` beneath ``root`` (module docstring); return what
    landed where, what was refused and why, and whether it stopped early.

    Raises ``TypeError`` for something that is no archive (a text or
    unseekable file object included) or a ``filter`` that is neither
    ``"data"`` nor callable, ``ValueError`` for another filter name,
    ``tarfile.ReadError`` / ``zipfile.BadZipFile`` for a damaged archive
    (one whose members cannot be listed or found), and ``OSError`` for
    errors of the environment (``ENOSPC``, ``EIO``, ``EACCES``...), with
    the extraction then incomplete.
    """
    chosen: FilterFunction | None
    if isinstance(filter, str):
        if filter != "data":
            raise ValueError(f"filter must be 'data' or a callable, not {filter!r}")
        chosen = None
    elif callable(filter):
        chosen = filter
    else:
        raise TypeError(f"filter must be 'data' or a callable, not {type(filter).__name__}")
    limits = ExtractLimits() if limits is None else limits
    if not isinstance(limits, ExtractLimits):
        raise TypeError(f"limits must be ExtractLimits, not {type(limits).__name__}")
    with open_source(archive, members, chosen, _host_path(root)) as source:
        extractor = _Extractor(root, limits, cancel, source.size)
        result = extractor.result
        try:
            if limits.max_members is not None and source.total is not None \
                    and source.total > limits.max_members:
                raise _Stop(ExtractStop.MEMBERS)
            _run(extractor, source, progress, stop_on_refusal)
        except _Stop as stop:
            result.stop = stop.stop
        finally:
            try:
                extractor.let_go_all()
            finally:
                extractor.recheck_links()
                extractor.finish()
    return result


def _run(extractor: _Extractor, source: Source, progress: ProgressCallback | None,
         stop_on_refusal: bool) -> None:
    result = extractor.result
    max_members = extractor.limits.max_members
    cancel = extractor.cancel
    total = source.total
    for done, member in enumerate(source.members, 1):
        if cancel is not None and cancel.cancelled:
            raise _Stop(ExtractStop.CANCELLED)
        if max_members is not None and done > max_members:
            raise _Stop(ExtractStop.MEMBERS)
        if isinstance(member, Filtered):
            result.skipped.append(member.name)
        else:
            try:
                refused = extractor.member(member)
            except _Stop as stop:
                reason = ExtractReason.CANCELLED if stop.stop is ExtractStop.CANCELLED \
                    else ExtractReason.LIMIT
                result.refused.append(Refused(member.name, reason, f"extraction stopped while "
                                              f"this member was written ({stop.stop.value}); "
                                              "nothing of it is left"))
                raise
            if refused is not None:
                result.refused.append(refused)
                if stop_on_refusal:
                    result.stop = ExtractStop.REFUSAL
                    return
        if progress is not None:
            progress(ExtractProgress(done, total, member.name))
        extractor.check_read_to(source.read_to())
