"""The policed view: the one filesystem handle a tool holds.

A tool says what it means (create, replace, edit, move, delete, make
directories) and the view does it as one step::

    tree lock -> resolve once -> lock the pinned directory -> decide the
    policy -> (the tool asks the host through the pin) -> re-check -> act
    on the pinned object, identity expected

Every decision is made while the locks are held, on what the one
resolution reached, and none outlives them: a :class:`Pinned` exists only
inside its ``with`` block.

Locks.  A process-wide tree lock is held shared by every mutating step and
exclusively by a move, so a move's check of the subtree it carries and its
rename see a tree no other step of this process changes in between (a write
of ``y/tasks.json`` cannot slip in before ``y`` becomes ``.vscode``); a lock
file outside the tree (``tree_lock``) extends it to other processes.  Below
it each step locks the directory it acts in, keyed by that directory's
(device, inode), re-entrant within the call and taken in one order, so no
call ever waits on itself (a link moved into its own target, a case-only
rename); ``flock`` on the held directory fd extends the lock to other
processes.  Waiting polls the call's checkpoint (its deadline, a cancel).

Policy.  A rule is decided on the canonical path reached AND on every name
that leads to it through a symlink the view knows of: the links found when
the Toolbox opened its root and those met since (followed by a resolution,
moved by a tool; after a move by another Toolbox, which the tree lock file
counts, the tree's links are looked at again).  So a protected name that is
a link, or lies under one, protects what it leads to
(``.git/hooks/pre-commit -> ../../scripts/x``, ``.vscode -> editor``).

Repositories.  No step may leave a directory a git repository that was not
one (``HEAD`` beside ``objects/`` and ``refs/``, or beside ``commondir``:
:func:`~corral.tools._policy.gitdirs.is_repository`): decided on the whole
result of the step (every file of a patch, a move's two ends), and a step
that creates an entry by one of those names holds the tree lock
exclusively, so two steps cannot each add half of one.  A move never
carries a repository.  Writes inside a repository made after open are
protected like those the scan found.

Reading.  A read is one step too, without locks (the fd is the object
decided on): :meth:`CallView.open_read` opens once, decides on the
canonical path of what was opened and on the names leading to it, and
hands the tool an :class:`OpenFile` every read comes from;
:meth:`CallView.look` resolves an entry to describe it, :meth:`CallView.lead`
says where a link leads from its canonical location.  Nothing is resolved
again between the decision and the read.
"""

from __future__ import annotations

import errno
import hashlib
import fcntl
import os
import stat as st
import threading
import time
from weakref import ref as weak_ref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Protocol, TypeAlias

from ...contained import (Backend, DirEntry, EscapeError, Handle, Opened, PathError, Root,
                         Target)
from .._policy.gitdirs import (SHAPE_NAMES, Scan, carried_repository, in_git_directory,
                               is_repository, looks_like_common_directory, made_repository,
                               names_a_shape_entry, scan, shape_name)
from .._policy.locate import Location
from .._policy.rules import Op, Policy, Scope
from .._refusals.catalogue import (Kind, Refusal, denied_rule, entry_kind, protected, secret,
                                   swapped)
from .request_types import Request
from .tree_lock import moves_made, tree_file_lock
from .view_read import Entry, Lead, OpenFile
from .view_walk import LinkEnd

__all__ = ["View", "CallView", "Pinned", "LinkMap", "Decision", "Want", "AliasedScope",
           "OpenFile", "Entry", "Lead", "open_view", "RootLike", "RootLook", "git_scan"]

_POLL_FIRST = 0.0005  # seconds between two tries of a held lock, doubling...
_POLL_MOST = 0.02  # ... up to this
MAX_LINKS = 100_000  # links remembered per root (bounded memory)
MAX_ALIASES = 64  # names leading to one path that are decided (bounded work)
_DIGEST_CHUNK = 1024 * 1024
_HEAD_KEPT = 64 * 1024  # the start of a file digested, kept for a look at its form
# the directories git makes inside a git directory: a file written in one
# of them is looked at as lying in a repository one level up
GIT_SUBDIRECTORIES = frozenset({"hooks", "info", "refs", "objects", "logs", "modules",
                                "worktrees", "branches", "remotes", "lfs", "rr-cache"})
MAX_SCANNED_LINKS = 10_000  # links found at open whose target is looked up (bounded)

Checkpoint = Callable[[], None]


class Host(Protocol):
    """What a call's view needs of the call: its bounds and its host."""

    def checkpoint(self) -> None: ...

    @property
    def asks_host(self) -> bool: ...

    def authorize(self, request: Request) -> None: ...


@dataclass(frozen=True)
class Place:
    """Where a pinned location acts, as a fact to compare after the host's
    answer: its canonical path, what it would create, and the identity of
    the directory it holds."""

    path: str
    creates: tuple[str, ...]
    anchor: tuple[int, int]


#: opens a link's end to name it: no read access needed, no FIFO waited on
_LOOK_FLAGS = getattr(os, "O_PATH", 0) or os.O_RDONLY


def locate(root: Root, rel: str, *, follow: bool = True) -> Location:
    """Where ``rel`` leads, as the core's one resolver reached it (a
    :class:`~corral.contained.Target` planning the directories it would
    create): with ``follow`` a final symlink is followed (a read), else the
    entry itself is meant (a move, a delete, a write that refuses links).
    A location that cannot be established raises the core's error."""
    with root.target(rel, follow_final=follow, create_parents=True) as target:
        return Location(target.path, target.creates, target.passed)


def policy_refusal(kind: Kind, shown: str, op: Op, field: str) -> Refusal:
    if kind is Kind.DENY_RULE:
        return denied_rule(shown, field)
    if kind is Kind.PROTECTED:
        return protected(shown, op.value, field)
    return secret(shown, op.value, field)


# -- links ---------------------------------------------------------------------------


class LinkMap:
    """Known in-root symlinks: canonical location -> the canonical path it
    leads to (thread-safe, bounded).  Kept as paths, not inodes: a host
    program opens the link's name and follows it to whatever is there."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._leads: dict[str, str] = {}
        self._by_target: dict[str, set[str]] = {}
        self._below: dict[str, int] = {}  # directory -> known links leading to it or below
        self._not_links: set[str] = set()
        self._relearn: list[str] = []
        self._via: dict[str, tuple[str, ...]] = {}  # the links its resolution passed

    def __len__(self) -> int:
        return len(self._leads)

    def add(self, location: str, leads_to: str, via: tuple[str, ...] = ()) -> None:
        if location == leads_to or location in (".", ""):
            return
        passed = tuple(p for p in via if p != location)
        with self._guard:
            old = self._leads.get(location)
            if old is None and len(self._leads) >= MAX_LINKS:
                return
            if passed:
                self._via[location] = passed
            else:
                self._via.pop(location, None)
            if old == leads_to:
                return
            if old is not None:
                self._by_target.get(old, set()).discard(location)
                self._count(old, -1)
            self._leads[location] = leads_to
            self._by_target.setdefault(leads_to, set()).add(location)
            self._count(leads_to, 1)
            self._not_links.discard(location)

    def moved(self, old: str, new: str) -> None:
        """Links at or under ``old`` are now at or under ``new``: known by
        their new names (where they lead is learnt again by the caller)."""
        prefix = old + "/"
        with self._guard:
            hits = [loc for loc in self._leads if loc == old or loc.startswith(prefix)]
        for loc in hits:
            leads = self._leads.get(loc)
            self.forget(loc)
            if leads is not None:
                self._relearn.append(new + loc[len(old):])

    def take_relearn(self) -> list[str]:
        with self._guard:
            out, self._relearn = self._relearn, []
        return out

    def through(self, top: str) -> list[str]:
        """The known links whose target was reached through ``top`` or an
        entry below it (another link, a directory left by ``..``): where
        they lead changes when ``top`` is moved or removed."""
        prefix = top + "/"
        with self._guard:
            return [location for location, via in self._via.items()
                    if any(p == top or p.startswith(prefix) for p in via)]

    def forget(self, location: str) -> None:
        with self._guard:
            self._via.pop(location, None)
            old = self._leads.pop(location, None)
            if old is not None:
                self._by_target.get(old, set()).discard(location)
                self._count(old, -1)

    def knows(self, location: str) -> bool:
        return location in self._leads or location in self._not_links

    def not_a_link(self, location: str) -> None:
        with self._guard:
            if len(self._not_links) < MAX_LINKS:
                self._not_links.add(location)

    def _count(self, target: str, step: int) -> None:
        """Count a link leading to ``target`` at it and every directory
        above it (held under the guard)."""
        if target in (".", ""):
            return
        end = len(target)
        while end > 0:
            prefix = target[:end]
            count = self._below.get(prefix, 0) + step
            if count > 0:
                self._below[prefix] = count
            else:
                self._below.pop(prefix, None)
            end = target.rfind("/", 0, end)

    def leads_into(self, top: str) -> bool:
        """Whether a known link leads to ``top``, below it, or above it
        (one lookup per directory above ``top``)."""
        if not self._leads:
            return False
        if top in (".", ""):
            return True
        # single lookups, each atomic: no lock needed to read them
        by_target = self._by_target
        if self._below.get(top) or by_target.get("."):
            return True
        end = len(top)
        while (end := top.rfind("/", 0, end)) > 0:
            if by_target.get(top[:end]):
                return True
        return False

    def is_target(self, path: str) -> bool:
        """Whether a known link leads to ``path`` itself."""
        return path in self._by_target

    def directory_names(self, canonical_dir: str) -> list[str]:
        """Every other name that leads to the directory ``canonical_dir``
        (as :meth:`aliases`; the root's are the links to it and theirs)."""
        if canonical_dir not in (".", ""):
            return self.aliases(canonical_dir)
        with self._guard:
            to_root = list(self._by_target.get(".", ()))
        found = dict.fromkeys(to_root)
        for location in to_root:
            found.update(dict.fromkeys(self.aliases(location)))
        return list(found)[:MAX_ALIASES]

    def aliases(self, canonical: str) -> list[str]:
        """Every other name that leads to ``canonical`` through known links
        (link chains followed; at most :data:`MAX_ALIASES`)."""
        by_target = self._by_target
        if not by_target or canonical in (".", ""):
            return []
        if "." not in by_target:  # most names: no link leads to them or above them
            end = len(canonical)
            while end > 0 and canonical[:end] not in by_target:
                end = canonical.rfind("/", 0, end)
            if end <= 0:
                return []
        found: dict[str, None] = {}
        queue = deque([canonical])
        with self._guard:
            while queue and len(found) < MAX_ALIASES:
                name = queue.popleft()
                end = len(name)
                while end > 0:
                    prefix = name[:end]
                    for location in self._by_target.get(prefix, ()):
                        alias = location + name[end:]
                        if alias != canonical and alias not in found:
                            found[alias] = None
                            queue.append(alias)
                    end = name.rfind("/", 0, end)
                for location in self._by_target.get(".", ()):  # a link to the root itself
                    alias = f"{location}/{name}"
                    if alias not in found:
                        found[alias] = None
        return list(found)[:MAX_ALIASES]


def learn_link(root: Root, links: LinkMap, location: str) -> None:
    """Remember where the link at ``location`` (canonical) leads, if inside:
    also a link whose target is not there yet (its parents missing too) and
    one spelled as an absolute path inside the root, which the host program
    follows though the core calls it an escape."""
    try:
        found: Location | None = locate(root, location, follow=True)
    except (OSError, ValueError):
        found = _spelled_target(root, location)
    if found is None or found.path == location:
        links.not_a_link(location)
    else:
        links.add(location, found.path, found.passed)


def _spelled_target(root: Root, location: str) -> Location | None:
    """Where the link at ``location`` leads by its text, resolved beneath
    the root with the missing directories allowed (``None``: not a link,
    or it leads outside)."""
    try:
        text = root.readlink(location)
    except (OSError, ValueError):
        return None
    if text.startswith("/"):
        inside = None
        for known in dict.fromkeys((root.path, os.path.realpath(root.path))):
            base = known.rstrip("/")
            if text == base or text.startswith(base + "/"):
                inside = text[len(base):].lstrip("/") or "."
                break
        if inside is None:
            return None
        spelled = inside
    else:
        parent = location.rpartition("/")[0]
        spelled = f"{parent}/{text}" if parent else text
    try:
        return locate(root, spelled, follow=True)
    except (OSError, ValueError):
        return None


# -- git's reading of the tree -----------------------------------------------------------


class RootLook:
    """What :mod:`~corral.tools._policy.gitdirs` reads of a root
    (its ``GitLook``): entries, the start of small files, where a path
    leads, which names a directory holds."""

    def __init__(self, root: Root) -> None:
        self._root = root

    @property
    def known_as(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self._root.path, os.path.realpath(self._root.path))))

    def entries(self, rel: str) -> list[DirEntry]:
        with self._root.open_handle(rel, os.O_RDONLY | os.O_DIRECTORY) as handle:
            return handle.scandir()

    def text(self, rel: str, limit: int) -> str | None:
        try:
            with self._root.open_handle(rel, os.O_RDONLY | os.O_NONBLOCK) as handle:
                if not st.S_ISREG(handle.stat().st_mode):
                    return None
                return handle.pread(limit, 0).decode("utf-8", "replace")
        except OSError:
            return None

    def canonical(self, rel: str) -> str | None:
        try:
            return locate(self._root, rel).path
        except (OSError, ValueError):
            return None

    def present(self, rel: str, names: Iterable[str]) -> frozenset[str]:
        found = set()
        for name in names:
            try:
                self._root.lstat(name if rel in (".", "") else f"{rel}/{name}")
            except (OSError, ValueError):
                continue
            found.add(name)
        return frozenset(found)


def git_scan(root: Root) -> Scan:
    """The git directories to protect as a whole and the links met, found
    by one bounded look at ``root`` (when a toolbox opens it)."""
    return scan(RootLook(root))


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


# -- the view -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What the policy said of one location (``None``: allowed)."""

    kind: Kind | None


@dataclass(frozen=True)
class Want:
    """One path of a :meth:`CallView.pin_group` step and what is done there."""

    rel: str
    op: Op
    field: str = "path"
    follow: bool = False
    create_parents: bool = False

    @property
    def label(self) -> str:
        return self.rel.rstrip("/") or "."


_ADDING = frozenset({Op.CREATE, Op.REPLACE, Op.MOVE_TO, Op.MKDIR})
_REMOVING = frozenset({Op.DELETE, Op.MOVE_FROM})


class _Step:
    """The pins of one step and what each does there, decided together on
    the tree the step leaves (a patch's files, a move's two ends)."""

    def __init__(self, *, exclusive: bool) -> None:
        self.exclusive = exclusive  # the tree lock is held exclusively
        self.acts: list[tuple[Pinned, Op]] = []
        self._git_names: dict[str, dict[str, Pinned]] | None = None

    def add(self, pin: Pinned, op: Op) -> None:
        self.acts.append((pin, op))
        pin._step = self
        self._git_names = None

    def git_names(self) -> dict[str, dict[str, Pinned]]:
        """directory -> the entries of git's repository test the step
        creates in it (by the names git reads, each with a pin creating
        it); found once per step, from the names alone."""
        if self._git_names is None:
            added: dict[str, dict[str, Pinned]] = {}
            for pin, op in self.acts:
                if op not in _ADDING:
                    continue
                for entry in (*pin.creates, pin.path):
                    directory, _, name = entry.rpartition("/")
                    shape = shape_name(name)
                    if shape is not None:
                        added.setdefault(directory or ".", {}).setdefault(shape, pin)
            self._git_names = added
        return self._git_names

    def made_repository(self) -> tuple[Pinned, str] | None:
        """The first directory this step would leave a repository that is
        not one now, with a pin creating part of it (``None``: none).  Each
        such directory is looked at through a pin holding it (four
        ``lstat``); one the step creates holds nothing yet."""
        added = self.git_names()
        if not added:
            return None
        created = {made for pin, op in self.acts if op in _ADDING for made in pin.creates}
        holders = {pin.held_path: pin for pin, _ in self.acts}
        for pin, op in self.acts:  # a directory planned as new that is there now: stale
            if op in _ADDING and any(made in added for made in pin.creates) and \
                    pin.held_present((pin.creates[0].rpartition("/")[2],)):
                raise swapped(pin.shown)
        removed: dict[str, set[str]] = {}
        for pin, op in self.acts:
            if op in _REMOVING and pin.name in SHAPE_NAMES.values():
                removed.setdefault(pin.parent, set()).add(pin.name or "")
        for directory, names in added.items():
            holder = holders.get(directory)
            before = holder.held_present(tuple(SHAPE_NAMES.values())) \
                if holder is not None and directory not in created else frozenset()
            after = (before - removed.get(directory, set())) | names.keys()
            if is_repository(after) and not is_repository(before):
                return next(iter(names.values())), directory
        return None


class View:
    """The policed view of one root, shared by every call of a Toolbox."""

    def __init__(self, root: Root, policy: Policy, links: LinkMap | None = None, *,
                 owns_root: bool = False) -> None:
        self._root = root
        self.policy = policy
        self.links = links if links is not None else LinkMap()
        self._owns_root = owns_root
        self.scanned_links: tuple[str, ...] = ()  # the links the scan at open found
        self.look = RootLook(root)
        self._identity: tuple[int, int] | None = None
        # the count of moves made by every Toolbox (tree_lock) when this
        # view last knew the tree's links (None: not counted yet)
        self.moves_seen: int | None = None
        # set once every link of the tree is known: at once when the look
        # at open met them all, else when :meth:`learn_every_link_later` is done
        self._links_known = threading.Event()
        self._links_known.set()
        self._walk_guard = threading.Lock()  # who starts a walk, who asks for another
        self._walk_again = False
        self.scan_complete = True

    @property
    def identity(self) -> tuple[int, int]:
        """The (device, inode) of the root directory."""
        if self._identity is None:
            self._identity = root_identity(self._root)
        return self._identity

    @contextmanager
    def tree_lock(self, *, exclusive: bool, checkpoint: Checkpoint,
                  moves: bool = False) -> Iterator[None]:
        """The tree lock of this root as other processes see it (this
        process's own is ``_TREE``, taken first).  If another Toolbox moved
        something since this view last looked, the tree's links are looked
        at again (a link it moved onto a protected name protects what it
        leads to here too); a step that ``moves`` counts its move."""
        with tree_file_lock(self.identity, exclusive=exclusive, checkpoint=checkpoint) as hold:
            if hold.moves is not None:
                if hold.moves != self.moves_seen:
                    self.relearn_links()
                    self.wait_for_links(checkpoint)
                if moves:
                    hold.count_move()
                self.moves_seen = hold.moves
            yield

    def relearn_links(self) -> None:
        """Look at the tree's links again, as when the view was opened."""
        if self.policy.is_empty:
            return
        found = git_scan(self._root)
        for link in found.links[:MAX_SCANNED_LINKS]:
            learn_link(self._root, self.links, link)
        if not found.complete:
            self.learn_every_link_later()

    def learn_every_link_later(self) -> None:
        """Find the links the bounded look at open did not reach (a deep or
        wide tree) on a thread of their own; until it is done every
        decision waits for it (:meth:`wait_for_links`, within the call's
        bounds)."""
        with self._walk_guard:
            if not self._links_known.is_set():
                self._walk_again = True  # the walk under way may have passed the change
                return
            self._links_known.clear()
        threading.Thread(target=self._learn_every_link, name="corral-links",
                         daemon=True).start()

    def _learn_every_link(self) -> None:
        """Every symlink of the tree (git directories left out, as at open),
        learnt, walked again while a change asks for it; the event set
        however it ends (a root closed meanwhile)."""
        try:
            while True:
                self._walk_tree_links()
                with self._walk_guard:
                    if not self._walk_again:
                        self._links_known.set()
                        return
                    self._walk_again = False
        except Exception:  # the decisions go on with the links known (a root closed meanwhile)
            with self._walk_guard:
                self._walk_again = False
                self._links_known.set()

    def _walk_tree_links(self) -> None:
        queue: deque[str] = deque(["."])
        while queue:
            try:
                entries = self.look.entries(queue.popleft())
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink():
                    learn_link(self._root, self.links, entry.path)
                elif entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                    queue.append(entry.path)

    def wait_for_links(self, checkpoint: Checkpoint) -> None:
        """Return once every link of the tree is known (at once, unless the
        tree was too deep or wide for the look at open); waiting polls
        ``checkpoint``, so a call past its deadline stops waiting
        (``time_limit``) rather than hang on a huge tree."""
        delay = _POLL_FIRST
        while not self._links_known.wait(delay):
            checkpoint()
            delay = min(delay * 2, _POLL_MOST)

    def links_known(self) -> None:
        """Return once every link of the tree is known.  Every call waits
        for it first, within its bounds (:meth:`CallView.ready`), so the
        decisions made within a call find it known."""
        if not self._links_known.is_set():
            self._links_known.wait()

    @property
    def root(self) -> Root:
        return self._root

    @property
    def host_path(self) -> str:
        """The host path the root was opened by (to recognise absolute paths
        inside it; never shown to a model)."""
        return self._root.path

    def hold(self, policy: Policy) -> None:
        """Decide by ``policy`` from now on (the same rules and more: another
        root's, :meth:`Policy.holding`); the links found at open are looked
        up now if the old policy had no rule to hide behind one."""
        if self.policy.is_empty:
            for link in self.scanned_links:
                if not self.links.knows(link):
                    learn_link(self._root, self.links, link)
            if not self.scan_complete and not policy.is_empty:
                self.learn_every_link_later()
        self.policy = policy

    def close(self) -> None:
        """Close the root if this view opened it (:func:`open_view` of a path)."""
        if self._owns_root:
            self._root.close()

    def learn_passed(self, passed: tuple[str, ...]) -> None:
        """Remember the links a resolution followed (``passed`` holds them
        with the directories it entered and left)."""
        links = self.links
        for where in passed:
            if not links.knows(where):
                learn_link(self._root, links, where)

    def rule(self, location: Location, op: Op,
             in_repository: Callable[[], bool] | None = None) -> Kind | None:
        """The rule refusing ``op`` on ``location`` (see the module doc), or
        ``None``.  ``in_repository`` answers whether ``location`` lies in a
        git directory the scan at open did not find (default: looked up)."""
        policy = self.policy
        if policy.is_empty:
            return None
        self.links_known()
        if location.passed:
            self.learn_passed(location.passed)
        kind = policy.rule(location.path, op)
        for made in location.creates:
            kind = kind or policy.rule(made, Op.MKDIR)
        for passed in location.passed:
            if kind is None and policy.rule(passed, Op.LIST) is Kind.DENY_RULE:
                kind = Kind.DENY_RULE
        if kind is None:
            kind = self._alias_rule(location, op)
        if kind is None and op.mutates and policy.guards_git and (
                in_repository() if in_repository is not None else
                in_git_directory(self.look, location.path, location.creates)):
            kind = Kind.PROTECTED  # a repository the scan at open did not find
        return kind

    def _alias_rule(self, location: Location, op: Op) -> Kind | None:
        links, policy = self.links, self.policy
        if not len(links):
            return None
        for name, name_op in ((location.path, op), *((c, Op.MKDIR) for c in location.creates)):
            for alias in links.aliases(name):
                kind = policy.rule(alias, name_op)
                if kind is not None:
                    return kind
        return None

    def visible(self, canonical: str, op: Op) -> bool:
        """Whether the entry at ``canonical`` may be shown (listed, searched):
        no rule hides it, nor any known name leading to it."""
        policy = self.policy
        if not policy.visible(canonical, op):
            return False
        self.links_known()
        if not len(self.links):
            return True
        return all(policy.visible(alias, op) for alias in self.links.aliases(canonical))

    def shows(self, rel: str) -> bool:
        """Whether ``rel`` names an entry (a dangling link included) that a
        model may be told exists: no deny or secret rule hides it, decided
        on the entry, where it leads, and every known name leading there."""
        try:
            self._root.lstat(rel)
            seen = [locate(self._root, rel, follow=False)]
        except (OSError, ValueError):
            return False
        try:
            seen.append(locate(self._root, rel, follow=True))
        except (OSError, ValueError):
            pass
        return all(self.rule(where, Op.SEARCH) is None for where in seen)

    def scope(self, canonical_dir: str, op: Op) -> Scope:
        """The decisions for the entries of the directory ``canonical_dir``
        (a listing's, a walk's): the policy's scope, and where a known link
        leads into, above or below it, each entry decided on the names
        leading to it too (:meth:`visible`).  A directory no known link
        reaches pays nothing more."""
        return self.linked_scope(self.policy.scope(canonical_dir, op), canonical_dir, op)

    def linked_scope(self, inner: Scope, canonical_dir: str, op: Op) -> Scope:
        """``inner`` (the policy's scope of ``canonical_dir``), deciding the
        names known links lead from when any leads there."""
        self.links_known()
        if not len(self.links) or not self.links.leads_into(canonical_dir.rstrip("/") or "."):
            return inner
        return AliasedScope(inner, self, canonical_dir.rstrip("/") or ".", op)

    def check(self, location: Location, op: Op, *, shown: str, field: str = "path",
              in_repository: Callable[[], bool] | None = None) -> None:
        kind = self.rule(location, op, in_repository)
        if kind is not None:
            raise policy_refusal(kind, shown, op, field)

    def check_reached(self, canonical: str, op: Op, *, shown: str, field: str = "path") -> None:
        """:meth:`check` of the entry at ``canonical`` reached with nothing
        created or passed on the way: the same decision, the full one only
        when a known link or a change could add to the policy's own."""
        policy = self.policy
        if policy.is_empty:
            return
        kind = policy.rule(canonical, op)
        self.links_known()
        if kind is None and (op.mutates or len(self.links)):
            kind = self.rule(Location(canonical), op)
        if kind is not None:
            raise policy_refusal(kind, shown, op, field)

    def refuse_new_repository(self, step: _Step) -> None:
        """Refuse ``step`` if what it leaves makes a directory a git
        repository (none of the tools makes one: ``git init`` does); it
        must hold the tree lock exclusively to create such a name at all,
        or another step could add the other half meanwhile."""
        if not self.policy.guards_git or not step.git_names():
            return
        if not step.exclusive:  # fail closed: every such step is made exclusive
            pin = next(iter(next(iter(step.git_names().values())).values()))
            raise swapped(pin.shown)
        found = step.made_repository()
        if found is not None:
            pin, directory = found
            op = next(op for acting, op in step.acts if acting is pin)
            raise made_repository(pin.shown, directory, op.value, pin.field)

    def subtree_rule(self, carried: str, landing: str, checkpoint: Checkpoint, *,
                     leaving: bool, shown: str = "") -> tuple[str, Kind, str] | None:
        """For a move of the directory ``carried`` (canonical) to
        ``landing``: the first entry a rule covers where it arrives, or
        (``leaving``: the entries themselves move) where it leaves, as
        ``(inner, kind, field)``.  Each directory's scope is carried down to
        its subdirectories, so an entry costs a test of its name.  A git
        repository anywhere in it is refused (``shown``: the moved entry as
        the call named it): the tools do not move one."""
        policy = self.policy
        if policy.is_empty:
            return None
        guards_git = policy.guards_git
        aliased = self.links.leads_into(carried) or self.links.leads_into(landing)
        scopes = {carried: (policy.scope(carried, Op.MOVE_FROM if leaving else Op.LIST),
                            policy.scope(landing, Op.MOVE_TO))}
        for dirpath, dirnames, filenames in self._root.walk(carried):
            checkpoint()
            out_scope, in_scope = scopes.pop(dirpath)
            below = dirpath[len(carried):].lstrip("/")
            if guards_git and is_repository((*dirnames, *filenames)):
                raise carried_repository(shown or carried, below, "source", leaving=leaving)
            for name in dirnames:
                inner = f"{below}/{name}" if below else name
                pair = (out_scope.child(name), in_scope.child(name))
                if pair[0] is None or pair[1] is None:
                    return self._covering(carried, landing, inner)
                scopes[f"{dirpath}/{name}" if dirpath != "." else name] = (pair[0], pair[1])
            names = list(filenames)
            if (len(out_scope.visible_names(names)) != len(names)
                    or len(in_scope.visible_names(names)) != len(names)):
                for name in names:
                    if not (out_scope.visible(name) and in_scope.visible(name)):
                        return self._covering(carried, landing,
                                              f"{below}/{name}" if below else name)
            if aliased:
                for name in [*dirnames, *names]:
                    inner = f"{below}/{name}" if below else name
                    found = self._aliased(carried, landing, inner)
                    if found is not None:
                        return found
        return None

    def _covering(self, carried: str, landing: str, inner: str) -> tuple[str, Kind, str]:
        kind = self.policy.rule(f"{carried}/{inner}", Op.MOVE_FROM)
        if kind is not None:
            return inner, kind, "source"
        kind = self.policy.rule(f"{landing}/{inner}", Op.MOVE_TO)
        return inner, (kind if kind is not None else Kind.DENY_RULE), "destination"

    def _aliased(self, carried: str, landing: str, inner: str) -> tuple[str, Kind, str] | None:
        for end, op, field in ((carried, Op.MOVE_FROM, "source"),
                               (landing, Op.MOVE_TO, "destination")):
            for alias in self.links.aliases(f"{end}/{inner}"):
                kind = self.policy.rule(alias, op)
                if kind is not None:
                    return inner, kind, field
        return None


class AliasedScope(Scope):
    """A directory's scope where known links lead: an entry the policy
    shows is shown only if no name leading to it through a link is hidden
    (a denied or secret link name hides what it leads to)."""

    __slots__ = ("_inner", "_view", "_real", "_op", "_names", "_scopes")

    def __init__(self, inner: Scope, view: View, canonical_dir: str, op: Op) -> None:
        # every question is put to ``inner`` first: the base's state is unused
        self._inner = inner
        self._view = view
        self._real = "" if canonical_dir in (".", "") else canonical_dir + "/"
        self._op = op
        # The other names of this directory, found once: an entry's names
        # through links are these joined to its name, unless a link leads
        # to the entry itself (or to one of those joined names).
        self._names = names = view.links.directory_names(canonical_dir)
        self._scopes: list[Scope] | None = []
        if names:  # a link leads to this directory or above it
            policy = view.policy
            self._scopes = [policy.scope(name, op) for name in names] \
                if all(policy.visible(name, op) for name in names) else None

    def _shown(self, name: str) -> bool:
        real = self._real + name
        links = self._view.links
        scopes = self._scopes
        if scopes is None or links.is_target(real) or (self._names and any(
                links.is_target(f"{other}/{name}") for other in self._names)):
            return self._view.visible(real, self._op)  # each name decided in full
        return not scopes or all(scope.visible(name) for scope in scopes)

    def visible(self, name: str) -> bool:
        return self._inner.visible(name) and self._shown(name)

    def child(self, name: str) -> Scope | None:
        inner = self._inner.child(name)
        if inner is None or not self._shown(name):
            return None
        return self._view.linked_scope(inner, self._real + name, self._op)

    def visible_names(self, names: list[str], ends_with: str = "") -> list[str]:
        shown = self._inner.visible_names(names, ends_with)
        if not self._names and self._scopes is not None:  # a link leads below, or to an entry
            is_target, real = self._view.links.is_target, self._real
            if not any(is_target(real + name) for name in shown):
                return shown
        kept = [name for name in shown if self._shown(name)]
        return shown if len(kept) == len(shown) else kept


def _names_git_entry(rel: str, op: Op) -> bool:
    """Whether a step doing ``op`` on ``rel`` may create an entry git's
    repository test reads (the names it creates are those spelled): such a
    step holds the tree lock exclusively."""
    return op in _ADDING and names_a_shape_entry(rel)


class CallView:
    """The view as one call sees it: its deadline, its locks (re-entrant
    within the call), its host."""

    def __init__(self, view: View, host: Host) -> None:
        self._view = view
        # the call holds this view: a weak reference back keeps the two out
        # of a reference cycle, so both are freed when the call ends rather
        # than left to the garbage collector after every call
        self._host_ref = weak_ref(host)
        self._held: set[Identity] = set()

    def ready(self) -> None:
        """Wait, within the call's bounds, until the view knows every link
        of the tree (a walk beyond the look at open may be under way)."""
        self._view.wait_for_links(self.checkpoint)

    @property
    def _host(self) -> Host:
        host = self._host_ref()
        if host is None:
            raise RuntimeError("the call this view belongs to has ended")
        return host

    def ask(self, request: Request, *pins: Pinned, same_place: bool = True) -> None:
        """Ask the host about ``request`` on ``pins``; when the host was
        asked (a window opened: without a question the locks were held
        throughout), check again that the policy still allows it (links met
        and repositories made meanwhile count) and, with ``same_place``,
        that each pin still resolves as it did (a parent swapped or made
        meanwhile: ``STALE``; without it the act uses what is there, as
        ``mkdir -p`` does)."""
        places = [pin.place() for pin in pins] if self._host.asks_host and same_place \
            else None
        self._host.authorize(request)
        if places is not None:
            for pin, place in zip(pins, places):
                pin.ensure_place(place)
        if self._host.asks_host:  # otherwise the locks were held throughout: no window
            for pin in pins:
                pin.release()  # what is there now is opened afresh
                pin.decide_again()

    @property
    def shared(self) -> View:
        return self._view

    @contextmanager
    def pin(self, rel: str, op: Op, *, field: str = "path", shown: str | None = None,
            follow: bool = False, create_parents: bool = False) -> Iterator[Pinned]:
        """One step on ``rel``: the tree lock shared, one resolution, the
        lock of the directory it acts in, ``op`` decided on what was
        reached (the caller decides more ops on the same pin)."""
        label = shown if shown is not None else (rel.rstrip("/") or ".")
        if _names_git_entry(rel, op):  # rare: the tree held exclusively (see _Step)
            with self._pin_exclusive(rel, op, label, field, follow=follow,
                                     create_parents=create_parents) as pinned:
                yield pinned
            return
        # the steps of pin_group for one path, without an ExitStack (the
        # common call: every tool that changes one file comes here)
        checkpoint = self.checkpoint
        _TREE.take_shared(checkpoint)
        try:
            with self._view.tree_lock(exclusive=False, checkpoint=checkpoint):
                target = self._target(rel, op, label, field, follow=follow,
                                      create_parents=create_parents)
                try:
                    key = target.held_identity()
                    flocked = None
                    if key not in self._held:
                        _TABLE.take(key, checkpoint)
                        try:
                            flocked = _flock(target, checkpoint)
                        except BaseException:
                            _TABLE.drop(key)
                            raise
                        self._held.add(key)
                    try:
                        pinned = Pinned(self, target, label, field, rel)
                        try:
                            pinned._target_follows = follow
                            _Step(exclusive=False).add(pinned, op)
                            pinned.decide(op)
                            yield pinned
                        finally:
                            pinned.end()
                    finally:
                        if flocked is not None:
                            self._held.discard(key)
                            try:
                                flocked.release()
                            finally:
                                _TABLE.drop(key)
                finally:
                    target.close()
        finally:
            _TREE.drop_shared()

    @contextmanager
    def _pin_exclusive(self, rel: str, op: Op, label: str, field: str, *, follow: bool,
                       create_parents: bool) -> Iterator[Pinned]:
        """:meth:`pin`'s step with the tree lock held exclusively: a step
        that may create an entry git's repository test reads."""
        with ExitStack() as stack:
            stack.enter_context(_TREE.exclusive(self.checkpoint))
            stack.enter_context(self._view.tree_lock(exclusive=True, checkpoint=self.checkpoint))
            target = stack.enter_context(self._resolve(rel, op, label, field, follow=follow,
                                                       create_parents=create_parents))
            self._lock(stack, (target,))
            pinned = Pinned(self, target, label, field, rel)
            stack.callback(pinned.end)
            pinned._target_follows = follow
            _Step(exclusive=True).add(pinned, op)
            pinned.decide(op)
            yield pinned

    @contextmanager
    def pin_move(self, src: str, dst: Callable[[Pinned], str], *, src_shown: str | None = None,
                 create_parents: bool = True) -> Iterator[tuple[Pinned, Pinned]]:
        """A move's step: the tree lock exclusive (no other step of this
        process changes the tree meanwhile), both ends resolved once and
        their directories locked in one order; ``dst`` names the
        destination once the source is pinned."""
        label = src_shown if src_shown is not None else (src.rstrip("/") or ".")
        with ExitStack() as stack:
            stack.enter_context(_TREE.exclusive(self.checkpoint))
            stack.enter_context(self._view.tree_lock(exclusive=True, moves=True,
                                                     checkpoint=self.checkpoint))
            src_t = stack.enter_context(self._resolve(src, Op.MOVE_FROM, label, "source"))
            source = Pinned(self, src_t, label, "source", src)
            stack.callback(source.end)
            dst_rel = dst(source)
            dst_label = dst_rel.rstrip("/") or "."
            dst_t = stack.enter_context(self._resolve(dst_rel, Op.MOVE_TO, dst_label,
                                                      "destination",
                                                      create_parents=create_parents))
            self._lock(stack, (src_t, dst_t))
            destination = Pinned(self, dst_t, dst_label, "destination", dst_rel)
            stack.callback(destination.end)
            step = _Step(exclusive=True)
            step.add(source, Op.MOVE_FROM)
            step.add(destination, Op.MOVE_TO)
            source.decide(Op.MOVE_FROM)
            destination.decide(Op.MOVE_TO)
            yield source, destination

    @contextmanager
    def pin_group(self, wants: Sequence[Want], *, moves: bool) -> Iterator[list[Pinned]]:
        """One step on several paths (a patch's files): the tree lock taken
        once (exclusive when the step ``moves`` an entry), every path
        resolved once, their directories locked in one order, each
        ``want.op`` decided on what was reached."""
        exclusive = moves or any(_names_git_entry(want.rel, want.op) for want in wants)
        tree = _TREE.exclusive if exclusive else _TREE.shared
        with ExitStack() as stack:
            stack.enter_context(tree(self.checkpoint))
            stack.enter_context(self._view.tree_lock(exclusive=exclusive, moves=moves,
                                                     checkpoint=self.checkpoint))
            targets = [stack.enter_context(self._resolve(
                want.rel, want.op, want.label, want.field, follow=want.follow,
                create_parents=want.create_parents)) for want in wants]
            self._lock(stack, tuple(targets))
            step = _Step(exclusive=exclusive)  # decided as one: the tree the step leaves
            pins = []
            for want, target in zip(wants, targets):
                pinned = Pinned(self, target, want.label, want.field, want.rel)
                stack.callback(pinned.end)
                pinned._target_follows = want.follow
                step.add(pinned, want.op)
                pins.append(pinned)
            for want, pinned in zip(wants, pins):
                pinned.decide(want.op)
            yield pins

    @contextmanager
    def _resolve(self, rel: str, op: Op, shown: str, field: str, *, follow: bool = False,
                 create_parents: bool = False) -> Iterator[Target]:
        with self._target(rel, op, shown, field, follow=follow,
                          create_parents=create_parents) as target:
            yield target

    def _target(self, rel: str, op: Op, shown: str, field: str, *, follow: bool = False,
                create_parents: bool = False) -> Target:
        """The one resolution; when it fails, a refusal by policy on where
        the path leads wins over the error (a denied name is not said to be
        missing)."""
        try:
            target = self._view.root.target(rel, follow_final=follow,
                                            create_parents=create_parents, lockable=True)
        except EscapeError:
            raise
        except OSError as exc:
            try:
                where = locate(self._view.root, rel, follow=follow)
            except OSError:
                raise exc from None
            self._view.check(where, op, shown=shown, field=field)
            raise
        return target

    def _lock(self, stack: ExitStack, targets: tuple[Target, ...]) -> None:
        """Lock the directory each target acts in (deduplicated, sorted;
        those this call holds already are not taken again)."""
        wanted: dict[Identity, Target] = {}
        for target in targets:
            key = target.held_identity()
            if key not in self._held:
                wanted.setdefault(key, target)
        for key in sorted(wanted):
            stack.enter_context(_TABLE.hold(key, self.checkpoint))
            stack.enter_context(_flocked(wanted[key], self.checkpoint))
            self._held.add(key)
            stack.callback(self._held.discard, key)

    def check(self, location: Location, op: Op, *, shown: str, field: str = "path",
              in_repository: Callable[[], bool] | None = None) -> None:
        self._view.check(location, op, shown=shown, field=field, in_repository=in_repository)

    def checkpoint(self) -> None:
        self._host.checkpoint()

    # -- looking: facts for answers (the caller decides what a model is shown) ----
    def stat(self, rel: str, *, follow: bool = True) -> os.stat_result:
        return self._view.root.stat(rel, follow_symlinks=follow)

    def realpath(self, rel: str, *, strict: bool = True) -> str:
        return self._view.root.realpath(rel, strict=strict)

    def exists(self, rel: str) -> bool:
        return self._view.root.exists(rel)

    def entries(self, rel: str) -> list[DirEntry]:
        """The entries of the directory ``rel`` (unsorted)."""
        return self._view.root.scandir(rel)

    def read_small(self, canonical: str, limit: int) -> bytes | None:
        """The content of the regular file at ``canonical`` if it is at most
        ``limit`` bytes and the policy lets it be searched, else ``None``."""
        if self._view.rule(Location(canonical), Op.SEARCH) is not None:
            return None
        with self._view.root.open_handle(canonical, os.O_RDONLY | os.O_NOFOLLOW) as handle:
            info = handle.stat()
            if not st.S_ISREG(info.st_mode) or info.st_size > limit:
                return None
            data = handle.pread(limit + 1, 0)
        return data if len(data) <= limit else None

    def hides(self, rel: str) -> bool:
        """Whether a search must leave ``rel`` out: a deny or secret rule
        hides where it leads (resolved when it can be), or a known name
        leading there."""
        view = self._view
        if not view.policy.hides:
            return False
        try:
            canonical = locate(view.root, rel).path
        except OSError:
            canonical = rel.rstrip("/")
        return not view.visible(canonical, Op.SEARCH)

    def link_end(self, dir_fd: int, directory: str, name: str, op: Op = Op.SEARCH) -> LinkEnd:
        """Where the symlink ``name`` leads, met by a walk of the directory
        ``directory`` (canonical) held open as ``dir_fd``: its text read in
        that directory, then one resolution of it from there (the kernel's
        own reading of a relative link) names the file it reaches, decided
        on its canonical path and the known names leading to it.  A link
        spelled as an absolute path is an escape to the core: ``OTHER``."""
        view = self._view
        root = view.root
        try:
            text = root.backend.readlink_at(dir_fd, name)
        except (OSError, ValueError):
            return LinkEnd.OTHER
        if not text or text.startswith("/"):
            return LinkEnd.OTHER
        spelled = text if directory in (".", "") else f"{directory}/{text}"
        try:
            with root.open_handle(spelled, _LOOK_FLAGS) as handle:
                if not st.S_ISREG(handle.stat().st_mode):
                    return LinkEnd.OTHER
                canonical = handle.path
        except (OSError, ValueError):
            return LinkEnd.OTHER
        return LinkEnd.FILE if view.visible(canonical, op) else LinkEnd.HIDDEN

    def shown(self, rel: str) -> bool:
        """Whether ``rel`` names an entry (links followed) a model may be
        told of: no rule hides its name nor where it leads."""
        if self.hides(rel):
            return False
        root = self._view.root
        return root.exists(rel) and not self.hides(root.realpath(rel))

    def root_gone(self) -> bool:
        """Whether the root directory itself was removed (its fd still
        works: a removed directory has no links left)."""
        try:
            return os.fstat(self._view.root.fileno()).st_nlink == 0
        except (OSError, ValueError):
            return True

    def locate(self, rel: str, *, follow: bool = True) -> Location:
        """Where ``rel`` really is, as the one resolver reaches it (with
        ``follow`` a final symlink is followed)."""
        return locate(self._view.root, rel, follow=follow)

    def open_handle(self, rel: str, op: Op, flags: int = os.O_RDONLY) -> Handle:
        """Open ``rel`` and decide ``op`` on where the opened file really is
        (the handle's canonical path, and the names a link leads from);
        closed again if the policy says no.  A refusal by policy wins over
        the open's own error (a denied name is not said to be missing)."""
        shown = rel.rstrip("/") or "."
        try:
            handle = self._view.root.open_handle(rel, flags)
        except OSError:
            self.check(self.locate(rel), op, shown=shown)
            raise
        try:
            if ".." in rel and ".." in rel.split("/"):  # through a place: the policy sees it
                self.check(self.locate(rel), op, shown=shown)
            else:
                self._view.check_reached(handle.path, op, shown=shown)
                if handle.path != shown.removeprefix("./"):
                    # through a link: the links passed are learnt, and the
                    # names they lead from decided as well
                    self.check(self.locate(rel), op, shown=shown)
        except BaseException:
            handle.close()
            raise
        return handle

    # -- reading: one step, decided on what was opened ---------------------------
    @property
    def backend(self) -> Backend:
        """The root's backend, for its scans of bytes already read (a
        literal's lines, a newline count): native where it is built."""
        return self._view.root.backend

    def open_read(self, rel: str, op: Op = Op.READ, *, shown: str | None = None,
                  field: str = "path", follow: bool = True) -> OpenFile:
        """Open ``rel`` for reading (one resolution; ``follow=False``: a
        final symlink is ``ELOOP``) and decide ``op`` on what was opened:
        its canonical path, and every denied or secret name that leads to
        it through a known link (the links this path passed learnt).  A
        refusal closes it again; when the open fails, a refusal by policy
        on where the path leads wins over the error (a denied name is not
        said to be missing)."""
        label = shown if shown is not None else (rel.rstrip("/") or ".")
        root = self._view.root
        try:
            handle = root.open_handle(rel, os.O_RDONLY if follow else
                                      os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            self._refuse_by_policy(exc, rel, op, label, field, follow)
            raise
        try:
            self._view.check_reached(handle.path, op, shown=label, field=field)
            if handle.path != label.removeprefix("./"):
                # through a link or a '..': the names on the way are decided
                # too (a denied link's target, a denied directory passed)
                self._view.check(locate(root, rel, follow=follow), op, shown=label,
                                 field=field)
        except BaseException:
            handle.close()
            raise
        return OpenFile(handle, root.backend, label)

    def _refuse_by_policy(self, exc: OSError, rel: str, op: Op, shown: str, field: str,
                          follow: bool) -> None:
        """When a read's one resolution failed with ``exc``: a refusal by
        policy on where ``rel`` leads wins over the error (a denied name is
        not said to be missing); returns when the policy allows it, and the
        caller raises ``exc``."""
        if isinstance(exc, EscapeError):
            return
        try:
            where = locate(self._view.root, rel, follow=follow)
        except OSError:
            return
        self._view.check(where, op, shown=shown, field=field)

    def ask_read(self, request: Request, opened: OpenFile, spelled: str,
                 info: os.stat_result) -> None:
        """Ask the host about reading ``opened`` (``info``: its fstat); when
        it was asked (a window opened), ``STALE`` unless ``spelled`` still
        leads to the file that was opened and decided on."""
        self._host.authorize(request)
        if not self._host.asks_host:
            return
        try:
            now = self._view.root.stat(spelled)
        except FileNotFoundError:
            raise swapped(opened.shown) from None
        if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
            raise swapped(opened.shown)

    def look(self, rel: str, op: Op = Op.LIST, *, follow: bool = False,
             shown: str | None = None, field: str = "path") -> Entry:
        """One resolution of ``rel`` to look at the entry itself (a final
        link not followed unless ``follow``), ``op`` decided on what it
        reached (the links passed included); nothing is opened, so a FIFO
        is looked at without blocking.  A missing entry raises the core's
        own error for the spelled path.  Use the entry in a ``with``."""
        label = shown if shown is not None else (rel.rstrip("/") or ".")
        root = self._view.root
        try:
            target = root.target(rel, follow_final=follow)
        except OSError as exc:
            self._refuse_by_policy(exc, rel, op, label, field, follow)
            raise
        try:
            self._view.check(Location(target.path, (), target.passed), op, shown=label,
                             field=field)
            info = target.lstat()
            if info is None:
                root.lstat(rel)  # raises the core's not-found, naming the component
                raise swapped(label)  # it is there now, not when it was resolved
        except BaseException:
            target.close()
            raise
        return Entry(target, label, info)

    def lead(self, entry: Entry, op: Op = Op.LIST) -> Lead:
        """Where the symlink ``entry`` leads, resolved once from its
        canonical location: named only when inside and no rule hides it (nor
        a name leading to it); where resolution stopped under a hiding rule,
        nothing is said (``missing`` there would tell what exists)."""
        view = self._view
        try:
            with view.root.target(entry.path, follow_final=True) as followed:
                canonical = followed.path
                if not view.visible(canonical, op):
                    return Lead(None, None)
                info = followed.lstat()
        except EscapeError:
            return Lead(None, "outside")
        except OSError as exc:
            stopped = exc.component if isinstance(exc, PathError) else None
            if isinstance(stopped, str) and stopped and not view.visible(stopped, op):
                return Lead(None, None)
            return Lead(None, "loop" if exc.errno == errno.ELOOP else "missing")
        return Lead(canonical, "missing" if info is None else entry_kind(info.st_mode))


def _read_whole(handle: Handle, size: int, limit: int,
                step: Callable[[int], None] | None) -> bytes:
    """At most ``limit + 1`` bytes of ``handle`` from its start, ``size``
    (its ``fstat``'s) first: a short read that reached it is the end."""
    chunks, total = [], 0
    while total <= limit:
        want = max(65536, min(size + 1, limit + 1 - total))
        chunk = handle.pread(want, total)
        if not chunk:
            break
        if step is not None:
            step(len(chunk))
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < want and total == size:
            break
    return b"".join(chunks)


class Pinned:
    """One resolved location, held under the call's locks: what the tool
    looks at and acts on, never resolved again."""

    def __init__(self, call: CallView, target: Target, shown: str, field: str,
                 spelled: str) -> None:
        self._call = call
        self._target = target
        self.shown = shown
        self.field = field
        self._spelled = spelled
        self._target_follows = False
        self._decided: list[Op] = []
        self._git: bool | None = None
        self._step: _Step | None = None  # set by the step that made this pin
        self._head: tuple[tuple[int, int, int, int], bytes, bool] | None = None
        # the regular file here, open since it was first looked at or read:
        # its digest, its content and the write's metadata come from this fd
        self._kept: Opened | None = None
        self._location: Location | None = None

    # -- what resolution reached ---------------------------------------------------
    @property
    def path(self) -> str:
        return self._target.path

    @property
    def parent(self) -> str:
        return self._target.parent

    @property
    def name(self) -> str | None:
        return self._target.name

    @property
    def creates(self) -> tuple[str, ...]:
        return self._target.creates

    @property
    def passed(self) -> tuple[str, ...]:
        return self._target.passed

    @property
    def location(self) -> Location:
        """Where resolution reached (fixed for the pin's life: made once)."""
        where = self._location
        if where is None:
            target = self._target
            where = self._location = Location(target.path, target.creates, target.passed)
        return where

    # -- deciding ---------------------------------------------------------------------
    def decide(self, op: Op) -> None:
        """Refuse ``op`` here if the policy says no (see :meth:`View.rule`)."""
        view = self._call.shared
        kind = view.rule(self.location, op, self._in_repository)
        if kind is not None:
            raise policy_refusal(kind, self.shown, op, self.field)
        if op in _ADDING and self._step is not None:
            view.refuse_new_repository(self._step)
        if op not in self._decided:
            self._decided.append(op)

    def decide_again(self) -> None:
        """Decide again after the host answered (links met, a repository
        made meanwhile count): the directory looked at afresh."""
        self._git = None
        for op in self._decided:
            self.decide(op)

    def _in_repository(self) -> bool:
        """Whether the pinned location lies in a git directory made after
        the toolbox opened (looked at once per decision round): the
        directory it acts in (the deepest that exists, however many the
        call creates) looked at through the held fd, and the one above it
        only when the held one is named as git names its own directories
        (``hooks``, ``info``...): where git runs or reads what is written."""
        if self._git is None:
            self._git = self._held_is_repository() or (
                self._held_name() in GIT_SUBDIRECTORIES and in_git_directory(
                    self._call.shared.look, self._held_path(), ()))
        return self._git

    @property
    def held_path(self) -> str:
        """The canonical path of the directory this pin holds (the deepest
        that exists on the way)."""
        return (self.creates[0].rpartition("/")[0] or ".") if self.creates else self.parent

    def _held_path(self) -> str:
        return self.held_path

    def _held_name(self) -> str:
        return self._held_path().rpartition("/")[2]

    def held_present(self, names: Iterable[str]) -> frozenset[str]:
        """Which of ``names`` the held directory holds now (an ``lstat``
        each beside the entry, nothing resolved)."""
        target = self._target
        return frozenset(name for name in names if target.held_lstat(name) is not None)

    def _held_is_repository(self) -> bool:
        """Whether the held directory is a repository now (``is_repository``:
        one ``lstat`` when it holds no ``HEAD``)."""
        try:
            if self._target.held_lstat("HEAD") is None:
                # a common git directory has no HEAD: looked at only when
                # what is written there is what git reads of one
                return self._names_git_config() and looks_like_common_directory(
                    self._call.shared.look, self._held_path())
            return is_repository({"HEAD", *self.held_present(("objects", "refs",
                                                              "commondir"))})
        except OSError:
            return False

    def _names_git_config(self) -> bool:
        """Whether the entry this pin makes or changes in its held
        directory is named as git's ``config``, ``hooks`` or ``info``."""
        first = (self.creates[0] if self.creates else self.path).rpartition("/")[2]
        return first.lower() in ("config", "hooks", "info")

    def place(self) -> Place:
        return Place(self.path, self.creates, self._target.held_identity())

    def ensure_place(self, before: Place) -> None:
        """``STALE`` unless the path resolves now as it did when the host
        was asked (one more resolution, made only when the host was asked:
        without a question there is no window)."""
        root = self._call.shared.root
        try:
            with root.target(self._spelled, create_parents=True,
                             follow_final=self._target_follows) as again:
                now = Place(again.path, again.creates, again.held_identity())
        except OSError:
            raise swapped(self.shown) from None
        if now != before:
            raise swapped(self.shown)

    def rule(self, op: Op) -> Kind | None:
        return self._call.shared.rule(self.location, op)

    # -- looking ----------------------------------------------------------------------
    def lstat(self) -> os.stat_result | None:
        return self._target.lstat()

    def look(self) -> os.stat_result | None:
        """What :meth:`lstat` says, a regular file opened for it and kept
        open: its digest, its content and the write's metadata then come
        from that fd, never from the name again (one open for the call)."""
        try:
            opened = self._target.open_existing(os.O_RDONLY)
        except OSError:
            return self._target.lstat()  # a symlink, a special file, unreadable: as it is
        if opened is None:
            return None
        if not self._keep(opened):
            opened.handle.close()
        return opened.info

    def _keep(self, opened: Opened) -> bool:
        """Keep ``opened`` if it is a regular file (the caller closes it
        otherwise)."""
        if not st.S_ISREG(opened.info.st_mode):
            return False
        self.release()
        self._kept = opened
        return True

    def _kept_as(self, expect: os.stat_result | None) -> Opened | None:
        """The kept file, if it is ``expect`` (any kept file without it)."""
        kept = self._kept
        if kept is None or (expect is not None and (kept.info.st_dev, kept.info.st_ino) !=
                            (expect.st_dev, expect.st_ino)):
            return None
        return kept

    def end(self) -> None:
        """The pin's block is over: the kept file closed, the step let go
        (it holds this pin: dropped now, neither is left to the garbage
        collector)."""
        self._step = None
        self.release()

    def release(self) -> None:
        """Close the kept file (idempotent; the pin's block does it)."""
        kept, self._kept = self._kept, None
        if kept is not None:
            kept.handle.close()

    def identity(self) -> tuple[int, int, int] | None:
        info = self._target.lstat()
        return None if info is None else (info.st_dev, info.st_ino, st.S_IFMT(info.st_mode))

    def same(self, before: os.stat_result | None) -> None:
        """``STALE`` unless the entry is still the one ``before`` described."""
        now = self.identity()
        then = None if before is None else (before.st_dev, before.st_ino,
                                            st.S_IFMT(before.st_mode))
        if now != then:
            raise swapped(self.shown)

    def read(self, limit: int, *, expect: os.stat_result | None = None,
             check: Callable[[os.stat_result], None] | None = None,
             step: Callable[[int], None] | None = None) -> tuple[bytes, os.stat_result]:
        """The entry's content (at most ``limit + 1`` bytes: the caller
        refuses more) and its stat, read from the pinned entry (a symlink
        there now is ``ELOOP``); ``STALE`` if it is not ``expect``;
        ``check(stat)`` runs before anything is read.  A head of a file this
        pin digested is answered from what the digest kept (the same file:
        identity, size and mtime)."""
        kept = self._head
        if kept is not None and expect is not None and check is None and step is None and \
                kept[0] == (expect.st_dev, expect.st_ino, expect.st_size, expect.st_mtime_ns) \
                and (kept[2] or len(kept[1]) > limit):
            return kept[1][:limit + 1], expect
        opened = self._kept_as(expect)
        if opened is None:
            opened = self._target.open_existing(os.O_RDONLY)
            if opened is None:
                self._target.open(os.O_RDONLY).close()  # raises the core's "not found"
                raise swapped(self.shown)  # there again: it changed while looked at
            self._keep(opened)
        handle, info = opened
        try:
            if expect is not None and (info.st_dev, info.st_ino) != (expect.st_dev,
                                                                    expect.st_ino):
                raise swapped(self.shown)
            if check is not None:
                check(info)
            return _read_whole(handle, info.st_size, limit, step), info
        finally:
            if self._kept is not opened:
                handle.close()

    def sha256(self, expect: os.stat_result | None) -> str:
        """The sha256 of the pinned entry's whole content, streamed with a
        checkpoint before every chunk; ``STALE`` if it is not ``expect``.
        Its start is kept for :meth:`read` of a head of the same file."""
        opened = self._kept_as(expect)
        if opened is None:
            opened = self._target.open_existing(os.O_RDONLY)
            if opened is None:
                raise swapped(self.shown)  # it was there when looked at
            self._keep(opened)
        handle, now = opened
        try:
            if expect is not None and (now.st_dev, now.st_ino) != (expect.st_dev,
                                                                  expect.st_ino):
                raise swapped(self.shown)
            digest = hashlib.sha256()
            pos = 0
            while True:
                self._call.checkpoint()
                # what fstat says is left, and one byte more to see the end
                want = min(_DIGEST_CHUNK, max(now.st_size - pos + 1, 1))
                if want == 1 and pos:
                    want = _DIGEST_CHUNK  # it grew past what fstat said: read on
                chunk = handle.pread(want, pos)
                if pos == 0:
                    self._head = ((now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns),
                                  chunk[:_HEAD_KEPT], len(chunk) <= _HEAD_KEPT)
                digest.update(chunk)
                pos += len(chunk)
                # a short read that reached the size fstat gave is the end
                if not chunk or (len(chunk) < want and pos == now.st_size):
                    if chunk:
                        self._call.checkpoint()  # as before a read that would find the end
                    return digest.hexdigest()
        finally:
            if self._kept is not opened:
                handle.close()

    def leads_to_directory(self) -> bool:
        """Whether the pinned entry, a symlink, leads to a directory inside
        the root (followed from the pinned directory's canonical path); an
        outward link raises the escape."""
        root = self._call.shared.root
        with root.target(self.path, follow_final=True) as followed:
            info = followed.lstat()
        return info is not None and st.S_ISDIR(info.st_mode)

    def entries(self) -> int:
        """How many entries the pinned directory holds."""
        with self._target.open(os.O_RDONLY | os.O_DIRECTORY) as handle:
            return len(handle.scandir())

    # -- acting -----------------------------------------------------------------------
    def make_parents(self) -> list[str]:
        return self._target.make_parents() if self._target.creates else []

    def write(self, data: bytes, *, exclusive: bool, expect: os.stat_result | None) -> None:
        """Atomic replace (or create) in the pinned directory, the entry
        expected to be ``expect`` (``None``: absent)."""
        kept = None if expect is None or exclusive else self._kept_as(expect)
        if kept is not None:  # its fstat for the lstat, its fd for the metadata
            self._target.write_bytes(data, exclusive=False, replacing=kept)
            return
        self._target.write_bytes(data, exclusive=exclusive,
                                 expect=None if expect is None else (expect.st_dev,
                                                                     expect.st_ino))

    def mkdir(self) -> None:
        self._target.mkdir()

    def remove(self) -> None:
        self._target.remove()
        links = self._call.shared.links
        links.forget(self.path)
        for location in links.through(self.path):
            learn_link(self._call.shared.root, links, location)

    def rmdir(self) -> None:
        self._target.rmdir()

    def rename_to(self, other: Pinned, *, replace: bool) -> None:
        """Rename the pinned entry onto ``other``'s name (both held); the
        links it carries are known by their new names from now on."""
        was_link = (info := self._target.lstat()) is not None and st.S_ISLNK(info.st_mode)
        self._target.rename(other._target, replace=replace)
        view = self._call.shared
        view.links.forget(other.path)
        view.links.moved(self.path, other.path)
        if was_link:
            learn_link(view.root, view.links, other.path)
        for location in [*view.links.take_relearn(), *view.links.through(self.path),
                         *view.links.through(other.path)]:
            learn_link(view.root, view.links, location)

    def raise_missing(self) -> None:
        """Raise the core's own "not found" for the spelled path (which
        says which component is missing); returns if it is there again."""
        self._call.shared.root.lstat(self._spelled)

    def carried_rule(self, dest: Pinned, kind: str) -> tuple[str, Kind, str] | None:
        """For a move of this entry onto ``dest``: the first entry a rule
        covers in what the move carries (a directory's subtree; for a
        symlink to an in-root directory, that directory's entries as they
        will be seen under the new name), as ``(inner, kind, field)``."""
        view = self._call.shared
        if kind == "directory":
            return view.subtree_rule(self.path, dest.path, self._checkpoint_fn(), leaving=True,
                                     shown=self.shown)
        if kind != "symlink":
            return None
        try:
            leads = locate(view.root, self.path, follow=True)
            info = view.root.stat(leads.path)
        except OSError:
            return None  # dangling or outside: it carries nothing in the root
        if not st.S_ISDIR(info.st_mode):
            return None
        return view.subtree_rule(leads.path, dest.path, self._checkpoint_fn(), leaving=False,
                                 shown=self.shown)

    def _checkpoint_fn(self) -> Checkpoint:
        return self._call.checkpoint


RootLike: TypeAlias = "Root | str | os.PathLike[str]"  # what a host opens a toolbox on


def open_view(root: RootLike, policy: Policy, *,
              deny: Sequence[str] = ()) -> View:
    """The policed view of ``root``: a :class:`~corral.Root` borrowed, or a
    path opened here (closed by :meth:`View.close`).  ``policy`` is extended
    by ``deny`` and by the git directories a scan of the root finds, and
    rooted at the root's host paths; the in-root links the scan met are
    known from the start."""
    owns = not isinstance(root, Root)
    opened = root if isinstance(root, Root) else Root(root)
    try:
        moves_before = moves_made(root_identity(opened))  # read first: a move meanwhile counts
        found = git_scan(opened)
        known_as = (opened.path, os.path.realpath(opened.path))
        rooted = policy.extended(deny=deny, protect_dirs=found.dirs).rooted(known_as)
        links = LinkMap()
        scanned = tuple(found.links[:MAX_SCANNED_LINKS])
        if not rooted.is_empty:
            for link in scanned:
                learn_link(opened, links, link)
    except BaseException:
        if owns:
            opened.close()
        raise
    view = View(opened, rooted, links, owns_root=owns)
    view.scanned_links = scanned
    view.moves_seen = moves_before
    view.scan_complete = found.complete
    if not found.complete and not rooted.is_empty:
        view.learn_every_link_later()
    return view


# -- roots beside roots: what a workspace of several roots asks -----------------

RootIdentity = tuple[int, int]


def root_identity(root: Root) -> RootIdentity:
    """The (device, inode) of the directory ``root`` holds."""
    info = os.fstat(root.fileno())
    return (info.st_dev, info.st_ino)


def open_beneath(parent: Root, rel: str) -> tuple[Root, str] | None:
    """The directory ``rel`` opened beneath ``parent`` by the resolver, as a
    Root of its own, and the canonical path inside ``parent`` of what was
    opened (an in-root link on the way, even one swapped in just now, is
    resolved: every decision is made on where the open landed, never on
    ``rel``).  ``None`` if it cannot be opened (a link that leads out, not a
    directory: fail closed)."""
    try:
        handle = parent.open_handle(rel, os.O_RDONLY | os.O_DIRECTORY)
    except (OSError, ValueError):
        return None
    try:
        return handle.open_root(), handle.path
    except OSError:
        return None
    finally:
        handle.close()


def _kernel_path(fd: int) -> str | None:
    """Where the kernel says the directory ``fd`` is now (a real path)."""
    try:
        if hasattr(fcntl, "F_GETPATH"):  # macOS
            raw: bytes = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))
            return os.fsdecode(raw.rstrip(b"\0"))
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


_PLACE_TRIES = 3


def nested_place(outer: Root, inner: Root) -> str | None:
    """The canonical path inside ``outer`` of the directory ``inner`` holds
    ("." when both hold the same one), or ``None`` when it does not lie
    inside ``outer``.  Decided on the objects: the kernel's present path of
    each directory (links resolved, moves seen), then the entry at that
    place inside ``outer``, reached by ``outer``'s own resolver without
    following links, must be ``inner``'s very directory.  A place that
    changes under every try is a ``ValueError`` (never guessed)."""
    wanted = root_identity(inner)
    if root_identity(outer) == wanted:
        return "."
    for _ in range(_PLACE_TRIES):
        outer_at, inner_at = _kernel_path(outer.fileno()), _kernel_path(inner.fileno())
        if outer_at is None or inner_at is None or not os.path.isabs(inner_at):
            return None
        rel = os.path.relpath(inner_at, outer_at)
        if rel == ".." or rel.startswith("../"):
            return None
        try:
            found = outer.stat(rel, follow_symlinks=False)
        except (OSError, ValueError):
            continue
        if (found.st_dev, found.st_ino) == wanted:
            return rel
    raise ValueError("a root's directory kept moving while its place in another root was read")


# -- directories: what the read-side walks look at -----------------------------------

import weakref  # noqa: E402  (this section's own; the module's imports are above)

from typing import TypeVar  # noqa: E402

from ...contained import (FileScan, Tree, TreeVisitor, adopt_entry,  # noqa: E402
                          batches_natively, open_entry)
from .view_walk import OpenDirectory  # noqa: E402

WalkState = TypeVar("WalkState")

# openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS (the same
# bits in every backend): a canonical path is probed in one call, no link followed
_CANONICAL_ONLY = 0x08 | 0x04 | 0x02
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR})
_PROBE_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_PROBE_ANY = getattr(os, "O_PATH", 0) | os.O_NOFOLLOW | os.O_CLOEXEC
_REPOSITORY_ABOVE: weakref.WeakKeyDictionary[View, bool] = weakref.WeakKeyDictionary()
_PROBE_FAST: weakref.WeakKeyDictionary[View, bool] = weakref.WeakKeyDictionary()
_REPOSITORY_ABOVE_GUARD = threading.Lock()


def _probe(call: CallView, canonical: str, flags: int) -> int | None:
    """An fd of what is at the canonical path ``canonical`` from one
    ``openat2`` of the root fd (no link followed anywhere), ``None`` when
    nothing is there; raises ``LookupError`` when one call cannot say (no
    openat2, a link on the way, a rename racing it): the caller then asks
    the core the long way."""
    view = call.shared
    root = view.root
    backend = root.backend
    fast = _PROBE_FAST.get(view)
    if fast is None:  # fixed when the root was opened: asked once
        fast = _PROBE_FAST[view] = bool(backend.has_openat2 and _PROBE_ANY
                                         and root.info().get("fast_path"))
    if not fast:
        raise LookupError(canonical)
    try:
        return backend.openat2(root.fileno(), canonical, flags, 0, _CANONICAL_ONLY)
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        raise LookupError(canonical) from None


def entry_exists(call: CallView, canonical: str) -> bool:
    """Whether an entry of any kind (a final link counts) is at the
    canonical root-relative path ``canonical``: one system call when there
    is none, two when there is; one in either case for a name in the root."""
    if "/" not in canonical and canonical not in (".", "..", ""):
        root = call.shared.root  # a name looked up in the root itself: nothing traversed
        try:
            root.backend.lstat_at(root.fileno(), canonical)
        except (OSError, ValueError):
            return False
        return True
    try:
        fd = _probe(call, canonical, _PROBE_ANY)
    except LookupError:
        try:
            call.shared.root.lstat(canonical)
        except OSError:
            return False
        return True
    if fd is None:
        return False
    call.shared.root.backend.close(fd)
    return True


def read_regular_file(call: CallView, canonical: str, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of the regular file at the canonical path
    ``canonical``; ``None`` when there is none, it is a link, another kind
    or unreadable (an ignore file: git follows no link to one either).
    One system call when there is none."""
    from ...contained import adopt_entry

    root = call.shared.root
    try:
        fd = _probe(call, canonical, _PROBE_FILE)
    except LookupError:
        try:
            handle = root.open_handle(canonical, _PROBE_FILE)
        except OSError:
            return None
    else:
        if fd is None:
            return None
        handle = adopt_entry(root, fd, canonical)
    with handle:
        try:
            if not st.S_ISREG(handle.stat().st_mode):
                return None
            return handle.read(limit)
        except OSError:
            return None


def root_in_repository(view: View) -> bool:
    """Whether the root is inside a git work tree whose top is above it:
    the host's own path to the root has a ``.git`` in one of its parent
    directories (looked once per view, by the host's path, never by a
    model's; nothing above the root is read beyond that name)."""
    with _REPOSITORY_ABOVE_GUARD:
        known = _REPOSITORY_ABOVE.get(view)
    if known is not None:
        return known
    path = os.path.abspath(os.fsdecode(view.root.path))
    found = False
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
        if os.path.lexists(os.path.join(path, ".git")):
            found = True
            break
    with _REPOSITORY_ABOVE_GUARD:
        _REPOSITORY_ABOVE[view] = found
    return found


def open_directory(call: CallView, rel: str, op: Op) -> OpenDirectory:
    """Open ``rel`` as a directory to list it, as one step: one resolution
    (a final link followed, as ``ls`` does) and ``op`` decided on what was
    opened and on the names leading to it (:meth:`CallView.open_handle`).
    ``NotADirectoryError`` (or the core's special-file error) for anything
    else."""
    handle = call.open_handle(rel, op, os.O_RDONLY | os.O_DIRECTORY)
    return OpenDirectory(handle, rel.rstrip("/") or ".")


def open_below(call: CallView, canonical: str, identity: tuple[int, int]) -> OpenDirectory | None:
    """A directory a listing met below one :func:`open_directory` opened,
    by its canonical path with no link followed anywhere, or ``None`` when
    it is gone or no longer the directory the listing saw (``identity``)
    at that path (a link put on the way would move its canonical path).
    The caller decided on it already: it was listed as visible."""
    try:
        handle = call.shared.root.open_handle(canonical, os.O_RDONLY | os.O_DIRECTORY
                                              | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = handle.stat()
    except OSError:
        handle.close()
        return None
    if (info.st_dev, info.st_ino) != identity or handle.path != canonical:
        handle.close()
        return None
    return OpenDirectory(handle, canonical)


def kind_of(call: CallView, rel: str) -> os.stat_result:
    """The ``stat`` of what ``rel`` leads to, to say why it cannot be
    listed (a file, a FIFO): facts for a refusal, decided on already."""
    return call.shared.root.stat(rel)


def open_searched(call: CallView, rel: str, before: os.stat_result
                  ) -> tuple[OpenDirectory, os.stat_result]:
    """The directory a search was decided and authorized on, opened (one
    resolution, a final link followed) to walk it, and its ``fstat``;
    ``STALE`` (closed again) if it is no longer what was stat-ed then: the
    walk acts on the directory decided on, or on nothing."""
    shown = rel.rstrip("/") or "."
    handle = call.shared.root.open_handle(rel, os.O_RDONLY | os.O_DIRECTORY)
    try:
        info = handle.stat()
        if (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
            raise swapped(shown)
    except BaseException:
        handle.close()
        raise
    return OpenDirectory(handle, shown), info


def walk_tree(call: CallView, directory: OpenDirectory, start: WalkState,
              visitor: TreeVisitor[WalkState], *, yield_dirs: bool = False,
              max_entries: int | None = None) -> Tree[WalkState]:
    """The core's walk below ``directory`` (never through a link; the
    visitor decides what is entered and shown)."""
    return Tree(call.shared.root, directory.fileno(), start, visitor, yield_dirs=yield_dirs,
                max_entries=max_entries)


def read_listed_file(call: CallView, dir_fd: int, name: str, canonical: str, limit: int
                     ) -> bytes | None:
    """Up to ``limit`` bytes of the regular file ``name`` that a listing of
    the directory ``dir_fd`` (one a walk holds, at the canonical path of
    ``canonical``'s parent) showed: one open of that name, no link
    followed; ``None`` when it is gone, a link, another kind or unreadable."""
    try:
        handle, info = open_entry(call.shared.root, dir_fd, name, canonical)
    except OSError:
        return None
    with handle:
        if not st.S_ISREG(info.st_mode):
            return None
        try:
            return handle.read(limit)
        except OSError:
            return None


def listed_file_scanner(call: CallView, needle: bytes | None, *, sniff: int,
                        keep_links: bool, chunk: int) -> FileScan | None:
    """The backend's scanner of the files a walk listed, in batches, where
    it has one (none for a backend that must see every call); the fds it
    leaves open are taken with :func:`adopt_listed`."""
    root = call.shared.root
    if not batches_natively(root):
        return None
    return root.backend.file_scanner(needle, sniff=sniff, keep_links=keep_links, chunk=chunk)


def adopt_listed(call: CallView, fd: int, canonical: str, shown: str) -> OpenFile:
    """The file the scanner opened (one name of a directory a walk holds,
    no link followed) at the canonical path ``canonical``; owns ``fd``."""
    root = call.shared.root
    return OpenFile(adopt_entry(root, fd, canonical), root.backend, shown)


def open_listed(call: CallView, dir_fd: int, name: str, canonical: str, shown: str
                ) -> tuple[OpenFile, os.stat_result]:
    """Open the entry ``name`` a listing of the directory ``dir_fd`` (one a
    walk holds) showed, for reading: one name, no link followed, never
    blocking; with its ``fstat``.  Raises the open's ``OSError``."""
    root = call.shared.root
    handle, info = open_entry(root, dir_fd, name, canonical)
    return OpenFile(handle, root.backend, shown), info
