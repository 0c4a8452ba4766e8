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
processes.  A step on one place in a call that holds no directory yet (the
common write or edit) keys it by where it is instead, its identity not
looked at: the ``flock``, taken on each step's own fd, excludes every other
step on that directory, in this process too (a thread lock keyed by that
place stands in for it on a filesystem without locks); it is released by
closing that fd.  Waiting polls the call's checkpoint (its deadline, a cancel).

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

from ..view_read import Entry, Lead, OpenFile
from .call import BYTE_ORDER_MARKS, CallView, Want, edit_plain, ready, replace_plain
from .decide import AliasedScope, Decision, View, policy_refusal
from .links import LinkMap, RootLook, git_scan, locate
from .locks import root_identity
from .opening import RootLike, nested_place, open_beneath, open_view
from .pinned import Pinned
from .walks import (adopt_listed, entry_exists, holding_tree, kind_of, link_ends,
                    listed_file_scanner,
                    open_below, open_directory, open_listed, open_searched, read_listed_file,
                    read_regular_file, root_in_repository, walk_tree, walking)

__all__ = ["View", "CallView", "Pinned", "LinkMap", "Decision", "Want",
           "edit_plain", "ready", "replace_plain", "BYTE_ORDER_MARKS",
           "AliasedScope",
           "OpenFile", "Entry", "Lead", "open_view", "RootLike", "RootLook", "git_scan",
           # what the tools' other modules take of the view
           "policy_refusal", "locate", "root_identity", "nested_place", "open_beneath",
           "adopt_listed", "entry_exists", "kind_of", "link_ends", "listed_file_scanner",
           "open_below", "open_directory", "open_listed", "open_searched", "read_listed_file",
           "read_regular_file", "root_in_repository", "walk_tree", "walking",
           "holding_tree"]
