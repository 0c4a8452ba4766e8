"""A pinned location: one resolution held under the call's locks, what a
tool looks at and acts on, never resolved again."""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import stat as st
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from types import TracebackType
from typing import NamedTuple, TYPE_CHECKING

from ....contained import Handle, Opened, Target, without_temp_names
from ..._policy.gitdirs import (GIT_SUBDIRECTORIES, SHAPE_NAMES, in_git_directory,
                                in_git_subdirectory, is_repository,
                                looks_like_common_directory, names_a_shape_entry)
from ..._policy.locate import Location
from ..._policy.rules import Op
from ..._refusals.catalogue import Kind, swapped
from .decide import _ADDING, _Step, policy_refusal
from .links import (host_chain_passes, host_lead_after_move, lead_after_move, learn_link,
                    locate)
from .locks import _TREE, Checkpoint
from .tree_lock import served_roots

# what a swap of two names (RENAME_EXCHANGE, Darwin's RENAME_SWAP) fails
# with where the filesystem or platform cannot make one: a plain rename then
_NO_EXCHANGE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP})

# what takes an entry away from where a link's chain passes
_UNCHAINING = frozenset({Op.DELETE, Op.MOVE_FROM})

if TYPE_CHECKING:
    from .call import CallView
    from .decide import View

_DIGEST_CHUNK = 1024 * 1024
_HEAD_KEPT = 64 * 1024  # the start of a file digested, kept for a look at its form


class Place(NamedTuple):
    """Where a pinned location acts, as a fact to compare after the host's
    answer: its canonical path, what it would create, and the identity of
    the directory it holds."""

    path: str
    creates: tuple[str, ...]
    anchor: tuple[int, int]


def _read_whole(handle: Handle, size: int, limit: int,
                step: Callable[[int], None] | None) -> bytes:
    """At most ``limit + 1`` bytes of ``handle`` from its start, ``size``
    (its ``fstat``'s) first: a short read that reached it is the end."""
    if limit < 0:
        return b""
    want = max(65536, min(size + 1, limit + 1))
    first = handle.pread(want, 0)
    if len(first) < want and len(first) == size:  # the common file: read whole at once
        if step is not None and first:
            step(len(first))
        return first
    if not first:
        return first
    if step is not None:
        step(len(first))
    chunks, total = [first], len(first)
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


def _host_chain_passes(start: str, through: str) -> bool:
    """Whether the host's reading of the link at the host path ``start``
    passes the entry at the real host path ``through``: each link of its
    chain followed by its text (at most 40, as the resolver does)."""
    here = start
    for _ in range(40):
        try:
            text = os.readlink(here)
            parent = os.path.realpath(os.path.dirname(here))
        except (OSError, ValueError):
            return False
        here = os.path.normpath(os.path.join(parent, text))
        if here == through or here.startswith(through + "/"):
            return True
    return False


_PLAIN_KEPT = 4096  # paths remembered (then forgotten at once)
_PLAIN_CHARS = 512  # longer paths are looked at afresh each time
# canonical path of an existing entry -> whether its names alone leave the
# ``HEAD`` beside it the only look for a repository: the entry not named as
# git's ``config``, ``hooks`` or ``info``, no directory on the way named as
# git names its own (``refs``, ``objects``...): a fact of the names, so a
# path a session keeps writing is looked at once
_PLAIN_NAMES: dict[str, bool] = {}


def _remember_plain_names(path: str) -> bool:
    held, _, name = path.rpartition("/")
    plain = name.lower() not in _GIT_READ_ENTRIES and \
        GIT_SUBDIRECTORIES.isdisjoint(held.lower().split("/"))
    if len(path) <= _PLAIN_CHARS:
        if len(_PLAIN_NAMES) >= _PLAIN_KEPT:
            _PLAIN_NAMES.clear()
        _PLAIN_NAMES[path] = plain
    return plain


# what git reads of a common directory (one with no HEAD) by these names
_GIT_READ_ENTRIES = ("config", "hooks", "info")


class _ParentsMade:
    """:meth:`Pinned.parents_made`, written out as a context manager (every
    write passes here, most with nothing to make: no generator for them)."""

    __slots__ = ("_target", "_made")

    def __init__(self, target: Target) -> None:
        self._target = target
        self._made: list[str] = []

    def __enter__(self) -> list[str]:
        target = self._target
        self._made = made = target.make_parents() if target.creates else []
        return made

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if kind is not None and self._made:
            try:
                self._target.unmake_parents(self._made)
            except OSError:
                pass  # the act's failure is what the caller hears


class Pinned:
    """One resolved location, held under the call's locks: what the tool
    looks at and acts on, never resolved again."""

    __slots__ = ("_call", "_target", "shown", "field", "_spelled", "_target_follows",
                 "_decided", "_git", "_step", "_act", "_head", "_kept", "_location")

    def __init__(self, call: CallView, target: Target, shown: str, field: str,
                 spelled: str, *, follows: bool = False) -> None:
        self._call = call
        self._target = target
        self.shown = shown
        self.field = field
        self._spelled = spelled
        self._target_follows = follows  # the resolution followed a final link
        self._decided: list[Op] = []
        self._git: bool | None = None
        self._step: _Step | None = None  # set by the step that made this pin
        # the op of a step made of this pin alone, its _Step made only when
        # the names it acts on are git's (None: a _Step was made, or none is needed)
        self._act: Op | None = None
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
        view = self._call._view
        target = self._target
        if target.passed or target.creates:
            kind = view.rule(self._location or self.location, op, self._in_repository)
        else:  # the common place: decided by its path, no Location made
            kind = view.rule_at(target.path, op, self._in_repository)
        if kind is not None:
            raise policy_refusal(kind, self.shown, op, self.field)
        if op in _UNCHAINING:
            self._refuse_unhiding(op)
        if op in _ADDING and view.policy.guards_git:
            step = self._step
            if step is None and self._act is not None:
                step = self._one_act_step(self._act)
            # (the common step adds no name of git's repository test)
            if step is not None and step.git_names():
                view.refuse_new_repository(step)
        if op not in self._decided:
            self._decided.append(op)

    def _one_act_step(self, act: Op) -> _Step | None:
        """The step of a pin that is its one act (``act``), made now if the
        names it acts on may be git's (else none: nothing to look at)."""
        self._act = None  # looked at once: the pin's names never change
        target = self._target
        name = target.path.rpartition("/")[2]
        if act not in _ADDING or (not target.creates and (
                name.lower() not in SHAPE_NAMES if name.isascii() else
                not names_a_shape_entry(name))):
            return None
        step = self._step = _Step(exclusive=False, only=(self, act))
        return step

    def _refuse_unhiding(self, op: Op) -> None:
        """Refuse taking away an entry a known link's chain passes through
        when that link's name hides what it leads to (``vault -> l1 ->
        data`` under ``deny=vault``: with ``l1`` gone, ``data`` would be
        shown as any folder)."""
        view = self._call.shared
        if not view.links_settled:  # a chain not known yet may pass through here
            view.need_links(Op.READ)
        for name in view.links.through(self.path):
            kind = view.rule(Location(name), Op.READ)
            if kind is Kind.DENY_RULE or kind is Kind.SECRET:
                raise policy_refusal(kind, self.shown, op, self.field)
        # a root beside this one: its links leading out may pass through here
        if view.beside:
            here = view.host_real if self.path in (".", "") else \
                f"{view.host_real}/{self.path}"
            for other in view.beside:
                for location, _ in other.links.outside():
                    kind = other.rule(Location(location), Op.READ)
                    if (kind is Kind.DENY_RULE or kind is Kind.SECRET) and \
                            _host_chain_passes(f"{other.host_real}/{location}", here):
                        raise policy_refusal(kind, self.shown, op, self.field)
        # a root this one lies in: its links' chains pass through here too
        for outer, place in view.held_by:
            there = self.path if place in (".", "") else \
                (place if self.path in (".", "") else f"{place}/{self.path}")
            if not outer.links_settled:
                outer.need_links(Op.READ)
            for name in outer.links.through(there):
                kind = outer.rule(Location(name), Op.READ)
                if kind is Kind.DENY_RULE or kind is Kind.SECRET:
                    raise policy_refusal(kind, self.shown, op, self.field)

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
        (``hooks``, ``info``...), or the one holding any directory so named
        on the way (``r.git`` for ``r.git/refs/heads``): where git runs or
        reads what is written."""
        git = self._git
        if git is None:
            target = self._target
            view = self._call._view
            if not target.creates:
                path = target.path
                plain = _PLAIN_NAMES.get(path)
                if plain is None:
                    plain = _remember_plain_names(path)
                if plain:  # the common write: names git's make no other look than HEAD
                    try:
                        head = target.held_exists("HEAD")
                    except OSError:
                        head = False
                    git = self._git = (head and self._held_is_repository(
                        target.parent, head_seen=True)) or (
                        bool(view.nested_in or view.opened_beneath) and
                        self._in_outer_repository(target.parent))
                    return git
            held = (target.creates[0].rpartition("/")[0] or ".") if target.creates else \
                target.parent
            git = self._git = self._held_is_repository(held) or (
                held.rpartition("/")[2] in GIT_SUBDIRECTORIES and in_git_directory(
                    view.look, held, ())) or in_git_subdirectory(view.look, held) or (
                bool(view.nested_in or view.opened_beneath) and self._in_outer_repository(held))
        return git

    def _in_outer_repository(self, held: str) -> bool:
        """The same look from each root this one lies inside (a client
        root below a server's, a nested root), at the held directory's
        place there: the directories above this root (``remote.git`` for a
        root opened at ``remote.git/hooks``) are seen only from there."""
        for outer, place in self._call.shared.held_by:
            where = place if held in ("", ".") else f"{place}/{held}"
            if (where.rpartition("/")[2] in GIT_SUBDIRECTORIES and
                    in_git_directory(outer.look, where, ())) or \
                    in_git_subdirectory(outer.look, where):
                return True
        return False

    @property
    def held_path(self) -> str:
        """The canonical path of the directory this pin holds (the deepest
        that exists on the way)."""
        return (self.creates[0].rpartition("/")[0] or ".") if self.creates else self.parent

    def held_present(self, names: Iterable[str]) -> frozenset[str]:
        """Which of ``names`` the held directory holds now (an ``lstat``
        each beside the entry, nothing resolved)."""
        target = self._target
        return frozenset(name for name in names if target.held_lstat(name) is not None)

    def _held_is_repository(self, held: str, *, head_seen: bool = False) -> bool:
        """Whether the held directory (canonical ``held``) is a repository
        now (``is_repository``: one probe when it holds no ``HEAD``,
        answered without an exception: the common case, every mutating call
        pays it; ``head_seen``: the probe found it already)."""
        target = self._target
        try:
            if not head_seen and not target.held_exists("HEAD"):
                # a common git directory has no HEAD: looked at only when
                # what is written there is what git reads of one
                return self._names_git_config() and looks_like_common_directory(
                    self._call.shared.look, held)
            return is_repository({"HEAD", *self.held_present(("objects", "refs",
                                                              "commondir"))})
        except OSError:
            return False

    def _names_git_config(self) -> bool:
        """Whether the entry this pin makes or changes in its held
        directory is named as git's ``config``, ``hooks`` or ``info``."""
        target = self._target
        first = (target.creates[0] if target.creates else target.path).rpartition("/")[2]
        return first.lower() in _GIT_READ_ENTRIES

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

    def ensure_held_place(self) -> None:
        """``STALE`` unless the directory the pin acts from still lies at
        its canonical path: what the call creates below it may have been
        made meanwhile (used, as ``mkdir -p`` does), but the directory
        moved elsewhere (into ``.git``, onto a protected name) is not acted
        in.  One ``lstat``, made only when the host was asked."""
        target = self._target
        held = (target.creates[0].rpartition("/")[0] or ".") if target.creates else target.parent
        if held == ".":
            return  # the root itself: it lies where it lies
        try:
            info = self._call.shared.root.stat(held, follow_symlinks=False)
        except OSError:
            raise swapped(self.shown) from None
        if not st.S_ISDIR(info.st_mode) or \
                (info.st_dev, info.st_ino) != target.held_identity():
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
        info = opened.info
        if st.S_ISREG(info.st_mode):  # kept (_keep, written out: the look of every write)
            if self._kept is not None:
                self.release()
            self._kept = opened
        else:
            opened.handle.close()
        return info

    def opened_final(self) -> bool:
        """Open the entry for reading (``O_NOFOLLOW``) and keep it, as
        :meth:`look` does: ``True`` when it opened or nothing is there;
        ``False`` when the open failed (a symlink is ``ELOOP``; any other
        failure, a special file, an unreadable one, is left to the step
        made the usual way, which says it as it always did)."""
        try:
            opened = self._target.open_existing(os.O_RDONLY)
        except OSError:
            return False
        if opened is not None and not self._keep(opened):
            opened.handle.close()
        return True

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
        if kept is None:
            return None
        info = kept[1]
        if expect is None or info is expect:  # the look's own fstat: the same file
            return kept
        if (info.st_dev, info.st_ino) != (expect.st_dev, expect.st_ino):
            return None
        return kept

    def _open_as(self, expect: os.stat_result | None, *, looked_at: bool) -> Opened:
        """The file to read: the kept one if it is ``expect``, else opened
        now (and kept, if regular); ``STALE`` if it is not ``expect``.  Gone
        now: ``STALE`` where the caller ``looked_at`` it (it was there),
        else the core's "not found" (``STALE`` if it is there again)."""
        opened = self._kept
        if opened is not None and (expect is None or opened.info is expect):
            return opened  # the kept file, as it was looked at (_kept_as's first answer)
        opened = self._kept_as(expect)
        if opened is not None:
            return opened  # the kept file, and it is ``expect`` (or nothing was expected)
        opened = self._target.open_existing(os.O_RDONLY)
        if opened is None:
            if not looked_at:
                self._target.open(os.O_RDONLY).close()  # raises the core's "not found"
            raise swapped(self.shown)
        self._keep(opened)
        info = opened.info
        if expect is not None and (info.st_dev, info.st_ino) != (expect.st_dev, expect.st_ino):
            if self._kept is not opened:
                opened.handle.close()
            raise swapped(self.shown)
        return opened

    def end(self) -> None:
        """The pin's block is over: the kept file closed, the step let go
        (it holds this pin: dropped now, neither is left to the garbage
        collector)."""
        self._step = None
        kept, self._kept = self._kept, None  # (release, written out: every step ends here)
        if kept is not None:
            kept.handle.close()

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
        opened = self._open_as(expect, looked_at=False)
        handle, info = opened
        try:
            if check is not None:
                check(info)
            return _read_whole(handle, info.st_size, limit, step), info
        finally:
            if self._kept is not opened:
                handle.close()

    def head(self, size: int, expect: os.stat_result) -> bytes:
        """At most the first ``size`` bytes of the pinned file, which must
        be ``expect`` (``STALE`` otherwise): what :meth:`read` gives of a
        head, in one ``pread`` of the kept file as long as ``fstat`` said
        it is (a file grown since gives a head all the same)."""
        kept = self._kept
        if kept is None or kept.info is not expect or self._head is not None:
            return self.read(size - 1, expect=expect)[0][:size]
        return kept.handle.pread(min(size, expect.st_size + 1), 0)

    def sha256(self, expect: os.stat_result | None) -> str:
        """The sha256 of the pinned entry's whole content, streamed with a
        checkpoint before every chunk; ``STALE`` if it is not ``expect``.
        Its start is kept for :meth:`read` of a head of the same file."""
        opened = self._open_as(expect, looked_at=True)
        handle, now = opened
        try:
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
        """How many entries the pinned directory holds (corral's own
        in-flight names not counted: no order of calls shows one)."""
        with self._target.open(os.O_RDONLY | os.O_DIRECTORY) as handle:
            return len(without_temp_names([entry.name for entry in handle.scandir()]))

    # -- acting -----------------------------------------------------------------------
    def make_parents(self) -> list[str]:
        return self._target.make_parents() if self._target.creates else []

    def unmake_parents(self, made: list[str]) -> None:
        """Remove what :meth:`make_parents` returned, while still empty."""
        self._target.unmake_parents(made)

    def parents_made(self) -> AbstractContextManager[list[str]]:
        """:meth:`make_parents` for the act in the ``with`` block (the
        directories made, given by ``as``): should the act fail, they are
        removed again while empty, so a call that changed nothing leaves
        nothing."""
        return _ParentsMade(self._target)

    def write(self, data: bytes, *, exclusive: bool, expect: os.stat_result | None,
              mode: int | None = None) -> None:
        """Atomic replace (or create) in the pinned directory, the entry
        expected to be ``expect`` (``None``: absent); ``mode``: the
        permission bits a created file gets from its first byte (a file put
        back keeps the privacy it had)."""
        kept = self._kept
        if expect is None or exclusive or kept is None:
            kept = None
        elif kept.info is not expect:  # (else the look's own fstat: the same file)
            kept = self._kept_as(expect)
        # the one arrival the write makes in its directory (a rename onto
        # the name, or a link to it) is this view's own: not looked at again
        fresh = self._call.shared.freshness
        own = fresh.expect(self._target.parent, self._target.name) \
            if fresh is not None and fresh.watching and self._target.name else None
        made = False
        try:
            if kept is not None:  # its fstat for the lstat, its fd for the metadata
                self._target.write_bytes(data, exclusive=False, replacing=kept)
            else:
                self._target.write_bytes(data, exclusive=exclusive, mode=mode,
                                         expect=None if expect is None else (expect.st_dev,
                                                                             expect.st_ino))
            made = True
        finally:
            if own is not None:
                fresh.acted(own, made=made)  # type: ignore[union-attr]

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
        _TREE.acts()  # (a patch writes the new text after: reads beside wait)
        self._target.rename(other._target, replace=replace)
        self._renamed(other, was_link)

    def replace_at(self, other: Pinned, existing: os.stat_result) -> None:
        """Rename the pinned entry onto ``other``'s name, replacing only the
        entry ``existing`` describes (a file or symlink): the two names
        swapped in one step, the entry that came back looked at and, when it
        is another (a program put its own there after the last look),
        swapped back (``STALE``), else removed.  A plain rename replaces
        whatever is there, so a file put in between the look and it would
        be lost.  Where no swap can be made (a filesystem without it), a
        plain rename right after one more look."""
        was_link = (info := self._target.lstat()) is not None and st.S_ISLNK(info.st_mode)
        decided = (existing.st_dev, existing.st_ino, st.S_IFMT(existing.st_mode))
        _TREE.acts()  # (the name holds what came back until it is removed: reads beside wait)
        try:
            self._target.rename(other._target, exchange=True)
        except FileNotFoundError:
            raise swapped(other.shown) from None  # an end gone since the look
        except OSError as exc:
            if exc.errno not in _NO_EXCHANGE:
                raise
            other.same(existing)
            self._target.rename(other._target, replace=True)
        else:
            if self.identity() != decided:
                # (the name now holds the other program's entry, the
                # destination the source: each back where it was)
                self._target.rename(other._target, exchange=True)
                raise swapped(other.shown)
            self._target.remove()
        self._renamed(other, was_link)

    def _renamed(self, other: Pinned, was_link: bool) -> None:
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
        found = self._carried_through_links(dest, kind)
        if found is not None:
            return found
        if kind == "directory":
            return view.subtree_rule(self.path, dest.path, self._checkpoint_fn(), leaving=True,
                                     shown=self.shown) or self._carried_links_rule(dest) \
                or self._carried_root()
        if kind != "symlink":
            return None
        leads = self._leads_from(dest)
        if leads is not None and view.rule(Location(leads), Op.LIST) is Kind.DENY_RULE:
            # decided on the name it leads to, never on what is there: whether
            # a denied directory holds anything (or exists) is not told
            return "", Kind.DENY_RULE, "source"
        try:
            info = view.root.stat(leads) if leads is not None else None
        except OSError:
            info = None
        if leads is None or info is None or not st.S_ISDIR(info.st_mode):
            return None  # dangling, outside or a file: it carries nothing in the root
        return view.subtree_rule(leads, dest.path, self._checkpoint_fn(), leaving=False,
                                 shown=self.shown)

    def _carried_root(self) -> tuple[str, Kind, str] | None:
        """For a move of this directory: the first directory in it (itself
        included) that is the root of a view open now, in this process or
        another (:func:`served_roots`), which the move would carry away:
        that root's Toolbox goes on deciding by the names it was opened
        with.  Its folders are looked at only when another root is served."""
        view = self._call.shared
        root = view.root
        others = served_roots() - {view.identity}
        if not others:
            return None
        backend = root.backend
        checkpoint = self._checkpoint_fn()
        # what cannot be walked is not moved: an error (out of open files
        # too) refuses the move as that error
        for dirpath, _dirs, _files, fd in root.fwalk(self.path):
            checkpoint()
            try:
                info = backend.fstat(fd)
            except OSError as exc:  # a look refused (a security module): at that folder
                raise OSError(exc.errno, exc.strerror, dirpath) from None
            if (info.st_dev, info.st_ino) in others:
                inner = dirpath[len(self.path):].lstrip("/") \
                    if self.path not in (".", "") else dirpath
                return inner, Kind.ANOTHER_ROOT, "source"
        return None

    def _carried_links_rule(self, dest: Pinned) -> tuple[str, Kind, str] | None:
        """For a move of this directory onto ``dest``: each link it holds is
        decided on what it will lead to, under its new name and the names
        known links give that (a link whose text climbs out of it leads
        elsewhere from the new place: ``p/.vscode -> ../cfg`` with ``p``
        moved to ``x/p`` leads to ``x/cfg``)."""
        view = self._call.shared
        root = view.root
        for link in [*view.links.below(self.path), *view.links.below_leading_out(self.path)]:
            inner = link[len(self.path) + 1:] if self.path not in (".", "") else link
            try:
                text = root.readlink(link)
            except (OSError, ValueError):
                continue
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(inner), text))
            named = f"{dest.path}/{inner}"
            if text.startswith("/"):
                spelled = link  # the same place from anywhere
            elif joined == ".." or joined.startswith("../"):
                spelled = posixpath.normpath(posixpath.join(dest.path, joined))
            else:  # what it leads to moves with it: looked at where it is now
                spelled = posixpath.join(self.path, joined) if self.path not in (".", "") \
                    else joined
            if spelled == ".." or spelled.startswith("../"):
                continue  # out of the root from there
            try:
                lands = locate(root, spelled, follow=True).path
            except (OSError, ValueError):
                # a link further on leads out or loops: decided on the last
                # one reached, so a denied one is not told apart by that
                end = self._call.dangling_end(spelled)
                if end is not None and view.rule(end, Op.LIST) is Kind.DENY_RULE:
                    return inner, Kind.DENY_RULE, "source"
                continue
            if view.rule(Location(lands), Op.LIST) is Kind.DENY_RULE:
                # decided on the name it leads to, never on what is there:
                # whether a denied directory exists or holds anything is not told
                return inner, Kind.DENY_RULE, "source"
            try:
                info = root.stat(lands)
            except OSError:
                continue
            rule = view.rule(Location(named), Op.MOVE_TO)
            if rule is not None:
                return inner, rule, "destination"
            if st.S_ISDIR(info.st_mode):
                found = view.subtree_rule(lands, named, self._checkpoint_fn(), leaving=False,
                                          shown=self.shown)
                if found is not None:
                    return found
        return None

    def _leads_from(self, dest: Pinned) -> str | None:
        """Where this symlink will lead once it lies at ``dest`` (canonical):
        a relative text is read from the destination's directory, not from
        where the link lies now (``p/lnk -> cfg`` moved to the top leads to
        ``cfg``); ``None``: nothing in the root."""
        root = self._call.shared.root
        try:
            text = root.readlink(self.path)
            if text.startswith("/"):  # the same place from anywhere
                return locate(root, self.path, follow=True).path
        except (OSError, ValueError):
            return None
        parent = dest.path.rpartition("/")[0]
        spelled = f"{parent}/{text}" if parent else text
        try:
            return locate(root, spelled, follow=True).path
        except (OSError, ValueError):
            # a link further on dangles (its end's directories missing):
            # where its text leads decides all the same, so whether a
            # denied directory exists is not told
            end = self._call.dangling_end(spelled)
            return end.path if end is not None else None

    def _carried_through_links(self, dest: Pinned, kind: str) -> tuple[str, Kind, str] | None:
        """What lands at ``dest`` as the known links whose chain passes
        through it will see it (``.vscode -> l1 -> editor`` with ``l1``
        replaced by a move): each such name decided, and what the moved
        entry leads to entered under it.  The links of a root this one
        lies in count too (``proj/.vscode -> web/sub/l2`` for a move onto
        ``sub`` in the root at ``proj/web``)."""
        view = self._call.shared
        judges = [(view, dest.path, "")]
        for outer, place in view.held_by:
            judges.append((outer, _below_place(place, dest.path), place))
        lands: str | None = None
        looked = False
        for judge, there, place in judges:
            if judge is not view and not judge.links_settled:
                judge.need_links(Op.MOVE_TO)
            reached = judge.links.reached_through(there)
            if not reached:
                continue
            if not looked:
                lands = self._leads_from(dest) if kind == "symlink" else self.path
                looked = True
            if lands is None:
                for name, _ in reached:
                    rule = judge.rule(Location(name), Op.MOVE_TO)
                    if rule is not None:
                        return "", rule, "destination"
                continue
            found = self._chains_rule(judge, there, _below_place(place, lands), kind, reached)
            if found is not None:
                return found
        if view.beside:
            if not looked:
                lands = self._leads_from(dest) if kind == "symlink" else self.path
            return self._chains_from_beside(dest, lands, kind)
        return None

    def _chains_from_beside(self, dest: Pinned, lands: str | None,
                            kind: str) -> tuple[str, Kind, str] | None:
        """For :meth:`_carried_through_links`: the links of a root beside
        this one leading out into it (``web/.vscode -> ../api/sub/l2`` for
        a move onto ``sub`` in ``api``), each decided by its own root's
        rules on what it will lead to."""
        view = self._call.shared
        here = view.host_real if dest.path in (".", "") else f"{view.host_real}/{dest.path}"
        landing_host = None if lands is None else \
            (view.host_real if lands in (".", "") else f"{view.host_real}/{lands}")
        for other in view.beside:
            for location, landing in other.links.outside():
                start = f"{other.host_real}/{location}"
                if landing != here and not landing.startswith(here + "/") and \
                        not host_chain_passes(start, here):
                    continue
                rule = other.rule(Location(location), Op.MOVE_TO)
                if rule is not None:
                    return "", rule, "destination"
                if landing_host is None:
                    continue
                after = host_lead_after_move(start, here, landing_host,
                                             carried=kind != "symlink")
                inner = None if after is None else _within_host(after, view.host_real)
                if inner is None:
                    continue
                found = self._seen_from(other, location, inner)
                if found is not None:
                    return found
        return None

    def _seen_from(self, other: View, name: str, inner: str) -> tuple[str, Kind, str] | None:
        """The first entry of this root's ``inner`` that ``other``'s rules
        cover as seen under its ``name`` (a link of its leading here)."""
        root = self._call.shared.root
        try:
            if not st.S_ISDIR(root.stat(inner).st_mode):
                return None
            inner = locate(root, inner, follow=True).path
        except (OSError, ValueError):
            return None
        for dirpath, dirnames, filenames in root.walk(inner):
            self._call.checkpoint()
            below = dirpath[len(inner):].lstrip("/")
            for entry in (*dirnames, *filenames):
                seen = f"{name}/{below}/{entry}" if below else f"{name}/{entry}"
                rule = other.rule(Location(seen), Op.MOVE_TO)
                if rule is not None:
                    return "", rule, "destination"
        return None

    def _chains_rule(self, judge: View, there: str, lands: str, kind: str,
                     reached: list[tuple[str, str]]) -> tuple[str, Kind, str] | None:
        """For :meth:`_carried_through_links`, in one root's view (``there``
        and ``lands`` in its names)."""
        for name, rest in reached:
            rule = judge.rule(Location(name), Op.MOVE_TO)
            if rule is not None:
                return "", rule, "destination"
            after = lead_after_move(judge.root, name, there, lands, carried=kind != "symlink")
            if after is not None:
                inner = after
            elif rest == ".." or rest.startswith("../"):
                if kind != "symlink":
                    continue  # a real entry's ``..`` is its new parent's: the chain ends as before
                inner = posixpath.normpath(f"{lands}/{rest}")  # ``lands`` is canonical
                if inner == ".." or inner.startswith("../"):
                    continue  # out of the root: nothing the tools write
            else:
                inner = f"{lands}/{rest}" if rest else lands
            try:
                info = judge.root.stat(inner)
                inner = locate(judge.root, inner, follow=True).path  # the walk's own names
            except (OSError, ValueError):
                continue
            if st.S_ISDIR(info.st_mode):
                found = judge.subtree_rule(inner, name, self._checkpoint_fn(), leaving=False,
                                           shown=self.shown)
                if found is not None:
                    return found
        return None

    def _checkpoint_fn(self) -> Checkpoint:
        return self._call.checkpoint


def _below_place(place: str, path: str) -> str:
    """``path`` of a root lying at ``place`` of another, in the other's names."""
    if place in (".", ""):
        return path
    return place if path in (".", "") else f"{place}/{path}"


def _within_host(path: str, base: str) -> str | None:
    """The real host ``path`` as a path of the root at ``base`` (``None``:
    outside it)."""
    if path == base:
        return "."
    top = base.rstrip("/") + "/"
    return path[len(top):] if path.startswith(top) else None
