"""The links the view knows of (a symlink's name protects what it leads
to), where a path leads, and git's reading of the tree at open."""

from __future__ import annotations

import logging
import os
import stat as st
import threading
from collections import deque
from collections.abc import Collection, Container, Iterable
from dataclasses import replace

from ....contained import Backend, DirEntry, DirectoryWatch, Root, WatchEvent
from ..._policy.gitdirs import Scan, scan
from ..._policy.locate import Location

log = logging.getLogger("corral.tools")

MAX_LINKS = 100_000  # links remembered per root (bounded memory)
MAX_ALIASES = 1024  # names leading to one path that are decided (bounded work;
#                      more refuse: the ones left out may be protected)
MAX_SCANNED_LINKS = 10_000  # links found at open whose target is looked up (bounded)
MAX_WALK_DEPTH = 64  # levels the walk beyond the look at open goes down (bounded)
MAX_REMEMBERED_ALIASES = 16_384  # paths whose names are remembered for the map as it is
MAX_PENDING_EVENTS = 8192  # events kept for a view between two of its mutating steps
MAX_EVENT_LOOKS = 512  # entries another program made that one catch-up looks at (more:
#                       the whole tree is looked at again)
WHOLE_TREE = (".", 0)  # where a walk of every directory starts, and its depth


def locate(root: Root, rel: str, *, follow: bool = True) -> Location:
    """Where ``rel`` leads, as the core's one resolver reached it (a
    :class:`~corral.contained.Target` planning the directories it would
    create): with ``follow`` a final symlink is followed (a read), else the
    entry itself is meant (a move, a delete, a write that refuses links).
    A location that cannot be established raises the core's error."""
    with root.target(rel, follow_final=follow, create_parents=True) as target:
        return Location(target.path, target.creates, target.passed)


class LinkMap:
    """Known in-root symlinks: canonical location -> the canonical path it
    leads to (thread-safe, bounded).  Kept as paths, not inodes: a host
    program opens the link's name and follows it to whatever is there."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._leads: dict[str, str] = {}
        self._by_target: dict[str, set[str]] = {}
        self._below: dict[str, int] = {}  # directory -> known links leading to it or below
        # read-only views for a walk's membership tests (one per entry, no call):
        # the paths a known link leads to; those a known link leads to or below
        self.targets: Collection[str] = self._by_target
        # the known links' locations, read-only: empty when no link is known
        self.locations: Collection[str] = self._leads
        self._parents: dict[str, int] = {}  # directory -> known link targets right in it
        self.holding_targets: Collection[str] = self._parents
        self.reached: Container[str] = self._below
        self._not_links: set[str] = set()
        self._relearn: list[str] = []
        self._via: dict[str, tuple[str, ...]] = {}  # the links its resolution passed
        # path -> its other names, for the map as it is now: emptied by every
        # change to where a link leads, so a search deciding on the same
        # paths call after call follows no chain twice
        self._names_of: dict[str, tuple[str, ...] | None] = {}
        self.generation = 0  # counts the changes to where links lead
        # links leading out of the root, by where a host program lands
        # (an absolute real path): another root of a workspace may lie there
        self._outside: dict[str, str] = {}

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
                self._untarget(old, location)
                self._count(old, -1)
            self._changed()
            self._leads[location] = leads_to
            leading = self._by_target.get(leads_to)
            if leading is None:
                leading = self._by_target[leads_to] = set()
                self._count_parent(leads_to, 1)
            leading.add(location)
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

    def below(self, top: str) -> list[str]:
        """The known links lying below the directory ``top``."""
        prefix = top + "/" if top not in (".", "") else ""
        with self._guard:
            return [location for location in self._leads if location.startswith(prefix)]

    def reached_through(self, place: str) -> list[tuple[str, str]]:
        """The known links whose target was reached through ``place`` itself
        (a link of their chain, or where it led), each with the rest of its
        target beyond where ``place`` leads now ("" for there itself; ""
        too where that cannot be told): a move onto ``place`` makes them
        lead into what lands there."""
        with self._guard:
            end = self._leads.get(place, place)
            found = []
            for location, via in self._via.items():
                target = self._leads.get(location)
                if place not in via or target is None:
                    continue
                rest = target[len(end) + 1:] if target.startswith(end + "/") else ""
                found.append((location, rest))
        return found

    def through(self, top: str) -> list[str]:
        """The known links whose target was reached through ``top`` or an
        entry below it (another link, a directory left by ``..``): where
        they lead changes when ``top`` is moved or removed."""
        prefix = top + "/"
        with self._guard:
            return [location for location, via in self._via.items()
                    if any(p == top or p.startswith(prefix) for p in via)]

    def add_outside(self, location: str, landing: str) -> None:
        """The link at ``location`` leads out of the root, to the host's real
        path ``landing``."""
        with self._guard:
            if location in self._outside or len(self._outside) < MAX_LINKS:
                self._outside[location] = landing

    def forget_outside(self, location: str) -> None:
        if self._outside:
            with self._guard:
                self._outside.pop(location, None)

    def outside(self) -> list[tuple[str, str]]:
        """(location, host real path) of each known link leading out."""
        if not self._outside:
            return []
        with self._guard:
            return list(self._outside.items())

    def forget(self, location: str) -> None:
        with self._guard:
            self._outside.pop(location, None)
            self._via.pop(location, None)
            old = self._leads.pop(location, None)
            if old is not None:
                self._untarget(old, location)
                self._count(old, -1)
                self._changed()

    def is_link(self, location: str) -> bool:
        """Whether ``location`` is known as a link (leading inside or out)."""
        return location in self._leads or location in self._outside

    def knows(self, location: str) -> bool:
        return location in self._leads or location in self._not_links

    def not_a_link(self, location: str) -> None:
        with self._guard:
            if len(self._not_links) < MAX_LINKS:
                self._not_links.add(location)

    def _untarget(self, target: str, location: str) -> None:
        """``location`` no longer leads to ``target`` (held under the guard)."""
        leading = self._by_target.get(target)
        if leading is not None:
            leading.discard(location)
            if not leading:
                del self._by_target[target]
                self._count_parent(target, -1)

    def _count_parent(self, target: str, step: int) -> None:
        """Count ``target`` in the directory that holds it (held under the guard)."""
        if target in (".", ""):
            return
        parent = target.rpartition("/")[0] or "."
        count = self._parents.get(parent, 0) + step
        if count > 0:
            self._parents[parent] = count
        else:
            self._parents.pop(parent, None)

    def _changed(self) -> None:
        """Where a link leads changed (held under the guard): what was
        remembered of the map as it was is dropped."""
        self._names_of = {}
        self.generation += 1

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

    def directory_names(self, canonical_dir: str) -> tuple[str, ...] | None:
        """Every other name that leads to the directory ``canonical_dir``
        (as :meth:`aliases`; the root's are the links to it and theirs);
        ``None`` where there are more than the view weighs."""
        if canonical_dir not in (".", ""):
            return self.aliases(canonical_dir)
        with self._guard:
            to_root = list(self._by_target.get(".", ()))
        found = dict.fromkeys(to_root)
        for location in to_root:
            more = self.aliases(location)
            if more is None:
                return None
            found.update(dict.fromkeys(more))
        return tuple(found) if len(found) <= MAX_ALIASES else None

    def aliases(self, canonical: str) -> tuple[str, ...] | None:
        """Every other name that leads to ``canonical`` through known links
        (link chains followed, each link once per name: a link to a
        directory above itself adds one name, not endless ones), remembered
        until the map changes; ``None`` where there are more than
        :data:`MAX_ALIASES`: a decision must then refuse, for the names it
        cannot weigh may be the protected ones."""
        by_target = self._by_target
        if not by_target or canonical in (".", ""):
            return ()
        remembered = self._names_of  # replaced, not emptied, by a change
        if canonical in remembered:
            return remembered[canonical]
        if "." not in by_target:  # most names: no link leads to them or above them
            end = len(canonical)
            while end > 0 and canonical[:end] not in by_target:
                end = canonical.rfind("/", 0, end)
            if end <= 0:
                return ()
        found: dict[str, None] = {}
        queue: deque[tuple[str, frozenset[str]]] = deque([(canonical, frozenset())])
        with self._guard:
            while queue:
                name, used = queue.popleft()
                end = len(name)
                while end > 0:
                    prefix = name[:end]
                    for location in self._by_target.get(prefix, ()):
                        alias = location + name[end:]
                        if location in used or alias == canonical or alias in found:
                            continue
                        found[alias] = None
                        if len(found) > MAX_ALIASES:
                            return None
                        queue.append((alias, used | {location}))
                    end = name.rfind("/", 0, end)
                for location in self._by_target.get(".", ()):  # a link to the root itself
                    alias = f"{location}/{name}"
                    if alias not in found and location not in used:
                        found[alias] = None
                        if len(found) > MAX_ALIASES:
                            break
                if len(found) > MAX_ALIASES:
                    break
            names = tuple(found) if len(found) <= MAX_ALIASES else None
            if self._names_of is remembered:  # the map did not change meanwhile
                if len(remembered) >= MAX_REMEMBERED_ALIASES:
                    remembered = self._names_of = {}
                remembered[canonical] = names
        return names


def learn_link(root: Root, links: LinkMap, location: str) -> None:
    """Remember where the link at ``location`` (canonical) leads, if inside:
    also a link whose target is not there yet (its parents missing too),
    one spelled as an absolute path inside the root, and one that climbs
    out of the root and back in (``../<root's name>/x``), which the host
    program follows though the core calls them escapes."""
    try:
        found: Location | None = locate(root, location, follow=True)
    except (OSError, ValueError):
        found = _spelled_target(root, location)
    if found is None:
        landing = _host_landing(root, location)
        if landing is not None and _within(landing, os.path.realpath(root.path)) is None:
            links.add_outside(location, landing)  # out of the root: another root's, maybe
            return
    links.forget_outside(location)
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
        spelled = inside
    else:
        parent = location.rpartition("/")[0]
        spelled = f"{parent}/{text}" if parent else text
    if spelled is not None:
        try:
            return locate(root, spelled, follow=True)
        except (OSError, ValueError):
            pass
    landed = _host_reading(root, location)
    if landed is None:
        return None
    try:
        return locate(root, landed, follow=True)
    except (OSError, ValueError):
        return None


def _host_landing(root: Root, spelled: str) -> str | None:
    """Where a host program opening ``spelled`` (a path inside the root, or
    an absolute host path) lands: the host's own resolution, an absolute
    real path (``None``: none can be had)."""
    try:
        return os.path.realpath(os.path.join(os.path.realpath(root.path), spelled))
    except (OSError, ValueError):
        return None


def _within(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` ("." when equal; both absolute real
    paths), or ``None`` when it lies outside it."""
    if path == base:
        return "."
    top = base.rstrip("/") + "/"
    return path[len(top):] if path.startswith(top) else None


def _host_reading(root: Root, spelled: str) -> str | None:
    """Where a host program opening ``spelled`` (a path inside the root, or
    an absolute host path) lands, as a path inside the root (``None``:
    outside it): the host's own resolution, out of the root and back in
    included, or through another name of the root's directory (only ever
    adds a name to decide on: every rule still holds where it leads)."""
    landed = _host_landing(root, spelled)
    return None if landed is None else _within(landed, os.path.realpath(root.path))


# -- git's reading of the tree -----------------------------------------------------------


class RootLook:
    """What :mod:`~corral.tools._policy.gitdirs` reads of a root
    (its ``GitLook``): entries, the start of small files, where a path
    leads, which names a directory holds.  With a :class:`TreeWatch`,
    every directory listed is watched first (so a link made in it after
    the listing is reported)."""

    def __init__(self, root: Root, watch: TreeWatch | None = None) -> None:
        self._root = root
        self.watch = watch

    @property
    def known_as(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self._root.path, os.path.realpath(self._root.path))))

    def entries(self, rel: str) -> list[DirEntry]:
        with self._root.open_handle(rel, os.O_RDONLY | os.O_DIRECTORY) as handle:
            if self.watch is not None:
                self.watch.add(handle.fileno(), handle.path, self._root.backend)
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
            pass
        landed = _host_reading(self._root, rel)  # git follows it out of the root and back
        if landed is None:
            return None
        try:
            return locate(self._root, landed).path
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


def git_scan(root: Root, look: RootLook | None = None) -> Scan:
    """The git directories to protect as a whole and the links met, found
    by one bounded look at ``root`` (when a toolbox opens it; through
    ``look``, watching what it lists, if given).  More links
    than :data:`MAX_SCANNED_LINKS` leave it incomplete, though every
    directory was looked at: those past the bound are learnt by a walk of
    the whole tree (any other incomplete look's walk lists only the
    directories it left unlooked at)."""
    found = scan(look if look is not None else RootLook(root))
    if len(found.links) > MAX_SCANNED_LINKS:  # those past the bound: the walk meets them all
        return replace(found, complete=False, unlooked=(WHOLE_TREE,))
    return found


# -- what other programs change after open -----------------------------------------------


class _SharedWatch:
    """The process's one :class:`DirectoryWatch` (a user has few: 128 by
    default), its events handed to the :class:`TreeWatch` of every view
    watching the directory they came from.  A kernel watch lives as long
    as a view owns it: the kernel gives every view adding one directory
    the same number, so its owners are counted per number, and the last
    one to close removes it (a user has a bounded number of watches)."""

    def __init__(self, watch: DirectoryWatch) -> None:
        self.watch = watch
        self.forked = False  # set in a forked child: the watch is the parent's
        self.guard = threading.Lock()
        self.owners: dict[int, list[TreeWatch]] = {}
        # views closed whose watches are not yet let go: a finalizer may
        # close one while this thread holds the guard, so it only queues
        self.closing: deque[TreeWatch] = deque()
        # numbers this process removed whose DROPPED event is not read yet:
        # that event ends the removed watch, not one the kernel may since
        # have given the same number
        self.removed: set[int] = set()

    def read_into_owners(self, backend: Backend | None) -> None:
        """Read what is queued (through ``backend``) and hand each event to
        the views watching its directory (held under :attr:`guard`)."""
        try:
            events = self.watch.read(backend)
        except OSError:  # what was queued is unknown: every view looks at its tree again
            events = [WatchEvent(-1, DirectoryWatch.OVERFLOW, 0, "")]
        for event in events:
            if event.mask & DirectoryWatch.OVERFLOW:
                self.removed.clear()  # their events may be lost: numbers are not reused soon
                for every in self.owners.values():
                    for owner in every:
                        owner.overflowed = True
                continue
            if event.mask & DirectoryWatch.DROPPED and event.watch in self.removed:
                self.removed.discard(event.watch)  # the end of a watch this process removed
                continue
            owners = self.owners.get(event.watch)
            if owners is None:
                continue
            if event.mask & DirectoryWatch.DROPPED:  # its directory removed: the kernel's end
                del self.owners[event.watch]
                for owner in owners:
                    owner.numbers.discard(event.watch)
            for owner in owners:
                if not owner.closed:
                    owner.pending(event)

    def let_go(self, backend: Backend | None) -> None:
        """Take the views closed since off the owners of their watches,
        removing each watch none owns any longer (held under :attr:`guard`)."""
        closing = self.closing
        while closing:
            view = closing.popleft()
            numbers, view.numbers = view.numbers, set()
            for number in numbers:
                owners = self.owners.get(number)
                if owners is None or view not in owners:
                    continue
                owners.remove(view)
                if owners:
                    continue
                del self.owners[number]
                if self.forked:  # the fd is the parent's too: its watches are the parent's
                    continue
                try:
                    self.watch.remove(number, backend)
                except OSError:  # dropped by the kernel already (its directory removed)
                    continue
                if len(self.removed) >= MAX_PENDING_EVENTS:
                    self.removed.clear()
                self.removed.add(number)


_shared: list[_SharedWatch] = []
_shared_guard = threading.Lock()


def _forked() -> None:
    for shared in _shared:
        shared.forked = True


os.register_at_fork(after_in_child=_forked)


def _shared_watch() -> _SharedWatch | None:
    with _shared_guard:
        if _shared and not _shared[0].forked:
            return _shared[0]
        watch = DirectoryWatch.open()  # a forked child's is its own
        if watch is None:
            return None
        _shared[:] = [_SharedWatch(watch)]
        return _shared[0]


def _counted_off(counts: dict[str, int], key: str) -> bool:
    """Take one off ``key``'s count; whether it had one."""
    count = counts.get(key, 0)
    if not count:
        return False
    if count > 1:
        counts[key] = count - 1
    else:
        del counts[key]
    return True


class TreeWatch:
    """Every directory a view lists, watched (the process's one
    :class:`DirectoryWatch`): a link another program makes, moves or
    removes in the tree after open is reported, and :meth:`catch_up`,
    called by every mutating step under the tree lock before it decides,
    learns it.  The kernel queues the event before the program's call
    returns, so a link made before a step's catch-up is known to its
    decision; one made after it is as one made after the step's act
    (nothing a check could refuse).

    ``complete`` is False once a directory could not be watched (the
    user's watches used up) or the process forked: what was reported is
    still learnt, but the tree is no longer known to be watched whole."""

    def __init__(self, shared: _SharedWatch) -> None:
        self._shared = shared
        self._guard = threading.Lock()
        self._paths: dict[int, str] = {}  # watch number -> the directory's canonical path
        self._events: list[WatchEvent] = []
        # paths this view's own steps are creating, each until its event is met
        self._own: dict[str, int] = {}
        # the kernel watches this view owns (held under the shared guard)
        self.numbers: set[int] = set()
        self.overflowed = False
        self.complete = True
        self.failed: OSError | None = None  # why a directory could not be watched
        self.closed = False

    @classmethod
    def open(cls) -> TreeWatch | None:
        """A watch of a tree, or ``None`` where the platform has none."""
        shared = _shared_watch()
        return None if shared is None else cls(shared)

    @property
    def whole(self) -> bool:
        """Whether every directory listed is watched (none failed, no fork)."""
        return self.complete and not self._shared.forked

    def pending(self, event: WatchEvent) -> None:
        """Keep ``event`` for the next catch-up (held under the shared guard;
        more than are weighed one by one: the tree is looked at again)."""
        if len(self._events) < MAX_PENDING_EVENTS:
            self._events.append(event)
        else:
            self.overflowed = True

    def add(self, dir_fd: int, path: str, backend: Backend | None = None) -> None:
        """Watch the directory ``dir_fd`` holds, at canonical ``path``
        (through ``backend`` if it can watch).  Where it cannot be watched
        (``ENOSPC``: the user's watches used up) the tree is no longer
        watched whole, and the first failure is logged."""
        shared = self._shared
        with shared.guard:
            if shared.closing:
                shared.let_go(backend)
            if self.closed:
                return
            if shared.forked:
                self.complete = False
                return
            try:
                number = shared.watch.add(dir_fd, backend)
            except OSError as error:
                self.complete = False
                if self.failed is None:
                    self.failed = error
                    log.warning("links other programs make in %s are not watched (%s): "
                                "they are learnt when a call meets them", path,
                                os.strerror(error.errno or 0))
                return
            owners = shared.owners.setdefault(number, [])
            if self not in owners:
                owners.append(self)
            self.numbers.add(number)
            self._paths[number] = path

    def creating(self, path: str) -> None:
        """A step of this view is about to create the file ``path`` (its
        entry's event is then its own, not learnt: a file it wrote)."""
        with self._shared.guard:
            if len(self._own) < MAX_PENDING_EVENTS:
                self._own[path] = self._own.get(path, 0) + 1

    def not_created(self, root: Root, links: LinkMap, path: str) -> None:
        """The step did not create ``path`` after all: what is there (another
        program's, maybe a link: its event may have been taken for the
        step's) is learnt now."""
        with self._shared.guard:
            count = self._own.get(path, 0) - 1
            if count > 0:
                self._own[path] = count
            else:
                self._own.pop(path, None)
        learn_link(root, links, path)

    def close(self, backend: Backend | None = None) -> None:
        """Stop taking events and let go of the kernel watches no other
        open view owns (the view is closed, or dropped: called by a
        finalizer too, so it never waits for the lock: where another
        holds it, whoever takes it next lets them go)."""
        if self.closed:
            return
        self.closed = True
        self._events = []
        shared = self._shared
        shared.closing.append(self)
        if not shared.guard.acquire(blocking=False):
            return
        try:
            shared.let_go(backend)
            if shared.removed and not shared.forked:
                shared.read_into_owners(None)  # the removals' events, read now (a plain read)
        finally:
            shared.guard.release()

    def catch_up(self, root: Root, links: LinkMap, look: RootLook, *, read: bool = True) -> bool:
        """Learn what was reported since the last catch-up (one ``read``
        when nothing was): links made, moved in or renamed are learnt,
        removed ones forgotten, new directories watched and their links
        learnt.  True when the whole tree must be looked at again (the
        kernel's queue overflowed, or more changed than is weighed one by
        one).  Without ``read``, only what a read made just now by another
        view's catch-up handed this one."""
        shared = self._shared
        with self._guard:
            with shared.guard:
                if shared.forked:
                    self.complete = False
                    return False
                if read:
                    shared.read_into_owners(root.backend)
                if shared.closing:  # closed meanwhile by a thread that found the guard held
                    shared.let_go(root.backend)
                events = self._events
                if not events and not self.overflowed:
                    self._own.clear()
                    return False
                self._events = []
                overflowed, self.overflowed = self.overflowed, False
                # the creations whose events were read by now: one not among
                # them (a directory not yet watched) is never met, and is then
                # forgotten rather than taken for another program's
                own, self._own = self._own, {}
            if overflowed:
                return True
            if not events:
                return False
            return self._apply(events, own, root, links, look)

    def _apply(self, events: list[WatchEvent], own: dict[str, int], root: Root,
               links: LinkMap, look: RootLook) -> bool:
        learn: dict[str, None] = {}
        new_directories: list[str] = []
        moved_from: dict[int, tuple[str, bool]] = {}
        for event in events:
            mask = event.mask
            if mask & DirectoryWatch.DROPPED:
                self._paths.pop(event.watch, None)
                continue
            base = self._paths.get(event.watch)
            if base is None or not event.name:  # the directory's own move: its parent says it
                continue
            path = event.name if base == "." else f"{base}/{event.name}"
            if mask & DirectoryWatch.MOVED_FROM:
                moved_from[event.cookie] = (path, event.is_directory)
            elif mask & DirectoryWatch.MOVED_TO:
                source = moved_from.pop(event.cookie, None)
                if source is not None:
                    self._gone(source[0], source[1], links, learn, renamed_to=path)
                if event.is_directory:
                    if source is None:
                        new_directories.append(path)  # moved in from outside the tree
                elif source is None:
                    learn[path] = None  # renamed within the tree: the same entry (a link
                    #                     known at its old name is learnt by _gone)
            elif mask & DirectoryWatch.CREATED:
                if event.is_directory:
                    new_directories.append(path)
                elif not _counted_off(own, path):
                    learn[path] = None
            elif mask & DirectoryWatch.REMOVED:
                self._gone(path, event.is_directory, links, learn)
        for path, is_directory in moved_from.values():  # moved out of the tree
            self._gone(path, is_directory, links, learn)
        if len(learn) + len(new_directories) > MAX_EVENT_LOOKS:
            return True
        for path in new_directories:
            if self._walk(path, root, links, look):
                return True
        for path in learn:
            learn_link(root, links, path)
        return False

    def _gone(self, path: str, is_directory: bool, links: LinkMap, learn: dict[str, None],
              *, renamed_to: str | None = None) -> None:
        """``path`` was removed, or renamed to ``renamed_to`` in the tree:
        its links (the entry itself, those below it) are forgotten or known
        by their new names, and those reached through it learnt again."""
        gone = links.below(path) if is_directory else []
        if links.is_link(path):
            gone.append(path)
        for location in gone:
            links.forget(location)
            if renamed_to is not None:
                learn[renamed_to + location[len(path):]] = None
        for location in links.through(path):
            learn[location] = None
        if is_directory:
            prefix = path + "/"
            for number, where in list(self._paths.items()):
                if where == path or where.startswith(prefix):
                    if renamed_to is None:
                        del self._paths[number]
                    else:
                        self._paths[number] = renamed_to + where[len(path):]

    def _walk(self, top: str, root: Root, links: LinkMap, look: RootLook) -> bool:
        """Watch ``top`` (made or moved in after open) and every directory
        below it, learning their links (each directory watched before it
        is listed: a link made in it meanwhile is reported or listed).
        True when it is more than is walked one by one."""
        queue: deque[tuple[str, int]] = deque([(top, 0)])
        looked = 0
        while queue:
            where, depth = queue.popleft()
            looked += 1
            if looked > MAX_EVENT_LOOKS or depth > MAX_WALK_DEPTH:
                return True
            try:
                entries = look.entries(where)
            except (OSError, ValueError):
                continue
            in_git = where.rpartition("/")[2] == ".git"
            for entry in entries:
                if entry.is_symlink():
                    learn_link(root, links, entry.path)
                elif entry.is_dir(follow_symlinks=False) and (
                        not in_git or entry.name == "hooks"):  # git's own: its hooks only
                    queue.append((entry.path, depth + 1))
        return False
