"""The resolver: the one place a path beneath a root fd becomes a location.

Theory of operation
-------------------
A path is parsed once (:func:`._paths.parse`), then resolved by a
:class:`Walk`: one component at a time from a stack of open directory fds,
``fds[0]`` being the root.  Each directory on the way is opened
``O_NOFOLLOW|O_DIRECTORY``; a symlink is read with ``readlinkat`` and its
target spliced in front of the pending components (an absolute target is an
escape; at most :data:`MAX_SYMLINKS` links a call); ``..`` pops the stack and
is never handed to the kernel, so a directory moved out from under the walk
cannot take it along.  The walk stops before the final component and answers
a :class:`Resolved`: the open parent fd, the final name (``None`` when the
path ends at a directory, as ``.``, ``a/..`` or ``d/.`` do), whether it must
be a directory, and the canonical root-relative components of the parent,
which is where resolution really went: in-root links and ``..`` resolved,
never re-derived from the spelling.  An operation acts on that name in that
fd; if the final name turns out to be a symlink it wants followed, it calls
:meth:`Walk.follow` and gets the next :class:`Resolved`.

Missing directories on the way are ``ENOENT``, unless the walk was asked to
create them (:class:`Create`): ``MAKE`` creates each (``mkdirat``, then an
``O_NOFOLLOW`` reopen, so a link planted in between is refused; in a
directory it has just made, the next name is made without being looked up
first, and an ``EEXIST`` there, a race, looks it up after all), ``PLAN``
creates nothing and continues through the would-be directories without
system calls until a ``..`` climbs back into a real one: a dry run is the
same walk as the act, so the two agree.  Names that come from a symlink's
target are resolved, never created (``os.makedirs`` does not create through a
dangling link either).  :attr:`Walk.created` lists what was (or would be)
created and :attr:`Walk.passed` the directories entered and left again (``x/..``
excursions) and the links followed on the way, so policy can refuse a path
*through* a place as well as one *to* it.

The fast path (:func:`openat2_retry`) is one ``openat2(RESOLVE_BENEATH|
RESOLVE_NO_MAGICLINKS)`` call; any failure re-runs the walk, which is secure
by itself and names the failing component.  The walk takes it too, for the
parent of a path whose directories are plain names (no ``.``, ``..``): one
``openat2`` with ``RESOLVE_NO_SYMLINKS`` opens the parent, so an operation
that creates or replaces a name costs the same at any depth.  Its canonical
components are then the spelling's; the directories between the root and
the parent are not held open (their stack entries are :data:`_UNOPENED`) and
are opened by name only if a ``..`` of a followed link climbs back into
them.  Any failure (a symlink on the way, a missing directory) runs the
walk from the root instead, which says why.  Where a caller needs the
canonical path of a fast-path result, the call adds ``RESOLVE_NO_SYMLINKS``:
then no link was followed, and since the kernel answers ``EAGAIN`` to a
``..`` under ``RESOLVE_BENEATH`` whenever a rename raced the lookup, the
canonical path is the spelling with ``..`` taken lexically
(:func:`spelled_path`).  That is the only lexical ``..`` in the package, and
it is sound only for that result.

The walk holds an fd per directory, so a rename cannot drag it out through
``..``, but it can carry it out: a directory the walk is in is renamed out of
the root, one below it swapped for an outside one, both put back.  So the
directory the walk hands out (the parent of a :class:`Resolved`), one it
makes a name in and one it names in an error are shown beneath the root
first (:func:`still_beneath`); one that is not makes the walk start again
from the root (:data:`MOVED_RETRIES` times, then ``EscapeError``, reason
``moved``).  The root's own fd and the fast parent (openat2 refused anything
not beneath) need no check, nor a walk whose caller checks what it opens
(``result_checked``: an open that creates and truncates nothing).  The
semantics are a capability's (cap-std, Go's ``os.Root``, libpathrs): a
directory shown beneath is the caller's even if moved out afterwards; no act
in and no fact about a directory that was never beneath.

A directory shown beneath may be moved out after it was shown, and a name in
it swapped for something that never was beneath.  So what an open of the
final name gives (:func:`._acts.open_final`, through
:meth:`Walk.still_beneath`) is checked whenever its parent is not the root's
own fd, the fast parent and a checked one included: a listing, a tree walk's
top and an open that falls back from the fast path never read a directory or
file that was never beneath.  A directory a :class:`Target` opens by its
name (``Target.open``, ``open_existing``, rmtree's top) is checked the same
way, so no listing, walk or rmtree starts in one.  Below the top, each
subdirectory ``Root.walk``/``fwalk`` and rmtree enter is shown beneath before
it is listed (:func:`open_dir_below`: with the fast path one ``openat2`` of
its canonical path from the root, which the kernel checks at no extra cost;
else the name opened in the parent's fd and checked).

Not checked one by one: the directories a walk passed through on the way
(that a ``x/..`` excursion found ``x``, a link's text read there); those
:meth:`Target.make_parents` reopens after making them, the search walk
(:mod:`._tree`) enters below its top and :meth:`Handle.open_directory`
opens; and in a parent shown beneath but not the root, what is done to or
learnt about the final name without opening it (``fstatat``,
``readlinkat``, ``unlinkat``, ``renameat``, ``fchmodat``, ``utimensat``:
stat, readlink, remove, rename, chmod, utime of that name) and a regular file
a :class:`Target` opens there (a check costs about as much as the open).

With the fast path off, ``Root.open`` and ``open_handle`` of plain names
(no ``..``, nothing created or truncated) first try the walk in one backend
call (:func:`walk_open`, :meth:`Backend.walk_open`: C in the native backend,
a lean loop in the os one): the same calls, each directory ``O_NOFOLLOW``
in the one before, and the same check of the result, which reads the
result's kernel name, which must be the root's as read once
(``Anchor.walk_root``) and then the path, and ``lstat`` s the root's name
(it must still be the root's own directory) where :func:`still_beneath`
reads two names.  Anything unusual (a link, a missing name, a special file,
a result not so shown) answers -1 and this walk runs, and decides.

The step budget (:data:`MAX_STEPS`, components visited in one call) is set so
that it can never bind before the kernel's own limits do (40 links, PATH_MAX
per path and per link text): the fast path and the walk refuse the same paths.
"""

from __future__ import annotations

import enum
import errno
import os
import stat as st
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, NoReturn

from . import _paths
from ._errors import (ContainedError, EscapeError, PathError, RootVanishedError, SymlinkError,
                      contained_error)
from ._linux import proc_fds
from ._paths import ParsedPath

if TYPE_CHECKING:
    from ._backend import Backend

__all__ = ["MAX_SYMLINKS", "MAX_STEPS", "Create", "Anchor", "Resolved", "Walk",
           "openat2_retry", "spelled_path", "mapped", "not_found", "close_quietly",
           "still_beneath", "open_dir_below", "walk_open"]

MAX_SYMLINKS = 40  # the kernel's MAXSYMLINKS; the 41st link is ELOOP
# Components one call may visit: a path and 40 link texts of PATH_MAX bytes
# each hold at most PATH_MAX // 2 components ("a/a/..."), plus a "." marker
# per text.  Any path the kernel resolves is within it.
MAX_STEPS = (MAX_SYMLINKS + 1) * (_paths.PATH_MAX // 2 + 2)
OPENAT2_MIN_RETRIES = 32
OPENAT2_MAX_RETRIES = 256
OPENAT2_DEADLINE = 0.05  # seconds; after the minimum retries
# walks of one path whose directory was not shown beneath the root (moved
# out, or replaced meanwhile) before the call is refused: bounded, as every loop
MOVED_RETRIES = 8

_VIRTUAL = -1  # the fd of a directory a dry run would create
_UNOPENED = -2  # a directory the fast parent went through without opening it
_is_opened = (0).__le__  # 0 <= fd: an fd the walk opened (not _VIRTUAL, not _UNOPENED)
_RESOLVE_NO_SYMLINKS = 0x04  # openat2's, the same in every backend
_FAST_PARENT_CLIMB = 3  # levels a creating walk looks up for its deepest existing directory
ST_NOSYMFOLLOW = 0x2000  # statvfs f_flag of a mount that follows no symlink (Linux 5.10)
_STICKY_OPEN = st.S_ISVTX | st.S_IWOTH  # a sticky world-writable directory


class Create(enum.Enum):
    """What the walk does with a missing directory on the way."""

    NEVER = "never"  # ENOENT, as the kernel
    PLAN = "plan"  # record it and go on as if it existed (a dry run)
    MAKE = "make"  # create it (mkdirat, then an O_NOFOLLOW reopen)


class Anchor:
    """The root capability every resolution of one :class:`Root` shares: the
    root's fd, backend and rules, and what is known about the directory.

    The fd is reference-counted, as Go's ``os.Root`` does: every call holds
    it (:meth:`acquire` / :meth:`release`) while it resolves, and
    :meth:`close` marks the root closed at once (later calls fail with
    ``EBADF``) but closes the fd only when the last call holding it is done,
    so its number is never reused under a call in flight.

    The count is a deque (``append``/``pop`` are atomic, and unlike a
    list's they allocate nothing as it grows from empty and shrinks back),
    and each side writes before it reads the other's flag (a call: count,
    then ``closed``; close: ``closed``, then the count): whichever comes
    second sees the first, so either the call backs out or the close leaves
    the fd to the last call.
    Closing the fd itself happens once, under a lock.
    """

    __slots__ = ("fd", "backend", "strict", "fast", "resolve", "vanished", "stats", "owned",
                 "users", "closed", "walking", "_lock", "walk_root")

    def __init__(self, fd: int, backend: Backend, *, strict: bool, fast: bool, resolve: int,
                 owned: bool = True) -> None:
        self.fd = fd
        self.backend = backend
        self.strict = strict  # follow no symlink at all
        self.fast = fast  # the openat2 fast path is in use
        self.resolve = resolve  # openat2 RESOLVE_* bits
        self.owned = owned  # close() closes fd (not for a borrowed one)
        self.vanished = False
        #: Fast-path counters: EAGAIN answers seen, and walks run after a failed fast path.
        self.stats = {"openat2_eagain": 0, "openat2_exhausted": 0, "walk_fallbacks": 0}
        self.users: deque[None] = deque()  # one entry per call holding the fd
        self.closed = False
        #: Directory fds a :meth:`Root.fwalk` of this root is yielding right
        #: now, with the ``(st_dev, st_ino)`` they had: the only ``dir_fd``
        #: values ``Root.open`` accepts (a stale or foreign fd is ``EBADF``).
        self.walking: dict[int, tuple[int, int]] = {}
        self._lock = threading.Lock()
        #: The root directory's kernel name, ``st_dev`` and ``st_ino``,
        #: learnt at the first :func:`walk_open`.  The identity stays true
        #: (an fd's file never changes); a name gone stale (the root renamed)
        #: only sends each check to :func:`still_beneath`'s two names.
        self.walk_root: tuple[bytes, int, int] | None = None

    def acquire(self, text: str | None) -> int:
        """The root fd, held until :meth:`release`; ``EBADF`` (naming
        ``text``) once closed, :class:`RootVanishedError` once vanished."""
        self.users.append(None)
        if self.closed:
            self.release()
            raise OSError(errno.EBADF, "the Root is closed", text)
        if self.vanished:
            self.release()
            raise RootVanishedError("the root directory no longer exists")
        return self.fd

    def release(self) -> None:
        users = self.users
        users.pop()
        if self.closed and not users:
            self.release_last()

    def close(self) -> None:
        """Refuse new calls; close the fd now or when the last call is out."""
        self.closed = True
        if not self.users:
            self.release_last()

    def release_last(self) -> None:
        """Close the fd (once) after :meth:`close`, when no call holds it."""
        with self._lock:
            fd, self.fd = self.fd, -1
        if fd < 0 or not self.owned:
            return
        if self.backend.fake_fs_safe:
            self.backend.close(fd)  # a fake fd: the fake's own close (it knows when it is gone)
        else:
            os.close(fd)  # opened by os.open (Root) or by a backend for a copy

    def root_gone(self, root_fd: int) -> bool:
        """Whether the root directory was removed (sticky once seen).  A
        failing ``fstat`` (``EIO``, ``ENOMEM``, a security module's
        ``EACCES``) is raised as that error at the root, typed: it fails
        the asking call closed, and the next call looks again."""
        try:
            gone = self.backend.fstat(root_fd).st_nlink == 0
        except OSError as exc:
            raise contained_error(exc.errno, ".", ".") from None
        if gone:
            self.vanished = True
        return gone


class Resolved(NamedTuple):
    """Where a walk stopped: the final component in its open parent."""

    dir_fd: int  # the open parent directory (-1: one a dry run would create)
    name: str | None  # the final name; None: the path ends at dir_fd itself
    must_be_dir: bool  # a trailing "/" (on the path or a followed link's text)
    parts: tuple[str, ...]  # canonical components of dir_fd, root-relative

    @property
    def parent(self) -> str:
        """Canonical root-relative path of ``dir_fd`` ("." for the root)."""
        return "/".join(self.parts) if self.parts else "."

    @property
    def path(self) -> str:
        """Canonical root-relative path of the final component."""
        if self.name is None:
            return self.parent
        return "/".join((*self.parts, self.name))

    @property
    def planned(self) -> bool:
        """The parent does not exist yet (a dry run's would-be directory)."""
        return self.dir_fd == _VIRTUAL


class Walk:
    """One resolution in progress: the fd stack and what it went through.

    Use as a context manager: every fd it opened is closed on exit (the root
    fd is the caller's).  Not thread-safe; one per call.
    """

    __slots__ = ("anchor", "backend", "text", "fds", "names", "pending", "must_be_dir",
                 "links", "steps", "floor", "create", "mode", "created", "_passed",
                 "ends_dotdot", "_held", "_held_flags", "held_fd", "_lacks_next", "_parsed",
                 "shown", "moved", "result_checked")

    def __init__(self, anchor: Anchor, parsed: ParsedPath, *,
                 create: Create = Create.NEVER, mode: int = 0o777,
                 held_flags: int | None = None, probed: int = 0,
                 result_checked: bool = False) -> None:
        root_fd = anchor.acquire(parsed.text)
        #: The caller acts on nothing in the parent this walk answers but
        #: what it opens there, and checks that with :meth:`still_beneath`
        #: before using it: the parent itself needs no check.
        self.result_checked = result_checked
        #: An fd on the stack known to be beneath the root: the root's, the
        #: fast parent's (openat2 resolved it beneath), one shown so.
        self.shown = root_fd
        self.moved = 0  # walks started again: a directory was not shown beneath
        # flags for the directory :meth:`detach` hands over where the walk
        # can choose them (the fast parent, the root; None: the backend's
        # dir_flags), and the fd opened so (a hint: :meth:`detach` says
        # whether it is the one handed over)
        self._held_flags = held_flags
        self.held_fd = -1
        self._held = True
        self.anchor = anchor
        self.backend = anchor.backend
        self.text = parsed.text
        self._parsed = parsed
        self.fds = [root_fd]
        self.names: list[str] = []
        self.create = create
        self.mode = mode
        #: Canonical directories created (MAKE) or that would be (PLAN), in order.
        self.created: dict[str, None] = {}
        self._passed: dict[str, None] | None = None
        if parsed.absolute or not parsed.text:
            try:
                if parsed.absolute:
                    raise EscapeError("absolute paths are outside the root", parsed.text,
                                      component="/", reason="absolute")
                raise not_found(anchor, root_fd, parsed.text, "")
            finally:
                self.close()
        self._start(root_fd, parsed, probed)

    def _start(self, root_fd: int, parsed: ParsedPath, probed: int) -> None:
        """The walk's state at the root, ``parsed`` pending."""
        pending = parsed.names[::-1]
        if parsed.final_is_dot:
            # "d/.", "a/..": every name is a directory on the way, and the
            # path ends at a directory (no final name), as in the kernel
            pending.insert(0, ".")
        self.pending = pending
        self.must_be_dir = parsed.must_be_dir
        self.ends_dotdot = parsed.final_is_dotdot
        self.links = self.steps = 0
        # pending[floor:] came from a symlink's text: resolved, never created
        self.floor = len(pending)
        # the top directory is known to lack the next name (this walk just
        # made it, or the fast parent's deeper probe said so): a creating
        # walk makes that name without looking it up first
        self._lacks_next = False
        if self.anchor.fast and len(pending) > 1:
            self._fast_parent(root_fd, pending, probed)

    def _restart(self) -> None:
        """Go back to the root, every directory opened so far closed, and
        resolve the path again (a directory on it was not beneath the root;
        what it created is still listed in :attr:`created`); refused once
        :data:`MOVED_RETRIES` walks were not."""
        self.moved += 1
        if self.moved > MOVED_RETRIES:
            raise EscapeError("a directory on the way is no longer inside the root", self.text,
                              component=self.where(), reason="moved", passed=self.passed)
        fds = self.fds
        held = fds[1:]
        del fds[1:]
        for fd in filter(_is_opened, reversed(held)):
            close_quietly(self.backend, fd)
        self.names.clear()
        self.held_fd = -1
        root_fd = self.shown = fds[0]
        pending = self.pending
        self._start(root_fd, self._parsed, 0)
        # the caller's loop goes on with the same list, refilled
        pending[:] = self.pending
        self.pending = pending

    def _shown_now(self, top: int) -> bool:
        """Whether the directory ``top`` (the walk's top, which the caller
        is about to act in or answer facts about) is beneath the root now
        (:func:`still_beneath`); if not, the walk starts again from the
        root (:meth:`_restart`) and ``False`` is returned, or, for a
        directory this walk made, ``EscapeError`` (reason ``moved``)."""
        if not _is_opened(top):
            return True  # a would-be directory: its real ancestor was shown
        try:
            beneath = still_beneath(self.anchor, self.fds[0], top, self.where())
        except OSError as exc:  # a look refused: typed, at that directory
            raise mapped(self.anchor, self.fds[0], exc, self.text, self.where()) from None
        if beneath:
            self.shown = top
            return True
        if self.create is Create.MAKE and self.where() in self.created:
            # one this walk made: its make may have landed outside (its parent
            # left meanwhile), which no new walk can undo, so it is never
            # told as done (THREATS row 35b), and nothing is made in it
            raise EscapeError("a directory made on the way is no longer inside the root",
                              self.text, component=self.where(), reason="moved",
                              passed=self.passed)
        self._restart()
        return False

    # -- results -------------------------------------------------------------
    @property
    def held_flags(self) -> int:
        flags = self._held_flags
        return self.backend.dir_flags if flags is None else flags

    @property
    def top(self) -> int:
        return self.fds[-1]

    @property
    def passed(self) -> tuple[str, ...]:
        """Canonical directories entered and left again, and links followed."""
        return tuple(self._passed) if self._passed else ()

    def where(self, name: str | None = None) -> str:
        """Canonical root-relative text of the top directory (plus ``name``)."""
        parts = self.names if name is None else [*self.names, name]
        return "/".join(parts) if parts else "."

    def parent(self) -> Resolved:
        """Resolve every pending component but the last; see :class:`Resolved`.

        The directory answered is beneath the root when it is answered
        (:meth:`_shown_now`; the walk starts again from the root when it is
        not, and refuses, ``EscapeError(reason="moved")``, after
        :data:`MOVED_RETRIES`), so no caller acts in, or looks at, a
        directory that was never beneath: the root's own fd and the fast
        parent's need no check, nor a walk whose caller checks what it
        opens (``result_checked``)."""
        pending = self.pending
        while True:
            while pending:
                self.steps += 1
                if self.steps > MAX_STEPS:
                    raise contained_error(errno.ELOOP, self.text, self.where())
                name = pending.pop()
                if name == ".":  # a link text's final "." (see _splice)
                    continue
                if name == "..":
                    self._up(from_link=len(pending) >= self.floor)
                    continue
                if not pending:
                    top = self.fds[-1]
                    if top == self.shown or self.result_checked or self._shown_now(top):
                        return Resolved(top, name, self.must_be_dir, tuple(self.names))
                    continue  # started again: the path is pending once more
                self._enter(name)
            if len(self.fds) == 1 and self.anchor.root_gone(self.fds[0]):
                # the path names the root, which still answers by fd (an empty
                # listing, a stat): a dead capability, not a result
                raise RootVanishedError("the root directory no longer exists")
            top = self.fds[-1]
            if top == self.shown or self.result_checked or self._shown_now(top):
                return Resolved(top, None, True, tuple(self.names))

    def follow(self, at: Resolved) -> Resolved:
        """``at``'s final name is a symlink the operation follows: splice its
        text and resolve on.  If it is no longer a link (replaced since the
        caller looked), the same name is looked at again."""
        assert at.name is not None and not self.pending
        self.ends_dotdot = False
        target = self.link_text(at.name)
        if target is None:
            self.pending.append(at.name)
        elif self._splice(target, at.name):
            self.must_be_dir = True
        return self.parent()

    def _dir_or_link(self, name: str) -> bool:
        try:
            mode = self.backend.lstat_at(self.fds[-1], name).st_mode
        except OSError:
            return False
        return st.S_ISDIR(mode) or st.S_ISLNK(mode)

    def is_link(self, at: Resolved) -> bool:
        """Whether ``at``'s final name is a symlink now."""
        if at.name is None or at.dir_fd < 0:
            return False
        try:
            return st.S_ISLNK(self.backend.lstat_at(at.dir_fd, at.name).st_mode)
        except OSError:
            return False

    def detach(self) -> tuple[int, tuple[str, ...]]:
        """Give the caller the deepest directory that exists (a new fd for
        the root), which the walk then no longer closes, and the names of the
        would-be directories planned below it, outermost first."""
        fds, names = self.fds, self.names
        tail: list[str] = []
        while fds[-1] == _VIRTUAL:
            fds.pop()
            tail.append(names.pop())
        tail.reverse()
        if len(fds) == 1:
            try:
                self.held_fd = self.backend.open_at(fds[0], ".", self.held_flags)
            except OSError as exc:  # the host's permissions may refuse it: named "."
                self.fail(exc)
            return self.held_fd, tuple(tail)
        names.pop()
        return fds.pop(), tuple(tail)

    def still_beneath(self, fd: int, at: Resolved) -> bool:
        """Whether ``fd``, which this walk opened at ``at``, is beneath the
        root now (see :func:`still_beneath`).  A name looked up in the root
        directory's own fd is: no directory between them could have been
        moved (the commonest open, a file at the top, pays nothing).  One
        in any other directory is checked, even one shown beneath (the fast
        parent, one checked): that directory may have been moved out since,
        and the name in it swapped for something that never was beneath.  A
        check that fails (a look refused) closes ``fd`` and raises, typed."""
        dir_fd = at.dir_fd
        if dir_fd == self.fds[0]:
            return True  # no directory between: nothing to move out
        path = at.path
        try:
            return still_beneath(self.anchor, self.fds[0], fd, path)
        except BaseException as exc:
            close_quietly(self.backend, fd)
            if isinstance(exc, OSError):
                raise mapped(self.anchor, self.fds[0], exc, self.text, path) from None
            raise

    def fail(self, exc: OSError, name: str | None = None) -> NoReturn:
        """Raise ``exc`` as the core raises it, naming the failing component.
        The error says something of the top directory (a name missing
        there...): one not shown beneath the root is refused instead."""
        top = self.fds[-1]
        if top != self.shown and _is_opened(top) and not isinstance(exc, ContainedError):
            try:
                beneath = still_beneath(self.anchor, self.fds[0], top, self.where())
            except OSError:
                beneath = False
            if not beneath:
                raise EscapeError("a directory on the way is no longer inside the root",
                                  self.text, component=self.where(), reason="moved",
                                  passed=self.passed) from None
        raise mapped(self.anchor, self.fds[0], exc, self.text, self.where(name)) from None

    # -- steps ---------------------------------------------------------------
    def _fast_parent(self, root_fd: int, pending: list[str], probed: int = 0) -> None:
        """Open the parent of a path of plain names with one ``openat2``
        (module doc); on any failure leave the walk as it was, to run.  When
        the walk is to create missing directories, a missing parent is
        looked for a few levels up, so the walk starts at the deepest
        directory there is and makes the name below it, which a deeper
        probe found missing, without looking it up again.  ``probed``: the
        errno the caller's own probe of the whole parent met (that probe
        is not made again)."""
        names = pending[:0:-1]
        if pending[0] in (".", "..") or "." in names or ".." in names:
            return
        backend = self.backend
        resolve = self.anchor.resolve | _RESOLVE_NO_SYMLINKS
        depth = len(names)
        # a directory found k levels down saves k - 1 opens, each failed
        # probe costs one: past half way up the climb would cost more than
        # walking from the root
        lowest = 1 if self.create is Create.NEVER else \
            max(1, depth - _FAST_PARENT_CLIMB, (depth + 1) // 2)
        while True:
            if probed:
                fd, probed = -probed, 0
            else:
                try:
                    fd = backend.openat2_or_errno(root_fd, "/".join(names[:depth]),
                                                  self.held_flags, 0, resolve)
                except OSError:  # a wrapper's fault: the walk says what is wrong
                    return
            if fd >= 0:
                break
            if fd != -errno.ENOENT or depth == lowest:
                return
            depth -= 1
        self.fds.extend([_UNOPENED] * (depth - 1))
        self.fds.append(fd)
        self.held_fd = self.shown = fd  # openat2 resolved it beneath the root
        # a probe one level deeper answered ENOENT: the next name is missing
        self._lacks_next = depth < len(names)
        self.names.extend(names[:depth])
        del pending[len(pending) - depth:]
        self.floor = len(pending)
        self.steps = depth

    def _reopen(self) -> None:
        """Open the directories the fast parent went through, from the root
        down, each by its name in the one above (``O_NOFOLLOW``), so the
        stack holds an fd for every directory again."""
        fds, names = self.fds, self.names
        for i in range(1, len(fds)):
            if fds[i] != _UNOPENED:
                continue
            try:
                fds[i] = self.backend.open_at(fds[i - 1], names[i - 1], self.backend.dir_flags)
            except OSError as exc:
                name = names[i - 1]
                # the entries from here down are unopened: nothing to close
                del fds[i:], names[i - 1:]
                self.fail(exc, name)

    def _up(self, *, from_link: bool) -> None:
        """Leave the top directory; past the root, an escape whose reason
        says where the ``..`` came from: a symlink's text or the path."""
        if len(self.fds) == 1:
            if from_link:
                raise EscapeError("a symlink leads outside the root", self.text,
                                  component=self.where(".."), reason="symlink",
                                  passed=self.passed)
            raise EscapeError("'..' leads outside the root", self.text,
                              component=self.where(".."), reason="dotdot", passed=self.passed)
        self._pass(self.where())
        self._lacks_next = False
        fd = self.fds.pop()
        self.names.pop()
        if fd == self.held_fd:
            self.held_fd = -1  # its number may be reused by an fd opened otherwise
        if fd == self.shown:
            self.shown = self.fds[0]  # (so may this one)
        if fd >= 0:
            close_quietly(self.backend, fd)
        if self.fds[-1] == _UNOPENED:
            self._reopen()

    def _enter(self, name: str) -> None:
        top = self.fds[-1]
        if top == _VIRTUAL:  # below a would-be directory everything is new
            self._plan(name)
            return
        if self._lacks_next:
            self._lacks_next = False
            if self.create is Create.MAKE and len(self.pending) < self.floor:
                self._make(name)  # EEXIST (a race) looks the name up after all
                return
        try:
            fd = self.backend.open_at(top, name, self.backend.dir_flags)
        except OSError as exc:
            err = exc.errno
            if err in (errno.ENOTDIR, errno.ELOOP):
                target = self.link_text(name)
                if target is not None:
                    self._splice(target, name)
                    return
                if self._dir_or_link(name):  # swapped since it was opened: look again
                    self.pending.append(name)
                    return
            elif (err == errno.ENOENT and self.create is not Create.NEVER
                  and len(self.pending) < self.floor):
                self._make(name)
                return
            self.fail(exc, name)
        self.fds.append(fd)
        self.names.append(name)

    def _make(self, name: str) -> None:
        top = self.fds[-1]
        if top != self.shown and not self._shown_now(top):
            return  # started again: the path is pending once more
        if self.create is Create.PLAN:
            if self.anchor.root_gone(self.fds[0]):  # what the real run would meet
                raise RootVanishedError("the root directory no longer exists")
            self._plan(name)
            return
        where = self.where(name)
        try:
            fd = self.backend.create_directory_at(self.fds[-1], name, self.mode)
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                self.fail(exc, name)
            self.pending.append(name)  # lost a race: resolve what is there now
            return
        self.created[where] = None
        self.fds.append(fd)
        self.names.append(name)
        self._lacks_next = True

    def _plan(self, name: str) -> None:
        self.created[self.where(name)] = None
        self.fds.append(_VIRTUAL)
        self.names.append(name)

    def plan_leaf(self, at: Resolved) -> None:
        """Record ``at``'s final name as a directory the dry run would make."""
        assert at.name is not None
        if not at.planned and self.anchor.root_gone(self.fds[0]):
            raise RootVanishedError("the root directory no longer exists")
        self.created[self.where(at.name)] = None

    def _pass(self, where: str) -> None:
        if self._passed is None:
            self._passed = {}
        self._passed[where] = None

    def link_text(self, name: str) -> str | None:
        """The text of the symlink ``name`` in the top directory, to be
        followed (``None`` if it is not a symlink).  :class:`SymlinkError` in
        strict mode."""
        try:
            target = self.backend.readlink_at(self.fds[-1], name)
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                return None
            self.fail(exc, name)
        if self.anchor.strict:
            raise SymlinkError("symlinks are not followed in this root", self.text,
                               component=self.where(name))
        self._kernel_allows(name)
        return target

    def _kernel_allows(self, name: str) -> None:
        """Refuse to follow the link ``name`` where the kernel would: on a
        ``nosymfollow`` mount (``ELOOP``), and under ``fs.protected_symlinks``
        a link in a sticky world-writable directory owned by neither the
        follower nor the directory's owner (``EACCES``)."""
        backend, top = self.backend, self.fds[-1]
        try:
            if backend.mount_flags(top) & ST_NOSYMFOLLOW:
                raise contained_error(errno.ELOOP, self.text, self.where(name))
            if not backend.protected_symlinks():
                return
            parent = backend.fstat(top)
            if parent.st_mode & _STICKY_OPEN != _STICKY_OPEN:
                return
            owner = backend.lstat_at(top, name).st_uid
        except OSError as exc:
            self.fail(exc, name)
        if owner not in (os.geteuid(), parent.st_uid):
            raise contained_error(errno.EACCES, self.text, self.where(name))

    def _splice(self, target: str, name: str) -> bool:
        """Put a symlink's text in front of the pending components; return
        whether it ends in a slash (its target must be a directory)."""
        self.links += 1
        where = self.where(name)
        if self.links > MAX_SYMLINKS:
            raise contained_error(errno.ELOOP, self.text, where)
        if "\x00" in target:  # cannot happen with a real kernel; never trust it
            raise contained_error(errno.EINVAL, self.text, where)
        absolute, names, must_be_dir = _paths.split_link(target)
        if absolute:
            raise EscapeError("a symlink leads outside the root", self.text, component=where,
                              reason="symlink", passed=self.passed)
        if not names and not target:
            raise contained_error(errno.ENOENT, self.text, where)
        self._pass(where)
        pending = self.pending
        self.floor = min(self.floor, len(pending))
        if names and target.rstrip("/").endswith("/."):
            # "d/.": d is opened as a directory on the way (ENOTDIR for a
            # file), as the kernel does, not treated as "d/"
            pending.append(".")
        pending.extend(reversed(names))
        return must_be_dir

    # -- lifetime ------------------------------------------------------------
    def close(self) -> None:
        """Close every fd the walk opened and let go of the root fd."""
        fds = self.fds
        if len(fds) > 2:
            # taken off the stack at once, then closed innermost first (the
            # fast parent's stack is mostly unopened entries: skipped)
            held = fds[1:]
            del fds[1:]
            for fd in filter(_is_opened, reversed(held)):  # the test runs in C
                close_quietly(self.backend, fd)
        elif len(fds) == 2:
            fd = fds.pop()
            if fd >= 0:
                close_quietly(self.backend, fd)
        self.names.clear()
        if self._held:
            self._held = False
            self.anchor.release()

    def __enter__(self) -> Walk:
        return self

    def __exit__(self, kind: object, exc: object, trace: object) -> None:
        if isinstance(exc, PathError) and not exc.passed and self._passed:
            # what it went through before it failed: a caller's rule about
            # those places decides as it would had the path resolved
            exc.passed = self.passed
        self.close()


# -- the fast path ---------------------------------------------------------------

def openat2_retry(anchor: Anchor, root_fd: int, text: str, flags: int, mode: int,
                  resolve: int) -> int | None:
    """One ``openat2`` beneath the root: an fd, or ``None`` to run the walk.

    ``EAGAIN`` means a rename somewhere raced the lookup: retried at least
    :data:`OPENAT2_MIN_RETRIES` times, then until a deadline.  Never falls
    back to a plain ``openat``."""
    backend = anchor.backend
    started = 0.0
    stats = anchor.stats
    for attempt in range(OPENAT2_MAX_RETRIES):
        try:
            return backend.openat2(root_fd, text, flags, mode, resolve)
        except OSError as exc:
            if exc.errno != errno.EAGAIN:
                stats["walk_fallbacks"] += 1
                return None
        stats["openat2_eagain"] += 1
        if attempt == OPENAT2_MIN_RETRIES:
            started = time.monotonic()
        elif attempt > OPENAT2_MIN_RETRIES and time.monotonic() - started > OPENAT2_DEADLINE:
            break
    stats["openat2_exhausted"] += 1
    return None


def spelled_path(parsed: ParsedPath) -> str:
    """The canonical path of what ``openat2(RESOLVE_BENEATH|
    RESOLVE_NO_SYMLINKS)`` opened for ``parsed``, and of nothing else: no link
    was followed, and the kernel refused (``EAGAIN``) any ``..`` raced by a
    rename, so each ``..`` undid the name before it (module doc)."""
    parts: list[str] = []
    for name in parsed.names:
        if name == "..":
            parts.pop()  # the kernel refused a ".." past the root (EXDEV)
        else:
            parts.append(name)
    return "/".join(parts) if parts else "."


# -- the walk's final containment check -------------------------------------------

# The walk holds an fd per directory, so a rename cannot drag it out through
# "..", but it can carry the walk out: a directory the walk is in is renamed
# out of the root, one of its subdirectories swapped for an outside one, both
# put back; a walk that stepped in meanwhile holds an fd of an outside file
# that was never beneath the root.  Only the result can tell, so the walk's
# result is checked before it is used (libpathrs' O_PATH fallback does the
# same); the fast path needs none (RESOLVE_BENEATH refuses such a result:
# EXDEV) and pays nothing.
_BENEATH_RESOLVE = 0x08 | _RESOLVE_NO_SYMLINKS | 0x02  # BENEATH | NO_SYMLINKS | NO_MAGICLINKS
_O_PATH = getattr(os, "O_PATH", 0)
_BENEATH_EAGAIN_RETRIES = 8  # a rename racing the lookup; beyond: not shown beneath
_CHUNK = _paths.PATH_MAX - 256  # a canonical path longer than openat2 takes, in pieces
_IS_LINUX = sys.platform.startswith("linux")
_IS_DARWIN = sys.platform == "darwin"


def still_beneath(anchor: Anchor, root_fd: int, fd: int, path: str) -> bool:
    """Whether ``fd``, opened by the walk at the canonical root-relative
    ``path``, is beneath the root now.  ``False`` is no proof of an attack
    (the file may just have been replaced since); the caller retries or
    refuses, never uses the fd.

    The kernel's own name for each fd comes first (Linux's
    ``/proc/self/fd`` when /proc is procfs, held open and read with
    ``readlinkat``, in one :meth:`Backend.fd_beneath_at`: the result's
    name where it is the root's as read once (``Anchor.walk_root``, once
    :func:`walk_open` has read it), then
    ``/`` and ``path``, and the root's name ``lstat`` s as the root's own
    directory, else both names, :meth:`Backend.fd_beneath`; Darwin's
    ``F_GETPATH``): two looks, and it asks exactly "beneath the root", so a rename inside the
    root meanwhile, or a held directory the caller may not search, is no
    refusal; on Darwin a file it cannot name is refused.  Where Linux
    gives no name (no procfs, a path past PATH_MAX), ``openat2`` re-resolves ``path``
    beneath the root and must reach the same file: as sound, but any rename
    of a directory on ``path`` meanwhile refuses.  With neither, what is
    left is the walk's own guarantee (each step ``O_NOFOLLOW`` from the
    directory before, ``..`` never handed to the kernel), without this
    check of the result."""
    backend = anchor.backend
    if backend.fake_fs_safe:
        return True  # a fake file system's fds: nothing outside it to reach
    if _IS_LINUX:
        proc = proc_fds()
        if proc >= 0:
            # in one backend call (C in the native one): one name against
            # the root's as read once (by walk_open: learning it here would
            # add two looks to a Root's first act), else both names compared
            root = anchor.walk_root
            if root is not None and root_fd == anchor.fd:
                data = os.fsencode(path)
                answer = backend.fd_beneath_at(proc, root_fd, fd, data, len(data), *root)
            else:
                answer = backend.fd_beneath(proc, root_fd, fd)
            if answer >= 0:
                return answer == 1
        if backend.has_openat2:
            return _same_file_beneath(backend, root_fd, fd, path)
        return True
    if _IS_DARWIN:
        from ._darwin import fd_path
        # no name (a path past MAXPATHLEN): nothing else can tell
        return bool(_path_beneath(fd_path, root_fd, fd))
    return True


def walk_open(anchor: Anchor, parsed: ParsedPath, flags: int) -> int:
    """``Root.open``'s walk in one backend call (:meth:`Backend.walk_open`,
    C in the native backend) where the path is its common kind: plain names
    (no ``..``, no trailing ``/``), ``flags`` creating and
    truncating nothing.  It makes :class:`Walk`'s calls (each directory
    ``O_NOFOLLOW`` in the one before, the final name) and the check of the
    result (:func:`still_beneath`'s kernel names), without the Python per
    name.  The fd, or -1: the caller then runs :class:`Walk`, which follows
    links, retries a result not shown beneath and names what failed."""
    backend = anchor.backend
    names = parsed.names
    # (with the fast path on, its open failed already: an unusual path)
    if anchor.fast or not backend.has_walk_open or not names or parsed.must_be_dir \
            or parsed.absolute or ".." in names:
        return -1
    proc = proc_fds()
    if proc < 0:
        return -1  # no kernel names: the walk checks another way
    data = os.fsencode("/".join(names))
    root_fd = anchor.acquire(parsed.text)
    try:
        root = anchor.walk_root or _walk_root(anchor, proc, root_fd)
        if root is None:
            return -1  # not a name the check can compare (a pseudo file's)
        return backend.walk_open(root_fd, data, len(data), flags, proc, *root)
    except (TypeError, OverflowError, OSError):  # flags C cannot hold, a look refused: the walk
        return -1
    finally:
        anchor.release()


def walk_open_text(anchor: Anchor, text: str, flags: int) -> int:
    """:func:`walk_open` for a ``str`` path of :func:`._paths.parse`'s hot
    case (short ASCII: no component or whole too long to check) whose
    names are plain as written (none empty, none starting with a dot: no
    ``/a``, ``a/``, ``a//b``, ``./a``, ``a/..``; a name such as ``.git``
    takes the usual path too), without parsing it.  The fd; -1 when the
    walk was made and did not open it (the caller resolves with
    :class:`Walk`, and need not try this again); -2 when it was not made
    (a path this does not take, the root's name not learnt yet, the root
    closed: the caller's usual path says why)."""
    root = anchor.walk_root
    if root is None or len(text) > _paths.NAME_MAX or not text or text[0] in "/." or \
            text[-1] == "/" or "//" in text or "/." in text or "\x00" in text or \
            not text.isascii():
        return -2
    proc = proc_fds()
    if proc < 0:
        return -2
    data = text.encode()
    users = anchor.users
    users.append(None)  # the root fd held (see Anchor.acquire)
    try:
        if anchor.closed or anchor.vanished:
            return -2
        return anchor.backend.walk_open(anchor.fd, data, len(data), flags, proc, *root)
    except (TypeError, OverflowError, OSError):  # flags C cannot hold, a look refused: the walk
        return -1
    finally:
        users.pop()
        if anchor.closed and not users:
            anchor.release_last()


def _walk_root(anchor: Anchor, proc: int, root_fd: int) -> tuple[bytes, int, int] | None:
    """``Anchor.walk_root`` learnt: the root's kernel name (read in
    ``proc``, this process's ``/proc/self/fd``), ``st_dev`` and ``st_ino``;
    ``None`` where the name is not one the check can compare (a pseudo
    file's) or cannot be read (the check then reads two names)."""
    backend = anchor.backend
    try:
        name = os.fsencode(backend.readlink_at(proc, str(root_fd)))
        info = backend.fstat(root_fd)
    except OSError:
        return None
    if not name.startswith(b"/"):
        return None
    anchor.walk_root = root = (name, info.st_dev, info.st_ino)
    return root


def open_dir_below(anchor: Anchor, parent_fd: int, name: str, path: str, flags: int) -> int:
    """Open the directory ``name`` that a tree walk (fwalk, rmtree) listed
    in ``parent_fd``, its canonical root-relative path ``path``, shown
    beneath the root: ``parent_fd`` may have been moved out since it was
    opened and the name swapped for a directory that never was beneath.

    With the fast path, one ``openat2`` of ``path`` from the root (beneath,
    no symlink): the kernel shows the result beneath at the end of its
    lookup, at no cost beyond the open.  Where that fails (no fast path, a
    link or a racing rename on the way, a path too long) the name is opened
    in ``parent_fd`` and checked (:func:`still_beneath`).  Raises what the
    open raises, ``EscapeError`` (reason ``moved``) for one not beneath."""
    backend = anchor.backend
    root_fd = anchor.acquire(path)
    try:
        if anchor.fast:
            fd = backend.openat2_or_errno(root_fd, path, flags, 0,
                                          anchor.resolve | _RESOLVE_NO_SYMLINKS)
            if fd >= 0:
                return fd
        fd = backend.open_at(parent_fd, name, flags)
        try:
            beneath = still_beneath(anchor, root_fd, fd, path)
        except BaseException:
            close_quietly(backend, fd)
            raise
        if not beneath:
            close_quietly(backend, fd)
            raise EscapeError("a directory on the way is no longer inside the root", path,
                              component=path, reason="moved")
        return fd
    finally:
        anchor.release()


def _path_beneath(fd_path: Callable[[int], str | None], root_fd: int, fd: int) -> bool | None:
    """``fd``'s kernel name must be below the root's, read just after it
    (only a root renamed away and back between the two looks, with another
    directory in its place meanwhile, could pass: a rename of the root
    itself, which a second look before would narrow, not close);
    ``None``: no name to compare (no procfs, a path too long to name).  A
    prefix, not the canonical path: a case-insensitive file system names a
    file as stored, not as spelled."""
    mine = fd_path(fd)
    if mine is None:
        return None
    root = fd_path(root_fd)
    if root is None:
        return None
    prefix = root if root.endswith("/") else root + "/"
    return mine == root or mine.startswith(prefix)


def _pieces(path: str) -> list[str]:
    """``path`` cut at slashes into the fewest pieces of at most
    :data:`_CHUNK` characters, each as long as it can be (a name longer
    than that alone), in time linear in the number of pieces: a tree walk
    checks every directory of a deep tree this way, so a cost linear in
    the path's names made the walk quadratic in its depth."""
    pieces: list[str] = []
    start, end = 0, len(path)
    while end - start > _CHUNK:
        cut = path.rfind("/", start, start + _CHUNK + 1)
        if cut <= start:  # the next name alone is longer than a piece
            cut = path.find("/", start + 1)
            if cut < 0:
                break
        pieces.append(path[start:cut])
        start = cut + 1
    pieces.append(path[start:])
    return pieces


def _same_file_beneath(backend: Backend, root_fd: int, fd: int, path: str) -> bool:
    """The canonical path (no link, no "..") opened ``O_PATH`` from the
    root with ``RESOLVE_BENEATH`` must be the same file as ``fd``.  A path
    longer than openat2 takes goes in pieces, each beneath the last (sound
    per piece; the pieces are not one atomic lookup)."""
    mine = backend.fstat(fd)
    if path == ".":
        root = backend.fstat(root_fd)
        return (root.st_dev, root.st_ino) == (mine.st_dev, mine.st_ino)
    pieces = _pieces(path)
    flags = _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
    at = root_fd
    try:
        for piece in pieces:
            found = -errno.EAGAIN
            for _ in range(_BENEATH_EAGAIN_RETRIES):
                found = backend.openat2_or_errno(at, piece, flags, 0, _BENEATH_RESOLVE)
                if found != -errno.EAGAIN:
                    break
            if at != root_fd:
                close_quietly(backend, at)
            at = root_fd
            if found < 0:
                return False  # gone, moved, or EAGAIN throughout: not shown beneath
            at = found
        there = backend.fstat(at)
    finally:
        if at != root_fd:
            close_quietly(backend, at)
    return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)


# -- errors ------------------------------------------------------------------------

def mapped(anchor: Anchor, root_fd: int, exc: OSError, text: str, where: str) -> OSError:
    """``exc`` as the core raises it: root-relative names, a vanished root
    told apart from a missing file."""
    if isinstance(exc, PathError) and (isinstance(exc, ContainedError)
                                       or exc.component is not None):
        return exc
    if exc.errno == errno.ENOENT and anchor.root_gone(root_fd):
        return RootVanishedError("the root directory no longer exists")
    return contained_error(exc.errno, text, where)


def not_found(anchor: Anchor, root_fd: int, text: str, where: str) -> OSError:
    if anchor.root_gone(root_fd):
        return RootVanishedError("the root directory no longer exists")
    return contained_error(errno.ENOENT, text, where)


def close_quietly(backend: Backend, fd: int) -> None:
    """Close a directory fd opened only to resolve or list.  close(2)
    releases the fd even when it reports an error, and there is no data to
    lose on such an fd: go on closing the others rather than leak them."""
    try:
        backend.close(fd)
    except OSError:
        pass

