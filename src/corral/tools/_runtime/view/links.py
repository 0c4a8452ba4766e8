"""The links the view knows of (a symlink's name protects what it leads
to), where a path leads, and git's reading of the tree at open."""

from __future__ import annotations

import os
import posixpath
import stat as st
import threading
from collections import deque
from collections.abc import Callable, Collection, Container, Iterable
from dataclasses import replace

from ....contained import Backend, DirEntry, Handle, Root
from ..._policy.gitdirs import Scan, scan
from ..._policy.locate import Location

MAX_LINKS = 100_000  # links remembered per root (bounded memory)
MAX_ALIASES = 1024  # names leading to one path that are decided (bounded work;
#                      more refuse: the ones left out may be protected)
MAX_SCANNED_LINKS = 10_000  # links found at open whose target is looked up (bounded)
MAX_WALK_DEPTH = 64  # levels one walk holds open below a start (deeper: a start of its own)
_LINK_HOPS = 40  # as the core resolver follows at most
MAX_REMEMBERED_ALIASES = 16_384  # paths whose names are remembered for the map as it is
WHOLE_TREE = (".", 0)  # where a walk of every directory starts, and its depth


# filesystems whose every name is the kernel's (statfs f_type): procfs,
# sysfs, cgroup v1 and v2.  No program makes a link there, nor a name of
# its choosing that could be protected (a cgroup's directory holds no
# link), so the walks for links go around them: ``corral serve /`` would
# otherwise list /proc's every process and /sys's every device
KERNEL_FILESYSTEMS = frozenset({0x9FA0, 0x62656572, 0x27E0EB, 0x63677270})


class Mounts:
    """Which devices a walk met hold a filesystem of
    :data:`KERNEL_FILESYSTEMS` (one ``fstatfs`` through the backend for
    the first directory met on each device).  Kept for one walk: a device
    number is given to another filesystem once one is unmounted (not
    while a directory of it is held open: ``known``, what is known of
    those)."""

    def __init__(self, backend: Backend, known: dict[int, bool] | None = None) -> None:
        self._backend = backend
        self._known: dict[int, bool] = dict(known) if known else {}

    def kernels(self, fd: int, device: int) -> bool:
        """Whether the directory open at ``fd``, on ``device``, lies in a
        filesystem of :data:`KERNEL_FILESYSTEMS`."""
        known = self._known.get(device)
        if known is None:
            try:
                kind = self._backend.filesystem_type(fd)
            except OSError:
                kind = 0  # not known: walked
            known = self._known[device] = kind in KERNEL_FILESYSTEMS
        return known


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
        # a link was left out for the bound: the map no longer names every
        # link, so a decision links could change refuses (View.need_links)
        self.full = False
        self.on_full: Callable[[], None] | None = None  # told once, when it fills
        # links leading out of the root, by where a host program lands
        # (an absolute real path): another root of a workspace may lie there
        self._outside: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._leads)

    def add(self, location: str, leads_to: str, via: tuple[str, ...] = ()) -> None:
        if location == leads_to or location in (".", ""):
            return
        if self._add(location, leads_to, tuple(p for p in via if p != location)):
            told = self.on_full
            if told is not None:
                told()

    def _add(self, location: str, leads_to: str, passed: tuple[str, ...]) -> bool:
        """Remember the link; whether this is the first one left out."""
        with self._guard:
            old = self._leads.get(location)
            if old is None and len(self._leads) >= MAX_LINKS:
                first, self.full = not self.full, True
                return first
            if passed:
                self._via[location] = passed
            else:
                self._via.pop(location, None)
            if old == leads_to:
                return False
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
            return False

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

    def below_leading_out(self, top: str) -> list[str]:
        """The known links lying below the directory ``top`` that lead out
        of the root (through other links, maybe: one of them denied)."""
        if not self._outside:
            return []
        prefix = top + "/" if top not in (".", "") else ""
        with self._guard:
            return [location for location in self._outside if location.startswith(prefix)]

    def reached_through(self, place: str) -> list[tuple[str, str]]:
        """The known links whose target was reached through ``place`` itself
        (a link of their chain, or where it led) or lies below it,
        each with the rest of its
        target from where ``place`` leads now ("" for there itself; a path
        starting with ``..`` where the chain leaves it by ``..``:
        ``.vscode -> sub/../editor`` is ``../editor`` from ``sub``'s
        target): a move onto ``place`` makes them lead to what lands
        there, or beside it."""
        with self._guard:
            end = self._leads.get(place, place)
            found = []
            below = place + "/"
            # a link whose chain passed ``place``, and one whose target lies
            # below it though no chain reaches it now (it dangles there;
            # looked for only where the count of such links says one is; one
            # leading to ``place`` itself is judged by what lands there)
            chains = [location for location, via in self._via.items() if place in via]
            if self._below.get(place, 0) > len(self._by_target.get(place, ())):
                chains += [location for location, target in self._leads.items()
                           if target.startswith(below) and place not in self._via.get(location, ())]
            for location in chains:
                target = self._leads.get(location)
                if target is None:
                    continue
                if target == end or target.startswith(end + "/") or end in (".", ""):
                    rest = target[len(end) + 1:] if target.startswith(end + "/") else ""
                    if end in (".", "") and target not in (".", ""):
                        rest = target
                else:
                    # both canonical: the walk from ``end`` to ``target`` is
                    # these names, whatever lands at ``place``
                    rest = posixpath.relpath(target, end)
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
            kept = location in self._outside or len(self._outside) < MAX_LINKS
            if kept:
                self._outside[location] = landing
            first = not kept and not self.full
            self.full = self.full or not kept
        told = self.on_full
        if first and told is not None:
            told()

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


def lead_after_move(root: Root, location: str, place: str, lands: str, *,
                    carried: bool = False) -> str | None:
    """Where the link at ``location`` will lead once a move puts something
    at ``place``: a link leading to ``lands`` (canonical), or (``carried``)
    the entry now at ``lands``, whose names are read where they lie now;
    each other link on its way read as it is now: the rest of its chain
    beyond ``place`` is walked from what lands there (``.vscode -> sub/l2``
    with ``sub`` replaced: the ``l2`` found in what lands), never taken
    from where it led before.  A carried entry's place is answered where
    it lies now (``lands/...``).  ``None``: not told (an absolute text
    naming no place of the root by its path, more links than the core
    follows, a link that cannot be read)."""
    walked = _walk_link(root, location, place, lands, carried=carried)
    if walked is None:
        return None
    end = walked[0]
    if carried and (end == place or end.startswith(place + "/")):
        return lands + end[len(place):]
    return end


def host_chain_passes(start: str, through: str) -> bool:
    """Whether the host's reading of the link at the host path ``start``
    passes the entry at the real host path ``through`` (or one below it),
    name by name: ``..`` taken from where the link before it led, never
    from its text (``../api/sub/../editor`` passes ``api/sub``)."""
    seen: list[str] = []
    host_lead_after_move(start, "", "", seen=seen)
    below = through.rstrip("/") + "/"
    return any(here == through or here.startswith(below) for here in seen)


def host_lead_after_move(start: str, place: str, lands: str, *, carried: bool = False,
                         seen: list[str] | None = None) -> str | None:
    """:func:`lead_after_move` for a link of another root whose chain
    leads out of it (every path a real host path): where the link at
    ``start`` will lead once ``place`` is a link to ``lands``, or
    (``carried``) the entry now at ``lands``, answered where it lies now
    (``place`` empty: as things are).  ``seen`` gathers each name met.
    ``None``: not told (more links than the core follows, a name that
    cannot be read)."""
    try:
        text = os.readlink(start)
    except (OSError, ValueError):
        return None
    walked = os.path.realpath(os.path.dirname(start))
    pending = deque(text.split("/"))
    if text.startswith("/"):
        walked = "/"
    hops = 0
    while pending:
        name = pending.popleft()
        if name in ("", "."):
            continue
        if name == "..":
            walked = os.path.dirname(walked)
            continue
        here = os.path.join(walked, name)
        if seen is not None:
            seen.append(here)
        if place and here == place and not carried:
            walked, hops = lands, hops + 1
            continue
        there = lands + here[len(place):] if place and carried and (
            here == place or here.startswith(place + "/")) else here
        try:
            if not st.S_ISLNK(os.lstat(there).st_mode):
                walked = here
                continue
            link = os.readlink(there)
        except FileNotFoundError:
            walked = here  # missing: the rest is spelled as it stands
            continue
        except (OSError, ValueError):
            return None
        hops += 1
        if hops > _LINK_HOPS:
            return None
        if link.startswith("/"):
            walked = "/"
        pending.extendleft(reversed(link.split("/")))
    if place and carried and (walked == place or walked.startswith(place + "/")):
        return lands + walked[len(place):]
    return walked


def _walk_link(root: Root, location: str, place: str = "", lands: str = "", *,
               carried: bool = False) -> tuple[str, tuple[str, ...]] | None:
    """The link at ``location`` followed name by name as a host program
    does (an absolute text naming the root by its path read from the top;
    ``place``, when given, taken for a link to ``lands``, or with
    ``carried`` for the entry at ``lands`` moved there): where it leads
    and the links and the directories left by ``..`` it passed."""
    try:
        text = root.readlink(location)
    except (OSError, ValueError):
        return None
    parent = location.rpartition("/")[0]
    walked = parent.split("/") if parent else []
    passed: dict[str, None] = {}
    hops = 0
    while True:
        if text.startswith("/"):
            inside = _absolute_inside(root, text)
            if inside is None:
                return None
            text, walked = inside, []
        pending = deque(text.split("/"))
        text = ""
        while pending and not text:
            name = pending.popleft()
            if name in ("", "."):
                continue
            if name == "..":
                if not walked:
                    return None  # out of the root: nothing the tools write
                passed["/".join(walked)] = None
                walked.pop()
                continue
            here = "/".join([*walked, name])
            if place and here == place and not carried:
                passed[here] = None
                hops += 1
                walked = lands.split("/") if lands not in (".", "") else []
            else:
                # a name in what a move carries is read where it lies now
                there = lands + here[len(place):] if carried and (
                    here == place or here.startswith(place + "/")) else here
                try:
                    info = root.lstat(there)
                except (OSError, ValueError):
                    walked.append(name)  # missing: the rest is spelled as it stands
                    continue
                if not st.S_ISLNK(info.st_mode):
                    walked.append(name)
                    continue
                passed[here] = None
                hops += 1
                try:
                    text = root.readlink(there)
                except (OSError, ValueError):
                    return None
            if hops > _LINK_HOPS:
                return None
            if text:
                rest = "/".join(pending)
                text = f"{text}/{rest}" if rest else text
        if not text:
            return "/".join(walked) or ".", tuple(passed)


def learn_link(root: Root, links: LinkMap, location: str) -> None:
    """Remember where the link at ``location`` (canonical) leads, if inside:
    also a link whose target is not there yet (its parents missing too),
    one spelled as an absolute path inside the root, and one that climbs
    out of the root and back in (``../<root's name>/x``), which the host
    program follows though the core calls them escapes."""
    try:
        found: Location | None = locate(root, location, follow=True)
    except (OSError, ValueError):
        found = spelled_target(root, location)
        walked = _walk_link(root, location) if found is not None else None
        if found is not None and walked is not None:
            # the host's reading passes links the core would not follow (an
            # absolute text): each is on the way, and a move onto one is judged
            found = Location(found.path, found.creates,
                             tuple(dict.fromkeys((*found.passed, *walked[1]))))
    if found is None:
        landing = _host_landing(root, location)
        if landing is not None and _within(landing, os.path.realpath(root.path)) is None:
            links.add_outside(location, landing)  # out of the root: another root's, maybe
            return
        # a loop: it leads as far as the last link it reaches (a denied one rules)
        found = chain_end(root, location)
    links.forget_outside(location)
    if found is None or found.path == location:
        links.not_a_link(location)
    else:
        links.add(location, found.path, found.passed)


# openat2's resolve flags (the kernel's ABI): beneath the fd, through no link at all
_RESOLVE_BENEATH_NO_LINKS = 0x08 | 0x04 | 0x02
# (a final link too is refused: O_NOFOLLOW would open it)
_LOOK_FLAGS = os.O_PATH | os.O_CLOEXEC if hasattr(os, "O_PATH") else 0


class LinkReader:
    """:func:`learn_link` for a walk, the short way where it is sure: a
    link's text read from its directory's fd, taken from its canonical
    directory (``..`` first only: each step up from a real directory is
    its real parent, left on the way), and the place it names opened by
    one ``openat2`` beneath the root through no link at all.  Opened,
    that place is where the link leads, through the directories left
    (the long way's answer); any
    other case (a link on the way, nothing there, an absolute text,
    a climb out of the root, no ``openat2`` in this root) is learnt the
    long way, by the resolver."""

    def __init__(self, root: Root) -> None:
        self._root = root
        backend = root.backend
        self._short = bool(_LOOK_FLAGS) and backend.has_openat2 and \
            bool(root.info()["fast_path"])
        self._readlink_at, self._openat2, self._close = \
            backend.readlink_at, backend.openat2_or_errno, backend.close

    def learn(self, links: LinkMap, location: str, dir_fd: int = -1, name: str = "") -> None:
        """Learn the link at ``location`` (canonical), which is ``name`` in
        the directory open at ``dir_fd`` where the caller has it open."""
        if self._short:
            found = self._short_target(location, dir_fd, name)
            if found is not None:
                links.forget_outside(location)
                links.add(location, *found)
                return
        learn_link(self._root, links, location)

    def _short_target(self, location: str, dir_fd: int, name: str
                      ) -> tuple[str, tuple[str, ...]] | None:
        try:
            text = self._readlink_at(dir_fd, name) if dir_fd >= 0 else \
                self._root.readlink(location)
        except (OSError, ValueError):
            return None
        if not text or text.startswith("/"):
            return None
        parent = location.rpartition("/")[0]
        parts = parent.split("/") if parent else []
        down = False
        left = []
        for step in text.split("/"):
            if step in ("", "."):
                continue
            if step == "..":
                if down or not parts:
                    return None  # up after down (through what?), or out of the root
                left.append("/".join(parts))
                parts.pop()
            else:
                down = True
                parts.append(step)
        target = "/".join(parts) or "."
        if target in (location, "."):
            return None
        fd = self._openat2(self._root.fileno(), target, _LOOK_FLAGS, 0,
                           _RESOLVE_BENEATH_NO_LINKS)
        if fd < 0:
            return None
        self._close(fd)
        return target, tuple(left)


def chain_end(root: Root, rel: str) -> Location | None:
    """Where the symlink ``rel`` would lead were the directories its text
    names there (see :meth:`CallView.dangling_end`); where the chain leaves
    the root or loops, the last link it reached; ``None``: no link reached."""
    reached: Location | None = None
    for _ in range(_LINK_HOPS):
        try:
            link = locate(root, rel, follow=False).path
            text = root.readlink(link)
        except (OSError, ValueError):
            return reached
        reached = Location(link)
        if not text or text.startswith("/"):
            return reached
        parent = link.rpartition("/")[0]
        rel = f"{parent}/{text}" if parent else text
        try:
            return locate(root, rel)
        except (OSError, ValueError):
            continue  # its end is another dangling link: read that one's text
    return reached


def spelled_target(root: Root, location: str) -> Location | None:
    """Where the link at ``location`` leads by its text, resolved beneath
    the root with the missing directories allowed (``None``: not a link,
    or it leads outside)."""
    try:
        text = root.readlink(location)
    except (OSError, ValueError):
        return None
    if text.startswith("/"):
        spelled = _absolute_inside(root, text)
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


def _absolute_inside(root: Root, text: str) -> str | None:
    """An absolute link text naming a place inside the root by the root's
    path (as given, or real), as a path inside it; ``None``: another."""
    for known in dict.fromkeys((root.path, os.path.realpath(root.path))):
        base = known.rstrip("/")
        if text == base or text.startswith(base + "/"):
            return text[len(base):].lstrip("/") or "."
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


# lists a directory (the path asked, open at a handle) for a look that wants more of it
# than its entries (freshness at open: its watch, its stamp)
Lister = Callable[[str, Handle], list[DirEntry]]


class RootLook:
    """What :mod:`~corral.tools._policy.gitdirs` reads of a root
    (its ``GitLook``): entries, the start of small files, where a path
    leads, which names a directory holds.  ``lister`` lists each directory
    the look lists, so what else a directory is wanted for is had from the
    one listing the look makes."""

    def __init__(self, root: Root, lister: Lister | None = None) -> None:
        self._root = root
        self._lister = lister

    @property
    def known_as(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self._root.path, os.path.realpath(self._root.path))))

    def entries(self, rel: str) -> list[DirEntry]:
        with self._root.open_handle(rel, os.O_RDONLY | os.O_DIRECTORY) as handle:
            return self.entries_in(rel, handle)

    def entries_in(self, rel: str, handle: Handle) -> list[DirEntry]:
        """The entries of the directory ``rel``, open as ``handle``."""
        if self._lister is not None:
            return self._lister(rel, handle)
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


def git_scan(root: Root, lister: Lister | None = None) -> Scan:
    """The git directories to protect as a whole and the links met, found
    by one bounded look at ``root`` (when a toolbox opens it; ``lister``
    lists each directory it lists).  More links than
    :data:`MAX_SCANNED_LINKS` leave it incomplete, though every directory
    was looked at: those past the bound are learnt by a walk of the whole
    tree (any other incomplete look's walk lists only the directories it
    left unlooked at)."""
    if lister is None:
        mounts = Mounts(root.backend)

        def lister(rel: str, handle: Handle) -> list[DirEntry]:
            if mounts.kernels(handle.fd, handle.stat().st_dev):
                return []  # /proc, /sys: no git place, host config or link of a program's there
            return handle.scandir()
    found = scan(RootLook(root, lister))
    if len(found.links) > MAX_SCANNED_LINKS:  # those past the bound: the walk meets them all
        return replace(found, complete=False, unlooked=(WHOLE_TREE,))
    return found
