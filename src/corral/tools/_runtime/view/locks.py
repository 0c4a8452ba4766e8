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
from dataclasses import dataclass

from ....contained import Handle, Root, Target

_POLL_FIRST = 0.0005  # seconds between two tries of a held lock, doubling...
_POLL_MOST = 0.02  # ... up to this

Checkpoint = Callable[[], None]


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

    @contextmanager
    def shared(self, checkpoint: Checkpoint) -> Iterator[None]:
        self.take_shared(checkpoint)
        try:
            yield
        finally:
            self.drop_shared()

    def take_shared(self, checkpoint: Checkpoint) -> None:
        with self._lock:
            delay = _POLL_FIRST
            while self._writer or self._waiting_writers:
                self._cond.wait(delay)
                checkpoint()
                delay = min(delay * 2, _POLL_MOST)
            self._readers += 1

    def drop_shared(self) -> None:
        with self._lock:
            self._readers -= 1
            # only a writer waits on the readers (counted under the lock before it waits)
            if not self._readers and self._waiting_writers:
                self._cond.notify_all()

    @contextmanager
    def exclusive(self, checkpoint: Checkpoint) -> Iterator[None]:
        with self._cond:
            self._waiting_writers += 1
            try:
                delay = _POLL_FIRST
                while self._writer or self._readers:
                    self._cond.wait(delay)
                    checkpoint()
                    delay = min(delay * 2, _POLL_MOST)
                self._writer = True
            finally:
                self._waiting_writers -= 1
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


_TREE = _TreeLock()
Identity = tuple[int, int]


class _Table:
    """Process-wide thread locks by directory identity, dropped when unused."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Identity, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, key: Identity, checkpoint: Checkpoint) -> Iterator[None]:
        self.take(key, checkpoint)
        try:
            yield
        finally:
            self.drop(key)

    def take(self, key: Identity, checkpoint: Checkpoint) -> None:
        with self._guard:
            held = self._locks.get(key)
            lock, users = held if held is not None else (threading.Lock(), 0)
            self._locks[key] = (lock, users + 1)
        try:
            if not lock.acquire(blocking=False):  # the common case: nobody holds it
                delay = _POLL_FIRST
                while not lock.acquire(timeout=delay):
                    checkpoint()
                    delay = min(delay * 2, _POLL_MOST)
        except BaseException:
            self._unuse(key)
            raise

    def drop(self, key: Identity) -> None:
        """Release ``key`` (taken by :meth:`take`)."""
        self._locks[key][0].release()
        self._unuse(key)

    def _unuse(self, key: Identity) -> None:
        with self._guard:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


_TABLE = _Table()


@dataclass
class _Flock:
    """A ``flock`` taken by :func:`_flock` (``fd`` -1: none could be, the
    thread lock still holds), and the directory opened for it, if any."""

    fd: int
    reopened: Handle | None

    def release(self) -> None:
        try:
            if self.fd >= 0:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
        except OSError:
            pass  # closing the fd releases it anyway
        finally:
            if self.reopened is not None:
                self.reopened.close()


def _flock(target: Target, checkpoint: Checkpoint) -> _Flock:
    """``flock`` the directory ``target`` holds: on its own fd when that was
    opened for reading, else (``O_PATH``, or ``EBADF`` says so) on the
    directory opened again."""
    reopened: Handle | None = None
    fd = target.held_fd if target.held_lockable else -1
    delay = _POLL_FIRST
    try:
        while True:
            if fd < 0:
                reopened = target.open_held()
                fd = reopened.fileno()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return _Flock(fd, reopened)
            except OSError as exc:
                if exc.errno == errno.EBADF and reopened is None:
                    fd = -1  # an fd that cannot hold a lock: the directory opened for one
                    continue
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                    return _Flock(-1, reopened)  # a filesystem without locks
            checkpoint()
            time.sleep(delay)
            delay = min(delay * 2, _POLL_MOST)
    except BaseException:
        if reopened is not None:
            reopened.close()
        raise


@contextmanager
def _flocked(target: Target, checkpoint: Checkpoint) -> Iterator[None]:
    held = _flock(target, checkpoint)
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
