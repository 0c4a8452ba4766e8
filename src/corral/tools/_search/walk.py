"""What glob and grep share: the search base, the walk's tool side, budgets.

* :func:`open_base` opens the directory searched (through the view), after
  authorization, and fails closed if it is not what was authorized.
* :class:`SearchVisitor` is the tool side of the core's
  :class:`~corral.contained.Tree`: .git and ignored directories are
  not entered, hidden ones (deny rules) neither, and a glob's automaton
  prunes directories below which nothing can match; all of it is counted.
  Each directory carries a :class:`DirState`: the glob states, the host
  policy's :class:`~._policy.Scope` and the .gitignore
  :class:`~._search_ignore.IgnoreScope`, each derived from the parent's
  with one test of the directory's name, so an entry costs a few string
  tests of its own name, whatever its depth; :meth:`SearchVisitor.kept_files`
  is the one place a search asks the policy what may be shown (decided on
  the canonical path the walk reached: the base's ``handle.path`` plus the
  names it listed).  corral's own in-flight names (a write's temporary
  file, :func:`corral.contained.is_temp_name`) are dropped before
  anything else: not shown, not searched, not counted.
* :class:`Budget` holds the call's checkpoints (``ctx.checkpoint()``
  and ``ctx.progress()``, so a search stops at its deadline or cancel) and the partial-result
  refusal a search gives past its deadline.
"""

from __future__ import annotations


import os
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ...contained import TreeVisitor, is_temp_name, without_temp_names
from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._policy.rules import Op, Scope
from .._refusals.catalogue import Kind, Refusal, time_limit
from .globs import GlobMatcher
from .._runtime.view import (entry_exists, open_searched, read_listed_file, read_regular_file,
                             root_in_repository)
from .._runtime.view_walk import OpenDirectory
from .ignore import (EXCLUDE_FILE, GIT_DIR, IGNORE_FILE, MAX_IGNORE_BYTES, IgnoreFile, IgnoreRules,
                     IgnoreScope, parse_ignore)

__all__ = [
    "stopped_note",
    "Base",
    "Budget",
    "DirState",
    "SearchVisitor",
    "ancestor_rules",
    "ignored_note",
    "open_base",
    "plural",
]

PROGRESS_EVERY = 4096  # entries between progress reports


# -- the base of a search --------------------------------------------------------

@dataclass
class Base:
    """An opened search base: ``shown`` is the path as the caller wrote it
    (results are named from it), ``real`` where resolution really reached
    (deny rules and .gitignore files are judged there)."""

    directory: OpenDirectory
    shown: str
    real: str
    info: os.stat_result

    @property
    def fd(self) -> int:
        return self.directory.fileno()

    def close(self) -> None:
        self.directory.close()

    def shown_path(self, sub: str) -> str:
        return sub if self.shown == "." else f"{self.shown}/{sub}"

    def real_path(self, sub: str) -> str:
        return sub if self.real == "." else f"{self.real}/{sub}"


def open_base(ctx: ToolContext, rel: str, before: os.stat_result) -> Base:
    """Open the directory ``rel`` (after authorization) and fail closed
    (``STALE``) if it is no longer what was stat-ed and authorized before."""
    directory, info = open_searched(ctx.view, rel, before)
    return Base(directory, directory.shown, directory.path, info)


# -- .gitignore files -------------------------------------------------------------

def load_ignore_at(ctx: ToolContext, dir_fd: int, real: str) -> IgnoreFile | None:
    """The .gitignore in the directory ``dir_fd`` (at the canonical
    ``real``), which a listing showed is there; ``None`` if absent,
    unreadable, or a symlink (git does not follow those either).  Read up
    to :data:`MAX_IGNORE_BYTES`."""
    data = read_listed_file(ctx.view, dir_fd, IGNORE_FILE, _under(real, IGNORE_FILE),
                            MAX_IGNORE_BYTES)
    return parse_ignore(data) if data is not None else None


def _under(real: str, name: str) -> str:
    return name if real in (".", "") else f"{real}/{name}"


def load_exclude_at(ctx: ToolContext, real: str) -> IgnoreFile | None:
    """The ``.git/info/exclude`` of the work tree whose top is ``real``
    (``None`` if absent, unreadable, or ``.git`` is not a directory)."""
    data = read_regular_file(ctx.view, _under(real, EXCLUDE_FILE), MAX_IGNORE_BYTES)
    return parse_ignore(data) if data is not None else None


def ancestor_rules(ctx: ToolContext, real: str,
                   names: Collection[str] | None = None) -> IgnoreRules:
    """The ignore files that apply to everything below ``real``, as git
    and ripgrep read them: a directory is inside a work tree when it or a
    parent (up to the root) holds a ``.git``, or when the root itself is
    inside one (:func:`root_in_repository`); outside, no .gitignore
    applies.  Inside, the nearest work tree's ``.git/info/exclude`` and
    the .gitignore files from its top down to ``real``'s parent apply (the
    walk reads ``real``'s own); an outer work tree's files stop at a nested
    one.  Each directory costs a probe for ``.git`` (from ``real`` up to
    the nearest work tree's top) and one for ``.gitignore`` (from that top
    down), one system call each where nothing is there; ``names``: what a
    listing of ``real`` just found, so its own ``.git`` is not probed again."""
    top = _work_tree_top(ctx, real, names)
    if top is None:
        if not root_in_repository(ctx.view.shared):
            return IgnoreRules()  # outside any work tree: no .gitignore applies
        return _rules_below(ctx, ".", real, None)
    return _rules_below(ctx, top, real, load_exclude_at(ctx, top))


def _work_tree_top(ctx: ToolContext, real: str, names: Collection[str] | None) -> str | None:
    """The nearest directory from ``real`` up to the root that holds a
    ``.git`` (``names``: what a listing of ``real`` found, so it is not
    probed), or ``None``: one probe a directory, from the deepest up (what
    a probe found is remembered while the view's watch reads no change)."""
    here = real if real not in ("", ".") else "."
    if names is not None:
        if GIT_DIR in names:
            return here
        if here == ".":
            return None
        here = here.rpartition("/")[0] or "."
    call = ctx.view
    fresh = call.shared.freshness
    while True:
        name = GIT_DIR if here == "." else f"{here}/{GIT_DIR}"
        if (entry_exists(call, name) if fresh is None
                else fresh.entries_fact(here, GIT_DIR, partial(entry_exists, call, name))):
            return here
        if here == ".":
            return None
        here = here.rpartition("/")[0] or "."


def _rules_below(ctx: ToolContext, top: str, real: str, exclude: IgnoreFile | None
                 ) -> IgnoreRules:
    """The rules of the work tree whose top is ``top`` (its ``exclude``
    file) and of the .gitignore files from ``top`` down to ``real``'s
    parent (the walk reads ``real``'s own)."""
    rules = IgnoreRules(in_repository=True)
    if exclude is not None:
        rules.push(_prefix(top), exclude)
    parts = [] if real in (".", "") else real.split("/")
    dirs = ["."] + ["/".join(parts[:depth]) for depth in range(1, len(parts))] if parts else []
    first = 0 if top == "." else top.count("/") + 1
    for directory in dirs[first:]:
        data = read_regular_file(ctx.view, _under(directory, IGNORE_FILE), MAX_IGNORE_BYTES)
        spec = parse_ignore(data) if data is not None else None
        if spec is not None:
            rules.push(_prefix(directory), spec)
    return rules


def _prefix(real: str) -> str:
    return "" if real in (".", "") else real + "/"


def directory_scope(ctx: ToolContext, fd: int, real: str, names: Collection[str]
                    ) -> IgnoreScope | None:
    """The ignore rules for the entries of the directory ``fd`` at the
    canonical ``real`` that a listing found holds ``names`` (the start of
    a listing or a walk); ``None`` outside any work tree."""
    top = _work_tree_top(ctx, real, names)
    if top is None:
        if not root_in_repository(ctx.view.shared):
            return None  # the common case outside a work tree: nothing more is read
        rules = _rules_below(ctx, ".", real, None)
    else:
        rules = _rules_below(ctx, top, real, load_exclude_at(ctx, top))
    scope = IgnoreScope.of(rules, real)
    own = load_ignore_at(ctx, fd, real) if IGNORE_FILE in names else None
    return scope.pushed(own) if own is not None else scope


def entered_scope(ctx: ToolContext, fd: int, real: str, parent: IgnoreScope | None,
                  names: Collection[str]) -> IgnoreScope | None:
    """The ignore rules for the entries of a directory met below the start
    (``parent``: its parent's scope stepped into it, ``None`` outside any
    work tree), whose listing holds ``names``: a ``.git`` there starts a
    work tree afresh (its exclude file, its own .gitignore files)."""
    scope = parent
    if GIT_DIR in names:
        scope = IgnoreScope(())
        exclude = load_exclude_at(ctx, real)
        if exclude is not None:
            scope = scope.pushed(exclude)
    if scope is None or IGNORE_FILE not in names:
        return scope
    own = load_ignore_at(ctx, fd, real)
    return scope.pushed(own) if own is not None else scope


# -- budgets ---------------------------------------------------------------------------

class Budget:
    """The call's checkpoints: ``ctx.checkpoint()`` raises the time_limit
    (or cancelled) refusal once the call's deadline has passed (every call
    is bounded); :meth:`over` turns a time_limit into the search's own refusal,
    which carries what was found so far, marked partial."""

    def __init__(self, ctx: ToolContext, what: str) -> None:
        self._ctx = ctx
        self._what = what
        self.steps = 0

    def check(self) -> None:
        self.steps += 1
        self._ctx.checkpoint()
        if self.steps % 16 == 0:
            self._ctx.progress(self.steps, None, self._what)

    @staticmethod
    def is_time_limit(refusal: Refusal) -> bool:
        return refusal.kind is Kind.TIME_LIMIT

    def over(self, shown: str, found: dict[str, Any]) -> Refusal:
        return time_limit(self._what, self._ctx.seconds, partial={"path": shown, **found},
                          hint="Narrow 'path' or the pattern and search again (or use the "
                               "partial results in details).")


# -- the walk's tool side -------------------------------------------------------------

@dataclass
class SearchCounts:
    ignored_dirs: int = 0
    ignored_examples: list[str] = field(default_factory=list)
    hidden: int = 0  # directories and files the host's rules hide

    def note_ignored(self, shown: str) -> None:
        self.ignored_dirs += 1
        if len(self.ignored_examples) < 10:
            self.ignored_examples.append(shown)


class DirState:
    """What a search carries per directory of its walk (all immutable,
    each derived from the parent's in one step): the glob automaton's
    states (empty without a matcher to prune with), the policy's
    :class:`~._policy.Scope` (``None``: no rule can hide anything) and the
    .gitignore :class:`~._search_ignore.IgnoreScope` (``None``: ignore
    nothing)."""

    __slots__ = ("globs", "policy", "ignore")

    def __init__(self, globs: frozenset[int], policy: Scope | None,
                 ignore: IgnoreScope | None) -> None:
        self.globs = globs
        self.policy = policy
        self.ignore = ignore


class SearchVisitor(TreeVisitor[DirState]):
    """What a search enters (module doc), and the filters for the files of
    one directory: each costs a few string tests per name (the policy's and
    the .gitignore's per-directory scopes), whatever the depth."""

    def __init__(self, ctx: ToolContext, base: Base, *, rules: IgnoreRules | None,
                 skip_git: bool, prune: GlobMatcher | None, budget: Budget) -> None:
        self.ctx = ctx
        self.base = base
        self.skip_git = skip_git
        self.prune = prune if prune is not None and not prune.name_only else None
        self.budget = budget
        self.counts = SearchCounts()
        policy = None
        if ctx.may_deny:
            # each directory's run of names tested in one call of the root's backend
            ctx.state.policy.test_names_with(ctx.view.backend.names_test)
            policy = ctx.scope(base.real, Op.SEARCH)
        self.ignoring = rules is not None
        ignore = IgnoreScope.of(rules, base.real) if rules is not None and rules.in_repository \
            else None
        self.start = DirState(prune.start if prune is not None else frozenset(), policy, ignore)
        #: a glob whose matching directories are looked for among those shown
        #: (a glob that finds no file then knows whether one names a
        #: directory without a walk for it); :attr:`dir_matched` says if one did
        self.dirs_sought: GlobMatcher | None = None
        self.dir_matched = False

    def child(self, state: DirState, dir_sub: str, name: str) -> DirState | None:
        if name[0] == "." and is_temp_name(name):
            return None  # in flight: not there (module doc)
        # the host's rules first: a directory they hide is counted, never
        # named among the ignored ones
        policy = state.policy
        if policy is not None:
            policy = policy.child(name)
            if policy is None:
                self.counts.hidden += 1
                return None
        if name == GIT_DIR and self.skip_git:
            self.counts.note_ignored(self.base.shown_path(dir_sub + name))
            return None
        ignore = state.ignore
        if ignore is not None and ignore.ignored(name, True, self.budget.check):
            self.counts.note_ignored(self.base.shown_path(dir_sub + name))
            return None
        sought = self.dirs_sought
        if sought is not None and sought.accepted(state.globs, [name]):
            self.dir_matched = True
            self.dirs_sought = None
        globs = state.globs if self.prune is None else self.prune.step(state.globs, name)
        return DirState(globs, policy, ignore.child(name) if ignore is not None else None)

    def enters(self, state: DirState) -> bool:
        return self.prune is None or bool(state.globs)

    watch = frozenset({IGNORE_FILE, GIT_DIR})
    reads_watched = True  # a .gitignore there is read by its name in the directory

    def listed(self, fd: int, state: DirState, dir_sub: str, present: frozenset[str]
               ) -> DirState:
        if not self.ignoring or not present:
            return state
        real = self.base.real_path(dir_sub.rstrip("/")) if dir_sub else self.base.real
        if not dir_sub:  # the base: its .git was seen by ancestor_rules
            present = present - {GIT_DIR}
        ignore = entered_scope(self.ctx, fd, real, state.ignore, present)
        if ignore is state.ignore:
            return state
        return DirState(state.globs, state.policy, ignore)

    def tick(self) -> None:
        self.budget.check()

    def shown_files(self, state: DirState, names: list[str]) -> list[str]:
        """The names (all the files of one directory) the host's rules do
        not hide, in order; the hidden ones are counted in :attr:`counts`.
        Taken before a pattern or an ``include`` picks among them: a count
        of what matched would say whether a denied name exists.  No
        in-flight name is among them (module doc)."""
        names = without_temp_names(names, is_sorted=True)  # a run of the walk: sorted
        if state.policy is not None and names:
            shown = state.policy.visible_names(names)
            self.counts.hidden += len(names) - len(shown)
            return shown
        return names

    def kept_files(self, state: DirState, names: list[str], ends_with: str = ""
                   ) -> tuple[list[str], int]:
        """The names (files of one directory, :meth:`shown_files` already)
        not ignored by .gitignore, in order, and how many were ignored.
        ``ends_with``: what every name is known to end with (a glob's
        ``*.py``)."""
        ignored = 0
        if state.ignore is not None:
            names, ignored = state.ignore.kept_files(names, ends_with, self.budget.check)
        return names, ignored


def base_rules(ctx: ToolContext, base: Base, include_ignored: bool,
               notes: list[str]) -> IgnoreRules | None:
    """The .gitignore rules a search of ``base`` starts with (``None``:
    ignore nothing).  A base that is itself ignored is searched anyway (it
    was named), with only its own rules, and a note says so."""
    if include_ignored:
        return None
    rules = ancestor_rules(ctx, base.real)
    if rules and base.real != "." and rules.ignored_path(base.real, True):
        notes.append(f"{_said(base.shown)} is ignored by .gitignore; it was searched because it "
                     "was named.")
        return IgnoreRules(in_repository=True)
    return rules


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"1 {word}"
    return f"{count} {word[:-1]}ies" if word.endswith("y") else f"{count} {word}s"


def stopped_note(ctx: ToolContext) -> str:
    """The sentence saying a search walked its most files and stopped."""
    return (f"The search stopped after {ctx.limits.search_files} files, so matches may be "
            "missing; search a smaller directory.")


def ignored_note(ignored: int, what: str, counts: SearchCounts) -> str:
    """The sentence saying what .gitignore and .git kept out, and how to get it."""
    parts = []
    if ignored:
        parts.append(f"{plural(ignored, what)} ignored by .gitignore")
    if counts.ignored_dirs:
        examples = ", ".join(counts.ignored_examples[:3])
        more = ", ..." if counts.ignored_dirs > 3 else ""
        parts.append(f"{plural(counts.ignored_dirs, 'directory')} not searched ({examples}{more}: "
                     ".gitignore or .git)")
    return " and ".join(parts) + "; pass includeIgnored: true to include them."
