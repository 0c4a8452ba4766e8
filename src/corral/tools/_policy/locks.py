"""The edit lock: read, decide and write of one file, by one caller at a time.

Keyed by what a path resolves to: the canonical path of the opened file
(the core's :class:`~corral.contained.Handle`), so every spelling of a
file and every :class:`~corral.tools.Toolbox` in the process share one
thread lock; and ``flock`` on the file itself (which, like an OFD lock,
belongs to the open file description) extends it to other processes.  A
file that does not exist yet is keyed by its parent directory and name.

An atomic replace gives the name a new inode, so whoever waited for the old
inode's ``flock`` re-checks after acquiring it that the name still leads to
the inode it locked, and starts again if not.  Waiting is bounded: it polls,
calling the call's checkpoint in between (a deadline or a cancel ends it).
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from ...contained import Handle, Root
from .rules import fold

__all__ = ["hold"]

_POLL_FIRST = 0.0005  # seconds between two tries of a held lock, doubling...
_POLL_MOST = 0.02  # ... up to this


class _Table:
    """Process-global thread locks by key, dropped when nobody holds or waits."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, key: str, checkpoint: Callable[[], None]) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            delay = _POLL_FIRST
            while not lock.acquire(timeout=delay):
                checkpoint()
                delay = min(delay * 2, _POLL_MOST)
            try:
                yield
            finally:
                lock.release()
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)


_TABLE = _Table()


@dataclass
class _Pin:
    key: str  # the thread lock's key: stable while the name is rewritten in place
    handle: Handle | None  # what the flock is taken on
    inode: tuple[int, int] | None = None


def _pin(root: Root, rel: str) -> _Pin:
    """Open what ``rel`` leads to now (or its parent, for a new file)."""
    try:
        handle = root.open_handle(rel, os.O_RDONLY)
    except FileNotFoundError:
        parent, _, name = rel.rstrip("/").rpartition("/")
        try:
            handle = root.open_handle(parent or ".", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return _Pin(f"path:{fold(rel)}", None)
        return _Pin(f"new:{fold(handle.path)}/{fold(name)}", handle)
    except OSError:  # not something to lock (the call itself will refuse it)
        return _Pin(f"path:{fold(rel)}", None)
    info = handle.stat()
    return _Pin(f"at:{fold(handle.path)}", handle, (info.st_dev, info.st_ino))


def _close(pin: _Pin) -> None:
    if pin.handle is not None:
        pin.handle.close()


def _flock(fd: int, checkpoint: Callable[[], None]) -> None:
    delay = _POLL_FIRST
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                return  # a filesystem without locks: the thread lock still holds
        checkpoint()
        time.sleep(delay)
        delay = min(delay * 2, _POLL_MOST)


@contextmanager
def _hold_one(root: Root, rel: str, checkpoint: Callable[[], None]) -> Iterator[None]:
    while True:  # bounded by checkpoint(): the call's deadline
        pin = _pin(root, rel)
        try:
            with _TABLE.hold(pin.key, checkpoint):
                if pin.handle is not None:
                    _flock(pin.handle.fileno(), checkpoint)
                again = _pin(root, rel)
                _close(again)
                if (again.key, again.inode) == (pin.key, pin.inode):
                    yield
                    return
        finally:
            _close(pin)  # closing the handle releases the flock
        checkpoint()


@contextmanager
def hold(root: Root, rels: tuple[str, ...], checkpoint: Callable[[], None]) -> Iterator[None]:
    """Hold the lock of every path in ``rels`` (in one global order, so two
    calls locking the same pair cannot deadlock)."""
    with ExitStack() as stack:
        for rel in sorted(set(rels), key=lambda r: _pin_key(root, r)):
            stack.enter_context(_hold_one(root, rel, checkpoint))
        yield


def _pin_key(root: Root, rel: str) -> str:
    pin = _pin(root, rel)
    _close(pin)
    return pin.key
