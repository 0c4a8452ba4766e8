"""The view of one root shared by every call of a Toolbox, and its policy
decisions: on the canonical path reached, on every known name leading to
it, and on the tree a step leaves (no new repository)."""

from __future__ import annotations

import errno
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar, copy_context
from itertools import compress
from typing import NamedTuple, Protocol, TYPE_CHECKING

from ....contained import Root
from ..._policy.gitdirs import (SHAPE_NAMES, Scan, carried_repository, host_config_places,
                                in_git_directory, is_repository, made_repository,
                                names_a_shape_entry, shape_name)
from ..._policy.locate import Location
from ..._policy.pythonstart import RootPlace, pth_imports, site_module, venv_of_program
from ..._policy.rules import Op, Policy, Scope, fold
from ..._refusals.catalogue import (Code, Kind, Refusal, another_root, beyond_watched,
                                     denied_rule, not_ready, protected, secret, swapped,
                                     too_many_links)
from .freshness import Freshness
from .linkwalk import walk_links
from .links import (MAX_SCANNED_LINKS, WHOLE_TREE, LinkMap, RootLook,
                    chain_end, git_scan, learn_link, locate, spelled_target)
from .locks import _POLL_FIRST, _POLL_MOST, Checkpoint, root_identity
from .tree_lock import (SharedHold, TreeHold, changes_here, count_change_here, let_go_lock_file,
                        moves_made, served_listed, served_place_each, served_places,
                        tree_file_lock, view_collected)

if TYPE_CHECKING:
    from .pinned import Pinned

# how a served root holding this one is looked for: each parent opened by
# '..' from the one below, up to the top or this many
_UP_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_MOST_PARENTS = 512
# where the kernel lists this process's mounts (Linux): elsewhere a move
# looks at its folders one by one for the roots served on its way
_MOUNTS = "/proc/self/mountinfo"
_MOUNTS_MOST = 1 << 22  # bytes of it read at most (a few thousand mounts)
_ESCAPED = re.compile(rb"\\([0-7]{3})")


class _Mounts:
    """The mounts of this process, from ``/proc/self/mountinfo``: which
    directory of which filesystem a path names (a directory has one place
    in its filesystem, however many mounts show it: a bind mount of a
    folder of the tree elsewhere, or of one elsewhere into the tree)."""

    def __init__(self, text: bytes) -> None:
        entries: list[tuple[str, str, str]] = []
        for line in text.splitlines():
            fields = line.split(b" ")
            if len(fields) < 5:
                continue
            top, point = (os.fsdecode(_ESCAPED.sub(lambda m: bytes([int(m.group(1), 8)]), field))
                          for field in (fields[3], fields[4]))
            entries.append((point, os.fsdecode(fields[2]), top))
        # the longest mount point first; of two on one point, the later (on top)
        order = sorted(range(len(entries)), key=lambda at: (-len(entries[at][0]), -at))
        self.entries = [entries[at] for at in order]

    def place(self, path: str) -> tuple[str, str] | None:
        """(the filesystem, the directory's path in it) of the absolute
        ``path`` (a kernel's name: no link, no '..')."""
        for point, device, top in self.entries:
            if point == "/":
                rest = "" if path == "/" else path
            elif path == point or path.startswith(point + "/"):
                rest = path[len(point):]
            else:
                continue
            return device, (top.rstrip("/") + rest) or "/"
        return None


class _ServedPlaces(NamedTuple):
    """Where this root and the other roots served now are, for a move."""

    root: str  # this root's path, as the kernel names it
    mounts: _Mounts
    roots: dict[tuple[str, str], tuple[int, int]]  # each one's place -> its (device, inode)

    def at(self, path: str) -> tuple[int, int] | None:
        """The served root the directory at the kernel's ``path`` is, if any."""
        place = self.mounts.place(path)
        return None if place is None else self.roots.get(place)


def policy_refusal(kind: Kind, shown: str, op: Op, field: str) -> Refusal:
    if kind is Kind.DENY_RULE:
        return denied_rule(shown, field)
    if kind is Kind.PROTECTED:
        return protected(shown, op.value, field)
    if kind is Kind.ANOTHER_ROOT:
        return another_root(shown, op.value, field)
    return secret(shown, op.value, field)


# -- the view -------------------------------------------------------------------------------


class Decision(NamedTuple):
    """What the policy said of one location (``None``: allowed)."""

    kind: Kind | None


_ADDING = frozenset({Op.CREATE, Op.REPLACE, Op.MOVE_TO, Op.MKDIR})
_MUTATING = frozenset(op for op in Op if op.mutates)  # Op.mutates as a set test (no call)
_REMOVING = frozenset({Op.DELETE, Op.MOVE_FROM})


# seconds a decision the links not known yet could change waits for the
# walk finding them before it refuses (``not_ready``: retry shortly); a
# call those links cannot concern never waits

_START_QUIET_MAX = 4096  # paths remembered (then forgotten at once)
_START_QUIET_CHARS = 512  # longer paths are looked at afresh each time
# canonical path -> whether it is neither in a ``site-packages`` directory
# nor a program directory's (``bin``): a fact of its names alone, so a path
# a session keeps writing is looked at once
_START_QUIET: dict[str, bool] = {}


def _remember_start_quiet(path: str) -> bool:
    quiet = venv_of_program(path) is None and site_module(path) is None
    if len(path) <= _START_QUIET_CHARS:
        if len(_START_QUIET) >= _START_QUIET_MAX:
            _START_QUIET.clear()
        _START_QUIET[path] = quiet
    return quiet


def _held_most_files(levels: int) -> bool:
    """Whether a walk ``levels`` deep (a directory held open a level) held
    at least half of what the process may open: its own depth ran it out."""
    import resource  # only here: a rare path, kept off the start-up

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft != resource.RLIM_INFINITY and levels * 2 >= soft


class _Step:
    """The pins of one step and what each does there, decided together on
    the tree the step leaves (a patch's files, a move's two ends)."""

    __slots__ = ("exclusive", "acts", "_git_names")

    def __init__(self, *, exclusive: bool, only: tuple[Pinned, Op] | None = None) -> None:
        self.exclusive = exclusive  # the tree lock is held exclusively
        # ``only``: the step's one act, its pin made for it (the common step)
        self.acts: list[tuple[Pinned, Op]] = [only] if only is not None else []
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
            if len(self.acts) == 1:
                pin, op = self.acts[0]
                name = pin.path.rpartition("/")[2]
                if op not in _ADDING or (not pin.creates and (
                        name.lower() not in SHAPE_NAMES if name.isascii() else
                        not names_a_shape_entry(name))):
                    self._git_names = added  # the common step: one name, none of git's
                    return added
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


class TreeChanges:
    """What a step holding the tree lock changes in the tree: a move, or a
    removal of a link or a directory, counted for every other Toolbox to
    see (each looks at the tree's links again before it decides)."""

    def __init__(self, view: View, hold: TreeHold, exclusive: bool) -> None:
        self._view = view
        self._hold = hold
        self._exclusive = exclusive
        # for a move: where the roots served now were when its lock was
        # taken (their places read once a move: :meth:`View.served_on_the_way`)
        self.served: _ServedPlaces | None = None

    def count(self) -> None:
        """Count one change (the tree lock held exclusively: a count bumped
        under a shared hold could be lost to another's)."""
        if not self._exclusive:
            raise RuntimeError("a change to the tree is counted under the exclusive lock")
        view, hold = self._view, self._hold
        try:
            hold.count_move()
        except OSError:  # not counted, other processes would not know: not made
            raise Refusal(Code.TOO_LARGE, "the disk holding the lock files is full (or over "
                          "quota), so the change could not be made known to other processes; "
                          "nothing was changed", "Free some space, then retry.",
                          kind=Kind.NO_SPACE) from None
        if hold.moves is not None:
            view.moves_seen = hold.moves
        view.changes_seen = count_change_here()


class _Call(Protocol):
    def checkpoint(self) -> None: ...


# the call running in this context (a weak reference: none once it ended),
# whose checkpoint a decision's wait for the walk polls: a cancel, or the
# call's deadline, stops that wait within a poll
_RUNNING: ContextVar[Callable[[], _Call | None] | None] = ContextVar("corral_running_call",
                                                                   default=None)


class _Bounded:
    """A look made outside any call, standing as the running call whose
    checkpoint a wait for the walk polls (:meth:`View.shows`)."""

    __slots__ = ("_checkpoint",)

    def __init__(self, checkpoint: Checkpoint) -> None:
        self._checkpoint = checkpoint

    def checkpoint(self) -> None:
        self._checkpoint()


def running_call(call: Callable[[], _Call | None]) -> None:
    """``call`` (a weak reference to it) runs in this context from now on."""
    _RUNNING.set(call)


def _running_checkpoint() -> Checkpoint | None:
    ref = _RUNNING.get()
    call = ref() if ref is not None else None
    return call.checkpoint if call is not None else None


def served_holding(root: Root, identity: tuple[int, int]) -> list[tuple[int, int]]:
    """The (device, inode) of each root served now by a view other than
    ``root``'s (whose directory is ``identity``), in this process or
    another, that holds ``root``, outermost first; looked for up the root's
    parents only when another root is served."""
    others = served_listed() - {identity}
    if not others:
        return []
    backend = root.backend
    found: list[tuple[int, int]] = []
    below = identity
    try:
        fd = backend.open_at(root.fileno(), "..", _UP_FLAGS)
    except OSError:
        return found  # a parent that cannot be opened: looked no higher
    try:
        for _ in range(_MOST_PARENTS):
            info = backend.fstat(fd)
            key = (info.st_dev, info.st_ino)
            if key == below:
                break  # the top: its own parent
            if key in others:
                found.append(key)
            below = key
            up = backend.open_at(fd, "..", _UP_FLAGS)
            backend.close(fd)
            fd = up
    except OSError:
        pass
    finally:
        backend.close(fd)
    found.reverse()
    return found


def _root_and_mounts(root: Root) -> tuple[str, _Mounts] | None:
    """The kernel's path of ``root``'s directory and this process's mounts
    (read through the root's backend), or ``None`` where either cannot be
    told (no ``/proc``, a removed root, more mounts than are read)."""
    backend = root.backend
    try:
        root_fd = root.fileno()
        where = backend.readlink_at(root_fd, f"/proc/self/fd/{root_fd}")
        if not where.startswith("/") or where.endswith(" (deleted)"):
            return None
        fd = backend.open_at(root_fd, _MOUNTS, os.O_RDONLY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        chunks: list[bytes] = []
        size = 0
        while size < _MOUNTS_MOST:
            chunk = backend.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        else:
            return None  # more mounts than are read: not told
    except OSError:
        return None
    finally:
        backend.close(fd)
    return where, _Mounts(b"".join(chunks))


def served_within(root: Root, identity: tuple[int, int]) -> list[tuple[int, int]]:
    """The (device, inode) of each root served now by a view other than
    ``root``'s (whose directory is ``identity``), in this process or
    another, that lies inside ``root``: placed by the path its server
    wrote (:func:`~.tree_lock.served_place_each`) as a directory of a
    filesystem, inside the root's own place there or a mount made inside
    the root.  Where that cannot be told (no ``/proc``, a root that cannot
    be placed), every such root counts: the caller waits on more than it
    must, never on less."""
    others = served_listed() - {identity}
    if not others:
        return []
    read = _root_and_mounts(root)
    if read is None:
        return sorted(others)
    where, mounts = read
    here = mounts.place(where)
    if here is None:
        return sorted(others)
    # the root's place, and the top of every mount whose point lies in it
    inside = [here, *((device, top) for point, device, top in mounts.entries
                      if point.startswith(where.rstrip("/") + "/"))]
    found: list[tuple[int, int]] = []
    for key, at in served_place_each(others).items():
        place = mounts.place(at) if at is not None else None
        if place is None or any(
                place[0] == device and (top == "/" or place[1] == top
                                        or place[1].startswith(top.rstrip("/") + "/"))
                for device, top in inside):
            found.append(key)
    return sorted(found)


class View:
    """The policed view of one root, shared by every call of a Toolbox."""

    def __init__(self, root: Root, policy: Policy, links: LinkMap | None = None, *,
                 owns_root: bool = False) -> None:
        self._root = root
        self.backend = root.backend  # (a Root's backend is fixed: read once, not each step)
        self.policy = policy
        self.links = links if links is not None else LinkMap()
        self._owns_root = owns_root
        self.scanned_links: tuple[str, ...] = ()  # the links the scan at open found
        self.look = RootLook(root)
        self._identity: tuple[int, int] | None = None
        # the count of moves made by every Toolbox (tree_lock) when this
        # view last knew the tree's links (None: not counted yet)
        self.moves_seen: int | None = None
        # the same count of this process's own moves, on any root (a root
        # nested in this one is another root, with another lock file)
        self.changes_seen = 0
        # set once every link of the tree is known: at once when the look
        # at open met them all, else when :meth:`learn_every_link_later` is done
        self._links_known = threading.Event()
        self._links_known.set()
        # the event's state as a plain flag, read by every decision without
        # a call: False from before the event is cleared until after it is set
        self.links_settled = True
        # how long a decision waits for the walk (the Toolbox's limit)
        self.links_grace = 2.0
        self._walk_guard = threading.Lock()  # who starts a walk, who asks for another
        self._walk_again = False
        # where the walk starts: the directories the last look left unlooked at
        self._walk_from: tuple[tuple[str, int], ...] = (WHOLE_TREE,)
        self.scan_complete = True
        # a map that left links out never settles: the decisions they could change refuse
        self.links.on_full = self.unsettle
        if self.links.full:
            self.links_settled = False
        self.scan_unlooked: tuple[tuple[str, int], ...] = (WHOLE_TREE,)  # the look at open's
        # the views of roots this one lies inside (a workspace's nesting, a
        # client root opened beneath a server's), each with this root's
        # canonical place there: their links leading here rule here too
        self.nested_in: tuple[tuple[View, str], ...] = ()
        self.opened_beneath: tuple[tuple[View, str], ...] = ()
        # the views of the other roots of a workspace: their links leading
        # out of their root into this one rule here too
        self.beside: tuple[View, ...] = ()
        self._host_real: str | None = None
        # where the root itself lies among the places Python runs code from
        # on its own (a venv, its bin/, a site-packages directory), if it does
        self.python_place: RootPlace | None = None
        self._lock_file_user: weakref.finalize[[tuple[int, int]], View] | None = None
        # a policy, and (path, op) -> what it says of a plain place by its
        # names alone: its rule's refusal, else whether it lies where Python
        # runs code at its start (False) or not (True).  One pair, replaced
        # in one store: a decision under a policy read before a hold, started
        # over by a thread switch, can only leave its verdicts under its own
        self._plain_memo: tuple[Policy | None, dict[tuple[str, Op], Kind | bool]] = (None, {})
        # what other programs change where this view's picture rests,
        # taken in before each call decides (None: no rule to keep fresh)
        self.freshness: Freshness | None = None

    def keep_lock_file(self, identity: tuple[int, int]) -> None:
        """Keep the root's tree-lock file, which the opener took for this
        view (:func:`~.tree_lock.use_lock_file`), open while this view is
        open (let go by :meth:`close`, or when the view is collected), and
        the root directory with it (its inode number then names no other
        folder)."""
        self._identity = identity
        self._lock_file_user = weakref.finalize(self, view_collected, identity)

    @property
    def identity(self) -> tuple[int, int]:
        """The (device, inode) of the root directory."""
        if self._identity is None:
            self._identity = root_identity(self._root)
        return self._identity

    @contextmanager
    def tree_lock(self, *, exclusive: bool, checkpoint: Checkpoint,
                  moves: bool = False) -> Iterator[TreeChanges]:
        """The tree lock of this root as other processes see it (this
        process's own is ``_TREE``, taken first).  If another Toolbox moved
        something since this view last looked (another process on this
        root, or this process on any root: one nested in this one), the
        tree's links are looked at again (a link it moved onto a
        protected name protects what it leads to here too); a step that
        ``moves`` counts its move (one that removes a link or a directory
        counts it through what this yields).

        A move looks for the roots served now that hold this one before it
        takes their locks; a root served since (another process opening
        ``proj`` while this root ``proj/web`` moves) is looked for again
        once every lock is held, and where one holds this root the locks
        are let go and taken again with it (outermost first: taken out of
        order, two moves could wait on each other).  One served after that
        look waits for this move before its open goes on
        (:func:`served_within`)."""
        while True:
            with ExitStack() as around:
                placed = None
                listed: set[tuple[int, int]] = set()
                holding: list[tuple[int, int]] = []
                if moves:
                    # the lock other processes see is per root: a process serving
                    # a root holding this one must not change the folder a move
                    # here carries (taken outermost first, this root's last)
                    listed = served_listed() - {self.identity}
                    holding, placed = self._served_holding(listed)
                    for key in holding:
                        around.enter_context(tree_file_lock(
                            key, self._root.backend, exclusive=True, checkpoint=checkpoint))
                changes = around.enter_context(self._tree_lock(
                    exclusive=exclusive, checkpoint=checkpoint, moves=moves))
                if moves and self._held_since(listed, holding):
                    checkpoint()  # (a call's deadline bounds the tries)
                    continue
                changes.served = placed
                yield changes
                return

    def _held_since(self, listed: set[tuple[int, int]], holding: list[tuple[int, int]]
                    ) -> bool:
        """Whether a root served since ``listed`` was read holds this one
        (``holding``: those found then): one listing where none was served
        since."""
        now = served_listed() - {self.identity}
        if now <= listed:
            return False
        return not set(self._served_holding(now)[0]) <= set(holding)

    @contextmanager
    def _tree_lock(self, *, exclusive: bool, checkpoint: Checkpoint,
                   moves: bool) -> Iterator[TreeChanges]:
        with tree_file_lock(self.identity, self._root.backend, exclusive=exclusive,
                            checkpoint=checkpoint) as hold:
            here = changes_here()
            if (hold.moves is not None and hold.moves != self.moves_seen) or \
                    here != self.changes_seen:
                self.relearn_links()
                self.wait_for_links(checkpoint)
            self.changes_seen = here
            self._catch_up_others(here, checkpoint)
            if hold.moves is not None:
                self.moves_seen = hold.moves
            changes = TreeChanges(self, hold, exclusive)
            if moves:
                changes.count()
            yield changes

    def served_holding(self) -> tuple[list[tuple[int, int]], _ServedPlaces | None]:
        """The (device, inode) of each root served now by another view (in
        this process or another) that holds this root, outermost first,
        and where the roots served now are (``None``: none is served, or
        where they are cannot be told); matched by their places, else
        looked for up the root's parents, only when another root is served."""
        return self._served_holding(served_listed() - {self.identity})

    def _served_holding(self, others: set[tuple[int, int]]
                        ) -> tuple[list[tuple[int, int]], _ServedPlaces | None]:
        """:meth:`served_holding` among the roots ``others`` (served now)."""
        if not others:
            return [], None
        placed = self._served_places(others)
        if placed is not None:
            # the directories '..' leads to, up to the top, by their names
            # (the kernel's name of the root has every one of them)
            parts = placed.root.split("/")[1:]
            above = ["/"] + ["/" + "/".join(parts[:depth]) for depth in range(1, len(parts))]
            holding = (placed.at(path) for path in above)
            return list(dict.fromkeys(key for key in holding if key is not None)), placed
        return served_holding(self._root, self.identity), None

    def served_on_the_way(self, places: Iterable[str], placed: _ServedPlaces | None = None
                          ) -> list[tuple[int, int]]:
        """The (device, inode) of each root served now by another view that
        lies in this root on the way to one of ``places`` (canonical paths):
        the directories holding them, outermost first.  ``placed``: where
        the roots served were when the move took its lock (else read now)."""
        others = served_listed() - {self.identity}
        if not others:
            return []
        found: list[tuple[int, int]] = []
        ways: set[str] = set()
        for place in places:
            parts = place.split("/")[:-1]
            ways.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
        ordered = sorted(ways, key=lambda way: (way.count("/"), way))
        if placed is None or not others <= set(placed.roots.values()):
            placed = self._served_places(others)  # (a root served since: placed too)
        if placed is not None:
            # each folder on the way by its name, none looked at
            top = placed.root.rstrip("/")
            on_the_way = (placed.at(f"{top}/{way}") for way in ordered)
            # (of those served still: one placed when the lock was taken may be gone)
            return list(dict.fromkeys(key for key in on_the_way
                                      if key is not None and key in others))
        for way in ordered:
            try:
                info = self._root.stat(way, follow_symlinks=False)
            except OSError:
                continue
            key = (info.st_dev, info.st_ino)
            if key in others and key not in found:
                found.append(key)
        return found

    def _served_places(self, others: set[tuple[int, int]]) -> _ServedPlaces | None:
        """Where this root and the roots ``others`` are now, each as the
        filesystem's own place of its directory, so that a directory on a
        path is matched by name, not looked at (one read of the mounts and
        one question per root, whatever the depth); ``None`` where that
        cannot be told (no ``/proc``, a root that cannot be placed): the
        caller then looks at each directory itself."""
        read = _root_and_mounts(self._root)
        if read is None:
            return None
        root, mounts = read
        others_at = served_places(others)
        if others_at is None:
            return None
        roots: dict[tuple[str, str], tuple[int, int]] = {}
        for key, path in others_at.items():
            place = mounts.place(path)
            if place is None:
                return None
            roots[place] = key
        return _ServedPlaces(root, mounts, roots)

    def catch_up(self, hold: SharedHold, checkpoint: Checkpoint) -> None:
        """Look at the tree's links again, for a step that took ``hold``
        itself and found the count of moves (or this process's own) changed
        since this view last looked."""
        here = changes_here()
        self.relearn_links()
        self.wait_for_links(checkpoint)
        self.changes_seen = here
        # the other roots' links rule here too (a Workspace's nested roots,
        # the roots beside): a move there is weighed by this step as well
        self._catch_up_others(here, checkpoint)
        if hold.moves is not None:
            self.moves_seen = hold.moves

    def others_behind(self) -> bool:
        """Whether the links of a root holding this one or beside it were
        last looked at before this process's latest move, or before the
        latest move another process counted in that root (a step here must
        look at them again, as :meth:`tree_lock` does)."""
        here = changes_here()
        return any(outer._behind(here)
                   for outer in (*(view for view, _ in self.held_by), *self.beside))

    def _behind(self, here: int) -> bool:
        """:meth:`others_behind` of this view as another root's (a root
        closed since: its links are none)."""
        if self._root.closed:
            return False
        if self.changes_seen != here:
            return True
        # another process's moves there: its count, read without its lock
        # (this step holds its own root's; the count is of moves done)
        moves = moves_made(self.identity, self._root.backend)
        return moves is not None and moves != self.moves_seen

    def _catch_up_others(self, here: int, checkpoint: Checkpoint) -> None:
        """Look again at the links of the roots holding this one and beside
        it that were last looked at before the move count ``here`` (or
        before another process's latest move there)."""
        for outer in (*(view for view, _ in self.held_by), *self.beside):
            if outer._behind(here):
                moves = moves_made(outer.identity, outer._root.backend)
                outer.relearn_links()
                outer.wait_for_links(checkpoint)
                outer.changes_seen = here
                if moves is not None:
                    outer.moves_seen = moves

    def relearn_links(self) -> None:
        """Look at the tree's links again, as when the view was opened."""
        if self.policy.is_empty:
            return
        found = git_scan(self._root)
        for link in found.links[:MAX_SCANNED_LINKS]:
            learn_link(self._root, self.links, link)
        if not found.complete:
            self.learn_every_link_later(found.unlooked)

    def notice_others(self) -> None:
        """Take in what other programs changed where the picture of the
        roots whose links rule here rests (:mod:`.freshness`): a
        workspace's roots holding this one or beside it."""
        for other in (*(view for view, _ in self.held_by), *self.beside):
            fresh = other.freshness
            if fresh is not None and not other._root.closed:
                fresh.catch_up()

    def look_again_at_git(self) -> Scan:
        """The look at open made again (another program changed a git
        config or directory): the links it meets learnt; what it found."""
        found = git_scan(self._root)
        for link in found.links[:MAX_SCANNED_LINKS]:
            learn_link(self._root, self.links, link)
        return found

    def learn_every_link_later(self, unlooked: tuple[tuple[str, int], ...]) -> None:
        """Find the links the bounded look did not reach (a deep or wide
        tree: below the directories it left ``unlooked``, each with its
        depth) on a thread of their own; until it is done a decision those
        links could change waits for it briefly, then refuses
        (:meth:`need_links`)."""
        with self._walk_guard:
            if not self._links_known.is_set():
                # the walk under way may have passed the change, or not
                # begun these: walked again, with the starts asked before
                self._walk_from = tuple(dict.fromkeys((*self._walk_from, *unlooked)))
                self._walk_again = True
                return
            self._walk_from = unlooked
            self.links_settled = False
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
                        self.links_settled = self._nothing_beyond()
                        return
                    self._walk_again = False
        except Exception:  # the decisions go on with the links known (a root closed meanwhile)
            with self._walk_guard:
                self._walk_again = False
                self._links_known.set()
                self.links_settled = self._nothing_beyond()

    def _walk_tree_links(self) -> None:
        """Learn every link below the directories the look left, at any
        depth (:func:`~.linkwalk.walk_links`: each directory from its
        parent's fd, a new start every 64 levels)."""
        with self._walk_guard:
            starts = self._walk_from
        fresh = self.freshness  # (the directories it lists that are not followed: their times kept)
        places: dict[str, frozenset[str]] = {}
        walk_links(self._root, self.links, starts,
                   stamp=fresh.stamp_beyond if fresh is not None else None, places=places)
        self.take_config_places(places)
        if fresh is not None and places:
            fresh.config_places.update(places)  # read again when the tree changes

    def take_config_places(self, places: dict[str, frozenset[str]]) -> Scan | None:
        """Protect what the host configs in ``places`` run (directories the
        look at open did not reach, each with the names a config may lie
        under), as the look protects what those it read run; what was
        found (``None``: no place)."""
        if not places:
            return None
        found = host_config_places(self.look, sorted(places.items()))
        self.protect_found(found.dirs, found.python_dirs, found.whole)
        return found

    def protect_found(self, dirs: Sequence[str], python_dirs: Sequence[str],
                      whole: bool) -> None:
        """Protect what a look at git's places and host configs found
        (``dirs``, ``python_dirs``), and, where it could not read all it
        met (``whole``), every path, as at open."""
        if dirs or python_dirs:
            self.policy = self.policy.extended(protect_dirs=dirs, python_dirs=python_dirs)
        if whole and self.policy.guards_git and "/*" not in self.policy.protect:
            self.policy = self.policy.extended(protect=["/*"])

    def _nothing_beyond(self) -> bool:
        """Whether every directory of the tree is followed by :mod:`.freshness`
        (none lies beyond, whose changes a decision looks at itself)."""
        if self.links.full:
            return False
        fresh = self.freshness
        return fresh is None or not (fresh.beyond or fresh.beyond_full)

    def unsettle(self) -> None:
        """Directories lie beyond those followed: a decision links could
        change looks at them first (:meth:`need_links`)."""
        with self._walk_guard:
            self.links_settled = False

    def wait_for_links(self, checkpoint: Checkpoint | None = None) -> bool:
        """Whether every link of the tree is known, waiting for the walk
        for :attr:`links_grace` seconds at most (polling ``checkpoint``): a
        huge tree's walk is not waited for, the decisions it could change
        refuse meanwhile (:meth:`need_links`)."""
        if self.links_settled:  # the common case: no wait, no lock taken
            return True
        known = self._links_known
        delay = _POLL_FIRST
        until = time.monotonic() + self.links_grace
        while not known.wait(delay):
            if checkpoint is not None:
                checkpoint()
            left = until - time.monotonic()
            if left <= 0:
                return False
            delay = min(delay * 2, _POLL_MOST, left)
        return True

    def need_links(self, *ops: Op) -> None:
        """Return once the links that could change a decision about
        ``ops`` are known: at once when every link of this root (and of
        the roots whose links rule here) is, or when no rule refuses any of
        ``ops`` anywhere (a link's name may be any name, and any link may
        lead to any place: only a rule that refuses nothing leaves the
        links unknown yet harmless).  Else the walk is waited for
        (:meth:`wait_for_links`, polling the running call's checkpoint:
        a cancel stops it) and ``not_ready`` raised if it is not through:
        a decision is never made on part of the links.  Where directories
        lie beyond those :mod:`.freshness` follows, they are looked at
        first, once a call (:meth:`Freshness.look_beyond`; ``not_ready``
        where that takes longer than the wait)."""
        pending = [view for view in (self, *(outer for outer, _ in self.held_by), *self.beside)
                   if not view.links_settled]
        if not pending:
            return
        checkpoint = _running_checkpoint()
        for view in pending:
            if not any(view.policy.may_refuse(op) for op in ops):
                continue
            if not view.wait_for_links(checkpoint):
                raise not_ready()
            if view.links.full:
                raise too_many_links()
            fresh = view.freshness
            if fresh is not None and (fresh.beyond or fresh.beyond_full):
                # a link another program made where no watch follows: looked for now
                running = _RUNNING.get()  # (a call ended since: none, looked at each time)
                call = running if running is not None and running() is not None else None
                if not fresh.look_beyond(call, checkpoint, view.links_grace):
                    raise beyond_watched(fresh.unwatched())
                if not view._links_known.is_set() and not view.wait_for_links(checkpoint):
                    raise not_ready()  # a large directory appeared there: walked meanwhile

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
                self.learn_every_link_later(self.scan_unlooked)
        self.policy = policy
        if self.freshness is None and not policy.is_empty and not self._root.closed:
            since = time.time_ns()
            fresh = Freshness(self._root)
            fresh.bind(self)
            fresh.start(git_scan(self._root), since)
            self.freshness = fresh

    def close(self) -> None:
        """Close the root if this view opened it (:func:`open_view` of a path)."""
        fresh, self.freshness = self.freshness, None
        if fresh is not None:
            fresh.close()
        user = self._lock_file_user
        if user is not None and user.detach() is not None:  # closed once
            let_go_lock_file(self.identity)
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
        passed_on_way = location.passed
        kind = policy.rule(location.path, op)
        if not passed_on_way and not location.creates:
            # (the policy's rule, looked up again by rule_at, is remembered)
            return kind if kind is not None else self.rule_at(location.path, op, in_repository)
        if passed_on_way:
            self.learn_passed(passed_on_way)
        for made in location.creates:
            kind = kind or policy.rule(made, Op.MKDIR)
        for passed in passed_on_way:
            if kind is None and policy.rule(passed, Op.LIST) is Kind.DENY_RULE:
                kind = Kind.DENY_RULE
        if kind is not None:
            return kind
        if not self.links_settled or self.held:
            kind = self._known_alias_rule(location, op)
            if kind is not None:
                return kind
            if location.creates:
                self.need_links(op, Op.MKDIR)
            else:
                self.need_links(op)
            if self.policy is not policy:  # a host config the look beyond read rules too
                policy = self.policy
                kind = policy.rule(location.path, op)
                for made in location.creates:
                    kind = kind or policy.rule(made, Op.MKDIR)
                if kind is not None:
                    return kind
        # the names leading here through links (none known, no other root: nothing to weigh)
        if self.links.locations or self.nested_in or self.opened_beneath or self.beside:
            kind = self._alias_rule(location, op)
        if kind is None and op in _MUTATING and policy.guards_git and (
                in_repository() if in_repository is not None else
                in_git_directory(self.look, location.path, location.creates)):
            kind = Kind.PROTECTED  # a repository the scan at open did not find
        if kind is None and op in _MUTATING and self._run_at_interpreter_start(location):
            kind = Kind.PROTECTED
        return kind

    def rule_at(self, path: str, op: Op,
                in_repository: Callable[[], bool] | None) -> Kind | None:
        """:meth:`rule` of an existing place reached without a link
        (``Location(path)``): the decision of every common write and edit,
        its facts of names alone (the policy's rule, whether Python runs
        code there at its start) looked up once per path and op, then what
        it looks at each time: the names known links lead from, a
        repository made since the look at open (``in_repository``; default:
        looked up), a module Python imports at its start."""
        policy = self.policy
        if policy.is_empty:
            return None
        remembered_for, plain = self._plain_memo
        if remembered_for is not policy:
            plain = {}
            self._plain_memo = (policy, plain)
        try:
            verdict = plain[path, op]
        except KeyError:
            kind = policy.rule(path, op)
            if kind is not None:
                verdict = kind
            elif op in _MUTATING:
                quiet = _START_QUIET.get(path)
                verdict = _remember_start_quiet(path) if quiet is None else quiet
            else:
                verdict = True
            if len(path) <= _START_QUIET_CHARS:
                if len(plain) >= _START_QUIET_MAX:
                    plain.clear()
                plain[path, op] = verdict
        if verdict is not True and verdict is not False:
            return verdict  # a rule's refusal
        # the policy's own rule allows it: what is looked at each time
        if not self.links_settled or self.held:
            kind = self._known_alias_rule(Location(path), op)
            if kind is not None:
                return kind
            self.need_links(op)
            if self.policy is not policy:  # a host config the look beyond read rules too
                kind = self.policy.rule(path, op)
                if kind is not None:
                    return kind
        if self.links.locations or self.nested_in or self.opened_beneath or self.beside:
            kind = self._alias_rule(Location(path), op)
            if kind is not None:
                return kind
        if op not in _MUTATING:
            return None
        if self.policy.guards_git and (in_repository() if in_repository is not None else
                                       in_git_directory(self.look, path, ())):
            return Kind.PROTECTED  # a repository the scan at open did not find
        if (not verdict or self.python_place is not None) and \
                self._run_at_interpreter_start(Location(path)):
            return Kind.PROTECTED
        return None

    def _run_at_interpreter_start(self, location: Location) -> bool:
        """Whether ``location`` (or a directory the call makes on the way)
        is, or lies in, a module a ``.pth`` file beside it imports at every
        start of the interpreter, or a virtual environment's ``bin/`` or an
        entry in it, where the policy protects that ``.pth`` (``pyvenv.cfg``)
        (:mod:`~corral.tools._policy.pythonstart`).  Nothing is read for a
        path outside a ``site-packages`` or ``bin`` directory."""
        creates = location.creates
        place = self.python_place
        if not creates and place is None:  # the common decision: its names looked at once
            quiet = _START_QUIET.get(location.path)
            if quiet is None:
                quiet = _remember_start_quiet(location.path)
            if quiet:
                return False
        for path in (location.path, *creates):
            venv = venv_of_program(path)
            config = "pyvenv.cfg" if venv == "." else f"{venv}/pyvenv.cfg"
            if venv is not None and "pyvenv.cfg" in self.look.present(venv, ("pyvenv.cfg",)) \
                    and self.policy.rule(config, Op.EDIT) is Kind.PROTECTED:
                return True  # a venv's bin/: activate is sourced, python run, by an editor
            if place is not None and place.in_program_dir(path) and \
                    self.policy.rule("pyvenv.cfg", Op.EDIT) is Kind.PROTECTED:
                return True  # the root is a venv's bin/
            if place is not None and place.site is not None:
                if self._run_in_site_above(place, path):
                    return True
                continue
            found = site_module(path)
            if found is None:
                continue
            site, name = found
            if self.policy.rule(f"{site}/_.pth", Op.CREATE) is not Kind.PROTECTED:
                continue
            imported = pth_imports(self.look, site)
            # (site-packages/__pycache__ itself: the caches of what they import)
            if imported is None or name in imported or (name == "__pycache__" and imported):
                return True
        return False

    def _run_in_site_above(self, place: RootPlace, path: str) -> bool:
        """:meth:`_run_at_interpreter_start` of ``path`` where the root is a
        ``site-packages`` directory or lies in one: weighed at its place
        from that directory (its ``.pth`` files the root's own, or read
        when the root was opened)."""
        placed = place.site_path(path)
        found = site_module(placed) if placed is not None else None
        if found is None or self.policy.rule(f"{found[0]}/_.pth",
                                             Op.CREATE) is not Kind.PROTECTED:
            return False
        name = found[1]
        if place.site == found[0]:  # the root is the site-packages directory
            if "/" not in path.strip("/") and fold(path).endswith(".pth"):
                return True  # a .pth file of its own: its import lines run
            imported = pth_imports(self.look, ".")
        else:
            imported = place.site_imports
        return imported is None or name in imported or (name == "__pycache__" and bool(imported))

    def _known_alias_rule(self, location: Location, op: Op) -> Kind | None:
        """:meth:`_alias_rule` on the links of this root known so far, while
        its walk is under way (a root alone: another root's links are
        weighed once known): a name leading here that refuses now refuses
        whatever the walk finds, without waiting for it."""
        if self.held or self.links_settled or not self.links.locations:
            return None
        return self._alias_rule(location, op)

    def _alias_rule(self, location: Location, op: Op) -> Kind | None:
        links, policy = self.links, self.policy
        named = ((location.path, op), *((c, Op.MKDIR) for c in location.creates))
        if len(links):
            for name, name_op in named:
                aliases = links.aliases(name)
                if aliases is None:  # more names lead here than are weighed: one may be protected
                    return Kind.PROTECTED if name_op.mutates else Kind.DENY_RULE
                for alias in aliases:
                    kind = policy.rule(alias, name_op)
                    if kind is not None:
                        return kind
        return self._outer_rule(named) if self.held else None

    @property
    def held_by(self) -> tuple[tuple[View, str], ...]:
        """The views of the roots this one lies inside, with its place there."""
        return self.nested_in + self.opened_beneath

    @property
    def held(self) -> bool:
        """Whether another root's links may lead here."""
        return bool(self.nested_in or self.opened_beneath or self.beside)

    @property
    def host_real(self) -> str:
        """The root directory's real host path (never shown to a model)."""
        if self._host_real is None:
            self._host_real = os.path.realpath(self._root.path)
        return self._host_real

    def _beside_rule(self, named: Iterable[tuple[str, Op]]) -> Kind | None:
        """The rule refusing any of ``named`` (canonical here) through a link
        of another root of the workspace that leads out of it into this
        one: the name it leads from there, decided by that root."""
        base = self.host_real
        for other in self.beside:
            outside = other.links.outside()
            if not outside:
                continue
            for name, op in named:
                host = base if name in (".", "") else f"{base}/{name}"
                for location, landing in outside:
                    top = landing.rstrip("/") + "/"
                    if host != landing and not host.startswith(top):
                        continue
                    alias = location if host == landing else f"{location}/{host[len(top):]}"
                    kind = other.policy.rule(alias, op)
                    if kind is None:
                        kind = other._rule_of_names(other.links.aliases(alias), op)
                    if kind is not None:
                        return kind
        return None

    def _rule_of_names(self, names: tuple[str, ...] | None, op: Op) -> Kind | None:
        """The rule of this root's policy refusing any of ``names`` (other
        names of one place here); ``None`` (more than are weighed) refuses,
        for the names left out may be the protected ones."""
        if names is None:
            return Kind.PROTECTED if op.mutates else Kind.DENY_RULE
        rule = self.policy.rule
        for name in names:
            kind = rule(name, op)
            if kind is not None:
                return kind
        return None

    def _outer_rule(self, named: Iterable[tuple[str, Op]]) -> Kind | None:
        """The rule refusing any of ``named`` (canonical here, each with its
        op) through a link of a root this one lies inside: the names leading
        there in that root, decided by its policy (and through a link of a
        root beside it, :meth:`_beside_rule`)."""
        named = tuple(named)
        if self.beside:
            kind = self._beside_rule(named)
            if kind is not None:
                return kind
        for outer, place in self.held_by:
            if not outer.links_settled:
                outer.need_links(*(op for _, op in named))
            if not len(outer.links):
                continue
            for name, op in named:
                there = name if place in (".", "") else \
                    (place if name in (".", "") else f"{place}/{name}")
                kind = outer._rule_of_names(outer.links.aliases(there), op)
                if kind is not None:
                    return kind
        return None

    def _outer_leads_into(self, canonical_dir: str) -> bool:
        """Whether a link of a root this one lies inside leads to, into or
        above ``canonical_dir`` (canonical here)."""
        for outer, place in self.held_by:
            there = canonical_dir if place in (".", "") else \
                (place if canonical_dir in (".", "") else f"{place}/{canonical_dir}")
            if outer.links.leads_into(there):
                return True
        if self.beside:
            host = self.host_real if canonical_dir in (".", "") else \
                f"{self.host_real}/{canonical_dir}"
            for other in self.beside:
                for _, landing in other.links.outside():
                    if landing == host or landing.startswith(host.rstrip("/") + "/") or \
                            host.startswith(landing.rstrip("/") + "/"):
                        return True
        return False

    def visible(self, canonical: str, op: Op) -> bool:
        """Whether the entry at ``canonical`` may be shown (listed, searched):
        no rule hides it, nor any known name leading to it."""
        policy = self.policy
        if not policy.visible(canonical, op):
            return False
        if not self.links_settled or self.held:
            self.need_links(op)
        if self.held and self._outer_rule(((canonical, op),)) is not None:
            return False
        if not len(self.links):
            return True
        aliases = self.links.aliases(canonical)
        return aliases is not None and all(policy.visible(alias, op) for alias in aliases)

    def shows(self, rel: str, checkpoint: Checkpoint | None = None) -> bool:
        """Whether ``rel`` names an entry (a dangling link included) that a
        model may be told exists: no deny or secret rule hides it, decided
        on the entry, where it leads, and every known name leading there.
        ``checkpoint`` bounds the look (made outside any call, for the
        model's sake: a wait for the walk polls it); what cannot be decided
        within it (links not known yet, a cancel, a deadline) shows nothing."""
        bounded = _Bounded(checkpoint) if checkpoint is not None else None

        def look() -> bool:
            if bounded is not None:
                running_call(lambda: bounded)
                bounded.checkpoint()
            return self._shows(rel)

        try:
            return copy_context().run(look) if bounded is not None else look()
        except Refusal:
            return False

    def _shows(self, rel: str) -> bool:
        try:
            self._root.lstat(rel)
            seen = [locate(self._root, rel, follow=False)]
        except (OSError, ValueError):
            return False
        try:
            seen.append(locate(self._root, rel, follow=True))
        except (OSError, ValueError):
            # where a link's target folder is missing, where its text leads
            # decides (as a call's own check): else whether that folder
            # exists would show
            spelled = spelled_target(self._root, seen[0].path)
            if spelled is None:  # leaves the root or loops: the last link it reached decides
                spelled = chain_end(self._root, seen[0].path)
            if spelled is not None:
                seen.append(spelled)
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
        if not self.links_settled or self.held:
            self.need_links(op)
        here = canonical_dir.rstrip("/") or "."
        if self.held and self._outer_leads_into(here):  # each entry decided in full
            return AliasedScope(inner, self, here, op, whole=True)
        if not len(self.links) or not self.links.leads_into(here):
            return inner
        return AliasedScope(inner, self, here, op)

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
        if kind is None and (self.links.targets or op.mutates or self.held
                             or not self.links_settled):
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
        if not self.links_settled or self.held:
            self.need_links(Op.MOVE_FROM if leaving else Op.LIST, Op.MOVE_TO)
        aliased = self.links.leads_into(carried) or self.links.leads_into(landing) or \
            self._outer_leads_into(carried) or self._outer_leads_into(landing)
        scopes = {carried: (policy.scope(carried, Op.MOVE_FROM if leaving else Op.LIST),
                            policy.scope(landing, Op.MOVE_TO))}
        reached = [0]  # the deepest level the walk listed
        try:
            return self._subtree_walk(carried, landing, checkpoint, scopes, guards_git,
                                      aliased, leaving=leaving, shown=shown, reached=reached)
        except OSError as exc:
            if exc.errno != errno.EMFILE or not _held_most_files(reached[0]):
                raise  # the host's limit met by a shallow walk: the call's, not the tree's
            # a level's directory held open each: what cannot be walked is not moved
            raise Refusal(Code.TOO_LARGE, f"{shown or carried} holds folders nested too deeply "
                          "to check what moving it would carry; nothing was moved",
                          "Move the folders inside it one level at a time, or ask the user to.",
                          details={"path": shown or carried},
                          kind=Kind.TOO_DEEP) from None

    def _subtree_walk(self, carried: str, landing: str, checkpoint: Checkpoint,
                      scopes: dict[str, tuple[Scope, Scope]], guards_git: bool, aliased: bool,
                      *, leaving: bool, shown: str, reached: list[int]
                      ) -> tuple[str, Kind, str] | None:
        for dirpath, dirnames, filenames in self._root.walk(carried):
            checkpoint()
            reached[0] = max(reached[0], dirpath.count("/"))
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
            aliases = self.links.aliases(f"{end}/{inner}")
            if aliases is None:  # more names lead there than are weighed
                return inner, Kind.PROTECTED, field
            for alias in aliases:
                kind = self.policy.rule(alias, op)
                if kind is not None:
                    return inner, kind, field
            kind = self._outer_rule(((f"{end}/{inner}", op),)) if self.held else None
            if kind is not None:
                return inner, kind, field
        return None


class AliasedScope(Scope):
    """A directory's scope where known links lead: an entry the policy
    shows is shown only if no name leading to it through a link is hidden
    (a denied or secret link name hides what it leads to)."""

    __slots__ = ("_inner", "_view", "_dir", "_real", "_op", "_names", "_scopes", "_generation",
                 "_plain")

    def __init__(self, inner: Scope, view: View, canonical_dir: str, op: Op,
                 names: tuple[str, ...] | None = None, *, whole: bool = False) -> None:
        # every question is put to ``inner`` first: the base's state is unused
        self._inner = inner
        self._view = view
        self._dir = canonical_dir if canonical_dir not in (".", "") else "."
        self._real = "" if canonical_dir in (".", "") else canonical_dir + "/"
        self._op = op
        links = view.links
        self._generation = links.generation
        # The other names of this directory, found once: an entry's names
        # through links are these joined to its name, unless a link leads
        # to the entry itself (or to one of those joined names).
        if names is None:
            names = links.directory_names(canonical_dir)
        self._scopes: list[Scope] | None = []
        if names is None or whole:  # each entry decided in full (more than are weighed:
            names, self._scopes = names or (), None  # refused)
        self._names = names
        if names:  # a link leads to this directory or above it
            policy = view.policy
            self._scopes = [policy.scope(name, op) for name in names] \
                if all(policy.visible(name, op) for name in names) else None
        # no link leads to this directory or above it: only links leading to
        # an entry here or below it can name one (the common case, decided fast)
        self._plain = not names and self._scopes is not None

    def _shown(self, name: str) -> bool:
        scopes = self._scopes
        if scopes is None or (self._linked(name) if self._names else
                              self._real + name in self._view.links.targets):
            return self._view.visible(self._real + name, self._op)  # each name decided in full
        return not scopes or all(scope.visible(name) for scope in scopes)

    def _linked(self, name: str) -> bool:
        """Whether a known link leads to the entry ``name`` itself (by its
        canonical path or one of this directory's other names)."""
        targets = self._view.links.targets
        return self._real + name in targets or any(
            f"{other}/{name}" in targets for other in self._names)

    def may_hide(self) -> bool:
        return True  # a name leading here through a link may be hidden

    def visible(self, name: str) -> bool:
        return self._inner.visible(name) and self._shown(name)

    def child(self, name: str) -> Scope | None:
        inner = self._inner.child(name)
        if inner is None:
            return None
        real = self._real + name
        view = self._view
        links = view.links
        if self._plain and links.generation == self._generation and not (
                view.nested_in or view.opened_beneath or view.beside):  # not view.held
            # no link leads to this directory or above it (nor to the
            # root), and the map is as it was: the subdirectory's names
            # come only from links leading to it or below it
            if real in links.targets:  # a link leads to it: decided in full, names found
                return AliasedScope(inner, view, real, self._op) \
                    if view.visible(real, self._op) else None
            if real not in links.reached:
                return inner
            return AliasedScope(inner, view, real, self._op, ())
        if not self._shown(name):
            return None
        return view.linked_scope(inner, real, self._op)

    def visible_names(self, names: list[str]) -> list[str]:
        shown = self._inner.visible_names(names)
        if self._plain and self._dir not in self._view.links.holding_targets:
            return shown  # no link leads here, above, or to an entry here: nothing more hides
        scopes = self._scopes
        if scopes is None:  # a name leading here is hidden: each entry decided in full
            kept = [name for name in shown if self._shown(name)]
            return shown if len(kept) == len(shown) else kept
        kept = shown
        for scope in scopes:  # the names through links, a directory's worth at once
            kept = scope.visible_names(kept)
        links = self._view.links
        holding = links.holding_targets
        # where a link leads to an entry here itself (by this directory's
        # canonical path or another name of it): such an entry is decided in full too
        prefixes = [self._real] if self._dir in holding else []
        for other in self._names:
            if other in holding:
                prefixes.append(other + "/")
        if prefixes:
            targets, view, op, real = links.targets, self._view, self._op, self._real
            if len(prefixes) == 1:
                # the names a link leads to, found in C (most are not)
                linked = compress(kept, map(targets.__contains__, map(prefixes[0].__add__, kept)))
                hidden = {name for name in linked if not view.visible(real + name, op)}
            else:
                hidden = {name for name in kept if any(p + name in targets for p in prefixes)
                          and not view.visible(real + name, op)}
            if hidden:
                kept = [name for name in kept if name not in hidden]
        return shown if len(kept) == len(shown) else kept
