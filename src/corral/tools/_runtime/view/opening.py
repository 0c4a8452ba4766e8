"""Opening roots: a Toolbox's view of one, a root opened beneath another,
and where one root lies inside another (a workspace of several)."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import TypeAlias

from ....contained import Root
from ..._policy.gitdirs import (Enclosing, enclosing_work_trees, lies_in_git_directory,
                                scan_enclosing, scan_user_configs, scan_user_configs_above)
from ..._policy.homes import (home_path_dirs, homes_around, homes_within,
                              lies_in_protected_place, protects_host_configs)
from ..._policy.pythonstart import root_place
from ..._policy.rules import HOST_CONFIG_PROTECT, Policy
from .decide import View, served_holding, served_within
from .freshness import Freshness
from .links import MAX_SCANNED_LINKS, LinkMap, LinkReader, RootLook, git_scan
from .locks import _TREE, root_identity
from .tree_lock import (changes_here, let_go_lock_file, lock_directory_under, moves_ended,
                        moves_made, tree_file_lock, use_lock_file)


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
        identity = root_identity(opened)
        # served before the look at the tree: a move by another Toolbox
        # from here on is refused; one made before is seen by the path
        use_lock_file(identity, opened.fileno())
    except BaseException:
        if owns:
            opened.close()
        raise
    # followed from the look's own listing of each directory (an empty
    # policy's view follows nothing, unless the look finds git's places)
    fresh = None if policy.is_empty and not deny else Freshness(opened)
    try:
        _moves_within_ended(opened, identity)
        real = _real_place(opened, identity)
        moves_before = moves_made(identity, opened.backend)  # read first: a move meanwhile counts
        changes_before = changes_here()
        looked_since = time.time_ns()
        if fresh is not None:
            fresh.begin()
        found = git_scan(opened, fresh.listed if fresh is not None else None)
        known_as = (opened.path, real)
        locks = lock_directory_under(opened.path)
        if locks is not None:
            deny = (*deny, "/" + _literal(locks) + "/")
        above = _enclosing(opened, known_as[1]) if policy.guards_git else Enclosing()
        users = _users(opened, known_as[1]) if policy.guards_git else Enclosing()
        rooted = policy.extended(deny=deny,
                                 protect_dirs=(*found.dirs, *above.dirs, *users.dirs),
                                 python_dirs=(*found.python_dirs, *above.python_dirs,
                                              *users.python_dirs)).rooted(known_as)
        if rooted.guards_git and (above.whole or found.whole or users.whole
                                  or lies_in_git_directory(known_as[1])):
            rooted = rooted.extended(protect=["/*"])  # all of it is git's, as under .git/
        rooted = _homes_rules(rooted, known_as[1])
        links = LinkMap()
        scanned = tuple(found.links[:MAX_SCANNED_LINKS])
        if not rooted.is_empty:
            reader = LinkReader(opened)
            for link in scanned:
                reader.learn(links, link)
    except BaseException:
        if fresh is not None:
            fresh.close()
        let_go_lock_file(identity)
        if owns:
            opened.close()
        raise
    view = View(opened, rooted, links, owns_root=owns)
    view.keep_lock_file(identity)
    view.scanned_links = scanned
    view.moves_seen = moves_before
    view.changes_seen = changes_before
    view.scan_complete, view.scan_unlooked = found.complete, found.unlooked
    view.python_place = root_place(known_as[1])
    if rooted.is_empty:
        if fresh is not None:
            fresh.close()
        return view
    if fresh is None:
        fresh = Freshness(opened)
    fresh.bind(view)
    view.freshness = fresh
    try:
        left = fresh.start(found, looked_since)
    except BaseException:
        view.close()
        raise
    if not found.complete and left:
        view.learn_every_link_later(left)
    return view


def _homes_rules(rooted: Policy, real: str) -> Policy:
    """``rooted`` with what the users' homes add where the default host
    rules hold: a home's ``bin/`` and ``.local/bin/`` (on ``PATH``), where
    the home is the root or lies in it; all of a root opened inside a
    place those rules protect as a whole (``~/.ssh``, a home's ``bin/``)."""
    host = protects_host_configs(rooted.protect, HOST_CONFIG_PROTECT)
    if not host:
        return rooted
    if lies_in_protected_place(real, host):
        return rooted.extended(protect=["/*"])
    dirs = home_path_dirs(real)
    if not dirs:
        return rooted
    return rooted.extended(protect=["/" + _literal(place) for place in dirs])


# work trees above a root read at open (each bounded as the scan of a root
# is); one more protects all of the root, what it runs being unknown
_MOST_ENCLOSING = 16


def _users(opened: Root, real: str) -> Enclosing:
    """What the git configs of the homes in the root (the root itself, a
    home inside it) run inside it (:func:`scan_user_configs`), and those
    of a home the root lies below (:func:`scan_user_configs_above`: read
    by the home's own path, read-only, only adding protections)."""
    homes = homes_within(real)
    found = Enclosing() if not homes else scan_user_configs(RootLook(opened), [
        (home, real.rstrip("/") if home == "." else f"{real.rstrip('/')}/{home}")
        for home in homes])
    if opened.path.startswith("<fd "):
        return found
    for home, below in homes_around(real):
        try:
            above = Root(home, backend=opened.backend)
        except OSError:
            continue
        with above:
            more = scan_user_configs_above(RootLook(above), home, below)
        found = Enclosing((*found.dirs, *more.dirs), (*found.python_dirs, *more.python_dirs),
                          found.whole or more.whole)
    return found


def _enclosing(opened: Root, real: str) -> Enclosing:
    """What each work tree whose top lies above the root runs inside the
    root (git run there runs it, whether or not the root is a work tree of
    its own, and an outer repository's git runs what its own config names,
    whatever lies between): its git config's programs, its hooks' scripts,
    the host configs from its top down to the root
    (:func:`scan_enclosing`).  Read here, once, by the host's own path to
    the root, read-only and bounded as the scan of the root is; nothing
    read above the root is shown to the model, it only adds protections."""
    if opened.path.startswith("<fd "):
        return Enclosing()
    tops = enclosing_work_trees(real, _MOST_ENCLOSING)
    if len(tops) > _MOST_ENCLOSING:
        return Enclosing(whole=True)
    dirs: list[str] = []
    python_dirs: list[str] = []
    whole = False
    for top in tops:
        try:
            above = Root(top, backend=opened.backend)
        except OSError:
            continue
        with above:
            found = scan_enclosing(RootLook(above), os.path.relpath(real, top))
        dirs.extend(found.dirs)
        python_dirs.extend(found.python_dirs)
        whole = whole or found.whole
    return Enclosing(tuple(dict.fromkeys(dirs)), tuple(dict.fromkeys(python_dirs)), whole)


# seconds an open waits for a move under way above its root (a move waits
# on its host at most its call's deadline, 30 s unless the host said more)
_MOVE_WAIT = 120.0


def _move_deadline(opened: Root, where: str) -> Callable[[], None]:
    """A checkpoint raising ``TimeoutError`` once :data:`_MOVE_WAIT`
    seconds passed (not opened: a move it waits on may still be under way),
    the move's root being ``where`` ("holding" this one, or "inside" it)."""
    deadline = time.monotonic() + _MOVE_WAIT

    def checkpoint() -> None:
        if time.monotonic() > deadline:
            raise TimeoutError(errno.ETIMEDOUT, f"a move in a root {where} this one did not "
                               "end while it was being opened", opened.path)

    return checkpoint


def _moves_within_ended(opened: Root, identity: tuple[int, int]) -> None:
    """Wait for every move under way in a root served now that lies inside
    this one (:func:`~.decide.served_within`), this root marked served
    first.  Such a move looked for the roots served that hold its own
    before this one was served, so it holds none of this root's locks: a
    step here could change the folder it carries (a write into
    ``web/sub`` while ``web`` moves ``sub`` onto ``.vscode``).  A move that
    took its locks after this root was served finds it when it looks again
    (and takes its lock too); one holding them now is waited for here, by
    taking each such root's tree lock shared and letting it go
    (:func:`~.tree_lock.moves_ended`; one at a time: holding none while
    waiting on another, no order to keep).
    ``TimeoutError`` past :data:`_MOVE_WAIT` seconds: not opened."""
    within = served_within(opened, identity)
    if not within:
        return
    checkpoint = _move_deadline(opened, "inside")
    with _TREE.shared(checkpoint):  # this process's moves
        pass
    for key in within:  # then other processes'
        moves_ended(key, opened.backend, checkpoint)


def _real_place(opened: Root, identity: tuple[int, int]) -> str:
    """Where the root's host path really leads (``realpath``), looked at
    while no move in a root served now that holds this one (in this process
    or another) is under way or can start: the tree lock of each is held
    shared meanwhile.  Such a move looked for the roots served before this
    one was marked served, and may carry it away still, or swap a link on
    its path for a folder (``y -> .vscode`` opened, then ``y`` a plain
    folder: the Toolbox would decide as ``y`` while holding ``.vscode``).
    ``FileNotFoundError`` unless the path and the real path both name the
    directory opened; ``TimeoutError`` if such a move does not end in
    :data:`_MOVE_WAIT` seconds (not opened: the folder may be moving).
    Every move after it sees this root served (refused where it would carry
    it), and the real path names it as long as it is served."""
    holders = served_holding(opened, identity)
    with ExitStack() as held:
        if holders:
            checkpoint = _move_deadline(opened, "holding")
            held.enter_context(_TREE.shared(checkpoint))  # this process's moves
            for key in holders:  # then other processes', outermost first as a move takes them
                held.enter_context(tree_file_lock(key, opened.backend, exclusive=False,
                                                  checkpoint=checkpoint))
        _still_named(opened, opened.path, identity)
        real = os.path.realpath(opened.path)
        _still_named(opened, real, identity)
        return real


def _still_named(opened: Root, path: str, identity: tuple[int, int]) -> None:
    """Raise ``FileNotFoundError`` unless ``path`` (the root's host path,
    or where it really leads) names the directory opened (moved away before
    it was marked served, or a link on its path swapped: its Toolbox would
    decide by names it does not have).  A root made from a descriptor whose
    place the kernel could not name has no path to check."""
    if opened.path.startswith("<fd "):
        return
    try:
        named = os.stat(path)
    except OSError:
        named = None
    if named is None or (named.st_dev, named.st_ino) != identity:
        raise FileNotFoundError(errno.ENOENT, "the root directory was moved while it was "
                                "being opened", opened.path)


def _literal(path: str) -> str:
    """``path`` as a gitignore pattern matching just that path."""
    return "".join("\\" + c if c in "*?[]\\!#" else c for c in path)


# -- roots beside roots: what a workspace of several roots asks -----------------


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

