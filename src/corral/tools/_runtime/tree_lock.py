"""The tree lock as other processes see it.

The view's tree lock (held shared by a step that changes one place,
exclusively by a move or a step that may complete a repository) is a lock
of this process; another process working on the same tree (a second
``corral serve``, a host with a Toolbox in each of two processes) must
see it too, or its move checks a folder, this process writes into the
folder, and the move carries the write to a protected name.

The lock is ``flock`` on a file kept outside the tree (nothing is ever
created in the tree for it): one per root directory, named by its (device,
inode), in a directory of this user's own (``corral-locks-<uid>`` in the
temporary directory, mode 0700).  Per root, not per filesystem: a step
waiting on its host (a person asked) holds it, and must not hold up
another project's calls; so two processes serving roots nested in one
another do not see each other's steps (one process's Workspace does).  It
cannot be a lock on the root directory itself: the steps lock the
directories they act in with ``flock``, the root among them, and two locks
on one directory held by one process exclude each other.  Each step opens
the file for itself (one open file description per holder: shared holders
in one process never release each other's lock);
where no such file can be had (an unusable temporary directory, a
filesystem without locks) the step goes on with the process's lock alone.

The file also holds a count of the moves made in the root by every
Toolbox of this user (a move bumps it while it holds the lock
exclusively): a view that finds it changed since it last looked knows
another Toolbox moved something (a link onto a protected name, a folder
holding links) and looks at the tree's links again before it decides.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat as st
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["tree_file_lock", "TreeHold", "moves_made"]

_POLL_FIRST = 0.0005  # seconds between two tries of a held lock, doubling...
_POLL_MOST = 0.02  # ... up to this

_place: list[str | None] = []  # the lock directory, found once (None: none usable)
_place_guard = threading.Lock()


def _lock_directory() -> str | None:
    """This user's lock directory, made if missing; ``None`` unless it is a
    real directory owned by this user that nobody else may write."""
    with _place_guard:
        if _place:
            return _place[0]
        uid = os.getuid()
        path = os.path.join(tempfile.gettempdir(), f"corral-locks-{uid}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            _place.append(None)
            return None
        try:
            info = os.lstat(path)
        except OSError:
            info = None
        usable = info is not None and st.S_ISDIR(info.st_mode) and info.st_uid == uid \
            and not info.st_mode & 0o077
        _place.append(path if usable else None)
        return _place[0]


def _open_lock_file(key: tuple[int, int]) -> int | None:
    directory = _lock_directory()
    if directory is None:
        return None
    name = os.path.join(directory, f"{key[0]:x}-{key[1]:x}.lock")
    try:
        return os.open(name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None


@dataclass
class TreeHold:
    """The tree lock as held by one step: the count of moves made on the
    filesystem when it was taken (``None``: no lock file, no count)."""

    fd: int | None
    moves: int | None

    def count_move(self) -> None:
        """Count one more move (held exclusively)."""
        if self.fd is None or self.moves is None:
            return
        try:
            os.pwrite(self.fd, (self.moves + 1).to_bytes(8, "little"), 0)
            self.moves += 1
        except OSError:
            self.moves = None


def _read_moves(fd: int) -> int | None:
    try:
        return int.from_bytes(os.pread(fd, 8, 0).ljust(8, b"\0"), "little")
    except OSError:
        return None


def moves_made(key: tuple[int, int]) -> int | None:
    """The count of moves made in the root directory ``key`` (device,
    inode) so far, read without the lock (``None``: no lock file)."""
    fd = _open_lock_file(key)
    if fd is None:
        return None
    try:
        return _read_moves(fd)
    finally:
        os.close(fd)


@contextmanager
def tree_file_lock(key: tuple[int, int], *, exclusive: bool,
                   checkpoint: Callable[[], None]) -> Iterator[TreeHold]:
    """Hold the tree lock of the root directory ``key`` (device, inode) as
    other processes see it, shared or ``exclusive``; waiting polls
    ``checkpoint`` (a call's deadline, a cancel)."""
    fd = _open_lock_file(key)
    if fd is None:
        yield TreeHold(None, None)
        return
    try:
        mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        delay = _POLL_FIRST
        locked = False
        while True:
            try:
                fcntl.flock(fd, mode)
                locked = True
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                    break  # a filesystem without locks: the process's lock alone
            checkpoint()
            time.sleep(delay)
            delay = min(delay * 2, _POLL_MOST)
        # a count read or bumped without the lock could be torn: none then
        yield TreeHold(fd if exclusive and locked else None,
                       _read_moves(fd) if locked else None)
    finally:
        os.close(fd)  # releases the lock
