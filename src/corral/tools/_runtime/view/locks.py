"""The view's locks within this process: the tree lock (shared by every
mutating step, exclusive for a move), the directory locks keyed by
(device, inode), and ``flock`` extending a directory's lock to other
processes (the package doc says how a step takes them)."""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import NoReturn, Protocol

from ....contained import Backend, Handle, Root, Target

_POLL_FIRST = 0.0005  # seconds between two tries of a held lock, doubling...
_POLL_MOST = 0.02  # ... up to this

Checkpoint = Callable[[], None]
Identity = tuple[int, int]

#: how a call holds this process's tree lock (:meth:`Asker.tree_held`)
TREE_SHARED, TREE_EXCLUSIVE = 1, 2


class Asker(Protocol):
    """A call of this process waiting on its host's answer with its step's
    locks held: a call made from the host's ``authorize`` (in the context
    it runs in) must not wait for one of them, since the asking call lets
    none go before ``authorize`` returns."""

    def tree_held(self) -> int:
        """0, :data:`TREE_SHARED` or :data:`TREE_EXCLUSIVE`."""
        ...

    def holds(self, key: Identity) -> bool:
        """Whether it holds the directory ``key`` (device, inode) locked."""
        ...

    def refuse(self, needs: str) -> NoReturn:
        """Refuse the call made from ``authorize`` that ``needs`` a lock it holds."""
        ...


#: the call whose host is deciding, in the context its ``authorize`` runs
#: in: a call made from there runs in that context too (``call`` on the
#: same thread; ``acall`` carries the context to its worker thread)
ASKING: ContextVar[Asker | None] = ContextVar("corral_asking", default=None)

#: whether a call holds the directory (device, inode) locked
Holds = Callable[[Identity], bool]

# The calls of this process waiting for a directory's lock, by thread: the
# directory waited for, and what that call holds.  A call made from a
# host's ``authorize`` looks here before each wait: where a call waiting on
# a directory the asking call holds holds the one it wants, the three wait
# on each other (the asking call on ``authorize``) until a deadline.
_WAITING: dict[int, tuple[Identity, Holds]] = {}
_waiting_guard = threading.Lock()


def _waiting_on(wanted: Identity, holds: Holds | None) -> int | None:
    """Say that this thread's call (``holds``) waits for ``wanted``, and
    refuse a call made from ``authorize`` that would close a cycle through
    another call's wait (:func:`_not_in_a_cycle`); the entry to remove
    after the wait, or ``None``."""
    _not_in_a_cycle(wanted)
    if holds is None:
        return None
    me = threading.get_ident()
    with _waiting_guard:
        _WAITING[me] = (wanted, holds)
    return me


def _not_in_a_cycle(wanted: Identity) -> None:
    """Refuse a call made from a host's ``authorize`` that wants a directory
    held by a call waiting on a directory the asking call holds: that call
    goes on only after the asking call, which goes on only after this one.
    (A wait through a thread that carries no context, a bare executor's,
    is not seen: it lasts to the inner call's deadline.)"""
    asker = ASKING.get()
    if asker is None or not _WAITING:
        return
    with _waiting_guard:
        waits = list(_WAITING.values())
    for waited, holds in waits:
        try:
            if asker.holds(waited) and holds(wanted):
                asker.refuse("a lock on a folder held by a call that waits on it")
        except OSError:
            continue  # a call that let go meanwhile: no longer waiting


def _waited(me: int | None) -> None:
    if me is not None:
        with _waiting_guard:
            _WAITING.pop(me, None)


# -- locks ------------------------------------------------------------------------------


class _TreeLock:
    """Shared by mutating steps, exclusive for moves (writers first)."""

    def __init__(self) -> None:
        # a plain lock, taken directly where no one waits (the common case)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._readers = 0
        self._writer = False
        self._waiting_writers = 0
        # the shared holds of each thread: a thread holding it (a search's
        # walk) that takes it again joins its own hold, never waiting for a
        # writer who waits for it (who waits for that thread)
        self._mine = threading.local()
        # odd from when a step holding it alone starts an act of several
        # system calls (a move's swap and removal, a patch's rename and
        # rewrite: states no order of the calls gives) to that step's
        # release: a read that holds nothing (read_file) compares it before
        # and after its open, and opens again holding it shared if it moved
        self.sequence = 0
        self.writer_thread = 0  # the thread holding it alone (0: none)

    @contextmanager
    def shared(self, checkpoint: Checkpoint) -> Iterator[None]:
        self.take_shared(checkpoint)
        try:
            yield
        finally:
            self.drop_shared()

    def take_shared(self, checkpoint: Checkpoint) -> None:
        mine = self._mine
        with self._lock:
            delay = _POLL_FIRST
            # (a writer holding it is waited for whatever: it holds it alone)
            while self._writer or (self._waiting_writers and getattr(mine, "holds", 0) <= 0):
                asker = ASKING.get()
                if asker is not None and (held := asker.tree_held()):
                    if held == TREE_SHARED and not self._writer:
                        break  # joins the asking call's hold, which a waiting writer waits for
                    asker.refuse("the folder tree")
                self._cond.wait(delay)
                checkpoint()
                delay = min(delay * 2, _POLL_MOST)
            self._readers += 1
            mine.holds = getattr(mine, "holds", 0) + 1

    def drop_shared(self) -> None:
        mine = self._mine
        with self._lock:
            self._readers -= 1
            mine.holds -= 1
            # only a writer waits on the readers (counted under the lock before it waits)
            if not self._readers and self._waiting_writers:
                self._cond.notify_all()

    @contextmanager
    def exclusive(self, checkpoint: Checkpoint) -> Iterator[None]:
        asker = ASKING.get()
        if asker is not None and asker.tree_held():
            asker.refuse("the folder tree to itself")
        with self._cond:
            self._waiting_writers += 1
            try:
                delay = _POLL_FIRST
                while self._writer or self._readers:
                    self._cond.wait(delay)
                    checkpoint()
                    delay = min(delay * 2, _POLL_MOST)
                self._writer = True
                self.writer_thread = threading.get_ident()
            finally:
                self._waiting_writers -= 1
        try:
            yield
        finally:
            with self._cond:
                if self.sequence & 1:
                    self.sequence += 1
                self.writer_thread = 0
                self._writer = False
                self._cond.notify_all()

    def acts(self) -> None:
        """Say that the step this thread holds the tree alone for starts an
        act of several system calls (see ``sequence``), until its release;
        nothing where it holds it shared."""
        if self.writer_thread == threading.get_ident() and not self.sequence & 1:
            self.sequence += 1


_TREE = _TreeLock()
LockKey = Identity | tuple[Identity, str]  # an identity, or (root identity, canonical path)


class _Table:
    """Process-wide thread locks by directory identity, dropped when unused."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[LockKey, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, key: LockKey, checkpoint: Checkpoint,
             holds: Holds | None = None) -> Iterator[None]:
        self.take(key, checkpoint, holds)
        try:
            yield
        finally:
            self.drop(key)

    def take(self, key: LockKey, checkpoint: Checkpoint, holds: Holds | None = None) -> None:
        with self._guard:
            held = self._locks.get(key)
            lock, users = held if held is not None else (threading.Lock(), 0)
            self._locks[key] = (lock, users + 1)
        try:
            if not lock.acquire(blocking=False):  # the common case: nobody holds it
                identity = _identity_of(key)
                waiting = _waiting_on(identity, holds) if identity is not None else None
                try:
                    delay = _POLL_FIRST
                    while not lock.acquire(timeout=delay):
                        checkpoint()
                        if identity is not None:
                            _not_in_a_cycle(identity)
                        delay = min(delay * 2, _POLL_MOST)
                finally:
                    _waited(waiting)
        except BaseException:
            self._unuse(key)
            raise

    def drop(self, key: LockKey) -> None:
        """Release ``key`` (taken by :meth:`take`), and forget it if unused."""
        with self._guard:
            lock, users = self._locks[key]
            lock.release()
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def _unuse(self, key: LockKey) -> None:
        with self._guard:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


_TABLE = _Table()


def _identity_of(key: LockKey) -> Identity | None:
    """``key`` if it is a directory's identity (not a root's path)."""
    first, second = key
    return (first, second) if isinstance(first, int) and isinstance(second, int) else None


#: the fds whose ``close`` releases a ``flock`` this process holds (no
#: ``LOCK_UN`` first: the step's own fd, or the directory opened for the
#: lock, is closed at its end).  Sets are safe across threads under the GIL.
_RELEASED_BY_CLOSE: set[int] = set()


def _close_locked_in_child() -> None:
    # a forked child holds copies of those fds, so its parent's close would
    # not release their locks: the child closes its copies (no other thread
    # runs here, and no lock is taken: one held at the fork stays held)
    for fd in list(_RELEASED_BY_CLOSE):
        try:
            os.close(fd)
        except OSError:
            pass
    _RELEASED_BY_CLOSE.clear()


os.register_at_fork(after_in_child=_close_locked_in_child)


@dataclass(slots=True)
class _Flock:
    """A ``flock`` taken by :func:`_flock` (``fd`` -1: none could be, the
    thread lock still holds), and the directory opened for it, if any;
    ``close``: the way the step's fd is closed, when that releases the lock."""

    fd: int
    reopened: Handle | None
    backend: Backend
    close: Callable[[], None] | None = None

    def identity(self) -> tuple[int, int] | None:
        """The (device, inode) of the directory locked (``None``: no lock)."""
        if self.fd < 0:
            return None
        info = self.backend.fstat(self.fd)
        return info.st_dev, info.st_ino

    def release(self) -> None:
        """Release the lock: by closing the fd it was taken on where that is
        this step's alone (one system call, not two), else ``LOCK_UN``."""
        fd, reopened = self.fd, self.reopened
        if fd >= 0 and (reopened is not None or self.close is not None):
            _RELEASED_BY_CLOSE.discard(fd)  # before the number can be reused
        if reopened is not None:
            reopened.close()
        elif self.close is not None:
            self.close()
        elif fd >= 0:
            try:
                self.backend.flock(fd, fcntl.LOCK_UN)
            except OSError:
                pass  # closing the fd releases it anyway


def _flock(target: Target, backend: Backend, checkpoint: Checkpoint, *,
           release_by_closing: bool = False, holds: Holds | None = None) -> _Flock:
    """``flock`` the directory ``target`` holds (through ``backend``, its
    root's): on its own fd when that was opened for reading, else
    (``O_PATH``, or ``EBADF`` says so) on the directory opened again.
    ``release_by_closing``: the release closes ``target`` (the caller's
    last use of it), which lets the lock go.  ``holds``: what the call
    taking it holds, said while it waits (:data:`_WAITING`)."""
    reopened: Handle | None = None
    fd = target.held_fd if target.held_lockable else -1
    delay = _POLL_FIRST
    waiting: int | None = None
    wanted: Identity | None = None
    try:
        while True:
            if fd < 0:
                reopened = target.open_held()
                fd = reopened.fileno()
            try:
                backend.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno == errno.EBADF and reopened is None:
                    fd = -1  # an fd that cannot hold a lock: the directory opened for one
                    continue
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                    return _Flock(-1, reopened, backend)  # a filesystem without locks
            else:
                close = target.close if release_by_closing and reopened is None else None
                if reopened is not None or close is not None:
                    _RELEASED_BY_CLOSE.add(fd)
                return _Flock(fd, reopened, backend, close)
            checkpoint()
            if wanted is None:  # held by another step: said once, looked at each time
                wanted = target.held_identity()
                waiting = _waiting_on(wanted, holds)
            else:
                _not_in_a_cycle(wanted)
            time.sleep(delay)
            delay = min(delay * 2, _POLL_MOST)
    except BaseException:
        if reopened is not None:
            reopened.close()
        raise
    finally:
        _waited(waiting)


@contextmanager
def _flocked(target: Target, backend: Backend, checkpoint: Checkpoint,
             holds: Holds | None = None) -> Iterator[None]:
    held = _flock(target, backend, checkpoint, holds=holds)
    try:
        yield
    finally:
        held.release()


# -- the identity a root's locks are keyed by -------------------------------------

RootIdentity = tuple[int, int]


def root_identity(root: Root) -> RootIdentity:
    """The (device, inode) of the directory ``root`` holds."""
    info = os.fstat(root.fileno())
    return (info.st_dev, info.st_ino)
