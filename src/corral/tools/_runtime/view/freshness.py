"""What other programs change where the view's picture of the tree rests,
learnt before each call decides.

A protected or denied name that is a link protects what it leads to, and
git runs what its configs name; the view learns both when it opens, and
the links its calls meet.  While a long session keeps a Toolbox open
(``corral serve``), another program (the user's checkout, an editor, a
script) may make ``.vscode -> editor``, ``.git/hooks -> ../scripts`` or
set ``core.hooksPath``.  Before each call the view looks at what changed
in the directories that picture rests on:

* the root directory;
* each git directory and hooks directory the look at open found, and each
  directory holding a git config it read (or looked for: an include not
  there yet);
* each directory that appeared in one of those since (where the kernel
  watches: up to :data:`MAX_WATCHED`), walked for links when it appears.

Where the kernel can watch (inotify on Linux: one instance for the
process), a call pays one ``read`` of its events, which name what
changed (each name then looked at with one ``lstat``).  Elsewhere, or
where no watch can be had, each such directory and config file is
``stat``-ed per call, and a directory whose times moved (or moved too
recently to be trusted: a timestamp's granularity) is listed again.  A
link there is learnt, one gone forgotten; a config or a git directory's
entries changed make the view look at the tree as at open, and what git
runs from is protected from then on (never less than before).

What stays: a link made after open in any other directory (``sub/.vscode
-> ../editor``) is learnt only once a call passes it, or a move makes the
view look at the tree again.
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import stat as st
import struct
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..._policy.gitdirs import Scan
from .linkwalk import walk_links
from .links import learn_link

if TYPE_CHECKING:
    from .decide import View

MAX_WATCHED = 256  # directories one view watches (new ones beyond: walked, not watched)
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
_EVENT = struct.Struct("iIII")
_READ_SIZE = 4096
# reads of the watch one call makes: a program changing names in a loop
# queues events faster than a call reads them, so past these the views
# look at every directory they follow instead (bounded work a call)
_READS_A_CALL = 1


class _KernelWatch:
    """The process's one inotify instance (a user has few), its events
    handed to every view watching the directory they name."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.fd = -1
        self.tried = False
        self._libc: ctypes.CDLL | None = None
        self.poller: select.poll | None = None  # whether events wait, without a read
        # watch number -> the views watching that directory, each with its canonical path there
        self.watchers: dict[int, weakref.WeakKeyDictionary[Freshness, str]] = {}
        # watch numbers of views let go without a close (a finalizer takes
        # no lock: one may run on a thread holding it), removed by the next user
        self.let_go: list[int] = []

    def usable(self) -> bool:
        with self.lock:
            if not self.tried:
                self.tried = True
                self._open()
            return self.fd >= 0

    def _open(self) -> None:
        if not sys.platform.startswith("linux") or not os.path.isdir("/proc/self/fd"):
            return
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return
        if fd >= 0:
            self._libc, self.fd = libc, fd
            self.poller = select.poll()
            self.poller.register(fd, select.POLLIN)

    def add(self, watcher: Freshness, dir_fd: int, canonical: str, mask: int) -> int:
        """Watch the directory open at ``dir_fd`` for ``watcher`` (by the fd:
        whatever its path is now); the watch number, or -1."""
        with self.lock:
            self._remove_let_go()
            if self.fd < 0 or self._libc is None:
                return -1
            wd = int(self._libc.inotify_add_watch(self.fd, f"/proc/self/fd/{dir_fd}".encode(),
                                                  mask))
            if wd < 0:
                return -1
            self.watchers.setdefault(wd, weakref.WeakKeyDictionary())[watcher] = canonical
            return wd

    def remove(self, watcher: Freshness | None, wd: int) -> None:
        """``watcher`` no longer watches ``wd`` (``None``: one let go); the
        kernel's watch removed with its last watcher."""
        with self.lock:
            self._remove(watcher, wd)

    def _remove(self, watcher: Freshness | None, wd: int) -> None:
        found = self.watchers.get(wd)
        if found is None:
            return
        if watcher is not None:
            found.pop(watcher, None)
        if not found:
            del self.watchers[wd]
            if self.fd >= 0 and self._libc is not None:
                self._libc.inotify_rm_watch(self.fd, wd)

    def _remove_let_go(self) -> None:
        """Remove the watches only views let go of held (the lock held)."""
        while self.let_go:
            self._remove(None, self.let_go.pop())

    def quiet(self) -> bool:
        """Whether no event waits (one ``poll``, no lock: the kernel queues
        an event before the call that made the change returns)."""
        poller = self.poller
        if poller is None:
            return False
        try:
            return not poller.poll(0)
        except RuntimeError:  # another thread's poll under way: read under the lock instead
            return False

    def drain(self) -> bool:
        """Read every event queued and hand each to the views watching its
        directory (the process's watch, not a root's file: read directly,
        as its ``poll``); ``False`` when the watch is gone (a forked
        child's, a read that failed): the views then look for themselves."""
        with self.lock:
            self._remove_let_go()
            if self.fd < 0:
                return False
            for _ in range(_READS_A_CALL):
                try:
                    data = os.read(self.fd, _READ_SIZE)
                except OSError as exc:
                    if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                        return True
                    self._lose()
                    return False
                if not data:
                    return True
                self._dispatch(data)
                if len(data) <= _READ_SIZE - _EVENT.size - 256:
                    return True  # the queue was read to its end (what comes later: next call's)
            self._everything_changed()  # the rest is left queued; what it says is looked at
            return True

    def _dispatch(self, data: bytes) -> None:
        at, size = 0, len(data)
        while at + _EVENT.size <= size:
            wd, mask, _, length = _EVENT.unpack_from(data, at)
            raw = data[at + _EVENT.size:at + _EVENT.size + length].rstrip(b"\0")
            at += _EVENT.size + length
            if mask & _IN_Q_OVERFLOW:
                self._everything_changed()
                continue
            watchers = self.watchers.get(wd)
            if watchers is None:
                continue
            name = os.fsdecode(raw) if raw else None
            for watcher, directory in list(watchers.items()):
                watcher.changed(directory, name,
                                lost=bool(mask & (_IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED)))
            if mask & _IN_IGNORED:
                del self.watchers[wd]

    def _everything_changed(self) -> None:
        """Events were lost or left unread (the lock held): every view
        looks at each directory it follows."""
        for every in self.watchers.values():
            for watcher in list(every):
                watcher.dirty = watcher.everything = True

    def _lose(self) -> None:
        """No watch from here on (the lock held): every view looks for itself."""
        for watchers in self.watchers.values():
            for watcher in list(watchers):
                watcher.dirty = watcher.everything = True
                watcher.watching = False
        self.watchers.clear()
        self.poller = None
        if self.fd >= 0:
            try:
                os.close(self.fd)
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


_KERNEL = _KernelWatch()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_KERNEL.after_fork)


def _no_events(timeout: int) -> list[tuple[int, int]]:
    return []


def _let_go(watched: dict[str, int]) -> None:
    """A view let go without a close: its watches removed by the watch's next user."""
    _KERNEL.let_go.extend(wd for wd in watched.values() if wd >= 0)


def _times(found: os.stat_result) -> tuple[int, int, int, int]:
    return found.st_ino, found.st_mtime_ns, found.st_ctime_ns, found.st_size


class Freshness:
    """One view's look at what other programs changed (see the module doc)."""

    def __init__(self, view: View) -> None:
        self._view_ref = weakref.ref(view)  # the view owns this: no cycle to wait for
        self._root = view.root
        self._guard = threading.Lock()
        self._busy = False  # a thread is taking in what changed: others wait for it
        # directory -> names changed there (None: look at all of it), filled by the watch
        self.pending: dict[str, set[str] | None] = {}
        self.everything = False  # the watch lost events: look at everything again
        self.lost: set[str] = set()  # followed directories moved or removed (the watch's)
        # something waits to be taken in (or a thread is taking it in): set
        # before what it stands for, cleared by the thread that took it in
        self.dirty = False
        self.watching = False
        self._poll: Callable[[int], list[tuple[int, int]]] = _no_events
        self._watched: dict[str, int] = {}  # canonical directory -> watch number (or -1)
        weakref.finalize(self, _let_go, self._watched)
        # directory -> its entries that are links or directories, by inode
        self._entries: dict[str, dict[str, int]] = {}
        # (no watch) directory or config file -> its times, and when they were taken
        self._stamps: dict[str, tuple[tuple[int, int, int, int] | None, int]] = {}
        self._git_dirs: set[str] = set()
        self._hook_dirs: set[str] = set()
        self._configs: set[str] = set()
        self._config_dirs: set[str] = set()
        self._content: set[str] = set()  # directories watched for their files' writes too
        self._stamped = False  # (no watch) every place followed has a stamp
        self._protected: set[str] = set()
        self._python_dirs: set[str] = set()

    # -- at open ------------------------------------------------------------------------

    def start(self, found: Scan, looked_since_ns: int) -> None:
        """Watch (or stamp) what the look at open (``found``, begun at
        ``looked_since_ns``) rests on; what changed between that look and
        now is taken in at once."""
        self.watching = _KERNEL.usable()
        if self.watching and _KERNEL.poller is not None:
            self._poll = _KERNEL.poller.poll
        self._protected.update(found.dirs)
        self._python_dirs.update(found.python_dirs)
        self._follow(".", content=False)
        self._take_scan(found)
        # a link made in a watched directory after the look listed it, before the watch
        for directory in list(self._watched):
            self._look_at(directory, None, fresh=True)
        changed = False
        for config in sorted(self._configs):
            taken = time.time_ns()
            stamp = self._stamp(config)
            if not self.watching:
                self._stamps[config] = (stamp, taken)
            changed = changed or stamp is None or stamp[2] >= looked_since_ns - RACY_NS
        self._stamped = not self.watching
        if changed:
            self.look_again()  # changed while the look read it, maybe (or not there yet)

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

    def _follow(self, directory: str, *, content: bool) -> None:
        """Watch ``directory`` (or stamp it where nothing watches), and
        record its links and directories."""
        if directory in self._watched:
            if content and directory not in self._content and self._watched[directory] >= 0:
                self._watch(directory, _CONTENT)  # a config found there since: its changes too
            return
        if len(self._watched) >= MAX_WATCHED:
            return
        wd: int | None = -1
        if self.watching:
            wd = self._watch(directory, _CONTENT if content else _ENTRIES)
            if wd is None:
                return  # not there (yet), or a link: its parent's change says when it comes
            if wd < 0:
                self._stop_watching()
        self._watched[directory] = wd if wd is not None else -1
        if not self.watching:
            self._stamps[directory] = (self._stamp(directory), time.time_ns())
        self._entries[directory] = self._listing(directory)

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
            wd = _KERNEL.add(self, handle.fileno(), directory, mask)
        if wd >= 0 and mask == _CONTENT:
            self._content.add(directory)
        return wd

    def _stop_watching(self) -> None:
        """No watch for this view (the instance's limits reached, a forked
        child's, a read that failed): every directory and config followed
        is stamped from here on, and looked at on the next call."""
        self.watching = False
        for directory, wd in list(self._watched.items()):
            if wd >= 0:
                _KERNEL.remove(self, wd)
            self._watched[directory] = -1
        for place in (*self._watched, *self._configs):
            self._stamps[place] = (None, 0)  # never equal to a stamp taken: looked at
        self._stamped = True

    def close(self) -> None:
        for wd in self._watched.values():
            if wd >= 0:
                _KERNEL.remove(self, wd)
        self._watched.clear()

    # -- per call ---------------------------------------------------------------------

    @property
    def _view(self) -> View:
        view = self._view_ref()
        if view is None:
            raise RuntimeError("the view was let go")
        return view

    def changed(self, directory: str, name: str | None, *, lost: bool) -> None:
        """The watch saw ``name`` change in ``directory`` (``None`` or
        ``lost``: the directory itself; called under the watch's lock)."""
        self.dirty = True
        if lost:
            self.lost.add(directory)
            self.pending[directory] = None
            return
        names = self.pending.get(directory, set())
        if names is not None and name is not None:
            names.add(name)
            self.pending[directory] = names
        else:
            self.pending[directory] = None

    def catch_up(self) -> None:
        """Take in what other programs changed since the last call (one
        ``poll`` of the watch, a read where it says events wait; without
        a watch, a ``stat`` of each directory and config followed)."""
        if self.watching and not self.dirty:
            try:
                if not self._poll(0):
                    return  # the common call: nothing changed where the view looks
            except RuntimeError:
                pass  # another thread's poll under way: read under the lock instead
        self._catch_up()

    def _catch_up(self) -> None:
        if self.watching:
            if not _KERNEL.drain():
                self.watching = False
                self.everything = self.dirty = True
            if not self.dirty:
                return
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
                again = True  # a git directory appeared
        if again:
            self.look_again()

    def _follow_again(self, directory: str) -> None:
        """A followed directory that went (moved, removed): followed again
        where its path leads now."""
        wd = self._watched.pop(directory, -1)
        if wd >= 0:
            _KERNEL.remove(self, wd)
        self._follow(directory, content=directory in self._config_dirs)

    def _look_at(self, directory: str, names: Iterable[str] | None, *,
                 fresh: bool = False) -> bool:
        """Look at ``names`` in ``directory`` (``None``: every entry, and
        every one it held): a link learnt, one gone forgotten, a directory
        that is new walked for links; whether a git directory appeared."""
        git = False
        view = self._view
        links = view.links
        known = self._entries.setdefault(directory, {})
        prefix = "" if directory in (".", "") else directory + "/"
        if names is None:
            names = set(known) | set(self._listing(directory))
        for name in names:
            path = prefix + name
            try:
                found = self._root.lstat(path)
            except (OSError, ValueError):
                known.pop(name, None)
                links.forget(path)
                continue
            if st.S_ISLNK(found.st_mode):
                if fresh and links.knows(path):
                    continue
                known[name] = found.st_ino
                learn_link(self._root, links, path)
            elif st.S_ISDIR(found.st_mode):
                if path in links.locations:
                    links.forget(path)
                if known.get(name) != found.st_ino:
                    known[name] = found.st_ino
                    if not fresh:
                        git = self._walk_new(path) or name == ".git" or git
            else:
                known.pop(name, None)
                if path in links.locations:
                    links.forget(path)
                git = git or name == ".git"  # a .git file: a git directory elsewhere
        return git

    def _walk_new(self, top: str) -> bool:
        """Learn the links below a directory that appeared, watching each
        directory walked (up to the bounds; the rest in the background);
        whether a git directory is among them."""
        def entering(directory: str) -> None:
            if self.watching and directory not in self._watched:
                self._follow(directory, content=False)

        view = self._view
        left, git = walk_links(self._root, view.links, ((top, top.count("/") + 1),),
                               entering=entering, most=WALK_NOW)
        if left:
            view.learn_every_link_later(tuple(left))
            return True  # what it holds is not known yet: git's places looked at too
        return git

    def look_again(self) -> None:
        """Look at the tree as at open: git's places found now are protected
        too (never fewer than before), their directories followed, the
        links met learnt."""
        view = self._view
        found = view.look_again_at_git()
        new_dirs = [d for d in found.dirs if d not in self._protected]
        new_python = [d for d in found.python_dirs if d not in self._python_dirs]
        if new_dirs or new_python:
            self._protected.update(new_dirs)
            self._python_dirs.update(new_python)
            view.policy = view.policy.extended(protect_dirs=new_dirs, python_dirs=new_python)
        before = set(self._configs)
        self._take_scan(found)
        if not self.watching:
            for config in self._configs - before:
                self._stamps[config] = (self._stamp(config), time.time_ns())
        for config in self._configs:
            if config not in self._stamps and not self.watching:
                self._stamps[config] = (self._stamp(config), time.time_ns())

    # -- reading --------------------------------------------------------------------------

    def _listing(self, directory: str) -> dict[str, int]:
        """The links and directories ``directory`` holds, by inode."""
        try:
            entries = self._view.look.entries(directory)
        except OSError:
            return {}
        found = {}
        for entry in entries:
            if entry.is_symlink() or entry.is_dir(follow_symlinks=False):
                try:
                    found[entry.name] = entry.stat(follow_symlinks=False).st_ino
                except OSError:
                    continue
        return found

    def _stamp(self, place: str) -> tuple[int, int, int, int] | None:
        try:
            if place in (".", ""):
                return _times(self._root.backend.fstat(self._root.fileno()))
            return _times(self._root.lstat(place))
        except (OSError, ValueError):
            return None
