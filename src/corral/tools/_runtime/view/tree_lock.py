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
temporary directory, mode 0700; in the user's cache directory where another
user made that name first).  Per root, not per filesystem: a step
waiting on its host (a person asked) holds it, and must not hold up
another project's calls.  So a move, which carries a folder, also holds
exclusively the lock of every root served now (by any process of the
user) that holds its root or lies on the way to either of its ends: a
process serving ``proj/web`` cannot write into ``web/sub`` while another
serving ``proj`` moves it onto ``.vscode``, nor move ``sub`` there while
the other writes into it (one process's Workspace shares one lock).  It
cannot be a lock on the root directory itself: the steps lock the
directories they act in with ``flock``, the root among them, and two locks
on one directory held by one process exclude each other.  This process
opens the file once and keeps it: its first shared holder takes the
``flock`` and its last releases it;
where no such file can be had (an unusable temporary directory, a
filesystem without locks) the step goes on with the process's lock alone.

A process keeps its shared lock between steps (a busy process pays a
``pread`` a step, not two ``flock`` calls as well): a process waiting to
hold it exclusively says so in the file (a count of wants, which the
holder reads at each step and then lets go, and waits until the waiter
was served or a bounded time passed), and a process that took no step
for a moment lets it go on a thread of its own, so an exclusive taker
waits a bounded time whatever the other process does.

The file also holds a count of the moves made in the root by every
Toolbox of this user (a move bumps it while it holds the lock
exclusively): a view that finds it changed since it last looked knows
another Toolbox moved something (a link onto a protected name, a folder
holding links) and looks at the tree's links again before it decides.

A root's lock file lives as long as some process serves the root (see
``_serving``): the last server removes it, so the directory holds the files
of the roots open now, not of every root ever opened.  It is removed only
by a process holding it exclusively, which first marks it gone in the file
(its count of moves set to a value never counted to, then unlinks it);
every process that takes the flock reads that mark in the read it makes
anyway, and one holding a file no longer linked (marked gone, or its mark
written over by the counts of a process that had just made the file)
opens the path again (on the same descriptor number), so two
processes never each hold a lock on a file of their own.  Removed, the
count of moves starts again at a random value (a view that last read the
removed file's count cannot find it unchanged).  Files their last server
could not remove (a step still held one, the process died) are removed
the same way by a bounded sweep each process makes at its first view.
"""

from __future__ import annotations

import atexit
import errno
import enum
import fcntl
import itertools
import os
import stat as st
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple

from ....contained import Backend

__all__ = ["tree_file_lock", "TreeHold", "moves_made", "changes_here", "count_change_here",
           "SharedHold", "take_shared", "drop_shared", "use_lock_file", "let_go_lock_file",
           "view_collected", "keep_idle_for", "lock_directory_under", "served_roots",
           "served_listed", "served_places", "served_place_each", "kernel_path",
           "sweep_lock_files", "moves_ended"]

_POLL_FIRST = 0.0005  # seconds between two tries of a held lock, doubling...
_POLL_MOST = 0.02  # ... up to this
# a shared lock no step used for this long (to twice it) is let go
_keep_idle = [0.02]
_DEFER_MOST = 0.5  # a shared taker waits this long at most for a waiter to be served

_place: list[str | None] = []  # the lock directory, found once (None: none usable)
_place_guard = threading.Lock()


def _lock_directory() -> str | None:
    """This user's lock directory, made if missing: ``corral-locks-<uid>`` in
    the temporary directory, or (where another user made that name first,
    or it cannot be had) ``corral-locks`` in this user's cache directory;
    ``None`` unless one is a real directory owned by this user that nobody
    else may write.  Every process of the user tries them in one order, so
    they agree on one."""
    with _place_guard:
        if _place:
            return _place[0]
        uid = os.getuid()
        cache = os.environ.get("XDG_CACHE_HOME") or ""
        if not os.path.isabs(cache):
            cache = os.path.join(os.path.expanduser("~"), ".cache")
        for path in (os.path.join(_temporary_directory(), f"corral-locks-{uid}"),
                     os.path.join(cache, "corral-locks")):
            if os.path.isabs(path) and _usable_directory(path, uid):
                _place.append(path)
                return path
        _place.append(None)
        return None


def _temporary_directory() -> str:
    """The directory ``tempfile.gettempdir()`` names, where it is the lock
    directory's parent: every process of the user must agree on it, those
    that imported :mod:`tempfile` and those that did not.  Asked of
    :mod:`tempfile` where something imported it (its ``tempdir`` may be
    set); otherwise tried here the same way, without the import (it brings
    shutil, bz2 and lzma to every start): the first of ``$TMPDIR``,
    ``$TEMP``, ``$TMP``, ``/tmp``, ``/var/tmp``, ``/usr/tmp`` and the
    working directory, made absolute, where a new file can be made, written
    and removed (a name taken is tried again; any other error skips the
    place).  ``FileNotFoundError`` where none can, as gettempdir."""
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        return str(tempfile.gettempdir())
    places = [value for value in map(os.environ.get, ("TMPDIR", "TEMP", "TMP")) if value]
    places += ["/tmp", "/var/tmp", "/usr/tmp"]  # noqa: S108 (gettempdir's own, probed below)
    try:
        places.append(os.getcwd())
    except OSError:
        places.append(os.curdir)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    for named in places:
        place = named if named == os.curdir else os.path.abspath(named)
        for _ in range(100):
            probe = os.path.join(place, f"tmp{os.urandom(6).hex()}")
            try:
                fd = os.open(probe, flags, 0o600)
                try:
                    try:
                        os.write(fd, b"blat")
                    finally:
                        os.close(fd)
                finally:
                    os.unlink(probe)
                return place
            except FileExistsError:
                continue  # a name taken: another
            except OSError:
                break  # this place cannot be used
    raise FileNotFoundError(errno.ENOENT, "no usable temporary directory", str(places))


def lock_directory_under(root_path: str) -> str | None:
    """Where this user's lock directory lies inside the root opened at
    ``root_path`` (a path relative to it), or ``None`` if it lies elsewhere.
    A root that holds it (a server opened at ``/`` or at the temporary
    directory) must keep the model off it: a lock file it replaced or
    removed is a new inode, which processes opening it later would lock
    apart from those holding the old one."""
    directory = _lock_directory()
    if directory is None:
        return None
    inside = os.path.realpath(directory)
    root = os.path.realpath(root_path)
    if os.path.commonpath((inside, root)) != root or inside == root:
        return None
    return os.path.relpath(inside, root)


def _usable_directory(path: str, uid: int) -> bool:
    """Make ``path`` (mode 0700) if missing; whether it is a directory of
    ``uid``'s that nobody else may write (a link there is not followed)."""
    try:
        os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return st.S_ISDIR(info.st_mode) and info.st_uid == uid and not info.st_mode & 0o077


def _lock_file_name(key: tuple[int, int]) -> str | None:
    # found once, read without the guard (a removal runs with it held)
    directory = _place[0] if _place else _lock_directory()
    if directory is None:
        return None
    return os.path.join(directory, f"{key[0]:x}-{key[1]:x}.lock")


def _open_lock_file(key: tuple[int, int]) -> int | None:
    name = _lock_file_name(key)
    if name is None:
        return None
    try:
        return os.open(name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE):
            # for now, not for good: remembered as "no lock file here", every
            # later step of the root would go on without other processes' lock
            raise
        return None


class _LockFile:
    """One root's lock file as this process holds it: opened once and kept
    (a step pays only its ``flock`` and the release), flocked by the first
    of this process's shared holders and released by the last (holders in
    one process share one open file description, so one holder's release
    must not drop another's lock), its count of moves read and bumped by
    ``pread`` and ``pwrite`` (never through a mapping: a page the
    filesystem cannot give, on a disk the model filled, would be SIGBUS
    there, where a call's error is a refusal)."""

    def __init__(self, fd: int, counts: bool, key: tuple[int, int]) -> None:
        self.fd = fd
        self.key = key  # the root's (device, inode): the name it is opened by again
        self.kept = False  # flocked shared with no holder: kept since the last step
        self.used = 0  # steps that let go of it so far (the idle thread compares)
        self.seen = 0  # ``used`` as the idle thread last saw it
        self.backend: Backend | None = None  # the backend it was kept through
        # the close of the module that opened it: a file opened under a fake
        # filesystem (pyfakefs) is closed there, never as a real fd of that number
        self.close = os.close
        self.counts_moves = counts  # the file holds a count of moves
        self.guard = threading.Lock()
        self.holders = 0  # this process's shared holders
        self.taking = False  # a holder is taking the flock for the others

    def moves(self, backend: Backend) -> int | None:
        """The count of moves, read through ``backend`` (a file shortened
        by someone: 0, a change every view then looks at again); ``None``
        where it cannot be read."""
        if not self.counts_moves:
            return None
        try:
            data = backend.pread(self.fd, _MOVES.size, 0)
            if data == _GONE and not self._still_named():
                # removed by its last server while this process served no
                # view of the root: the path's file is the count now
                if not self._open_again_unheld():
                    return next(_unknown_counts)
                data = backend.pread(self.fd, _MOVES.size, 0)
        except OSError:
            return None
        return _MOVES.unpack(data)[0] if len(data) == _MOVES.size else 0

    def store(self, moves: int) -> None:
        """Store the count ``moves`` (an ``OSError``, such as a full disk,
        is the caller's: a move not counted must not be made)."""
        os.pwrite(self.fd, _MOVES.pack(moves), 0)

    def counts(self, backend: Backend) -> tuple[int | None, bool]:
        """The count of moves (``None``: not counted, or unreadable) and
        whether a process waits to hold the lock exclusively (its wants
        not all served), in one read."""
        moves, wanted, _gone_mark = self.counts_and_mark(backend)
        return moves, wanted

    def counts_and_mark(self, backend: Backend) -> tuple[int | None, bool, bool]:
        """:meth:`counts`, and whether the file is marked gone (see the
        module's doc), in one read."""
        if not self.counts_moves:
            return None, False, False
        try:
            data = backend.pread(self.fd, _COUNTS.size, 0)
        except OSError:
            return None, False, False
        return _counts_read(data)

    def _still_named(self) -> bool:
        """Whether this file still has its name (one marked gone whose
        remover died before the unlink has: it is the lock still)."""
        try:
            return os.fstat(self.fd).st_nlink > 0
        except OSError:
            return True  # not known: taken as it is (the next look tells)

    def open_again(self) -> bool:
        """Open the path again in place of this removed file, on the same
        descriptor number (a reader without the guard never reads a number
        given to another file); ``False`` where it cannot be opened (the
        process's lock alone), an ``OSError`` out of open files.  Called by
        the one thread taking the flock (``taking`` set, or the guard held
        with no holder), the flock let go."""
        fd = _open_lock_file(self.key)
        if fd is None:
            return False
        try:
            counts = _prepare(fd)
            os.dup2(fd, self.fd, inheritable=False)
        finally:
            os.close(fd)
        self.counts_moves = counts
        return True

    def _open_again_unheld(self) -> bool:
        """:meth:`open_again` for a reader holding nothing: only where no
        thread here holds, keeps or takes the flock (else ``False``)."""
        with self.guard:
            if self.holders or self.taking or self.kept:
                return False
            try:
                return self.open_again()
            except OSError:
                return False

    def unmark(self) -> None:
        """Clear a gone mark a remover that died left on a file it never
        unlinked (held exclusively): the count starts again, changed."""
        try:
            os.pwrite(self.fd, _MOVES.pack(_fresh_count()), 0)
        except OSError:
            pass

    def want(self) -> None:
        """Say a process waits to hold the lock exclusively (a hint: a
        holder that reads it lets go; any failure leaves it unsaid)."""
        try:
            data = os.pread(self.fd, _COUNTS.size, 0)
            if len(data) != _COUNTS.size:
                # shortened by another program: both counts written, so the
                # file is long enough to be read (the count of moves, the
                # lock's, is not touched: a gap there reads as 0)
                os.pwrite(self.fd, _WANTS.pack(1) + _WANTS.pack(0), _MOVES.size)
                return
            wanted, served = _COUNTS.unpack(data)[1:]
            if wanted == served:  # not said yet (or served since): said again
                # wrapping (only a change is read): another program's bytes
                # at the largest count must not leave it unsaid
                os.pwrite(self.fd, _WANTS.pack((wanted + 1) & _WANTS_MOST), _MOVES.size)
        except (OSError, struct.error):
            pass

    def served(self) -> None:
        """Every want said so far is served (the lock held exclusively)."""
        try:
            data = os.pread(self.fd, _COUNTS.size, 0)
            if len(data) == _COUNTS.size:
                os.pwrite(self.fd, data[_MOVES.size:_MOVES.size + _WANTS.size],
                          _MOVES.size + _WANTS.size)
        except OSError:
            pass

    def take(self, mode: int, backend: Backend, checkpoint: Callable[[], None]) -> bool:
        """``flock`` in ``mode`` (through ``backend``), waiting within
        ``checkpoint``'s bounds; ``False`` where the filesystem has no locks.
        Waiting to hold it exclusively, the want is said in the file (the
        holders keeping it shared let go) and, once held, marked served; a
        shared taker waits for a waiter to be served first (a bounded time:
        one that died is not waited for again)."""
        exclusive = mode == fcntl.LOCK_EX
        wanted = False
        delay = _POLL_FIRST
        deferred = 0.0
        while True:
            if not exclusive and self.counts(backend)[1] and deferred < _DEFER_MOST:
                pass  # a process waits for it exclusively: its turn first
            else:
                if not exclusive and deferred >= _DEFER_MOST:
                    # waited long enough: a want still unserved is a dead
                    # process's (a live waiter says it again), forgotten
                    self.served()
                try:
                    backend.flock(self.fd, mode | fcntl.LOCK_NB)
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                        return False  # a filesystem without locks: the process's lock alone
                else:
                    gone = self.counts_and_mark(backend)[2]
                    # removed by its last holder before this flock: looked at
                    # whatever the mark says (a process that made the file
                    # may have written its counts over the mark meanwhile);
                    # the lock is the path's file now
                    if not self._still_named():
                        self.release(backend)
                        if not self.open_again():
                            return False
                        checkpoint()
                        continue
                    if gone and exclusive:
                        self.unmark()
                    if wanted:
                        self.served()
                    return True
                if exclusive and self.counts_moves:
                    self.want()
                    wanted = True
            checkpoint()
            time.sleep(delay)
            deferred += delay
            delay = min(delay * 2, _POLL_MOST)

    def release(self, backend: Backend) -> None:
        try:
            backend.flock(self.fd, fcntl.LOCK_UN)
        except OSError:
            pass


_MOVES = struct.Struct("<Q")
_WANTS = struct.Struct("<Q")
_WANTS_MOST = (1 << 64) - 1
# the count of moves, the wants of the lock exclusively said, those served
_COUNTS = struct.Struct("<QQQ")
# the count of moves of a file its remover unlinks (never counted to: a
# count starts below 2**62)
_GONE = _MOVES.pack(_WANTS_MOST)
_COUNTS_SIZE, _unpack_counts = _COUNTS.size, _COUNTS.unpack  # (take_shared's, looked up once)
# a count no view has seen, for a reader that cannot look at the path's file
_unknown_counts = itertools.count(-1, -1)


def _fresh_count() -> int:
    return int.from_bytes(os.urandom(_MOVES.size), "little") >> 2  # room to count


def _prepare(fd: int) -> bool:
    """Give a lock file just opened its counts; whether it holds them.  A
    file made now (empty) starts its count of moves at a random value: a
    view that read the count of a file removed since cannot find the same
    number here and miss the moves made meanwhile."""
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            os.pwrite(fd, _COUNTS.pack(_fresh_count(), 0, 0), 0)
        elif size < _COUNTS.size:
            os.ftruncate(fd, _COUNTS.size)
    except OSError:
        return False
    if hasattr(os, "posix_fallocate"):
        try:  # the count's block had now: a move on a disk filled later is still counted
            os.posix_fallocate(fd, 0, _COUNTS.size)
        except OSError:
            pass
    return True
_files: dict[tuple[int, int], _LockFile | None] = {}


def _forget_after_fork() -> None:
    # a child shares the parent's open file descriptions: their flocks would
    # not exclude each other, so the child opens its own (and closes its
    # copies: a lock the parent keeps must go when the parent lets it go)
    global _idle_guard, _idle_thread
    for found in _files.values():
        if found is not None:
            try:
                found.close(found.fd)
            except Exception:
                pass
    _files.clear()
    # the roots the parent serves: its copies closed (the parent's flock stays;
    # a child's exclusive try on the shared description would remove the file)
    for _name, fd, close in _serving.values():
        try:
            close(fd)
        except Exception:
            pass
    _serving.clear()
    for fd, close in _pinned.values():
        try:
            close(fd)
        except Exception:
            pass
    _pinned.clear()
    _kept.clear()
    _sweeper.clear()  # the parent's (its sweep is not the child's to wait for)
    _idle_guard = threading.Condition()  # one held at the fork stays held
    _idle_thread = None


os.register_at_fork(after_in_child=_forget_after_fork)


# the lock files this process keeps flocked between steps, let go by the
# idle thread once no step used one for a while
_kept: set[_LockFile] = set()
_idle_guard = threading.Condition()
_idle_thread: threading.Thread | None = None


def _keep(found: _LockFile, backend: Backend) -> None:
    """Keep ``found`` flocked shared after its last holder let go (its
    guard held): the idle thread lets it go unless a step uses it again."""
    global _idle_thread
    found.kept = True
    found.backend = backend
    with _idle_guard:
        _kept.add(found)
        if _idle_thread is None:
            _idle_thread = threading.Thread(target=_let_go_idle, name="corral-tree-lock",
                                            daemon=True)
            _idle_thread.start()
        _idle_guard.notify()


def _let_go_idle() -> None:
    """Let go of each kept lock no step used since the last look (so a
    process waiting for it exclusively waits at most about twice
    the period :func:`keep_idle_for` sets for an idle one)."""
    while True:
        with _idle_guard:
            while not _kept:
                _idle_guard.wait()
            files = list(_kept)
            _idle_guard.wait(_keep_idle[0])  # woken early only by keep_idle_for
        for found in files:
            with found.guard:
                if found.kept and not found.holders and not found.taking and \
                        found.used == found.seen:
                    _unkeep(found)
                else:
                    found.seen = found.used
                    if found.kept:
                        continue
            with _idle_guard:
                if not found.kept:
                    _kept.discard(found)


def keep_idle_for(seconds: float) -> float:
    """Let a kept lock go once no step used it for ``seconds`` (to twice
    that) from now on; the period it was (a test that counts a step's
    calls makes it long, so none is let go mid-count)."""
    with _idle_guard:
        before, _keep_idle[0] = _keep_idle[0], seconds
        _idle_guard.notify_all()
    return before


def _unkeep(found: _LockFile) -> None:
    """Let go of the lock ``found`` keeps (its guard held)."""
    found.kept = False
    backend, found.backend = found.backend, None
    if backend is not None:
        found.release(backend)


def _lock_file(key: tuple[int, int]) -> _LockFile | None:
    try:  # the common case, read without the guard
        return _files[key]
    except KeyError:
        pass
    fd = _open_lock_file(key)
    found: _LockFile | None = None
    if fd is not None:
        found = _LockFile(fd, _prepare(fd), key)
    with _place_guard:
        if key in _files:  # another thread opened it meanwhile
            if fd is not None:
                os.close(fd)
            return _files[key]
        _files[key] = found
        return found


# how many open views of each root keep its lock file open
_users: dict[tuple[int, int], int] = {}
# every root a view of this process used before its sweep ended: its lock
# file is this process's to remove when its last view closes, never its
# sweep's (a sweep that tried it would spend a try on a file about to go);
# forgotten once the sweep is over (a process opening root after root
# keeps nothing per root it closed)
_used_here: set[tuple[int, int]] = set()
# views collected without being closed: let go at the next open or close of
# a view (a finalizer takes no lock: it may run while this thread holds one)
_collected: list[tuple[int, int]] = []


# The root directories of the views open here, one descriptor each, held
# as long as anything of this process says (device, inode): the view's
# served file and its lock file's flock outlive its Root (closed by the host
# first, or collected first, let go at the next open or close).  The pair
# names the directory only while its inode lives: freed, the filesystem
# gives the number to the next folder made (ext4 at once), which another
# move would then refuse as a served root, or whose lock would be shared
# with a root long gone.  Held, the inode outlives every name of it.
_pinned: dict[tuple[int, int], tuple[int, Callable[[int], None]]] = {}


def use_lock_file(key: tuple[int, int], root_fd: int) -> None:
    """One more view of the root ``key`` (device, inode), the directory
    ``root_fd`` holds, keeps its lock file open (opened at its first use)
    and the directory itself (see ``_pinned``); the first says the root is
    served.  An ``OSError`` (out of open files) if the directory cannot be
    held: the view is not opened."""
    pin, close = os.dup(root_fd), os.close  # closed by the module that made it (pyfakefs)
    with _place_guard:
        closing = _let_go_collected()
        _users[key] = _users.get(key, 0) + 1
        if not _sweep_over[0]:
            _used_here.add(key)
        first = _users[key] == 1 and key not in _serving
        if key not in _pinned:
            _pinned[key], pin = (pin, close), -1
    if pin != -1:  # held already by another view of it
        close(pin)
    if first:
        _serve(key, root_fd)
    _close_all(closing)
    if not _swept[0]:
        _sweep_once()


# The roots this process serves, each held by a shared flock on a file of
# its own (``served/<device>-<inode>``, in the lock directory), kept while a
# view of the root is open: a move in another process (or another Toolbox
# here) must not carry a live root away, where that root's Toolbox would
# go on deciding by names it no longer has (``y`` moved to be ``.vscode``).
# A file of its own, as the lock file's flock is the tree lock's; flock, as
# it is the open file description's, so a root closed since (or whose
# process died) is free again.  The last server of a root removes its file
# (holding it exclusively), so the directory lists the roots served now
# (and a crashed process's, removed by the next look), and a move looks
# for the roots on its way only when another root is served.  Its first
# server writes in it where the root is (the kernel's path of the root's
# directory), so a move places each served root by its name, found to be
# that directory still (:func:`served_places`), rather than look at each
# folder of its way.
_serving: dict[tuple[int, int], tuple[str, int, Callable[[int], None]]] = {}
_served_place: list[str | None] = []  # the directory, found once (None: none usable)


def _served_directory() -> str | None:
    if _served_place:
        return _served_place[0]
    directory = _lock_directory()
    path = os.path.join(directory, "served") if directory is not None else None
    if path is not None and not _usable_directory(path, os.getuid()):
        path = None
    _served_place[:] = [path]
    return path


def _serve(key: tuple[int, int], root_fd: int) -> None:
    directory = _served_directory()
    if directory is None:
        return  # no place to say it: this process's own moves still know (_users)
    name = os.path.join(directory, f"{key[0]:x}-{key[1]:x}")
    close = os.close  # as the lock file's: closed by the module that opened it (pyfakefs)
    for _ in range(3):  # the file removed by its last server meanwhile: made again
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError:
            return
        try:
            # waits only while a mover looks (its exclusive try is let go at once)
            fcntl.flock(fd, fcntl.LOCK_SH)
            held, named = os.fstat(fd), os.lstat(name)
        except OSError:
            close(fd)
            continue
        if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
            break
        close(fd)
    else:
        return
    if held.st_size == 0:
        _say_where(fd, root_fd)
    with _place_guard:
        kept = key not in _serving and key in _users  # not served by another thread, not closed
        if kept:
            _serving[key] = (name, fd, close)
    if not kept:
        _unserve(name, fd, close, key, True)


def _say_where(fd: int, root_fd: int) -> None:
    """Write in the served file ``fd`` where the root is, as the kernel
    names the directory ``root_fd`` (its first server writes it; another
    program's move of the root since makes it stale, which a reader finds:
    :func:`served_places`)."""
    where = kernel_path(root_fd)
    if where is None:
        return
    try:
        os.pwrite(fd, os.fsencode(where), 0)
    except OSError:
        pass  # said nowhere: a mover looks the way it did before


def kernel_path(fd: int) -> str | None:
    """The path the kernel has now for the directory ``fd`` (in this
    process's view of the mounts), or ``None`` where it names none (no
    procfs, a removed directory, a platform without the question)."""
    try:
        if sys.platform == "darwin":
            raw = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))
            where = os.fsdecode(raw.split(b"\0", 1)[0])
        elif sys.platform.startswith("linux"):
            where = os.readlink(f"/proc/self/fd/{fd}")
        else:
            return None
    except OSError:
        return None
    # a removed directory is named "<path> (deleted)": no place
    return where if where.startswith("/") and not where.endswith(" (deleted)") else None


# where a root another process serves was last read to be (its served
# file's words), by the root's (device, inode): read once, checked each use
_recorded: dict[tuple[int, int], str] = {}


def served_places(keys: set[tuple[int, int]]) -> dict[tuple[int, int], str] | None:
    """Where each root of ``keys`` (served now, by this process or another)
    is now, as the kernel names it: a root this process serves by the
    directory it holds, one another process serves by the path its first
    server wrote in its served file, opened and found to be that directory.
    ``None`` when one cannot be placed (the platform names no directory's
    path, an older server wrote none, the root moved since): the caller
    then looks at the folders themselves."""
    each = served_place_each(keys, stop_at_unknown=True)
    if any(where is None for where in each.values()):
        return None
    return {key: where for key, where in each.items() if where is not None}


def served_place_each(keys: set[tuple[int, int]], *, stop_at_unknown: bool = False
                      ) -> dict[tuple[int, int], str | None]:
    """Where each root of ``keys`` is now, placed as :func:`served_places`
    places them, ``None`` for each that cannot be placed (after the first
    such, the rest are not looked at when ``stop_at_unknown``)."""
    places: dict[tuple[int, int], str | None] = {}
    with _place_guard:
        for key in keys:
            pinned = _pinned.get(key)
            if pinned is not None:
                places[key] = kernel_path(pinned[0])
                if places[key] is None and stop_at_unknown:
                    return places
    rest = keys - places.keys()
    if not rest:
        return places
    files = dict(_served_files())
    for key in rest:
        where = _recorded.get(key) or _read_recorded(files.get(key))
        found = _opened_place(where, key) if where is not None else None
        places[key] = found
        if found is None:
            _recorded.pop(key, None)
            if stop_at_unknown:
                return places
            continue
        _recorded[key] = where  # type: ignore[assignment]
    return places


def _read_recorded(served_file: str | None) -> str | None:
    if served_file is None:
        return None
    try:
        fd = os.open(served_file, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        data = os.read(fd, 8192)
    except OSError:
        return None
    finally:
        os.close(fd)
    where = os.fsdecode(data)
    return where if where.startswith("/") else None


_PLACE_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC


def _opened_place(where: str, key: tuple[int, int]) -> str | None:
    """The kernel's path of the directory at ``where`` if it is the root
    ``key`` (else ``None``: the root moved, or another is there)."""
    try:
        fd = os.open(where, _PLACE_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != key:
            return None
        return kernel_path(fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def _unserve(name: str, fd: int, close: Callable[[int], None], key: tuple[int, int],
             lock_file_too: bool) -> None:
    """Stop serving the root ``key``: if no other process serves it, its
    file is removed, and the root's lock file with it unless
    ``lock_file_too`` is false (a step here still holds it)."""
    try:
        if _held_alone(fd, name):
            if lock_file_too:
                _remove_lock_file(key)
            os.unlink(name)
    except OSError:
        pass  # served elsewhere (or gone): left to its last server
    try:
        close(fd)
    except Exception:  # a fake filesystem's close, after that filesystem was torn down
        pass


def _held_alone(fd: int, name: str) -> bool:
    """Whether this process holds ``fd`` exclusively and ``name`` still
    names that file: then nobody else may unlink the name (only a holder of
    its file does) nor make it (it exists), so it is this one's to remove."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held, named = os.fstat(fd), os.lstat(name)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


class Removal(enum.Enum):
    """What became of a lock file :func:`_remove_lock_file` tried."""
    REMOVED = "removed"
    HELD = "held"  # there, and a process holds it (or it could not be marked)
    ABSENT = "absent"  # not there (removed meanwhile by its last server)


def _remove_lock_file(key: tuple[int, int]) -> Removal:
    """Remove the root ``key``'s lock file (the caller holds its served
    file alone: no process serves the root), opened here for it (the file
    this process kept may be one removed before): only if nobody holds its
    flock, marked gone before the unlink (a process that opened it
    meanwhile reads the mark once it holds the flock, and opens the path
    again)."""
    name = _lock_file_name(key)
    if name is None:
        return Removal.ABSENT
    try:
        fd = os.open(name, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return Removal.ABSENT
    except OSError:
        return Removal.HELD
    try:
        if _held_alone(fd, name):  # else a process holds it (removed after its last server)
            os.pwrite(fd, _GONE, 0)  # not marked (a failing disk): not removed
            os.unlink(name)
            return Removal.REMOVED
    except OSError:
        pass
    finally:
        os.close(fd)  # the exclusive lock let go with it
    return Removal.HELD


# A lock file outlives its root's last server where that server could not
# remove it (a step still held it, the process died, a version that never
# removed them): each process sweeps a bounded part of the directory once,
# from its first view on, so leftovers go without any process paying for
# all.  A sweep tries a share of the lock files it read (at least a few, at
# most a bound), from a place of its own in them: however many were left,
# each process takes away a share of them, and processes sweeping at once
# mostly try different files.  On a thread of its own (a directory of many
# thousands makes each unlink slow: the view's open does not wait), waited
# for at exit a bounded time, then told to stop after the file it is at.
_SWEEP_NAMES = 1 << 18  # names of the lock directory one sweep reads at most
_SWEEP_TRIES = 64  # lock files one sweep tries at least (when it read that many)
_SWEEP_SHARE = 8  # ... and one in this many of those it read
_SWEEP_TRIES_MOST = 4096  # ... and at most this many
_SWEEP_EXIT_WAIT = 5.0  # seconds the interpreter's exit waits for a sweep under way
_swept = [False]
_sweep_over = [False]  # this process's sweep ended (what it left alone forgotten)
_sweeper: list[threading.Thread] = []
_sweep_stop = threading.Event()


def _sweep_once() -> None:
    with _place_guard:
        if _swept[0]:
            return
        _swept[0] = True
    sweeper = threading.Thread(target=_sweep_then_forget, name="corral-lock-sweep", daemon=True)
    _sweeper.append(sweeper)
    sweeper.start()


def _sweep_then_forget() -> None:
    """This process's one sweep; the roots it had to leave alone are
    forgotten once it is over."""
    try:
        sweep_lock_files()
    finally:
        with _place_guard:
            _sweep_over[0] = True
            _used_here.clear()


def sweep_lock_files(names: int = _SWEEP_NAMES, tries: int | None = None) -> int:
    """Remove lock files no process uses, reading at most ``names`` names of
    the lock directory and trying at most ``tries`` files (by default a
    share of the lock files read: :data:`_SWEEP_SHARE`, between
    :data:`_SWEEP_TRIES` and :data:`_SWEEP_TRIES_MOST`); how many were
    removed.  Left alone: the files of roots this process has used or that
    have a served mark (their last server removes them), and any file a
    process holds (:func:`_remove_lock_file` takes its flock without
    waiting, and marks it gone before the unlink, so a process that opened
    it but holds nothing opens the path again when it next takes it)."""
    directory = _lock_directory()
    if directory is None:
        return 0
    keys: list[tuple[int, int]] = []
    try:
        with os.scandir(directory) as entries:
            for entry in itertools.islice(entries, names):
                key = _lock_file_key(entry.name)
                if key is not None:
                    keys.append(key)
    except OSError:
        pass  # the directory unreadable: what was read is swept
    if tries is None:
        tries = min(max(len(keys) // _SWEEP_SHARE, _SWEEP_TRIES), _SWEEP_TRIES_MOST)
    if not keys or tries <= 0:
        return 0
    served = _served_directory()
    start = int.from_bytes(os.urandom(4)) % len(keys)
    removed = 0
    for key in itertools.chain(keys[start:], keys[:start]):
        if tries <= 0 or _sweep_stop.is_set():
            break
        with _place_guard:
            used_here = key in _used_here
        if used_here or (served is not None and os.path.lexists(
                os.path.join(served, f"{key[0]:x}-{key[1]:x}"))):
            continue
        outcome = _remove_lock_file(key)
        # a file gone meanwhile (its last server removed it) costs no try
        tries -= outcome is not Removal.ABSENT
        removed += outcome is Removal.REMOVED
    return removed


def _lock_file_key(name: str) -> tuple[int, int] | None:
    """The root (device, inode) of the lock file ``name`` (``<dev>-<ino>.lock``
    in hexadecimal), or ``None`` for any other name."""
    stem = name.removesuffix(".lock")
    if stem == name:
        return None
    device, _, inode = stem.partition("-")
    try:
        return int(device, 16), int(inode, 16)
    except ValueError:
        return None


def served_listed() -> set[tuple[int, int]]:
    """The (device, inode) of every root this process serves and of every
    root another process's file in the served directory names, without
    looking at whether that process still lives (one that died counts until
    a look of :func:`served_roots` removes its file): one listing, for a
    caller that only weighs the few roots it already has in mind."""
    with _place_guard:
        found = set(_users)
    listed = found | {key for key, _ in _served_files()}
    _forget_unserved(listed)
    return listed


def _forget_unserved(listed: set[tuple[int, int]]) -> None:
    """Close the lock files this process opened for roots it has no view
    of (held beside a move) that are no longer served (``listed``): their
    last server removed them, and a process that moved beside many roots
    would keep one descriptor of a removed file for each.  One taken again
    later is opened again.  (Only moves take such a lock, under the
    process's tree lock held exclusively, as a move calls this: none is
    being taken meanwhile.)"""
    closing: list[_LockFile] = []
    with _place_guard:
        for key in [key for key in _files if key not in listed and key not in _users]:
            found = _files[key]
            if found is None:
                del _files[key]
                continue
            with found.guard:
                if found.holders or found.taking or found.kept:
                    continue
                del _files[key]
            closing.append(found)
        for key in [key for key in _recorded if key not in listed]:
            del _recorded[key]
    _close_all(closing)


def _served_files() -> list[tuple[tuple[int, int], str]]:
    """Each file of the served directory that names a root, as (the root's
    (device, inode), the file's path); none if there is no such directory."""
    directory = _served_directory()
    if directory is None:
        return []
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    files = []
    for name in names:
        device, _, inode = name.partition("-")
        try:
            files.append(((int(device, 16), int(inode, 16)), os.path.join(directory, name)))
        except ValueError:
            continue
    return files


def served_roots() -> set[tuple[int, int]]:
    """The (device, inode) of every root directory a view holds open now:
    in this process, or in another process of this user (a file left by
    one that died is removed here)."""
    with _place_guard:
        found = set(_users)
    for key, path in _served_files():
        if key in found:
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                found.add(key)
            os.close(fd)
            continue
        try:
            if _held_alone(fd, path):
                # nobody serves it: a dead process's, and the root's lock file too
                _remove_lock_file(key)
                os.unlink(path)
            else:  # the name made again since it was opened: by a server, served
                found.add(key)
        except OSError:
            pass
        finally:
            os.close(fd)  # an exclusive lock taken is let go with it
    return found


def _let_go_at_exit() -> None:
    """The views still open when the interpreter ends are let go as if
    closed: the roots this process alone served leave no files behind (a
    step another thread still holds keeps its file).  A sweep under way
    ends first (a bounded wait)."""
    for sweeper in _sweeper:
        sweeper.join(_SWEEP_EXIT_WAIT)
    _sweep_stop.set()  # past the wait: the file it is removing is its last
    for sweeper in _sweeper:
        sweeper.join(_SWEEP_EXIT_WAIT)
    with _place_guard:
        closing = _let_go_collected()
        for key in list(_users):
            _users[key] = 1
            closing.extend(_let_go(key))
    _close_all(closing)


atexit.register(_let_go_at_exit)


def let_go_lock_file(key: tuple[int, int]) -> None:
    """A view of the root ``key`` is closed: the last one's going closes the
    lock file (a process opening root after root, a server narrowing to
    each client's roots, would otherwise keep one fd per root it ever saw);
    a view opened later opens it again.  One a step still holds is kept."""
    with _place_guard:
        closing = _let_go_collected()
        closing.extend(_let_go(key))
    _close_all(closing)


def view_collected(key: tuple[int, int]) -> None:
    """A view of the root ``key`` was collected without being closed (its
    finalizer): let go at the next open or close of a view."""
    _collected.append(key)


def _let_go_collected() -> list[_LockFile]:
    closing: list[_LockFile] = []
    while _collected:
        closing.extend(_let_go(_collected.pop()))
    return closing


def _let_go(key: tuple[int, int]) -> list[_LockFile]:
    """One user fewer (``_place_guard`` held); the fd to close, if it was the last."""
    left = _users.get(key, 0) - 1
    if left > 0:
        _users[key] = left
        return []
    _users.pop(key, None)
    served = _serving.pop(key, None)
    pinned = _pinned.pop(key, None)
    found = _files.get(key)
    if found is None or found.holders or found.taking:
        if served is not None:
            # no longer served here; a lock file a step still holds is left
            # (removed after the root's next last server)
            _unserve(*served, key, found is None)
        _unpin(pinned)
        return []
    del _files[key]
    with found.guard:
        if found.kept:  # by LOCK_UN: a forked child's copy of the fd would keep it
            _unkeep(found)
    if served is not None:
        _unserve(*served, key, True)  # no longer served here: removed if served nowhere
    _unpin(pinned)  # after the flock is let go: nothing here names the inode now
    return [found]


def _unpin(pinned: tuple[int, Callable[[int], None]] | None) -> None:
    if pinned is None:
        return
    fd, close = pinned
    try:
        close(fd)
    except Exception:  # a fake filesystem's close, after that filesystem was torn down
        pass


def _close_all(files: list[_LockFile]) -> None:
    for file in files:
        try:
            file.close(file.fd)
        except Exception:  # a fake filesystem's close, after that filesystem was torn down
            pass


@dataclass(eq=False)
class TreeHold:
    """The tree lock as held by one step: the count of moves made in the
    root when it was taken (``None``: no lock file, no count)."""

    file: _LockFile | None
    moves: int | None

    def count_move(self) -> None:
        """Count one more move (held exclusively); an ``OSError`` if the
        count cannot be stored (the move is then refused)."""
        if self.file is None or self.moves is None:
            return
        self.file.store(self.moves + 1)
        self.moves += 1


# The moves (and removals of links and directories) made by this process's
# Toolboxes, on any root: roots nested in one another (a Workspace's, one
# of them on a mount inside the other, even) are different roots with
# different lock files, yet one root's move changes where the other's links
# lead.  Bumped and read under the process's tree lock (exclusive to bump).
_changes_here = [0]


def changes_here() -> int:
    """How many moves this process made so far."""
    return _changes_here[0]


def count_change_here() -> int:
    """Count one more move (the process's tree lock held exclusively); the
    new count."""
    _changes_here[0] += 1
    return _changes_here[0]


def moves_made(key: tuple[int, int], backend: Backend) -> int | None:
    """The count of moves made in the root directory ``key`` (device,
    inode) so far, read without the lock (``None``: no lock file)."""
    found = _lock_file(key)
    return found.moves(backend) if found is not None else None


@contextmanager
def tree_file_lock(key: tuple[int, int], backend: Backend, *, exclusive: bool,
                   checkpoint: Callable[[], None]) -> Iterator[TreeHold]:
    """Hold the tree lock of the root directory ``key`` (device, inode) as
    other processes see it, shared or ``exclusive`` (``flock`` through
    ``backend``, the root's, so a counting wrapper sees it); waiting polls
    ``checkpoint`` (a call's deadline, a cancel).  The caller holds this
    process's own tree lock in the same mode (no holder of this process is
    left when one asks for it exclusively)."""
    found = _lock_file(key)
    if found is None:
        yield TreeHold(None, None)
        return
    if exclusive:
        with found.guard:
            # the shared lock this process keeps (no holder: the process's
            # own tree lock is held exclusively) is let go first, not
            # converted: where flock is emulated by record locks (NFS) a
            # conversion that must wait keeps it, and two processes
            # converting theirs would wait on each other to their deadlines
            if found.kept:
                _unkeep(found)
            # held (a view closed meanwhile keeps the file open; a reader
            # does not open it again under this hold)
            found.taking = True
        try:
            try:
                locked = found.take(fcntl.LOCK_EX, backend, checkpoint)
            except BaseException:
                found.release(backend)  # a kept lock a conversion left in place: let go
                raise
            try:
                # a count read or bumped without the lock could be torn: none then
                yield TreeHold(found if locked else None,
                               found.moves(backend) if locked else None)
            finally:
                if locked:
                    found.release(backend)
        finally:
            with found.guard:
                found.taking = False
        return
    shared = take_shared(key, backend, checkpoint)
    try:
        yield TreeHold(None, shared.moves)
    finally:
        drop_shared(shared, backend)


def moves_ended(key: tuple[int, int], backend: Backend,
                checkpoint: Callable[[], None]) -> None:
    """Wait until no process holds the tree lock of the root ``key``
    exclusively (a move under way there has ended), holding nothing after.
    A lock file this process keeps is taken shared as a step takes it;
    another is opened for the wait alone and closed (``flock`` on a
    descriptor of its own, let go with it): one waiting on many roots keeps
    no descriptor of theirs.  No file: no move holds it (one that makes it
    now takes its locks after the caller's look)."""
    if _files.get(key) is not None:
        with tree_file_lock(key, backend, exclusive=False, checkpoint=checkpoint):
            return
    name = _lock_file_name(key)
    if name is None:
        return
    try:
        fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE):
            raise  # not known whether a move holds it
        return
    try:
        delay = _POLL_FIRST
        while True:
            try:
                backend.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                    return  # a filesystem without locks: no process's move is seen
            checkpoint()
            time.sleep(delay)
            delay = min(delay * 2, _POLL_MOST)
    finally:
        os.close(fd)


def _counts_read(data: bytes) -> tuple[int | None, bool, bool]:
    """:meth:`_LockFile.counts_and_mark` of the bytes read."""
    if len(data) == _COUNTS.size:  # the common file
        moves, wanted, served = _COUNTS.unpack(data)
        return moves, wanted != served, data[:_MOVES.size] == _GONE
    gone = data[:_MOVES.size] == _GONE
    # shortened by someone: no want is told
    return (_MOVES.unpack(data[:_MOVES.size])[0] if len(data) >= _MOVES.size else 0,
            False, gone)


class SharedHold(NamedTuple):
    """The tree lock held shared by one step (:func:`take_shared`): the
    lock file (``None``: none), whether it is flocked, and the count of
    moves made when it was taken (``None``: not counted)."""

    file: _LockFile | None
    locked: bool
    moves: int | None


_NO_HOLD = SharedHold(None, False, None)
_new_hold = tuple.__new__  # no lock file: the process's lock alone


def take_shared(key: tuple[int, int], backend: Backend,
                checkpoint: Callable[[], None]) -> SharedHold:
    """:func:`tree_file_lock` held shared, without a context manager (the
    hot path of every step that changes one place); :func:`drop_shared`
    lets it go."""
    found = _files.get(key)
    if found is None:
        found = _lock_file(key)
        if found is None:
            return _NO_HOLD
    guard = found.guard
    with guard:
        if not found.holders and not found.taking:
            if found.kept:
                # the common step: kept since this process's last step, so
                # no process held it exclusively since (no move made); one
                # read says the count and whether a process waits for it
                # (counts_and_mark written out: every step passes here)
                moves, wanted, gone = None, False, False
                if found.counts_moves:
                    try:
                        data = backend.pread(found.fd, _COUNTS_SIZE, 0)
                    except OSError:
                        pass  # unreadable: not counted
                    else:
                        if len(data) == _COUNTS_SIZE:  # the common file
                            moves, want, served = _unpack_counts(data)
                            # (the count _GONE marks, as an int: no slice of the bytes)
                            wanted, gone = want != served, moves == _WANTS_MOST
                        else:
                            moves, wanted, gone = _counts_read(data)
                if not wanted and not gone:
                    found.holders = 1
                    # (tuple.__new__: the NamedTuple's own __new__ is a Python frame)
                    return _new_hold(SharedHold, (found, True, moves))
                # a process waits for it exclusively: its turn first (marked
                # gone, by another program: looked at as a taker does)
                _unkeep(found)
                found.taking = True
            else:
                # no other holder in this process, none taking it; a try
                # that cannot wait is made under the guard
                try:
                    backend.flock(found.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except OSError as exc:
                    # held by another process: waited for below, as always; a
                    # filesystem without locks: the process's lock alone
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                        found.holders += 1
                        return SharedHold(found, False, None)
                    found.taking = True
                else:
                    moves, wanted, gone = found.counts_and_mark(backend)
                    if not wanted and not gone and found._still_named():
                        found.holders += 1
                        return SharedHold(found, True, moves)
                    # a process waits for it exclusively, or it was removed
                    # (taken again below, which opens the path again)
                    found.release(backend)
                    found.taking = True
            first = True
        else:
            first = False
    if not first:
        locked = _take_shared(found, backend, checkpoint)
    else:
        try:
            locked = found.take(fcntl.LOCK_SH, backend, checkpoint)
        except BaseException:
            with guard:
                found.taking = False
            raise
        with guard:
            found.taking = False
            found.holders += 1
    return SharedHold(found, locked, found.moves(backend) if locked else None)


def drop_shared(shared: SharedHold, backend: Backend) -> None:
    """Let go of a hold :func:`take_shared` gave (the last holder of this
    process keeps the flock for the next step, where the file can say a
    process waits for it; else releases it)."""
    found = shared.file
    if found is None:
        return
    with found.guard:
        found.holders -= 1
        if not found.holders and shared.locked:
            if not found.counts_moves:
                found.release(backend)
            else:
                found.used += 1
                if not found.kept:
                    _keep(found, backend)


def _take_shared(found: _LockFile, backend: Backend, checkpoint: Callable[[], None]) -> bool:
    """Join this process's shared hold of ``found``, taking the flock if
    none holds it; whether it is locked (counted as a holder either way)."""
    delay = _POLL_FIRST
    while True:
        with found.guard:
            if found.holders:
                found.holders += 1
                return True
            if not found.taking:
                found.taking = True
                break
        checkpoint()  # another holder of this process is taking it
        time.sleep(delay)
        delay = min(delay * 2, _POLL_MOST)
    try:
        locked = found.take(fcntl.LOCK_SH, backend, checkpoint)
    except BaseException:
        with found.guard:
            found.taking = False
        raise
    with found.guard:
        found.taking = False
        found.holders += 1
    return locked
