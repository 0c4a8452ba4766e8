"""The view as one call sees it: its steps (a pin, a move, a group of
paths) and its reads, each decided on what its one resolution reached."""

from __future__ import annotations

import codecs
import errno
import fcntl
import os
import stat as st
import threading
from weakref import ref as weak_ref
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from types import TracebackType
from typing import NamedTuple, NoReturn, Protocol

from ....contained import (Backend, DirEntry, EscapeError, HeldParent, Handle, PathError,
                           Target)
from ..._policy.gitdirs import names_a_shape_entry
from ..._policy.locate import Location
from ..._policy.rules import Op
from ..._refusals.catalogue import Refusal, entry_kind, reentered, swapped
from ..request_types import Request
from ..view_read import Entry, Lead, OpenFile
from ..view_walk import LinkEnd, without_temp_entries
from .decide import _ADDING, _RUNNING, TreeChanges, View, _Call, _Step, running_call
from .links import chain_end, locate
from .locks import (_RELEASED_BY_CLOSE, _TABLE, _TREE, ASKING, TREE_EXCLUSIVE, TREE_SHARED,
                    Checkpoint, Identity, LockKey, _Flock, _flock, _flocked)
from .tree_lock import SharedHold, _changes_here, drop_shared, take_shared, tree_file_lock
from .pinned import _PLAIN_NAMES, Pinned


class Host(Protocol):
    """What a call's view needs of the call: its bounds and its host."""

    def checkpoint(self) -> None: ...

    @property
    def tool(self) -> str: ...

    @property
    def asks_host(self) -> bool: ...

    def authorize(self, request: Request) -> None: ...


#: opens a link's end to name it: no read access needed, no FIFO waited on
_LOOK_FLAGS = getattr(os, "O_PATH", 0) or os.O_RDONLY


class Want(NamedTuple):
    """One path of a :meth:`CallView.pin_group` step and what is done there."""

    rel: str
    op: Op
    field: str = "path"
    follow: bool = False
    create_parents: bool = False

    @property
    def label(self) -> str:
        return self.rel.rstrip("/") or "."


def _names_git_entry(rel: str, op: Op) -> bool:
    """Whether a step doing ``op`` on ``rel`` may create an entry git's
    repository test reads (the names it creates are those spelled): such a
    step holds the tree lock exclusively."""
    return op in _ADDING and names_a_shape_entry(rel)


class _AgainFollowing(Exception):
    """:meth:`CallView.pin` makes its step again, looking for a link at the
    final name and following it (raised before the step is given)."""


class _AgainAlone(Exception):
    """:meth:`CallView.pin` makes its step again with the tree lock held
    exclusively: it makes parent directories, one ``mkdir`` at a time, and
    no other step or walk of this process may see the chain half made (a
    folder empty that the call leaves holding one, a link count between)."""


class _SharedStep:
    """:meth:`CallView.pin`'s step with the tree lock shared (every tool
    that changes one file comes here), written out as a context manager:
    taken in :meth:`__enter__` (the tree lock, this process's then other
    processes', one resolution, the directory's lock, the decision), let
    go in the reverse order by :meth:`__exit__`, or at once if taking
    fails part way.  With ``follow`` (the common edit: no link at the
    final name) the lstat that looks for a link is left out and the file
    is opened under the lock instead; a link found there (``ELOOP``), or
    a refusal, makes the step again as it always was, following it.  The
    directory's ``flock``, taken on the resolution's own fd, is recorded
    by the step itself (its fd, in the call's list of held places)."""

    __slots__ = ("_call", "_rel", "_op", "_label", "_field", "_follow", "_create_parents",
                 "_shared", "_tree", "_target", "_key", "_flocked", "_lock_fd", "_pinned",
                 "_alone")

    def __init__(self, call: CallView, rel: str, op: Op, label: str, field: str, *,
                 follow: bool, create_parents: bool) -> None:
        self._call = call
        self._rel = rel
        self._op = op
        self._label = label
        self._field = field
        self._follow = follow
        self._create_parents = create_parents
        # what is held, each let go (and cleared) in the reverse order
        self._shared = False  # this process's tree lock
        self._tree: SharedHold | None = None  # other processes' tree lock
        self._target: Target | None = None
        self._key: LockKey | None = None  # the directory's thread lock
        self._flocked: _Flock | None = None  # the directory's lock taken the general way
        self._lock_fd = -1  # or taken on the target's own fd (released by its close)
        self._pinned: Pinned | None = None
        self._alone: AbstractContextManager[Pinned] | None = None  # made again exclusively

    def identity(self) -> tuple[int, int] | None:
        """The (device, inode) of the directory locked on the target's own
        fd (``None``: not locked that way)."""
        target = self._target
        if self._lock_fd < 0 or target is None:
            return None
        return target.held_identity()

    def __enter__(self) -> Pinned:
        try:
            return self._enter()
        except _AgainAlone:
            self._let_go()
        alone = self._alone = self._call._pin_exclusive(
            self._rel, self._op, self._label, self._field, follow=self._follow,
            create_parents=True)
        return alone.__enter__()

    def _enter(self) -> Pinned:
        if self._follow:
            try:
                return self._take(opening_final=True)
            except _AgainFollowing:
                self._let_go()
            except BaseException:
                self._let_go()
                raise
        try:
            return self._take(opening_final=False)
        except BaseException:
            self._let_go()
            raise

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        alone, self._alone = self._alone, None
        if alone is not None:
            alone.__exit__(kind, value, tb)
            return
        self._let_go()

    def _take(self, *, opening_final: bool) -> Pinned:
        """Take the step; what was taken before a failure is the caller's
        to let go.  ``opening_final``: the final name is not looked at for
        a link when resolved; it is opened (``O_NOFOLLOW``) once decided,
        and :class:`_AgainFollowing` raised if a link is there or the
        decision refuses.  Written out straight (every write and edit
        passes here): the locks in their order, one resolution, the
        directory's lock, the pin, the decision."""
        call = self._call
        checkpoint = call.checkpoint
        view = call._view
        root = view._root
        backend = view.backend
        op = self._op
        _TREE.take_shared(checkpoint)
        self._shared = True
        hold = self._tree = take_shared(view._identity or view.identity, backend, checkpoint)
        if (hold.moves is not None and hold.moves != view.moves_seen) or \
                _changes_here[0] != view.changes_seen or (
                    (view.nested_in or view.opened_beneath or view.beside)  # view.held
                    and view.others_behind()):
            # another Toolbox moved something (here, or in a root holding
            # this one or beside it, whose links rule here too): links again
            view.catch_up(hold, checkpoint)
        rel, follow = self._rel, self._follow
        try:
            target = self._target = root.target(
                rel, follow_final=follow, create_parents=self._create_parents, lockable=True,
                look_at_final=not opening_final, identify=False)
        except OSError as exc:
            call._target_failed(exc, rel, op, self._label, self._field, follow=follow,
                                look_at_final=not opening_final)
            raise
        if target.creates:
            raise _AgainAlone()  # parents to make: alone (rare, a new folder)
        by_path = call._by_path
        if not call._held and not by_path:  # the call's first step: nothing held
            # the flock, taken on the step's own fd (released by its close),
            # excludes any other step on that directory, in this process too
            fd = target.lock_fd()
            if fd >= 0:
                try:
                    backend.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    fd = -1  # held, or no locks there: taken (or not) the general way
                else:
                    _RELEASED_BY_CLOSE.add(fd)
                    self._lock_fd = fd
                    by_path.append(self)
            if fd < 0:
                _not_the_askers(target.held_identity())
                flocked = self._flocked = _flock(target, backend, checkpoint,
                                                 release_by_closing=True, holds=call._holds)
                by_path.append(flocked)
                if flocked.fd < 0:
                    self._lock_by_thread(target.held_identity(), checkpoint)
        else:
            # the call holds a directory already: this one's identity says
            # whether it is the same (an fstat then)
            key = target.held_identity()
            if not call._holds(key):
                _not_the_askers(key)
                flocked = self._flocked = _flock(target, backend, checkpoint,
                                                 release_by_closing=True, holds=call._holds)
                by_path.append(flocked)
                if flocked.fd < 0:
                    self._lock_by_thread(key, checkpoint)
        pinned = self._pinned = Pinned(call, target, self._label, self._field, rel,
                                       follows=follow)
        pinned._act = op  # its _Step made only if the names it acts on are git's
        if opening_final:
            try:
                pinned.decide(op)
            except Refusal:
                raise _AgainFollowing() from None
            if not pinned.opened_final():
                raise _AgainFollowing()
        else:
            pinned.decide(op)
        return pinned

    def _lock_by_thread(self, key: Identity, checkpoint: Checkpoint) -> None:
        """A filesystem without locks: a thread lock of this process
        instead, keyed by the directory's identity as a step on several
        places keys it (one directory, whichever root or path reaches it,
        is one lock); held by the call from here."""
        _TABLE.take(key, checkpoint, self._call._holds)
        self._key = key
        self._call._held.add(key)

    def _let_go(self) -> None:
        """Let go of what is held, in the reverse order it was taken
        (each step runs whatever the one before raised)."""
        call = self._call
        pinned, self._pinned = self._pinned, None
        try:
            if pinned is not None:
                pinned.end()
        finally:
            try:
                fd = self._lock_fd
                if fd >= 0:  # locked on the target's own fd: its close releases it
                    self._lock_fd = -1
                    call._by_path.remove(self)
                    _RELEASED_BY_CLOSE.discard(fd)  # before the number can be reused
                else:
                    flocked, self._flocked = self._flocked, None
                    key, self._key = self._key, None
                    try:
                        if flocked is not None:
                            call._by_path.remove(flocked)
                            flocked.release()  # closes the target where that lets the lock go
                    finally:
                        if key is not None:
                            call._held.discard(key)
                            _TABLE.drop(key)
            finally:
                target, self._target = self._target, None
                try:
                    if target is not None:
                        target.close()  # idempotent
                finally:
                    tree, self._tree = self._tree, None
                    try:
                        if tree is not None and tree.file is not None:
                            drop_shared(tree, call._view.backend)
                    finally:
                        if self._shared:
                            self._shared = False
                            _TREE.drop_shared()


# the decisions each plain step stands for, remembered as plain
_PLAIN_REPLACE = (Op.CREATE, Op.REPLACE)
_PLAIN_EDIT = (Op.EDIT,)

#: what a plain step's start (:func:`_plain_start`) holds for the step:
#: other processes' tree lock (this process's is taken with it), the
#: file's directory held by one resolution, and that directory's fd, whose
#: close lets its ``flock`` go
_PlainHold = tuple[SharedHold, HeldParent, int]


def _not_the_askers(key: Identity) -> None:
    """Before a wait for the directory ``key``'s lock: refuse a call made
    from a host's ``authorize`` at once where the asking call holds it (the
    wait would last until this call's deadline)."""
    asker = ASKING.get()
    if asker is not None and asker.holds(key):
        asker.refuse("a lock on a folder it holds (where it acts)")


class _Asking:
    """A call waiting on its host's answer with its step's locks held, as a
    call made from the host's ``authorize`` sees it (:data:`ASKING`)."""

    __slots__ = ("_call", "_tool", "_path")

    def __init__(self, call: CallView, tool: str, path: str) -> None:
        self._call = call
        self._tool = tool
        self._path = path

    def tree_held(self) -> int:
        call = self._call
        if call._exclusive:
            return TREE_EXCLUSIVE
        # every step holding the tree shared holds the directory it acts in
        return TREE_SHARED if call._held or call._by_path else 0

    def holds(self, key: Identity) -> bool:
        return self._call._holds(key)

    def refuse(self, needs: str) -> NoReturn:
        raise reentered(self._tool, self._path, needs)


class _HeldPlace(Protocol):
    """A directory lock a call holds on one place: its identity, looked at
    when the call takes a step on a second one."""

    def identity(self) -> tuple[int, int] | None: ...


def ready(view: View, call: Callable[[], _Call | None], acts: bool = True) -> None:
    """:meth:`CallView.ready` of the call ``call`` (a weak reference to an
    object with a ``checkpoint``) on ``view``: what other programs changed
    taken in."""
    _RUNNING.set(call)  # a wait for that walk polls this call's checkpoint (running_call)
    fresh = view.freshness
    if fresh is not None:
        fresh.catch_up(acts)
    if view.nested_in or view.opened_beneath or view.beside:
        view.notice_others()


_SHAPED_KEPT = 4096  # paths remembered (then forgotten at once)
_SHAPED_CHARS = 512  # longer paths are looked at afresh each time
# path as spelled -> whether a component is named as an entry of git's
# repository test (:func:`names_a_shape_entry`): a fact of the names alone
_SHAPED: dict[str, bool] = {}


def _remember_shaped(rel: str) -> bool:
    shaped = names_a_shape_entry(rel)
    if len(rel) <= _SHAPED_CHARS:
        if len(_SHAPED) >= _SHAPED_KEPT:
            _SHAPED.clear()
        _SHAPED[rel] = shaped
    return shaped


def _plain_start(view: View, checkpoint: Checkpoint, rel: str, ops: tuple[Op, ...]
                 ) -> _PlainHold | None:
    """The start every plain step on ``rel`` for ``ops`` takes, for a call
    that holds nothing, as the general step takes it.  Known before it
    takes a lock: every link of the tree known and none is, no root holds
    or neighbours this one, the policy's verdicts on ``rel`` for ``ops``
    remembered as plain, its names none of git's, and (where the policy
    guards repositories) names git reads of a common directory none of
    them.  Then this process's tree lock shared, then other processes', no
    move made meanwhile and nothing it weighed changed, one resolution of
    the directory (no link followed), that directory's ``flock``, and
    (where the policy guards repositories) no ``HEAD`` beside the file:
    remembered by the watch while no event but this view's own arrivals
    of other names came (:meth:`Freshness.holds_fact`), else looked at.
    What it holds, for :func:`_plain_end` to let go; ``None``, everything
    let go, where any of that does not hold.  (One function, the checks
    written out: every plain write and edit passes here.)"""
    if not view.links_settled or view.links.locations or view.nested_in or \
            view.opened_beneath or view.beside:
        return None
    shaped = _SHAPED.get(rel)
    if shaped is None:
        shaped = _remember_shaped(rel)
    if shaped:
        return None
    policy = view.policy
    guards_git = False
    if not policy.is_empty:
        remembered_for, plain = view._plain_memo
        if remembered_for is not policy or view.python_place is not None:
            return None
        for op in ops:
            if plain.get((rel, op)) is not True:
                return None
        guards_git = policy.guards_git
        if guards_git and not _PLAIN_NAMES.get(rel):
            return None  # names git reads of a common directory: looked at in full
    _TREE.take_shared(checkpoint)
    tree: SharedHold | None = None
    held: HeldParent | None = None
    locked = -1
    try:
        tree = take_shared(view._identity or view.identity, view.backend, checkpoint)
        if (tree.moves is not None and tree.moves != view.moves_seen) or \
                _changes_here[0] != view.changes_seen or view.policy is not policy or \
                view.links.locations or not view.links_settled:
            return None  # learnt again (a move), or changed since: the general step's
        held = view._root.hold_parent(rel)
        if held is None or held.path != rel or not held.lock():
            return None
        locked = held.fileno()
        _RELEASED_BY_CLOSE.add(locked)
        if guards_git:
            fresh = view.freshness
            if held.holds("HEAD") if fresh is None else \
                    fresh.holds_fact(held, rel.rpartition("/")[0], "HEAD"):
                return None  # maybe a repository: looked at in full
        hold = tree, held, locked
        tree = None  # the step's now
        return hold
    finally:
        if tree is not None:
            _plain_end(tree, held, locked, view.backend)
        elif held is None:
            _TREE.drop_shared()  # (other processes' lock was not taken)


def _plain_end(tree: SharedHold, held: HeldParent | None, locked: int,
               backend: Backend) -> None:
    """Let go of what :func:`_plain_start` took, in the reverse order (each
    step runs whatever the one before raised)."""
    try:
        if held is not None:
            if locked >= 0:
                _RELEASED_BY_CLOSE.discard(locked)  # before the number is reused
            held.close()
    finally:
        try:
            if tree.file is not None:
                drop_shared(tree, backend)
        finally:
            _TREE.drop_shared()


def edit_plain(view: View, checkpoint: Checkpoint, rel: str, limit: int,
               prepare: Callable[[os.stat_result, bytes], bytes | None]) -> bool:
    """An edit of the regular file at ``rel`` (a :meth:`CallView.pin` for
    ``EDIT`` following a final link made of it otherwise), for a call that
    holds nothing, made in one straight step where every fact the general
    step would weigh is known to allow it, the policy's verdict on ``rel``
    for ``EDIT`` remembered as plain (:func:`_plain_start`).  The file
    there is opened (a regular file of one link, at most ``limit`` bytes;
    a link at the final name, which the general step would follow, is not
    opened) and read whole from that fd; ``prepare(info, data)`` (its
    ``fstat``, its bytes) gives the bytes to write, replacing that file on
    its identity (``STALE`` where another is there by then), or ``None``:
    nothing written.  Whether it was written; ``False``, everything let
    go, where any of that does not hold: the caller takes the general
    step."""
    hold = _plain_start(view, checkpoint, rel, _PLAIN_EDIT)
    if hold is None:
        return False
    tree, held, locked = hold
    try:
        # refused, or made with a warning, as the general step says (a
        # file not such, or not read: said, or not, as it says it)
        opened = held.read_regular(limit)
        if opened is None or len(opened[1]) > limit:
            return False
        new = prepare(*opened)
        if new is None:
            return False
        # the one arrival the rename makes in its (held) directory is this
        # view's own, not looked at again (one that failed is looked at)
        fresh = view.freshness
        if fresh is None:
            held.replace(new)
        else:
            fresh.replace_own(held, rel[:len(rel) - len(held.name) - 1], new)
        return True
    finally:
        _plain_end(tree, held, locked, view.backend)


#: the byte order marks of UTF-8 and the wide encodings: a head starting
#: with none of them and holding no "\r" is a plain file's (no form to keep)
BYTE_ORDER_MARKS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE,
                    codecs.BOM_UTF32_BE)
#: the carriage return as the int ``in`` looks for (``b"\r" in head`` first
#: tries the needle as an int, making and dropping a TypeError)
_CR = ord("\r")


def replace_plain(view: View, checkpoint: Checkpoint, rel: str, data: bytes, below: int,
                  head_size: int) -> os.stat_result | None:
    """A replace by ``data`` of the regular file at ``rel`` (a create or
    replace by :meth:`CallView.pin` made of it otherwise), for a call that
    holds nothing, made in one straight step where every fact the general
    step would weigh is known to allow it (:func:`_plain_start`).  Taken
    as the general step takes it: this process's tree lock shared, then
    other processes', no move made meanwhile, one resolution of its
    directory (no link followed), that directory's ``flock``, the file
    opened: a regular file of one link, smaller than ``below`` bytes,
    whose first ``head_size`` bytes (none asked: none read) show no form
    to keep (no ``\r``, no byte order mark: :data:`BYTE_ORDER_MARKS`).
    Then ``checkpoint`` a last time and that file replaced on its identity
    (``STALE`` where another is there by then).  Its ``fstat`` (the file
    replaced); ``None``, nothing written and everything let go, where any
    of that does not hold: the caller takes :meth:`CallView.pin`, which
    decides (and waits) the general way."""
    hold = _plain_start(view, checkpoint, rel, _PLAIN_REPLACE)
    if hold is None:
        return None
    tree, held, locked = hold
    try:
        opened = held.open_regular(below, head_size)
        if opened is None:
            return None
        info, head = opened
        if _CR in head or head.startswith(BYTE_ORDER_MARKS):
            return None  # a form to keep: looked at in full
        checkpoint()  # the last one: stopped now, nothing is written
        # the one arrival the rename makes in its (held) directory is this
        # view's own, not looked at again (one that failed is looked at)
        fresh = view.freshness
        if fresh is None:
            held.replace(data)
        else:
            fresh.replace_own(held, rel[:len(rel) - len(held.name) - 1], data)
        return info
    finally:
        _plain_end(tree, held, locked, view.backend)


def open_read(view: View, rel: str, checkpoint: Checkpoint, op: Op = Op.READ, *,
              shown: str | None = None, field: str = "path",
              follow: bool = True) -> OpenFile:
    """Open ``rel`` for reading (one resolution; ``follow=False``: a
    final symlink is ``ELOOP``) and decide ``op`` on what was opened:
    its canonical path, and every denied or secret name that leads to
    it through a known link (the links this path passed learnt).  A
    refusal closes it again; when the open fails, a refusal by policy
    on where the path leads wins over the error (a denied name is not
    said to be missing).  A read holds no lock, so a call that holds
    nothing (a plain run) opens with this as :meth:`CallView.open_read` does;
    but where a step of this process holding the tree alone acted
    meanwhile (a move's swap and removal, a patch's rename and rewrite:
    states no order of the calls shows), it opens again holding the tree
    shared (``checkpoint`` bounds the wait)."""
    sequence = _TREE.sequence
    try:
        opened = _open_read(view, rel, op, shown, field, follow)
    except BaseException:
        if _undisturbed(sequence):
            raise
    else:
        if _undisturbed(sequence):
            return opened
        opened.close()
    with _TREE.shared(checkpoint):
        return _open_read(view, rel, op, shown, field, follow)


def _undisturbed(sequence: int) -> bool:
    """Whether a read that began at ``sequence`` saw no act of a step
    holding the tree alone, or that step is its own."""
    return (sequence == _TREE.sequence and not sequence & 1) or _holds_tree_alone()


def _holds_tree_alone() -> bool:
    """Whether the step holding the tree alone is this read's own (its
    thread, or the call whose host this read was made from): what it
    opened is that step's own state, and waiting on it would wait on
    itself."""
    if _TREE.writer_thread == threading.get_ident():
        return True
    asker = ASKING.get()
    return asker is not None and asker.tree_held() == TREE_EXCLUSIVE


def _open_read(view: View, rel: str, op: Op, shown: str | None, field: str,
               follow: bool) -> OpenFile:
    """:func:`open_read`'s one open and decision."""
    label = shown if shown is not None else (rel.rstrip("/") or ".")
    root = view.root
    try:
        handle = root.open_handle(rel, os.O_RDONLY if follow else
                                  os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        _refuse_by_policy(view, exc, rel, op, label, field, follow)
        raise
    try:
        view.check_reached(handle.path, op, shown=label, field=field)
        if handle.path != label.removeprefix("./"):
            # through a link or a '..': the names on the way are decided
            # too (a denied link's target, a denied directory passed)
            view.check(locate(root, rel, follow=follow), op, shown=label, field=field)
    except BaseException:
        handle.close()
        raise
    return OpenFile(handle, view.backend, label)


def _failed_at(view: View, rel: str, follow: bool) -> Location | None:
    """Where a path whose one resolution failed leads, for the policy to
    decide on, or ``None`` where that cannot be established.  Where the
    planning resolution stops (a link leading out or looping, a file met
    as a directory) is that place when a rule hides it; a final link
    that cannot be followed is else the link itself: a denied name
    answers as a denied file does, whatever it is."""
    root = view.root
    try:
        return locate(root, rel, follow=follow)
    except OSError as exc:
        there = _hidden_stop(view, exc)
    if there is not None or not follow:
        return there
    try:
        return locate(root, rel, follow=False)
    except OSError as exc:
        return _hidden_stop(view, exc)


def _hidden_stop(view: View, stopped: OSError) -> Location | None:
    """The place a resolution stopped at (with what it passed), when a
    rule hides it; else ``None``."""
    if not isinstance(stopped, PathError) or not stopped.component:
        return None
    # an escape by '..' names only the '..' that left: what it passed decides
    place = "." if stopped.component == ".." or stopped.component.endswith("/..") \
        else stopped.component
    there = Location(place, (), stopped.passed)
    return there if view.rule(there, Op.SEARCH) is not None else None


def _refuse_by_policy(view: View, exc: OSError, rel: str, op: Op, shown: str, field: str,
                      follow: bool) -> None:
    """When a read's one resolution failed with ``exc``: a refusal by
    policy on where ``rel`` leads wins over the error (a denied name is
    not said to be missing); returns when the policy allows it, and the
    caller raises ``exc``."""
    if isinstance(exc, EscapeError):
        return
    where = _failed_at(view, rel, follow)
    if where is not None:
        view.check(where, op, shown=shown, field=field)


class CallView:
    """The view as one call sees it: its deadline, its locks (re-entrant
    within the call), its host."""

    #: the steps of this call holding the tree exclusively (rare: an
    #: instance's own count made only by them)
    _exclusive = 0

    def __init__(self, view: View, host: Host) -> None:
        self._view = view
        self.shared = view  # the view every call of the Toolbox shares
        # the call holds this view: a weak reference back keeps the two out
        # of a reference cycle, so both are freed when the call ends rather
        # than left to the garbage collector after every call
        self._host_ref = weak_ref(host)
        self._held: set[Identity] = set()
        # the directories this call's steps on one place locked (keyed by
        # where they are, their identity not looked at unless needed)
        self._by_path: list[_HeldPlace] = []

    def ready(self, acts: bool = True) -> None:
        """Take in what other programs changed where the view's picture
        rests (``acts``: the call may change files after this; one that
        does not lets the next call ask whether anything changed before it
        reads what).  A walk for the links beyond the look at open may be
        under way: it is not waited for here, only by a decision those
        links could change (:meth:`View.need_links`)."""
        # (:func:`ready`, written out: every call that is not a plain run passes here)
        view = self._view
        _RUNNING.set(self._host_ref)  # a wait for that walk polls this call's checkpoint
        fresh = view.freshness
        if fresh is not None:
            fresh.catch_up(acts)
        if view.nested_in or view.opened_beneath or view.beside:
            view.notice_others()

    def runs(self) -> None:
        """This call runs in this context from now on (:meth:`ready` made
        for it already, by a plain run of the same call)."""
        running_call(self._host_ref)

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
        host = self._host
        asks = host.asks_host
        places = [pin.place() for pin in pins] if asks and same_place else None
        host.authorize(request)
        if places is not None:
            for pin, place in zip(pins, places):
                pin.ensure_place(place)
        if asks:  # otherwise the locks were held throughout: no window
            fresh = self._view.freshness
            if fresh is not None:
                fresh.catch_up()  # what other programs changed while the host decided
            for pin in pins:
                pin.release()  # what is there now is opened afresh
                pin.decide_again()

    def hear(self, authorizer: Callable[[Request], object], request: Request) -> object:
        """The host's ``authorizer`` asked about ``request`` (whatever this
        call holds meanwhile): a call the host makes from it is known as
        one, so it never waits for a lock this call holds."""
        asking = ASKING.set(_Asking(self, self._host.tool, request.path))
        try:
            return authorizer(request)
        finally:
            ASKING.reset(asking)

    def edit_plain(self, rel: str, limit: int,
                   prepare: Callable[[os.stat_result, bytes], bytes | None]) -> bool:
        """:func:`edit_plain` for this call, where it holds nothing yet
        (``False`` otherwise: the general step's)."""
        if self._held or self._by_path:
            return False
        return edit_plain(self._view, self.checkpoint, rel, limit, prepare)

    def pin(self, rel: str, op: Op, *, field: str = "path", shown: str | None = None,
            follow: bool = False, create_parents: bool = False
            ) -> AbstractContextManager[Pinned]:
        """One step on ``rel``: the tree lock shared, one resolution, the
        lock of the directory it acts in, ``op`` decided on what was
        reached (the caller decides more ops on the same pin)."""
        label = shown if shown is not None else (rel.rstrip("/") or ".")
        if op is Op.DELETE or (op in _ADDING and names_a_shape_entry(rel)):
            # rare: the tree held exclusively (_names_git_entry, written out)
            return self._pin_exclusive(rel, op, label, field, follow=follow,
                                       create_parents=create_parents)
        return _SharedStep(self, rel, op, label, field, follow=follow,
                           create_parents=create_parents)

    @contextmanager
    def _pin_exclusive(self, rel: str, op: Op, label: str, field: str, *, follow: bool,
                       create_parents: bool) -> Iterator[Pinned]:
        """:meth:`pin`'s step with the tree lock held exclusively: a step
        that may create an entry git's repository test reads (see _Step),
        or a delete (a link or a directory removed changes where other
        links lead: counted, as a move is, for other Toolboxes to see)."""
        with ExitStack() as stack:
            stack.enter_context(_TREE.exclusive(self.checkpoint))
            self._hold_exclusive(stack)
            changes = stack.enter_context(self._view.tree_lock(exclusive=True,
                                                               checkpoint=self.checkpoint))
            target = stack.enter_context(self._resolve(rel, op, label, field, follow=follow,
                                                       create_parents=create_parents))
            if op is Op.DELETE:
                info = target.lstat()
                if info is not None and (st.S_ISLNK(info.st_mode) or st.S_ISDIR(info.st_mode)):
                    changes.count()
            self._lock(stack, (target,))
            pinned = Pinned(self, target, label, field, rel, follows=follow)
            stack.callback(pinned.end)
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
            self._hold_exclusive(stack)
            changes = stack.enter_context(self._view.tree_lock(exclusive=True, moves=True,
                                                               checkpoint=self.checkpoint))
            src_t = stack.enter_context(self._resolve(src, Op.MOVE_FROM, label, "source"))
            source = Pinned(self, src_t, label, "source", src)
            stack.callback(source.end)
            # decided before ``dst`` looks at the source (its kind, a '/'
            # it was spelled with): what a denied name holds is never said
            source.decide(Op.MOVE_FROM)
            dst_rel = dst(source)
            dst_label = dst_rel.rstrip("/") or "."
            dst_t = stack.enter_context(self._resolve(dst_rel, Op.MOVE_TO, dst_label,
                                                      "destination",
                                                      create_parents=create_parents))
            self._hold_roots_on_the_way(stack, (src_t, dst_t), changes)
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
            if exclusive:
                self._hold_exclusive(stack)
            changes = stack.enter_context(self._view.tree_lock(
                exclusive=exclusive, moves=moves, checkpoint=self.checkpoint))
            targets = [stack.enter_context(self._resolve(
                want.rel, want.op, want.label, want.field, follow=want.follow,
                create_parents=want.create_parents)) for want in wants]
            if moves:
                self._hold_roots_on_the_way(stack, targets, changes)
            self._lock(stack, tuple(targets))
            step = _Step(exclusive=exclusive)  # decided as one: the tree the step leaves
            pins = []
            for want, target in zip(wants, targets):
                pinned = Pinned(self, target, want.label, want.field, want.rel,
                                follows=want.follow)
                stack.callback(pinned.end)
                step.add(pinned, want.op)
                pins.append(pinned)
            for want, pinned in zip(wants, pins):
                pinned.decide(want.op)
            yield pins

    def _hold_roots_on_the_way(self, stack: ExitStack, targets: Sequence[Target],
                               changes: TreeChanges) -> None:
        """For a move: hold exclusively the tree lock of each root another
        view serves now that lies on the way to one of ``targets`` (the
        lock other processes see is per root: a process serving ``web``
        must not write into ``web/sub`` while a move here carries it onto
        ``.vscode``), inner to this root's, before any folder's lock."""
        view = self._view
        for key in view.served_on_the_way((target.path for target in targets),
                                          changes.served):
            stack.enter_context(tree_file_lock(key, view.root.backend, exclusive=True,
                                               checkpoint=self.checkpoint))

    def _hold_exclusive(self, stack: ExitStack) -> None:
        """Count a step holding the tree exclusively until ``stack`` closes."""
        self._exclusive += 1
        stack.callback(self._let_go_exclusive)

    def _let_go_exclusive(self) -> None:
        self._exclusive -= 1

    @contextmanager
    def _resolve(self, rel: str, op: Op, shown: str, field: str, *, follow: bool = False,
                 create_parents: bool = False) -> Iterator[Target]:
        with self._target(rel, op, shown, field, follow=follow,
                          create_parents=create_parents) as target:
            yield target

    def _target(self, rel: str, op: Op, shown: str, field: str, *, follow: bool = False,
                create_parents: bool = False, look_at_final: bool = True,
                identify: bool = True) -> Target:
        """The one resolution; when it fails, a refusal by policy on where
        the path leads wins over the error (a denied name is not said to be
        missing)."""
        try:
            return self._view.root.target(rel, follow_final=follow,
                                          create_parents=create_parents, lockable=True,
                                          look_at_final=look_at_final, identify=identify)
        except OSError as exc:
            self._target_failed(exc, rel, op, shown, field, follow=follow,
                                look_at_final=look_at_final)
            raise

    def _target_failed(self, exc: OSError, rel: str, op: Op, shown: str, field: str, *,
                       follow: bool, look_at_final: bool) -> None:
        """When the one resolution failed with ``exc``: a refusal by policy
        on where ``rel`` leads, else :class:`_AgainFollowing` where the final
        name was not looked at; returns when the caller raises ``exc``."""
        if isinstance(exc, EscapeError):
            return
        if not look_at_final:
            raise _AgainFollowing() from None  # the error as the full step says it
        where = _failed_at(self._view, rel, follow)
        if where is None:
            raise exc from None
        self._view.check(where, op, shown=shown, field=field)

    def _lock(self, stack: ExitStack, targets: tuple[Target, ...]) -> None:
        """Lock the directory each target acts in (deduplicated, sorted;
        those this call holds already are not taken again)."""
        wanted: dict[Identity, Target] = {}
        for target in targets:
            key = target.held_identity()
            if not self._holds(key):
                wanted.setdefault(key, target)
        for key in wanted:
            _not_the_askers(key)
        for key in sorted(wanted):
            stack.enter_context(_TABLE.hold(key, self.checkpoint, self._holds))
            stack.enter_context(_flocked(wanted[key], self._view.root.backend,
                                                 self.checkpoint, self._holds))
            self._held.add(key)
            stack.callback(self._held.discard, key)

    def _holds(self, key: Identity) -> bool:
        """Whether this call holds the directory ``key`` (device, inode)
        already: by a step on several places, or by a step on one (its
        locked fd looked at now)."""
        return key in self._held or any(held.identity() == key for held in self._by_path)

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
        """The entries of the directory ``rel`` (unsorted), but corral's own
        in-flight names (:func:`~corral.contained.is_temp_name`: no order of
        calls shows one, so no answer names one)."""
        return without_temp_entries(self._view.root.scandir(rel))

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
        spelled = self.link_spelling(dir_fd, directory, name)
        return LinkEnd.OTHER if spelled is None else self.spelled_link_end(spelled, op)

    def dangling_end(self, rel: str) -> Location | None:
        """Where the symlink ``rel`` would lead were the directories its text
        names there: its text joined to its directory and resolved once,
        planning the missing ones (through each link such a text names in
        turn), so a rule is decided on a dangling link as on a whole one and
        whether a hidden directory exists is not told.  Where the chain
        leaves the root or loops, the last link it reached (a denied link
        leading out rules as a denied file there would: whether it leads
        out is not told); ``None`` where no link was reached."""
        return chain_end(self._view.root, rel)

    def link_spelling(self, dir_fd: int, directory: str, name: str) -> str | None:
        """The text of the symlink ``name`` in the canonical ``directory``
        (held open as ``dir_fd``), joined to that directory: the path it
        leads to as spelled; ``None`` for an unreadable, empty or absolute
        text (an escape to the core)."""
        try:
            text = self._view.root.backend.readlink_at(dir_fd, name)
        except (OSError, ValueError):
            return None
        if not text or text.startswith("/"):
            return None
        return text if directory in (".", "") else f"{directory}/{text}"

    def spelled_link_end(self, spelled: str, op: Op = Op.SEARCH) -> LinkEnd:
        """:meth:`link_end` once the link's text is read: ``spelled`` is
        resolved once and decided on its canonical path."""
        view = self._view
        root = view.root
        try:
            with root.open_handle(spelled, _LOOK_FLAGS) as handle:
                regular = st.S_ISREG(handle.stat().st_mode)
                canonical = handle.path
        except (OSError, ValueError):
            # nothing there (or no file): decided on where the text leads
            # all the same, so whether a hidden name exists is not told
            try:
                canonical, regular = locate(root, spelled).path, False
            except (OSError, ValueError):
                return LinkEnd.OTHER
        if not view.visible(canonical, op):
            return LinkEnd.HIDDEN  # decided before its kind: a hidden folder is not told apart
        return LinkEnd.FILE if regular else LinkEnd.OTHER

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
            where = _failed_at(self._view, rel, True)
            if where is not None:
                self.check(where, op, shown=shown)
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
        """:func:`open_read` on this call's view."""
        return open_read(self._view, rel, self.checkpoint, op, shown=shown, field=field,
                         follow=follow)

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
            _refuse_by_policy(self._view, exc, rel, op, label, field, follow)
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
        nothing is said (``missing`` there would tell what exists).  The
        resolution follows the name again: ``STALE`` unless the link looked
        at is still there after it (else another entry's end, or the name
        itself, would be said to be where the link led)."""
        found = self._lead(entry, op)
        now, was = entry.lstat(), entry.info
        # the type and the change time too: a removed link's inode number is
        # reused at once (ext4, tmpfs) by what is made next
        if now is None or (now.st_dev, now.st_ino, now.st_mode, now.st_ctime_ns) != (
                was.st_dev, was.st_ino, was.st_mode, was.st_ctime_ns):
            raise swapped(entry.shown)
        return found

    def _lead(self, entry: Entry, op: Op) -> Lead:
        view = self._view
        try:
            with view.root.target(entry.path, follow_final=True) as followed:
                canonical = followed.path
                if not view.visible(canonical, op):
                    return Lead(None, None)
                info = followed.lstat()
        except EscapeError as exc:
            # through a hidden name (a denied link leading out): said as any other end there
            stopped = exc.component
            if (isinstance(stopped, str) and stopped not in ("", "..", "/")
                    and not view.visible(stopped, op)) or \
                    not all(view.visible(place, op) for place in exc.passed):
                return Lead(None, None)
            return Lead(None, "outside")
        except OSError as exc:
            stopped = exc.component if isinstance(exc, PathError) else None
            if isinstance(stopped, str) and stopped and not view.visible(stopped, op):
                return Lead(None, None)
            return Lead(None, "loop" if exc.errno == errno.ELOOP else "missing")
        return Lead(canonical, "missing" if info is None else entry_kind(info.st_mode))
