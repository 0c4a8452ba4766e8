"""What other programs change where the view's picture of the tree rests,
learnt before each call decides.

A protected or denied name that is a link protects what it leads to, and
git runs what its configs name; the view learns both when it opens, and
the links its calls meet.  While a long session keeps a Toolbox open
(``corral serve``), another program (the user's checkout, an editor, a
script) may make ``.vscode -> editor``, ``sub/.vscode -> ../editor``,
``.git/hooks -> ../scripts`` or set ``core.hooksPath``.  A call aimed
where such a link leads never passes it, so before each call the view
looks at what changed in the directories it follows:

* every directory of the tree (a work tree's ``.git`` aside), up to the
  kernel's share (:data:`WATCH_SHARE`, at most :data:`MAX_WATCHED`) where
  it watches, :data:`MAX_STAMPED` where not, and each that appears since
  (walked for links when it appears);
* each git directory and hooks directory the look at open found, and each
  directory holding a git config it read (or looked for: an include not
  there yet).

Where the kernel can watch (inotify on Linux, a capability of the root's
backend: one instance for the process, closed with its last watch), a
call pays one ``read`` of its events through the backend (after a call
that changed nothing, one question whether any wait instead, and the read
only if they do: a read of an empty queue raises), which name what
changed: a name an entry came by is looked at with one ``lstat``,
one an entry left is forgotten, and the one arrival a write of this view
makes in its directory is not looked at (counted per write; one whose
write failed is looked at), nor a name made and gone again at once (its
temporary file: nothing was there before it was made).  Elsewhere, or where no watch can be had,
each directory and config file followed is ``stat``-ed per call, and a
directory whose times moved (or moved too recently to be trusted: a
timestamp's granularity) is listed again.  A link there is learnt, one
gone forgotten; a config or a git directory's entries changed make the
view look at the tree as at open, and what git runs from is protected
from then on (never less than before).

Beyond the directories followed (a tree larger than the kernel lets the
view watch), each directory's times are kept as the look at open or a
walk lists it, and a decision links could change looks at them first
(:meth:`Freshness.look_beyond`, once a call): one whose times moved is
listed again as above; where that cannot be done within the call's wait,
the decision is refused (``not_ready``), never made on part of the tree.
"""

from __future__ import annotations

import errno
import os
import stat as st
import struct
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..._policy.gitdirs import Scan
from ..._policy.hostconfig import HOST_CONFIG_TOPS, config_tops
from ..._refusals.catalogue import Unwatched
from .links import WHOLE_TREE, LinkReader, Mounts, learn_link
from .linkwalk import walk_links

_WORK_TREE = frozenset({".git"})  # a config place that is a work tree (config_places)

if TYPE_CHECKING:
    from ....contained import Backend, DirEntry, Handle, HeldParent, Root
    from .decide import View

# directories one view follows: every directory of the tree, up to the
# kernel's share below (a record of each is kept: at most this many);
# without a watch each is stat-ed per call, so fewer.  Beyond them each
# directory's times are kept, looked at by a call links could change
MAX_WATCHED = 1 << 17
MAX_STAMPED = 256
# the part of the user's watches (fs.inotify.max_user_watches) a view
# takes: the rest stays for the user's editors and other programs, which
# watch such a tree too
WATCH_SHARE = 2
# the kernel's limit where it cannot be read (its default before Linux 5.11)
DEFAULT_WATCH_LIMIT = 8192
# directories beyond those followed whose times are kept (memory); past
# them a decision links could change is refused
MAX_BEYOND = 1 << 18
# directories of a new one walked by the call that meets it (more: in the background)
WALK_NOW = 256
# a time a directory's entries last changed this close to when it was
# looked at may hide a later change within the same tick of the clock
RACY_NS = 2_000_000_000
# names in a git directory that change what the look at open finds there
GIT_DIRECTORY_NAMES = frozenset({"config", "config.worktree", "commondir", "hooks", "gitdir"})

_IN_MODIFY = 0x2
_IN_CLOSE_WRITE = 0x8
_IN_MOVED_FROM = 0x40
_IN_MOVED_TO = 0x80
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x01000000
_IN_MASK_ADD = 0x20000000
_ENTRIES = _IN_CREATE | _IN_DELETE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_DELETE_SELF | \
    _IN_MOVE_SELF | _IN_ONLYDIR | _IN_MASK_ADD
_CONTENT = _ENTRIES | _IN_CLOSE_WRITE | _IN_MODIFY  # a directory holding a git config
_SELF = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED
_ARRIVALS = _IN_CREATE | _IN_MOVED_TO | _IN_CLOSE_WRITE | _IN_MODIFY  # a name to look at
_EVENT = struct.Struct("iIII")
_EVENT_SIZE = _EVENT.size
_UNUSUAL = _IN_Q_OVERFLOW | _IN_IGNORED
_GONE = _IN_DELETE | _IN_MOVED_FROM
_FS_ENCODING = sys.getfilesystemencoding()  # (as os.fsdecode, without its calls)
# a call reads the watch once: a program changing names in a loop queues
# events faster than a call reads them, so past one read the views look
# at every directory they follow instead (bounded work a call)
_READ_SIZE = 4096
# a read this short or shorter read the queue to its end (the longest
# event, a name of 255 bytes, would have fit)
_READ_TO_END = _READ_SIZE - _EVENT_SIZE - 256
# the most a call drops of a burst at once (the kernel queues 16,384 events)
_DROP_SIZE = 1 << 20


# a watch not to be had now, maybe later: this process's or the system's
# files, the user's instances or watches, memory
_MOMENTARY = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOSPC})


class _KernelWatch:
    """The process's one watch of directories (an inotify instance: a user
    has few), its events handed to every view watching the directory they
    name.  Opened through a root's backend (where it can watch) when a view
    first watches, and closed when the last watch goes: events left by
    views closed since are never handed to later ones."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.fd = -1
        self.tried = False  # no watch to be had here: none opened again
        self.backend: Backend | None = None  # the backend that opened it
        self.generation = 0  # counts the instances opened (a watch number is of one)
        # watch number -> (a weak reference to) each view watching that
        # directory, with its canonical path there
        self.watchers: dict[int, dict[weakref.ref[Freshness], str]] = {}
        # (instance, watch number) of views let go without a close (a
        # finalizer takes no lock: one may run on a thread holding it),
        # removed when a view next starts watching
        self.let_go: list[tuple[int, int]] = []
        self.drains = 0  # reads of the queue begun (an act's event is read by a later one)
        # the last drain read the queue to its end, and no call that acts
        # (whose own events are certain) nor view that began watching came
        # since: the next drain asks whether events wait before it reads
        # (a read of an empty queue raises, at several times a call's cost)
        self.quiet = False
        # the directories a view watches at most: the kernel's share
        self.budget = DEFAULT_WATCH_LIMIT // WATCH_SHARE
        # the views awaiting the events of their own acts done (the drain after: expired)
        self.expecting: dict[int, weakref.ref[Freshness]] = {}

    def usable(self, backend: Backend) -> bool:
        """Whether views of a root on ``backend`` can watch (the instance
        opened if none is)."""
        if not backend.watches:
            return False
        with self.lock:
            self._remove_let_go()
            return self._opened(backend)

    def _opened(self, backend: Backend) -> bool:
        if self.fd < 0 and not self.tried:
            try:
                self.fd = backend.watch_open()
            except OSError as exc:
                # out of files or memory is a moment (the next view tries
                # again); anything else is the platform's, not tried again
                self.tried = exc.errno not in _MOMENTARY
                return False
            self.backend = backend
            self.generation += 1
            self.budget = (backend.watch_limit() or DEFAULT_WATCH_LIMIT) // WATCH_SHARE
        return self.fd >= 0

    def add(self, watcher: Freshness, backend: Backend, dir_fd: int, canonical: str,
            mask: int) -> int:
        """Watch the directory open at ``dir_fd`` for ``watcher`` (by the fd:
        whatever its path is now); the watch number, or -1."""
        with self.lock:
            self._remove_let_go()
            if not self._opened(backend):
                return -1
            try:
                wd = backend.watch_add(self.fd, dir_fd, mask)
            except OSError:
                return -1
            self.quiet = False  # (each view's first call reads, as its count says)
            self.watchers.setdefault(wd, {})[watcher.ref] = canonical
            watcher.instance[0] = self.generation
            return wd

    def remove(self, watcher: Freshness | None, wd: int) -> None:
        """``watcher`` no longer watches ``wd`` (``None``: one let go); the
        kernel's watch removed with its last watcher, and the instance
        with the last watch."""
        with self.lock:
            self._remove(watcher, wd)
            self._close_unused()

    def remove_all(self, watcher: Freshness, wds: Iterable[int]) -> None:
        """``watcher`` no longer watches any of ``wds`` (a view closing):
        where no view watches through the instance then, it is closed (the
        kernel drops its every watch at once), else each watch no other
        view has is removed."""
        with self.lock:
            self._remove_let_go()
            unwatched = []
            for wd in wds:
                found = self.watchers.get(wd)
                if found is None:
                    continue
                found.pop(watcher.ref, None)
                for gone in [ref for ref in found if ref() is None]:
                    del found[gone]
                if not found:
                    del self.watchers[wd]
                    unwatched.append(wd)
            if self.watchers and self.fd >= 0 and self.backend is not None:
                for wd in unwatched:
                    try:
                        self.backend.watch_remove(self.fd, wd)
                    except OSError:
                        pass  # gone with its directory already
            self._close_unused()

    def _remove(self, watcher: Freshness | None, wd: int) -> None:
        found = self.watchers.get(wd)
        if found is None:
            return
        if watcher is not None:
            found.pop(watcher.ref, None)
        for gone in [ref for ref in found if ref() is None]:
            del found[gone]
        if not found:
            del self.watchers[wd]
            if self.fd >= 0 and self.backend is not None:
                try:
                    self.backend.watch_remove(self.fd, wd)
                except OSError:
                    pass  # gone with its directory already

    def _close_unused(self) -> None:
        """Close the instance when no view watches through it (the lock
        held): what it still queues is of views gone."""
        if self.watchers or self.fd < 0:
            return
        fd, self.fd = self.fd, -1
        self.let_go.clear()  # their watches went with it
        if self.backend is not None:
            try:
                self.backend.close(fd)
            except OSError:
                pass

    def _remove_let_go(self) -> None:
        """Remove the watches only views let go of held (the lock held)."""
        if not self.let_go:
            return
        while self.let_go:
            generation, wd = self.let_go.pop()
            if generation == self.generation:
                self._remove(None, wd)
        self._close_unused()

    def drain(self, backend: Backend, acts: bool = True) -> bool:
        """Read the events queued (one read through ``backend``: the call's
        root's, so the call's count of system calls has it; after a quiet
        drain, where the call before acted on nothing, one question whether
        any wait instead, and the read only if they do) and hand each to
        the views watching its directory; ``False`` when the watch is gone
        (a forked child's, a read that failed): the views then look for
        themselves.  ``acts``: the call draining may act (make events of
        its own), so the next drain reads at once."""
        with self.lock:
            fd = self.fd
            if fd < 0:
                return False
            self.drains = started = self.drains + 1
            if self.quiet:
                # (quiet is left as it is until the answer: asking first is
                # never wrong, only a question more than needed)
                try:
                    waiting = backend.watch_waiting(fd)
                except OSError:
                    waiting = -1  # the read says what is wrong
                if waiting == 0:
                    if self.expecting:
                        self._read_to_end(started)
                    if acts:
                        self.quiet = False
                    return True
                self.quiet = False
            # the one replace a view awaits, if that is all it awaits: the
            # read and the look whether it is just that, in one call
            awaited = self._awaited() if self.expecting else None
            data: bytes | None
            try:
                if awaited is None:
                    data = backend.read(self.fd, _READ_SIZE)
                else:
                    data = backend.watch_read_replace(self.fd, _READ_SIZE, awaited[0],
                                                      awaited[1])
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                    self._read_to_end(started)
                    self.quiet = not acts
                    return True
                self._lose()
                return False
            if data is None:  # just that replace (a short read: the queue's end)
                if awaited is not None:
                    self._take_own(awaited)
                if self.expecting:
                    self._read_to_end(started)
                self.quiet = not acts
                return True
            if not data:
                self._read_to_end(started)
                return True
            self._dispatch(data)  # (not the one replace awaited, where one is)
            if len(data) <= _READ_TO_END:
                # the queue was read to its end (what comes later: next call's)
                if self.expecting:
                    self._read_to_end(started)
                self.quiet = not acts
                return True
            # a burst by another program (a build, a checkout): what is queued
            # now is dropped in one bounded read and every place looked at
            # once instead, not 4 KB a call each with a look at everything;
            # what comes after that read is the next call's
            try:
                rest = backend.read(self.fd, _DROP_SIZE)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                    self._lose()
                    return False
                rest = b""
            if len(rest) <= _DROP_SIZE - _EVENT.size - 256:
                self._read_to_end(started)
                self.quiet = not acts
            self._everything_changed()
            return True

    def _read_to_end(self, started: int) -> None:
        """The queue was read to its end by the drain numbered ``started``
        (the lock held): an act done before it began has had its event
        read, so what the views still expect of such acts never comes."""
        if self.expecting:
            for key, ref in list(self.expecting.items()):
                watcher = ref()
                if watcher is None or watcher.expire(started):
                    del self.expecting[key]

    def _dispatch(self, data: bytes) -> None:
        """Hand the events ``data`` holds to the views watching their
        directories, each view a watch's events at once, in their order."""
        replaced = _renamed_onto(data)
        if replaced is not None:
            # the common read, a write's replace: what the loop below makes
            # of it (the temporary file made and gone again: nothing), in
            # one step
            wd, raw = replaced
            watchers = self.watchers.get(wd)
            if watchers is not None:
                arrival: list[tuple[str | None, int]] = [
                    (raw.decode(_FS_ENCODING, "surrogateescape"), _IN_MOVED_TO)]
                for ref, directory in list(watchers.items()):
                    watcher = ref()
                    if watcher is not None:
                        watcher.changed_many(directory, wd, arrival)
            return
        at, size = 0, len(data)
        unpack = _EVENT.unpack_from
        by_wd: dict[int, list[tuple[str | None, int]]] = {}
        ignored: list[int] = []
        last, events = -1, []  # (a read's events are mostly of one directory)
        # the name the event last kept made (a temporary file, mostly)
        created = b""
        while at + _EVENT_SIZE <= size:
            wd, mask, _, length = unpack(data, at)
            start = at + _EVENT_SIZE
            at = start + length
            if mask & _UNUSUAL:
                created = b""
                if mask & _IN_Q_OVERFLOW:
                    self._everything_changed()
                    continue
                ignored.append(wd)
            if wd != last:
                events = by_wd.setdefault(wd, [])
                last = wd
                created = b""
            if not length:
                events.append((None, mask))
                created = b""
                continue
            end = data.find(b"\0", start, at)  # (the name, padded with NULs to its length)
            raw = data[start:at if end < 0 else end]
            if created and mask & _GONE and raw == created:
                # made and gone again at once: nothing was there before it
                # was made (a create needs that), so nothing of it is known
                events.pop()
                created = b""
                continue
            events.append((raw.decode(_FS_ENCODING, "surrogateescape") or None, mask))
            created = raw if mask & _IN_CREATE else b""
        for wd, events in by_wd.items():
            watchers = self.watchers.get(wd)
            if watchers is not None:
                for ref, directory in list(watchers.items()):
                    watcher = ref()
                    if watcher is not None:
                        watcher.changed_many(directory, wd, events)
        for wd in ignored:
            self.watchers.pop(wd, None)

    def _own_replace(self, data: bytes, backend: Backend) -> bool:
        """Take ``data`` in where it is exactly one replace onto the one
        name the one view awaiting its own acts awaits (:meth:`Freshness
        .expect`), in a directory that view alone watches: a name made,
        moved away, and arriving at the awaited one (:func:`_renamed_onto`,
        but for the cookies: the loop of :meth:`_dispatch` makes the same of
        a read without them).  What :meth:`_dispatch` makes of it, in one
        step (``backend``'s :meth:`~Backend.watch_one_replace`: one C call
        in the native backend; :meth:`drain` reads and looks in one call,
        :meth:`~Backend.watch_read_replace`).  Whether it was; ``False``,
        nothing taken in, for any other read."""
        awaited = self._awaited()
        if awaited is None or not backend.watch_one_replace(data, awaited[0], awaited[1]):
            return False
        self._take_own(awaited)
        return True

    def _awaited(self) -> _Awaited | None:
        """The one replace :meth:`_own_replace` takes in, where one view
        awaits its own acts, one arrival, in a directory it alone watches:
        the watch number, the arrival's bytes as the event has them, that
        view, and its entry in :attr:`Freshness.expected` with its key;
        ``None`` where that is not so (the lock held)."""
        expecting = self.expecting
        if len(expecting) != 1:
            return None
        (ref,) = expecting.values()
        watcher = ref()
        if watcher is None:
            return None
        expected = watcher.expected
        if len(expected) != 1:
            return None
        ((key, entry),) = expected.items()
        wd, name = key
        watchers = self.watchers.get(wd)
        if watchers is None or len(watchers) != 1 or watcher.ref not in watchers:
            return None
        return wd, _ARRIVAL_BYTES.get(name) or _arrival(name), watcher, key, entry

    def _take_own(self, awaited: _Awaited) -> None:
        """The replace :meth:`_awaited` gave came: taken in as the loop of
        :meth:`_dispatch` counts it (the lock held)."""
        _, _, watcher, key, entry = awaited
        # the view's own arrival changes no fact but one of its own name
        watcher._facts.pop((entry[1], key[1]), None)
        entry[0] -= 1
        if entry[0] <= 0:
            del watcher.expected[key]
            del self.expecting[id(watcher)]  # every act's event came: none for a drain to expire

    def _everything_changed(self) -> None:
        """Events were lost or left unread (the lock held): every view
        looks at each directory it follows (and no longer expects the
        events of its own acts: they may be among those lost)."""
        for every in self.watchers.values():
            for ref in list(every):
                watcher = ref()
                if watcher is not None:
                    watcher.dirty = watcher.everything = True
                    watcher.expected.clear()

    def _lose(self) -> None:
        """No watch from here on (the lock held): every view looks for itself."""
        for watchers in self.watchers.values():
            for ref in list(watchers):
                watcher = ref()
                if watcher is not None:
                    watcher.dirty = watcher.everything = True
                    watcher.watching = False
        self.watchers.clear()
        self.let_go.clear()
        if self.fd >= 0 and self.backend is not None:
            try:
                self.backend.close(self.fd)
            except OSError:
                pass
        self.fd = -1

    def after_fork(self) -> None:
        """A child's copy of the instance reports the parent's watches too
        (and the parent's reads take its events): the child lets it go, its
        views look for themselves (the lock is made anew: one held at the
        fork stays held)."""
        self.lock = threading.Lock()
        self.tried = True
        with self.lock:
            self._lose()


def _renamed_onto(data: bytes) -> tuple[int, bytes] | None:
    """``(watch, name)`` where ``data`` is exactly three events of one
    watch: a name made, moved away, and that move's arrival at ``name``
    (a temporary file renamed onto ``name``); else ``None``."""
    size = len(data)
    if size < 3 * _EVENT_SIZE:
        return None
    unpack = _EVENT.unpack_from
    wd, mask, _, length = unpack(data, 0)
    second = _EVENT_SIZE + length  # the move away, of a name as long
    third = second + second  # the arrival
    start = third + _EVENT_SIZE
    if mask != _IN_CREATE or not length or size <= start:
        return None
    moved = unpack(data, second)
    cookie = moved[2]
    if moved != (wd, _IN_MOVED_FROM, cookie, length) or \
            unpack(data, third) != (wd, _IN_MOVED_TO, cookie, size - start) or \
            data[_EVENT_SIZE:second] != data[second + _EVENT_SIZE:third]:
        return None
    end = data.find(b"\0", start)
    raw = data[start:size if end < 0 else end]
    return (wd, raw) if raw else None


# name awaited -> its arrival event's bytes from its length on (the name,
# padded with NULs as the kernel pads it: to a multiple of the event's
# size, one NUL at least)
_ARRIVAL_BYTES: dict[str, bytes] = {}
#: what :meth:`_KernelWatch._awaited` gives: the watch number, the
#: arrival's bytes, the view awaiting it, its key and entry in its expected
_Awaited = tuple[int, bytes, "Freshness", tuple[int, str], list[Any]]
_ARRIVALS_KEPT = 4096
_LENGTH = struct.Struct("I")


def _arrival(name: str) -> bytes:
    raw = name.encode(_FS_ENCODING, "surrogateescape")
    padded = (len(raw) // _EVENT_SIZE + 1) * _EVENT_SIZE
    arrival = _LENGTH.pack(padded) + raw.ljust(padded, b"\0")
    if len(_ARRIVAL_BYTES) >= _ARRIVALS_KEPT:
        _ARRIVAL_BYTES.clear()
    _ARRIVAL_BYTES[name] = arrival
    return arrival


_KERNEL = _KernelWatch()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_KERNEL.after_fork)


def _let_go(watched: dict[str, int], instance: list[int]) -> None:
    """A view let go without a close: its watches removed when a view next
    starts watching (numbers of the instance it watched through)."""
    _KERNEL.let_go.extend((instance[0], wd) for wd in watched.values() if wd >= 0)


def _no_view() -> View | None:
    return None  # (a Freshness not bound to its view yet)


def _times(found: os.stat_result) -> tuple[int, int, int, int]:
    return found.st_ino, found.st_mtime_ns, found.st_ctime_ns, found.st_size


class Freshness:
    """One view's look at what other programs changed (see the module doc)."""

    def __init__(self, root: Root) -> None:
        # the view it is bound to (:meth:`bind`; the view owns this: no cycle to wait for)
        self._view_ref: Callable[[], View | None] = _no_view
        self.ref = weakref.ref(self)  # how the watch knows it (it keeps no view alive)
        self._root = root
        self._backend = root.backend  # (a Root's backend is fixed: read once, not each call)
        self._begun = False  # whether watching was decided (:meth:`begin`)
        # directory followed by the look at open's own listing -> the
        # directories it holds (what follows on below it needs no listing again)
        self._listed_at_open: dict[str, list[str]] = {}
        # what is known of the root's filesystem (mounted while the root is
        # open), and of those one walk meets (made anew for each walk below)
        self._root_mount: dict[int, bool] = {}
        self._mounts = Mounts(root.backend)
        self._guard = threading.Lock()
        self._busy = False  # a thread is taking in what changed: others wait for it
        # directory -> each name changed there, and whether its last change
        # brought an entry (looked at) or took it away (forgotten); None:
        # look at all of it.  Filled by the watch
        self.pending: dict[str, dict[str, bool] | None] = {}
        self.everything = False  # the watch lost events: look at everything again
        self.lost: set[str] = set()  # followed directories moved or removed (the watch's)
        # something waits to be taken in (or a thread is taking it in): set
        # before what it stands for, cleared by the thread that took it in
        self.dirty = False
        self.watching = False
        self._watched: dict[str, int] = {}  # canonical directory -> watch number (or -1)
        self._by_wd: dict[int, str] = {}  # watch number -> the directory it follows now
        self.instance = [0]  # the instance its watches are of (the let-go finalizer's)
        weakref.finalize(self, _let_go, self._watched, self.instance)
        # directory -> its entries that are links or directories
        self._entries: dict[str, set[str]] = {}
        self._inodes: dict[str, int] = {}  # followed directory -> its inode when followed
        # (no watch) directory or config file -> its times, and when they were taken
        self._stamps: dict[str, tuple[tuple[int, int, int, int] | None, int]] = {}
        self._git_dirs: set[str] = set()
        self._hook_dirs: set[str] = set()
        self._configs: set[str] = set()
        # directories listed that hold a host's config (with the names it
        # may lie under): read where the look at open did not reach
        self.config_places: dict[str, frozenset[str]] = {}
        self._places_grew = False  # one noted since they were last read
        self._config_dirs: set[str] = set()
        self._content: set[str] = set()  # directories watched for their files' writes too
        self._stamped = False  # (no watch) every place followed has a stamp
        self._protected: set[str] = set()
        self._python_dirs: set[str] = set()
        # (watch number, name) -> [acts of this view under way or done whose
        # one arrival event there needs no look, the directory, the drain
        # after which it has been read (-1: an act under way)]
        self.expected: dict[tuple[int, str], list[Any]] = {}
        # counts the watch's events read (but the view's own arrivals, which
        # drop the facts of their names alone) and the changes taken in: a
        # fact of a directory's entries remembered under one count holds
        # while it stays (:meth:`entries_fact`)
        self._changes = 0
        self._facts: dict[tuple[str, str], tuple[int, int, bool]] = {}
        # directory of the tree beyond those followed -> its times, and a
        # time before its last listing began (a change since shows in them,
        # or came too soon after to be told: listed again).  Filled by the
        # look at open and the walks; looked at by :meth:`look_beyond`
        self.beyond: dict[str, tuple[tuple[int, int, int, int] | None, int]] = {}
        self.beyond_full = False  # more than MAX_BEYOND: the rest's changes are not known
        self._beyond_guard = threading.Lock()
        # the running call the directories beyond were looked at for (each
        # call's catch_up asks for a look again)
        self.beyond_looked_for: object | None = None

    # -- at open ------------------------------------------------------------------------

    def bind(self, view: View) -> None:
        """Serve ``view`` (the one whose root this follows)."""
        self._view_ref = weakref.ref(view)
        if self.beyond or self.beyond_full:
            view.unsettle()

    def begin(self) -> None:
        """Decide whether the kernel watches here, before the look at open
        lists the tree through :meth:`listed`."""
        if not self._begun:
            self._begun = True
            self.watching = _KERNEL.usable(self._root.backend)
            root, backend = self._root, self._root.backend
            try:
                device = backend.fstat(root.fileno()).st_dev
                self._root_mount = {device: Mounts(backend).kernels(root.fileno(), device)}
            except OSError:
                pass
            self._mounts = Mounts(backend, self._root_mount)

    def listed(self, rel: str, handle: Handle) -> list[DirEntry]:
        """The look at open's listing of ``rel``, open at ``handle``: the
        directory followed too (watched before it is listed: a change
        after the listing is an event), up to the bound, from that one
        listing; its entries."""
        directory = handle.path
        info = handle.stat()
        if self._mounts.kernels(handle.fileno(), info.st_dev):
            return []  # /proc, /sys: nothing there for the look, nor to follow
        if directory != rel or directory in self._watched:
            return handle.scandir()  # through a link, or followed already
        if len(self._watched) >= self._bound():
            self.stamp_beyond(directory, info, time.time_ns())
            return handle.scandir()
        entries = self._record(directory, handle, content=False, info=info)
        if entries is None:
            return handle.scandir()
        self._listed_at_open[directory] = [entry.path for entry in entries
                                           if entry.name != ".git"
                                           and entry.is_dir(follow_symlinks=False)]
        return entries

    def start(self, found: Scan, looked_since_ns: int) -> tuple[tuple[str, int], ...]:
        """Follow every directory of the tree (watched, or stamped where
        nothing watches) and what the look at open (``found``, begun at
        ``looked_since_ns``) rests on; what changed between that look and
        now is taken in at once.  The directories that look followed
        through :meth:`listed` are not listed again: the following goes
        on where it stopped, learning the links it meets.  Returns where
        the walk for the links met by neither starts (each directory with
        its depth)."""
        self.begin()
        self._protected.update(found.dirs)
        self._python_dirs.update(found.python_dirs)
        self._follow(".", content=False)
        listed, self._listed_at_open = self._listed_at_open, {}
        self._take_scan(found)
        # a link made in a git place after the look listed it, before the watch
        for directory in list(self._watched):
            if directory != "." and directory not in listed:
                self._look_at(directory, None, fresh=True)
        if listed:
            left = self._follow_on(found.unlooked, listed)
            if found.unlooked == (WHOLE_TREE,):
                left = found.unlooked  # links past those the look learnt: every one walked for
        else:
            self._follow_tree(".", new=False)
            left = found.unlooked
        changed = False
        for config in sorted(self._configs):
            taken = time.time_ns()
            stamp = self._stamp(config)
            if not self.watching:
                self._stamps[config] = (stamp, taken)
            changed = changed or stamp is None or stamp[2] >= looked_since_ns - RACY_NS
        self._stamped = not self.watching
        self._mounts = Mounts(self._root.backend, self._root_mount)  # (of this walk)
        if changed:
            self.look_again()  # changed while the look read it, maybe (or not there yet)
        if not found.complete:  # host configs below where the look went: read now
            more = self._view.take_config_places(self.config_places)
            if more is not None:
                self._take_scan(more)
        self._places_grew = False
        return left

    def _take_scan(self, found: Scan) -> None:
        """Follow the git directories, hooks directories and config files ``found`` names."""
        for config in found.configs:
            self._configs.add(config)
            directory = config.rpartition("/")[0] or "."
            self._config_dirs.add(directory)
            if config.endswith(("/config", "/config.worktree")) or config in (
                    "config", "config.worktree"):
                self._git_dirs.add(directory)
        self._hook_dirs.update(found.hooks)
        for directory in (*sorted(self._git_dirs), *sorted(self._config_dirs),
                          *found.hooks):
            self._follow(directory, content=directory in self._config_dirs)

    def _bound(self) -> int:
        return min(MAX_WATCHED, _KERNEL.budget) if self.watching else MAX_STAMPED

    def unwatched(self) -> Unwatched:
        """Why directories lie beyond those followed (a refusal says it)."""
        if self.beyond_full:
            return Unwatched.TOO_MANY
        if self.watching:
            return Unwatched.WATCH_SHARE if _KERNEL.budget < MAX_WATCHED else \
                Unwatched.WATCH_BOUND
        if not self._root.backend.watches or _KERNEL.tried:
            return Unwatched.NO_WATCH
        return Unwatched.WATCH_REFUSED  # a limit of the moment: instances, watches, memory

    def _follow(self, directory: str, *, content: bool,
                again: bool = False) -> list[DirEntry] | None:
        """Watch ``directory`` (or stamp it where nothing watches), and
        record its links and directories: its entries, listed once it is
        watched (``None``: followed already, beyond the bound, or not a
        directory there).  ``again``: what is there now is new (a record
        under its path is of another directory's)."""
        if directory in self._watched:
            if not again:
                if content and directory not in self._content and \
                        self._watched[directory] >= 0:
                    self._watch(directory, _CONTENT)  # a config found there since: its changes too
                return None
            self._unfollow(directory)
        if len(self._watched) >= self._bound():
            return None
        try:
            handle = self._root.open_handle(directory, os.O_RDONLY | os.O_DIRECTORY)
        except (OSError, ValueError):
            return None  # not there (yet), or a link: its parent's change says when it comes
        with handle:
            if handle.path != directory:
                return None  # reached through a link: its own place is followed, if at all
            return self._record(directory, handle, content=content)

    def _record(self, directory: str, handle: Handle, *, content: bool,
                info: os.stat_result | None = None) -> list[DirEntry] | None:
        """Watch (or stamp) ``directory``, open at ``handle`` (its ``info``
        if taken, its filesystem looked at), and record its links and directories from one listing
        after the watch; its entries (``None``: it cannot be listed; none,
        not followed: it lies in /proc, /sys, where every name is the
        kernel's, see :class:`~.linkwalk.Mounts`)."""
        taken = time.time_ns()
        if info is None:  # (else the caller looked at its filesystem)
            try:
                info = handle.stat()
            except OSError:
                return None
            if self._mounts.kernels(handle.fileno(), info.st_dev):
                return []
        wd = -1
        if self.watching:
            mask = _CONTENT if content else _ENTRIES
            wd = _KERNEL.add(self, self._root.backend, handle.fileno(), directory, mask)
            if wd >= 0 and mask == _CONTENT:
                self._content.add(directory)
        try:
            entries = handle.scandir()
        except OSError:
            return None
        if wd >= 0:
            stale = self._by_wd.get(wd)
            if stale is not None and stale != directory:
                # the same directory followed under a name it had before (moved)
                self._forget_place(stale)
            self._by_wd[wd] = directory
        self._watched[directory] = wd
        self._inodes[directory] = info.st_ino
        self._entries[directory] = {entry.name for entry in entries
                                    if entry.is_symlink() or entry.is_dir(follow_symlinks=False)}
        self._note_places(directory, entries)
        if self.watching and wd < 0:
            self._stop_watching()
        elif not self.watching:
            self._stamps[directory] = (_times(info), taken)
        return entries

    def _forget_place(self, directory: str) -> None:
        """Forget what is recorded of the followed ``directory`` (its watch,
        if any, left as it is)."""
        wd = self._watched.pop(directory, -1)
        if wd >= 0 and self._by_wd.get(wd) == directory:
            del self._by_wd[wd]
        self._entries.pop(directory, None)
        self._inodes.pop(directory, None)
        self._stamps.pop(directory, None)
        self._content.discard(directory)

    def _unfollow(self, directory: str) -> None:
        """Stop following ``directory`` and every directory below it."""
        prefix = directory + "/" if directory != "." else ""
        for place in [d for d in self._watched if d == directory or d.startswith(prefix)]:
            wd = self._watched[place]
            owner = self._by_wd.get(wd) if wd >= 0 else None
            self._forget_place(place)
            if wd >= 0 and owner == place:
                _KERNEL.remove(self, wd)

    def _follow_tree(self, top: str, *, new: bool) -> bool:
        """Follow ``top`` and the directories below it (a work tree's
        ``.git`` left out: git's places are followed as such), learning
        their links; whether a git directory is among them.  ``new``: they
        appeared since (each link learnt again; more than :data:`WALK_NOW`
        directories: the rest learnt in the background, not followed)."""
        view = self._view
        links = view.links
        queue: deque[str] = deque([top])
        walked = 0
        git = False
        self._mounts = Mounts(self._root.backend, self._root_mount)
        reader = LinkReader(self._root)
        while queue:
            if new and walked >= WALK_NOW:
                view.learn_every_link_later(tuple((rest, rest.count("/") + 1)
                                                  for rest in queue))
                return True  # what it holds is not known yet: git's places looked at too
            directory = queue.popleft()
            walked += 1
            entries = self._follow(directory, content=False, again=new)
            if entries is None:
                if directory != "." and directory not in self._watched and \
                        len(self._watched) >= self._bound():
                    # the rest: walked on the view's thread, their times kept (beyond)
                    queue.appendleft(directory)
                    view.learn_every_link_later(tuple((rest, rest.count("/") + 1)
                                                      for rest in queue))
                    return True
                try:
                    entries = view.look.entries(directory)
                except OSError:
                    continue
            for entry in entries:
                if entry.is_symlink():
                    if new or not links.knows(entry.path):
                        reader.learn(links, entry.path)
                elif entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                    queue.append(entry.path)
                if entry.name == ".git":
                    git = True
        return git

    def _follow_on(self, starts: Iterable[tuple[str, int]], listed: dict[str, list[str]]
                   ) -> tuple[tuple[str, int], ...]:
        """Follow the directories below ``starts`` (each with its depth) the
        look at open left, breadth first, learning their links, up to the
        bound; a start the look followed itself (in ``listed``, with the
        directories it holds) is gone through without a listing.  Returns
        the directories left unlisted, each with its depth."""
        links, reader = self._view.links, LinkReader(self._root)
        queue: deque[tuple[str, int]] = deque(starts)
        while queue:
            directory, depth = queue.popleft()
            below = listed.get(directory)
            if below is not None:
                queue.extend((path, depth + 1) for path in below)
                continue
            if len(self._watched) >= self._bound():
                queue.appendleft((directory, depth))
                return tuple(queue)
            entries = self._follow(directory, content=False)
            if entries is None:
                if len(self._watched) >= self._bound():  # (no watch to be had: fewer followed)
                    queue.appendleft((directory, depth))
                    return tuple(queue)
                if directory not in self._watched:
                    continue  # gone, or a link now: its parent's change says what came
                try:  # a git place followed as such: what lies below it is followed too
                    entries = self._view.look.entries(directory)
                except OSError:
                    continue
            for entry in entries:
                if entry.is_symlink():
                    if not links.knows(entry.path):
                        reader.learn(links, entry.path)
                elif entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                    queue.append((entry.path, depth + 1))
        return ()

    def _watch(self, directory: str, mask: int) -> int | None:
        """The kernel's watch of ``directory`` (opened by the root's own
        resolver, watched by its fd) with ``mask`` added: its number, -1
        where none can be had, ``None`` where it is not a directory there."""
        try:
            handle = self._root.open_handle(directory, os.O_RDONLY | os.O_DIRECTORY)
        except (OSError, ValueError):
            return None
        with handle:
            if handle.path != directory:
                return None  # reached through a link: its own place is followed, if at all
            wd = _KERNEL.add(self, self._root.backend, handle.fileno(), directory, mask)
        if wd >= 0 and mask == _CONTENT:
            self._content.add(directory)
        return wd

    def _stop_watching(self) -> None:
        """No watch for this view (the instance's limits reached, a forked
        child's, a read that failed): the directories and configs followed
        (as many as are stamped) are stamped from here on, and looked at
        on the next call."""
        self.watching = False
        with _KERNEL.lock:
            self.expected.clear()
        for directory, wd in list(self._watched.items()):
            if wd >= 0:
                _KERNEL.remove(self, wd)
            self._watched[directory] = -1
        self._by_wd.clear()
        for directory in list(self._watched)[MAX_STAMPED:]:
            self._forget_place(directory)  # beyond what is stat-ed a call
            self.beyond[directory] = (None, 0)  # (never equal to a stamp taken: listed)
        if self.beyond:
            view = self._view_ref()
            if view is not None:
                view.unsettle()
        for place in (*self._watched, *self._configs):
            self._stamps[place] = (None, 0)  # never equal to a stamp taken: looked at
        self._stamped = True

    # -- the directories beyond those followed ------------------------------------------

    def stamp_beyond(self, directory: str, info: os.stat_result, taken: int) -> None:
        """Keep the times ``info`` of ``directory``, a directory of the tree
        not followed, listed after ``taken`` (ns)."""
        if directory in self._watched:
            return
        beyond = self.beyond
        if not beyond:
            view = self._view_ref()
            if view is not None:
                view.unsettle()  # (unbound: :meth:`bind` does it)
        if directory not in beyond and len(beyond) >= MAX_BEYOND:
            self.beyond_full = True
            return
        beyond[directory] = (_times(info), taken)

    def _beyond_same(self, directory: str, inode: int) -> bool:
        """Whether ``directory`` is the directory beyond those followed
        whose times are kept (its own look at them tells its changes)."""
        kept = self.beyond.get(directory)
        return kept is not None and kept[0] is not None and kept[0][0] == inode

    def look_beyond(self, call: object, checkpoint: Callable[[], None] | None,
                    grace: float) -> bool:
        """Before a decision links could change, where directories lie
        beyond those followed: each whose times moved since it was listed
        (or too soon before to be sure) is listed again, a link made there
        learnt, one gone forgotten, a host config that came there read, a
        directory that appeared walked for links and configs (its
        directories' times kept).  Once per running ``call`` (its
        :meth:`catch_up` asks again); whether it was done within ``grace``
        seconds (``checkpoint`` polled: a cancel or the call's deadline
        stops it)."""
        if self.beyond_full:
            return False
        if call is not None and self.beyond_looked_for is call:
            return True
        until = time.monotonic() + grace
        new: list[tuple[str, int]] = []
        git = False
        with self._beyond_guard, _Opened(self._root) as opened:
            reader = LinkReader(self._root)
            for index, (directory, (stamp, taken)) in enumerate(list(self.beyond.items())):
                if not index & 255:
                    if checkpoint is not None:
                        checkpoint()
                    if time.monotonic() > until:
                        return False
                now_taken = time.time_ns()
                handle = opened.directory(directory)
                try:
                    found = handle.stat() if handle is not None else None
                except OSError:
                    found = None
                now = _times(found) if found is not None else None
                if now == stamp and stamp is not None and taken - stamp[2] >= RACY_NS:
                    continue
                git = self._relist_beyond(directory, found, now_taken, reader, new,
                                          handle) or git
            if new:
                places: dict[str, frozenset[str]] = {}
                left, met_git = walk_links(self._root, self._view.links, new,
                                           stamp=self.stamp_beyond, most=WALK_NOW,
                                           places=places)
                git = git or met_git
                for place, tops in places.items():
                    if self.config_places.get(place, frozenset()) >= tops:
                        continue
                    self.config_places[place] = self.config_places.get(place, frozenset()) | tops
                    self._places_grew = True
                if left:
                    self._view.learn_every_link_later(tuple(left))
        if git or self._places_grew:  # a host config came: read before the call decides
            with self._guard:
                self.look_again()
        self.beyond_looked_for = call
        return True

    def _relist_beyond(self, directory: str, found: os.stat_result | None, taken: int,
                       reader: LinkReader, new: list[tuple[str, int]],
                       handle: Handle | None) -> bool:
        """List the directory beyond ``directory`` again (``found``: what is
        there now, looked at after ``taken``, open as ``handle``): its links
        learnt, those gone forgotten, the directories that appeared in
        ``new`` (to walk); whether a git directory is there."""
        links = self._view.links
        prefix = directory + "/"
        if found is None or handle is None or not st.S_ISDIR(found.st_mode):
            self.beyond.pop(directory, None)  # gone: so are its links (its parent tells what came)
            for location in links.below(directory):
                links.forget(location)
            return False
        self.beyond[directory] = (_times(found), taken)
        try:
            entries = self._view.look.entries_in(directory, handle)
        except OSError:
            return False
        self._note_places(directory, entries)  # a host config there is read (look_again)
        names = set()
        git = False
        depth = directory.count("/") + 2
        for entry in entries:
            name, path = entry.name, entry.path
            names.add(name)
            git = git or name == ".git"
            if entry.is_symlink():
                reader.learn(links, path)
                continue
            if path in links.locations:
                links.forget(path)
            if name != ".git" and entry.is_dir(follow_symlinks=False) and \
                    path not in self.beyond and path not in self._watched:
                new.append((path, depth))
        for location in links.below(directory):
            rest = location[len(prefix):]
            if "/" not in rest and rest not in names:
                links.forget(location)
        return git

    def close(self) -> None:
        self.beyond.clear()
        _KERNEL.remove_all(self, [wd for wd in self._watched.values() if wd >= 0])
        self._watched.clear()
        self._by_wd.clear()

    # -- this view's own acts ---------------------------------------------------------

    def expect(self, directory: str, name: str) -> tuple[int, str, str] | None:
        """This view is about to make ``name`` arrive in the followed
        ``directory`` (canonical) by an act that, done, makes exactly one
        arrival event there: that event needs no look (the key to give
        :meth:`acted`; ``None``: none expected, the event looked at)."""
        if not self.watching:
            return None
        wd = self._watched.get(directory, -1)
        if wd < 0 or self._by_wd.get(wd) != directory:
            return None
        with _KERNEL.lock:
            if self.lost and any(directory == gone or directory.startswith(gone + "/")
                                 or gone == "." for gone in self.lost):
                return None  # its watch may be of another directory now
            key = (wd, name)
            entry = self.expected.get(key)
            if entry is None:
                self.expected[key] = [1, directory, -1]
            else:
                entry[0] += 1
                entry[2] = -1
        return (wd, name, directory)

    def acted(self, key: tuple[int, str, str] | None, *, made: bool) -> None:
        """The act :meth:`expect` was told of is done (``made``: it
        returned, its event queued) or failed (made nothing there: an
        event it let pass unlooked at was another program's, looked at)."""
        if key is None:
            return
        wd, name, directory = key
        if made:  # (no lock: the watch's reader may have taken it already, which is as well)
            entry = self.expected.get((wd, name))
            if entry is not None and entry[2] < 0:
                entry[2] = _KERNEL.drains  # read by a drain begun after this one
                _KERNEL.expecting[id(self)] = self.ref
            return
        with _KERNEL.lock:
            entry = self.expected.get((wd, name))
            if entry is not None:
                entry[0] -= 1
                if entry[0] <= 0:
                    del self.expected[(wd, name)]
                return
            self.changed(directory, name, lost=False, arrived=True)

    def replace_own(self, held: HeldParent, directory: str, data: bytes) -> None:
        """``held.replace(data)``: the file ``held`` opened in the followed
        ``directory`` (canonical) replaced, its one arrival expected as
        :meth:`expect` then :meth:`acted` expect it, the entry they share
        looked up once."""
        name = held.name
        wd = self._watched.get(directory, -1)
        if wd < 0 or not self.watching or self._by_wd.get(wd) != directory:
            held.replace(data)
            return
        key = (wd, name)
        expected = self.expected
        with _KERNEL.lock:
            if self.lost and any(directory == gone or directory.startswith(gone + "/")
                                 or gone == "." for gone in self.lost):
                entry = None  # its watch may be of another directory now
            else:
                entry = expected.get(key)
                if entry is None:
                    entry = expected[key] = [1, directory, -1]
                else:
                    entry[0] += 1
                    entry[2] = -1
        if entry is None:
            held.replace(data)
            return
        try:
            held.replace(data)
        except BaseException:
            self.acted((wd, name, directory), made=False)
            raise
        # (no lock: the watch's reader may have taken it already, which is as well)
        if entry[2] < 0 and expected.get(key) is entry:
            entry[2] = _KERNEL.drains  # read by a drain begun after this one
            _KERNEL.expecting[id(self)] = self.ref

    def expire(self, started: int) -> bool:
        """The drain numbered ``started`` read the queue to its end (the
        watch's lock held): an act done before it began that is still
        expected made no event here (its directory's watch went): not
        expected any longer.  Whether nothing done is expected now."""
        done = True
        for key, entry in list(self.expected.items()):
            if 0 <= entry[2] < started:
                del self.expected[key]
            elif entry[2] >= 0:
                done = False
        return done

    # -- per call ---------------------------------------------------------------------

    @property
    def _view(self) -> View:
        view = self._view_ref()
        if view is None:
            raise RuntimeError("the view was let go")
        return view

    def changed_many(self, directory: str, wd: int, events: list[tuple[str | None, int]]
                     ) -> None:
        """The watch ``wd`` saw ``events`` (name, mask) in ``directory``, in
        their order: each name's last change kept (an entry that came by
        it looked at, one that went forgotten), this view's own acts'
        arrivals left out, and a name gone that was neither a known link
        nor a directory left out too (nothing to forget).  Called under
        the watch's lock."""
        names: dict[str, bool] = {}
        expected = self.expected
        for name, mask in events:
            if name is None or mask & _SELF:
                self._changes += 1
                self.changed(directory, name, lost=bool(mask & _SELF))
            elif not mask & _ARRIVALS:
                names[name] = False
            else:
                entry = expected.get((wd, name)) if expected else None
                if entry is None:
                    names[name] = True
                else:  # this view's own act's: nothing to look at, no fact changed but its name's
                    self._facts.pop((directory, name), None)
                    entry[0] -= 1
                    if entry[0] <= 0:
                        del expected[(wd, name)]
                        if not expected:  # every act's event came: none for a drain to expire
                            _KERNEL.expecting.pop(id(self), None)
        if not names:
            return
        self._changes += 1  # another program's event (a fact of any entry may have changed)
        known = self._entries.get(directory, ())
        view = self._view_ref()
        located = view.links.locations if view is not None else ()
        prefix = "" if directory == "." else directory + "/"
        for name, arrived in names.items():
            if arrived or name in known or (located and prefix + name in located):
                self.changed(directory, name, lost=False, arrived=arrived)

    def changed(self, directory: str, name: str | None, *, lost: bool,
                arrived: bool = True) -> None:
        """``name`` changed in ``directory`` (``None`` or ``lost``: the
        directory itself; ``arrived``: an entry came by that name, else one
        went).  Called under the watch's lock."""
        self.dirty = True
        if lost:
            self.lost.add(directory)
            self.pending[directory] = None
            if self.expected:  # its watch no longer follows that path: nothing expected there
                below = directory + "/"
                for key, awaited in list(self.expected.items()):
                    if directory in (".", awaited[1]) or awaited[1].startswith(below):
                        del self.expected[key]
            return
        names = self.pending.get(directory, {})
        if names is not None and name is not None:
            names[name] = arrived
            self.pending[directory] = names
        else:
            self.pending[directory] = None

    def catch_up(self, acts: bool = True) -> None:
        """Take in what other programs changed since the last call (one
        read of the watch, through the root's backend; without a watch, a
        ``stat`` of each directory and config followed).  ``acts``: the
        call may act after this (:meth:`_KernelWatch.drain`)."""
        self.beyond_looked_for = None
        if self.watching:
            if not _KERNEL.drain(self._backend, acts):
                self.watching = False
                self.everything = self.dirty = True
            if not self.dirty:
                return  # the common call: nothing changed where the view looks
        else:
            if not self._stamped:
                with self._guard:
                    self._stop_watching()
            if not self._stale() and not self._busy:
                return
        with self._guard:
            self._busy = self.dirty = True
            try:
                self._take_in()
            finally:
                with _KERNEL.lock:  # the watch's reader sets these under it
                    self._busy = False
                    self.dirty = bool(self.pending or self.everything or self.lost)

    def _stale(self) -> bool:
        """(No watch) whether a directory or config followed changed, or
        was last looked at too soon after a change to be sure."""
        if self.pending or self.everything:
            return True
        for place, (stamp, taken) in self._stamps.items():
            now = self._stamp(place)
            if now != stamp or stamp is None or taken - stamp[2] < RACY_NS:
                return True
        return False

    def _take_in(self) -> None:
        with _KERNEL.lock:
            self._changes += 1
            pending, self.pending = self.pending, {}
            everything, self.everything = self.everything, False
            lost, self.lost = self.lost, set()
        if not self.watching:
            for place, (stamp, taken) in list(self._stamps.items()):
                now_taken = time.time_ns()
                now = self._stamp(place)
                if now != stamp or stamp is None or taken - stamp[2] < RACY_NS:
                    self._stamps[place] = (now, now_taken)
                    if place in self._watched:
                        pending[place] = None
                    else:
                        everything = True  # a config changed
        if everything:
            pending = dict.fromkeys(self._watched)
        again = everything
        for directory in lost:
            self._follow_again(directory)
        for directory, names in pending.items():
            if directory in self._hook_dirs or (directory in self._config_dirs and (
                    names is None or any((name if directory == "." else f"{directory}/{name}")
                                         in self._configs for name in names))) or (
                    directory in self._git_dirs and (
                        names is None or not GIT_DIRECTORY_NAMES.isdisjoint(names))):
                again = True
            if self._look_at(directory, names):
                again = True  # a git directory appeared, or a host's config
        if again or self._places_grew:
            self.look_again()

    def _follow_again(self, directory: str) -> None:
        """A followed directory that went (moved, removed): it and what
        was followed below it no longer; what is at its path now followed
        as new (a directory moved elsewhere in the tree is followed there
        as its new parent's change says)."""
        self._unfollow(directory)
        if directory in self._config_dirs or directory in self._hook_dirs or \
                directory in self._git_dirs:
            self._follow(directory, content=directory in self._config_dirs)
            return
        try:
            found = self._root.lstat(directory)
        except (OSError, ValueError):
            return
        if st.S_ISDIR(found.st_mode):
            self._follow_tree(directory, new=True)

    def _look_at(self, directory: str, names: dict[str, bool] | Iterable[str] | None, *,
                 fresh: bool = False) -> bool:
        """Look at ``names`` in ``directory`` (each with whether an entry
        came by it last, else it went; ``None``: every entry, and every one
        it held): a link learnt, one gone forgotten, a directory that is
        new followed and walked for links; whether a git directory appeared."""
        git = False
        view = self._view
        links = view.links
        known = self._entries.setdefault(directory, set())
        prefix = "" if directory in (".", "") else directory + "/"
        if names is None:
            names = known | self._listing(directory)
        looked = names if isinstance(names, dict) else dict.fromkeys(names, True)
        for name, arrived in looked.items():
            path = prefix + name
            found = None
            if arrived:  # (one that went last is gone: nothing to look at)
                try:
                    found = self._root.lstat(path)
                except (OSError, ValueError):
                    pass
            if found is None:
                known.discard(name)
                links.forget(path)
                continue
            if st.S_ISLNK(found.st_mode):
                if fresh and links.knows(path):
                    continue
                known.add(name)
                learn_link(self._root, links, path)
            elif st.S_ISDIR(found.st_mode):
                if path in links.locations:
                    links.forget(path)
                known.add(name)
                if self._inodes.get(path) != found.st_ino and not fresh and \
                        not self._beyond_same(path, found.st_ino):
                    git = self._walk_new(path) or name == ".git" or git
            else:
                known.discard(name)
                if path in links.locations:
                    links.forget(path)
                git = git or name == ".git"  # a .git file: a git directory elsewhere
            if not fresh:
                git = self._host_config_came(directory, name) or git
        return git

    def _host_config_came(self, directory: str, name: str) -> bool:
        """Whether ``name``, come into ``directory``, may be (or lie in) a
        host's config: its place noted, to be read (:meth:`look_again`)."""
        tops = _WORK_TREE if name == ".git" else config_tops((name,))
        if tops:
            self.config_places[directory] = self.config_places.get(directory, frozenset()) | tops
            return True
        return not HOST_CONFIG_TOPS.isdisjoint(directory.split("/"))

    def _walk_new(self, top: str) -> bool:
        """Follow a directory that appeared and every directory below it,
        learning their links (up to the bounds; the rest in the
        background); whether a git directory is among them."""
        return self._follow_tree(top, new=True)

    def look_again(self) -> None:
        """Look at the tree as at open: git's places found now are protected
        too (never fewer than before), their directories followed, the
        links met learnt."""
        view = self._view
        found = view.look_again_at_git()
        new_dirs = [d for d in found.dirs if d not in self._protected]
        new_python = [d for d in found.python_dirs if d not in self._python_dirs]
        self._protected.update(new_dirs)
        self._python_dirs.update(new_python)
        view.protect_found(new_dirs, new_python, found.whole)
        self._places_grew = False
        more = view.take_config_places(self.config_places)  # those past the look too
        if more is not None:
            self._take_scan(more)
        before = set(self._configs)
        self._take_scan(found)
        if not self.watching:
            for config in self._configs - before:
                self._stamps[config] = (self._stamp(config), time.time_ns())
        for config in self._configs:
            if config not in self._stamps and not self.watching:
                self._stamps[config] = (self._stamp(config), time.time_ns())

    def entries_fact(self, directory: str, name: str, look: Callable[[], bool]) -> bool:
        """``look()``, a fact of the entries of the followed ``directory``
        (whether one is called ``name``), remembered while the watch reads
        no event anywhere (each call reads them first) but this view's own
        arrivals of other names: looked at again after any, and every time
        where nothing watches ``directory``."""
        wd = self._watched.get(directory, -1)
        if not self.watching or self.dirty or wd < 0 or self._by_wd.get(wd) != directory:
            return look()
        changes = self._changes  # (before the look: an event read during it counts)
        known = self._facts.get((directory, name))
        if known is not None and known[0] == changes and known[1] == wd:
            return known[2]
        found = look()
        if len(self._facts) >= MAX_WATCHED:
            self._facts.clear()
        self._facts[(directory, name)] = (changes, wd, found)
        return found

    def holds_fact(self, held: HeldParent, directory: str, name: str) -> bool:
        """:meth:`entries_fact` of ``held.holds(name)``, ``held`` the
        followed ``directory`` open (no callable made for the look)."""
        wd = self._watched.get(directory, -1)
        if wd < 0 or self.dirty or not self.watching or self._by_wd.get(wd) != directory:
            return held.holds(name)
        changes = self._changes  # (before the look: an event read during it counts)
        known = self._facts.get((directory, name))
        if known is not None and known[0] == changes and known[1] == wd:
            return known[2]
        found = held.holds(name)
        if len(self._facts) >= MAX_WATCHED:
            self._facts.clear()
        self._facts[(directory, name)] = (changes, wd, found)
        return found

    # -- reading --------------------------------------------------------------------------

    def _listing(self, directory: str) -> set[str]:
        """The links and directories ``directory`` holds, by name."""
        try:
            entries = self._view.look.entries(directory)
        except OSError:
            return set()
        self._note_places(directory, entries)
        return {entry.name for entry in entries
                if entry.is_symlink() or entry.is_dir(follow_symlinks=False)}

    def _note_places(self, directory: str, entries: list[DirEntry]) -> None:
        """Note ``directory`` (listed: ``entries``) if it holds a host's config."""
        names = [entry.name for entry in entries]
        tops = config_tops(names)
        if ".git" in names:  # a work tree: its config and hooks are read too
            tops = tops | _WORK_TREE
        if tops and self.config_places.get(directory) != tops:
            self.config_places[directory] = tops
            self._places_grew = True

    def _stamp(self, place: str) -> tuple[int, int, int, int] | None:
        try:
            if place in (".", ""):
                return _times(self._root.backend.fstat(self._root.fileno()))
            return _times(self._root.lstat(place))
        except (OSError, ValueError):
            return None


class _Opened:
    """The directories one look beyond holds open, the last few: each
    directory beyond is opened from its parent's fd where this look holds
    it (one ``openat`` that follows no link), else from the root (a walk
    from the root costs an open a level: looked at so, a chain of folders
    costs the square of its depth).  ``None`` where it is not a directory
    now (gone, a link, another kind: as ``lstat`` would tell)."""

    KEPT = 16

    def __init__(self, root: Root) -> None:
        self._root = root
        self._held: dict[str, Handle] = {}

    def __enter__(self) -> _Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._held.values():
            handle.close()
        self._held.clear()

    def directory(self, rel: str) -> Handle | None:
        parent, _, name = rel.rpartition("/")
        above = self._held.get(parent) if parent else None
        try:
            if above is not None:
                handle = above.open_directory(name)
            else:
                handle = self._root.open_handle(
                    rel, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except (OSError, ValueError):
            return None
        if len(self._held) >= self.KEPT:
            oldest = next(iter(self._held))
            self._held.pop(oldest).close()
        self._held[rel] = handle
        return handle

