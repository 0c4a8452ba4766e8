"""What operations do with the final component once :mod:`._resolve` found it.

Every function here takes a :class:`~._resolve.Walk` and the
:class:`~._resolve.Resolved` it answered, acts on the final name in the open
parent (never by a path), and asks the walk to follow a final symlink when the
operation follows one.  A final component is opened
``O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|O_CLOEXEC`` and ``fstat``-ed before use (a
FIFO or device is refused, never waited on), created with ``O_CREAT|
O_NOFOLLOW`` in the resolved parent, or acted on by name (``unlinkat``,
``mkdirat``, ``renameat``), which never follows it.

How an operation on a final *name* answers the spellings that have none
(``.``, ``a/..``) or that end in ``/`` is the kernel's, described per
operation by a :class:`NameOp`.
"""

from __future__ import annotations

import enum
import errno
import os
import stat as st
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ._backend import RENAME_EXCHANGE, RENAME_NOREPLACE
from ._errors import ContainedError, EscapeError, SpecialFileError, contained_error
from ._paths import ParsedPath
from ._resolve import Anchor, Resolved, Walk, mapped, still_beneath

if TYPE_CHECKING:
    from ._backend import Backend

T = TypeVar("T")

O_PATH = getattr(os, "O_PATH", 0)
# opens of one name whose result was not beneath the root (moved out, or
# replaced meanwhile) before the open is refused: bounded, as every loop
MOVED_RETRIES = 8
SAFE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
CREATE_MASK = 0o777
SPECIAL_KINDS = {st.S_IFIFO: "fifo", st.S_IFSOCK: "socket", st.S_IFCHR: "char_device",
                 st.S_IFBLK: "block_device"}
_LINKISH = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)  # what O_NOFOLLOW says of a link


class Slash(enum.Enum):
    """What an operation does with ``name/`` (the kernel's rule for it)."""

    CREATES = "creates"  # mkdir: makes the directory
    NEEDS_DIR = "needs_dir"  # remove, rmdir: a non-directory there is ENOTDIR
    EXISTS = "exists"  # symlink: anything there is EEXIST
    IS_DIR = "is_dir"  # O_CREAT: EISDIR, once a link there was followed (escapes show)
    FOLLOWS = "follows"  # readlink: names what a link there points to
    RENAME = "rename"  # rename checks both ends itself (rename_names)


@dataclass(frozen=True)
class NameOp:
    """How an operation that needs a final name answers a path without one."""

    dot: int  # errno when the path ends at a directory (".", "d/.", a link to one)
    dotdot: int  # errno when it ends in ".."
    slash: Slash


MKDIR = NameOp(errno.EEXIST, errno.EEXIST, Slash.CREATES)
SYMLINK = NameOp(errno.EEXIST, errno.EEXIST, Slash.EXISTS)
REMOVE = NameOp(errno.EISDIR, errno.EISDIR, Slash.NEEDS_DIR)
RMDIR = NameOp(errno.EINVAL, errno.ENOTEMPTY, Slash.NEEDS_DIR)
READLINK = NameOp(errno.EINVAL, errno.EINVAL, Slash.FOLLOWS)
RENAME_END = NameOp(errno.EBUSY, errno.EBUSY, Slash.RENAME)
RENAME_DST_NOREPLACE = NameOp(errno.EEXIST, errno.EEXIST, Slash.RENAME)
WRITE = NameOp(errno.EISDIR, errno.EISDIR, Slash.IS_DIR)
WRITE_EXCL = NameOp(errno.EEXIST, errno.EEXIST, Slash.IS_DIR)


def name_of(walk: Walk, at: Resolved, op: NameOp) -> str:
    """``at``'s final name for ``op``, or the kernel's error for a path
    that has none or a ``name/`` the operation refuses."""
    if at.name is None:
        raise contained_error(op.dotdot if walk.ends_dotdot else op.dot, walk.text, at.path)
    if at.must_be_dir:
        if op.slash is Slash.IS_DIR and walk.is_link(at):
            # "link/" names what the link points to: follow it, so that an
            # outward link is an escape; O_CREAT with a "/" is EISDIR anyway
            try:
                follow_links(walk, at)
            except ContainedError:  # an escape, a link in strict mode, ...
                raise
            except OSError:  # dangling, a loop: the kernel's EISDIR
                pass
        elif op.slash is Slash.FOLLOWS:
            stat_final(walk, at, follow=True)  # what it names must be there
            raise contained_error(op.dot, walk.text, at.path)
        try:
            check_slash(walk.backend, at.dir_fd, at.name, op, walk.text, at.path)
        except ContainedError:
            raise
        except OSError as exc:
            walk.fail(exc, at.name)
    return at.name


def check_slash(backend: Backend, dir_fd: int, name: str, op: NameOp, text: str,
                where: str) -> None:
    """The kernel's answer to ``name/`` for ``op``, the name not followed."""
    if op.slash is Slash.IS_DIR:
        raise contained_error(errno.EISDIR, text, where)
    if op.slash in (Slash.NEEDS_DIR, Slash.EXISTS):
        info = backend.lstat_at(dir_fd, name)
        if op.slash is Slash.EXISTS:
            raise contained_error(errno.EEXIST, text, where)
        if not st.S_ISDIR(info.st_mode):
            raise contained_error(errno.ENOTDIR, text, where)


def follow_links(walk: Walk, at: Resolved) -> Resolved:
    """Follow ``at``'s final name while it is a symlink (beneath the root)."""
    while at.name is not None and walk.is_link(at):
        at = walk.follow(at)
    return at


# -- opening -------------------------------------------------------------------------

def open_final(walk: Walk, at: Resolved, flags: int, mode: int) -> tuple[int, Resolved]:
    """Open ``at``'s final component as ``open(2)`` would (``flags`` already
    carry ``O_CLOEXEC``); return the fd and where it is."""
    backend = walk.backend
    creating = bool(flags & os.O_CREAT)
    moved = relooked = 0
    while True:
        # the last result was not beneath the root (still_beneath)
        if moved and (moved > MOVED_RETRIES or (creating and flags & os.O_EXCL)):
            raise EscapeError("what was opened is no longer inside the root", walk.text,
                                  component=at.path, reason="moved", passed=walk.passed)
        if at.name is None:
            # "d/.", "a/..": the directory itself; O_CREAT cannot make one
            if creating:
                raise contained_error(errno.EEXIST if flags & os.O_EXCL else errno.EISDIR,
                                      walk.text, at.path)
            try:
                fd = backend.open_at(at.dir_fd, ".", flags | SAFE)
            except OSError as exc:  # the host's permissions may refuse it: named by its path
                raise mapped(walk.anchor, walk.fds[0], exc, walk.text, at.path) from None
            fd = checked_fd(walk, fd, flags, at.path, must_be_dir=False)
            if walk.still_beneath(fd, at):
                return fd, at
            backend.close(fd)
            moved += 1
            continue
        if at.must_be_dir and creating:
            name_of(walk, at, WRITE_EXCL if flags & os.O_EXCL else WRITE)
        # a trailing "/" follows a final link even with O_NOFOLLOW (the kernel's rule)
        nofollow = bool(flags & os.O_NOFOLLOW) and not at.must_be_dir
        try:
            fd = backend.open_at(at.dir_fd, at.name, flags | SAFE, mode)
        except OSError as exc:
            if exc.errno in _LINKISH and not nofollow:
                if walk.is_link(at):
                    at = walk.follow(at)
                    continue
                if exc.errno != errno.ENOTDIR and relooked < MOVED_RETRIES:
                    # a link when opened, none now (removed or replaced since):
                    # what the name is now is opened, never called a loop
                    relooked += 1
                    continue
            if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
                refuse_special(backend, at.dir_fd, at.name or ".", walk.text, at.path)
            walk.fail(exc, at.name)
        if O_PATH and flags & O_PATH and _is_link_fd(backend, fd):
            # O_PATH|O_NOFOLLOW opens a symlink itself instead of failing
            if nofollow:
                if walk.still_beneath(fd, at):
                    return fd, at
                backend.close(fd)
                moved += 1
                continue
            backend.close(fd)
            at = walk.follow(at)
            continue
        fd = checked_fd(walk, fd, flags, at.path, must_be_dir=at.must_be_dir)
        if walk.still_beneath(fd, at):
            return fd, at
        # moved out (an attack) or replaced (a writer's atomic replace): the
        # name in the same directory is opened again, a few times, and only
        # a result shown beneath is handed out
        backend.close(fd)
        moved += 1


def _is_link_fd(backend: Backend, fd: int) -> bool:
    try:
        return st.S_ISLNK(backend.fstat(fd).st_mode)
    except BaseException:
        backend.close(fd)
        raise


def checked_fd(walk: Walk, fd: int, flags: int, where: str, *, must_be_dir: bool) -> int:
    """``fstat`` a freshly opened fd and refuse what must not be used."""
    try:
        checked_info(walk.backend, fd, flags, walk.text, where, must_be_dir=must_be_dir)
        return fd
    except OSError as exc:  # a removed directory (the root itself?), a look refused: named
        raise mapped(walk.anchor, walk.fds[0], exc, walk.text, where) from None


def checked_info(backend: Backend, fd: int, flags: int, text: str, where: str, *,
                 must_be_dir: bool) -> os.stat_result:
    """``fstat`` the new ``fd`` and give it back: ``fd`` closed, and an
    error raised, for a FIFO, socket or device (unless ``O_PATH``), a
    non-directory where one must be, and a removed directory
    (``FileNotFoundError`` without a filename: only the root itself, or one
    removed while resolving, is reached that way; the caller tells them
    apart)."""
    try:
        info = backend.fstat(fd)
        kind = st.S_IFMT(info.st_mode)
        if kind == st.S_IFREG and not must_be_dir:  # the common case
            return info
        if kind == st.S_IFDIR and info.st_nlink == 0:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
        if must_be_dir and kind != st.S_IFDIR:  # "fifo/" is ENOTDIR, as in the kernel
            raise contained_error(errno.ENOTDIR, text, where)
        if kind in SPECIAL_KINDS and not (O_PATH and flags & O_PATH):
            raise SpecialFileError("not a regular file or directory", text,
                                   component=where, kind=SPECIAL_KINDS[kind])
    except BaseException:
        backend.close(fd)
        raise
    return info


def refuse_special(backend: Backend, dir_fd: int, name: str, text: str, where: str) -> None:
    """:class:`SpecialFileError` if ``name`` is a FIFO, socket or device."""
    try:
        kind = st.S_IFMT(backend.lstat_at(dir_fd, name).st_mode)
    except OSError:
        return
    if kind in SPECIAL_KINDS:
        raise SpecialFileError("not a regular file or directory", text, component=where,
                               kind=SPECIAL_KINDS[kind])


# -- looking -------------------------------------------------------------------------

def stat_final(walk: Walk, at: Resolved, *, follow: bool) -> os.stat_result:
    backend = walk.backend
    while True:
        if at.name is None:
            try:
                return backend.fstat(at.dir_fd)
            except OSError as exc:
                walk.fail(exc)
        try:
            info = backend.lstat_at(at.dir_fd, at.name)
        except OSError as exc:
            decided(walk, at, failed=True)
            walk.fail(exc, at.name)
        if follow and st.S_ISLNK(info.st_mode):
            at = walk.follow(at)
            continue
        decided(walk, at)
        if at.must_be_dir and not st.S_ISDIR(info.st_mode):
            raise contained_error(errno.ENOTDIR, walk.text, at.path)
        return info


def real_final(walk: Walk, at: Resolved, *, strict: bool) -> str:
    """The canonical path ``at`` leads to, final links followed; a missing
    final name is kept as it is unless ``strict``."""
    backend = walk.backend
    while at.name is not None:
        try:
            info = backend.lstat_at(at.dir_fd, at.name)
        except FileNotFoundError as exc:
            decided(walk, at, failed=True)
            if strict:
                walk.fail(exc, at.name)
            break
        except OSError as exc:
            decided(walk, at, failed=True)
            walk.fail(exc, at.name)
        if not st.S_ISLNK(info.st_mode):
            decided(walk, at)
            if at.must_be_dir and not st.S_ISDIR(info.st_mode):
                raise contained_error(errno.ENOTDIR, walk.text, at.path)
            break
        at = walk.follow(at)
    return at.path


# -- deciding on what was resolved ------------------------------------------------------
# A name looked at or acted on without opening it (fstatat, readlinkat,
# unlinkat, renameat...) is in a parent shown beneath the root, which may be
# moved out just before the look or the act and the name in it swapped for
# something that never was beneath.  A fact is answered only if the parent
# is beneath after the look (else the call resolves again); an act cannot
# be undone, so one in a parent the walk opened by name is refused after
# the act if the parent is not beneath then (THREATS row 35).

class Undecided(Exception):
    """A fact was looked up in a parent that was not beneath the root
    after the look: the call resolves its path again (:func:`answered`)."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


def parent_beneath(walk: Walk, at: Resolved) -> bool:
    """Whether ``at``'s parent is beneath the root now: the root's own fd
    is (no directory between them to move), any other is checked
    (:func:`._resolve.still_beneath`)."""
    fd, root_fd = at.dir_fd, walk.fds[0]
    if fd == root_fd or fd < 0:
        return True
    try:
        return still_beneath(walk.anchor, root_fd, fd, at.parent)
    except OSError as exc:  # a look refused: typed, at that directory
        raise mapped(walk.anchor, root_fd, exc, walk.text, at.parent) from None


def decided(walk: Walk, at: Resolved, *, failed: bool = False) -> None:
    """After a look at ``at``'s final name (its facts, or with ``failed``
    the error that says it is not there): :class:`Undecided` unless the
    parent is beneath the root still, so nothing learnt in a directory
    moved out is answered.  The look's own error in the fast parent
    (``openat2`` resolved it beneath just before) is not checked: it says
    only that a name is not there, as the whole-path ``openat2`` that stat,
    readlink and realpath of plain names try first had just said; what the
    fast parent answers is checked.  (``Walk.held_fd`` is the fast parent's
    fd while it is the walk's top.)"""
    if failed and at.dir_fd == walk.held_fd:
        return
    if not parent_beneath(walk, at):
        raise Undecided(at.parent)


def answered(anchor: Anchor, parsed: ParsedPath, look: Callable[[Walk, Resolved], T]) -> T:
    """``look(walk, walk.parent())`` for ``parsed``, resolved again while it
    is :class:`Undecided` (:data:`MOVED_RETRIES` times, then ``EscapeError``,
    reason ``moved``)."""
    attempt = 0
    while True:
        with Walk(anchor, parsed) as walk:
            try:
                return look(walk, walk.parent())
            except Undecided as moved:
                attempt += 1
                if attempt > MOVED_RETRIES:
                    raise EscapeError("a directory looked in is no longer inside the root",
                                      walk.text, component=moved.where, reason="moved",
                                      passed=walk.passed) from None


def acted(walk: Walk, at: Resolved) -> None:
    """After an act by name in ``at``'s parent (or its failure): refused,
    ``EscapeError`` (reason ``moved``), if the walk opened that parent by
    name and it is not beneath the root now.  The act may have happened
    outside; nothing can undo it soundly (an undo is one more act by name
    in a directory moved out), so the caller is told it was not done
    beneath.  The root's own fd needs no check, nor the fast parent, which
    ``openat2`` resolved beneath just before the act: a check after would
    only report, at about the act's own cost, on every act of the fast path."""
    if at.dir_fd == walk.held_fd or parent_beneath(walk, at):
        return
    raise EscapeError("the directory acted in was moved out of the root during the act",
                      walk.text, component=at.parent, reason="moved", passed=walk.passed)


def lstat_or_none(backend: Backend, dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return backend.lstat_at(dir_fd, name)
    except FileNotFoundError:
        return None


# -- renaming ------------------------------------------------------------------------

@dataclass(frozen=True)
class End:
    """One end of a rename: the resolved parent and name, and how to name it."""

    dir_fd: int
    name: str
    must_be_dir: bool
    text: str  # the caller's spelling (the error's filename)
    where: str  # canonical path (the error's component)


def rename_names(backend: Backend, src: End, dst: End, flags: int) -> None:
    """``renameat2`` of two resolved names, with the kernel's checks for a
    trailing ``/`` on either end made first (the names reach the kernel
    without it, so it cannot make them), in the kernel's order."""
    if src.must_be_dir or dst.must_be_dir:
        try:
            if backend.fstat(src.dir_fd).st_dev != backend.fstat(dst.dir_fd).st_dev:
                # the kernel refuses a rename between filesystems first
                raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
            sinfo = backend.lstat_at(src.dir_fd, src.name)
        except OSError as exc:
            raise contained_error(exc.errno, src.text, src.where) from None
        dinfo = lstat_or_none(backend, dst.dir_fd, dst.name)
        if flags & RENAME_NOREPLACE and dinfo is not None:
            raise contained_error(errno.EEXIST, dst.text, dst.where)
        if flags & RENAME_EXCHANGE:
            if dinfo is None:
                raise contained_error(errno.ENOENT, dst.text, dst.where)
            if dst.must_be_dir and not st.S_ISDIR(dinfo.st_mode):
                raise contained_error(errno.ENOTDIR, dst.text, dst.where)
        if not st.S_ISDIR(sinfo.st_mode):
            if src.must_be_dir:
                raise contained_error(errno.ENOTDIR, src.text, src.where)
            if dst.must_be_dir and not flags & RENAME_EXCHANGE:
                raise contained_error(errno.ENOTDIR, dst.text, dst.where)
    try:
        backend.rename_at(src.dir_fd, src.name, dst.dir_fd, dst.name, flags)
    except OSError as exc:
        # name the end that failed: the destination when it is in the way,
        # else the source
        if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR) and \
                lstat_or_none(backend, dst.dir_fd, dst.name) is not None:
            raise contained_error(exc.errno, dst.text, dst.where) from None
        raise contained_error(exc.errno, src.text, src.where) from None


# -- writing -------------------------------------------------------------------------

def write_checks(current: os.stat_result | None, *, exclusive: bool, text: str,
                 where: str) -> None:
    """Refuse to replace what an atomic write must not replace."""
    if current is None:
        return
    if exclusive:
        raise contained_error(errno.EEXIST, text, where)
    kind = st.S_IFMT(current.st_mode)
    if kind == st.S_IFDIR:
        raise contained_error(errno.EISDIR, text, where)
    if kind in SPECIAL_KINDS:
        raise SpecialFileError("not a regular file", text, component=where,
                               kind=SPECIAL_KINDS[kind])
