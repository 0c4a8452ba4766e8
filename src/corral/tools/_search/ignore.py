""".gitignore rules, matched without backtracking.

Each line becomes a :class:`~._search_glob.GlobMatcher` (the same
automaton glob uses, so a hostile line such as ``*a*a*a*a*a*a*a*a*b`` costs
a linear scan of each name), with git's reading of a line: ``#`` comments,
``!`` negation, a trailing ``/`` for directories only, a ``/`` at the start
or in the middle anchoring the line to the file's directory (else it
matches a name at any depth), ``**`` as in glob, trailing spaces dropped
unless escaped, braces literal.

:class:`IgnoreRules` applies the files met on the way down with git's
precedence: a deeper file wins, and in one file the last matching line
wins; an ignored directory is not entered, so nothing in it can be
re-included (``*`` then ``!*/`` re-opens directories, as in git).
A file is read up to :data:`MAX_IGNORE_BYTES` and :data:`MAX_RULES` lines.

This is the one gitignore engine: glob, grep, list_directory and its tree
all decide through :class:`IgnoreScope` over these lines, with which files
apply (inside a git work tree only) found by ``_search/walk.py``.  The host
policy's patterns (``_policy/rules.py``) are gitignore-style but not
gitignore matching, so they keep their own matcher: one list anchored at
the root and read from no file, matched on case-folded, normalised
canonical paths, where a directory-only line also covers a file of that
name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

from .._refusals.catalogue import Refusal
from .globs import GlobMatcher, NameIndex, Segment, compile_glob, compile_segments

_Quick = tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]  # names, ends, starts

__all__ = [
    "EXCLUDE_FILE",
    "GIT_DIR",
    "IGNORE_FILE",
    "MAX_IGNORE_BYTES",
    "MAX_RULES",
    "IgnoreFile",
    "IgnoreRules",
    "IgnoreScope",
    "parse_ignore",
]

IGNORE_FILE = ".gitignore"
GIT_DIR = ".git"
EXCLUDE_FILE = ".git/info/exclude"
MAX_IGNORE_BYTES = 1024 * 1024  # a larger .gitignore is read up to here
MAX_RULES = 10_000  # lines kept of one file
MAX_LINE_CHARS = 4096  # a longer line is dropped (git has PATH_MAX too)
TICK_NAMES = 8  # names decided in full between two checkpoints
TICK_RULES = 256  # lines tested against one name between two checkpoints


class _Rule(NamedTuple):
    """One line: a name pattern (``name``: it matches a name at any depth)
    or an anchored path pattern (``matcher``)."""

    negate: bool
    dirs_only: bool
    name: Segment | None = None
    matcher: GlobMatcher | None = None

    def matches(self, sub: str, name: str) -> bool:
        """Whether the line matches ``sub`` (relative to the file's
        directory), whose last part is ``name``."""
        if self.name is not None:
            return self.name.test(name)
        return self.matcher.match(sub)  # type: ignore[union-attr]


def _strip_trailing_spaces(line: str) -> str:
    """Trailing spaces go unless escaped (``"a\\ "`` keeps one, as git)."""
    end = len(line)
    while end and line[end - 1] == " " and not (end >= 2 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


def _name_part(body: str, anchored: bool) -> str | None:
    """The one name pattern of a line that matches a name at any depth
    (``x``, ``**/x``), or ``None`` (the glob automaton reads it)."""
    parts = [p for p in body.split("/") if p not in ("", ".")]
    if not anchored:
        return parts[0] if len(parts) == 1 and parts[0] not in ("**", "..") else None
    while len(parts) > 2 and parts[0] == parts[1] == "**":
        parts.pop(0)
    if len(parts) == 2 and parts[0] == "**" and parts[1] not in ("**", ".."):
        return parts[1]
    return None


@functools.lru_cache(maxsize=4096)
def _rule(line: str) -> _Rule | None:
    """One line, compiled (cached: the same lines recur in many files)."""
    line = _strip_trailing_spaces(line.rstrip("\r"))
    if not line or line.startswith("#") or len(line) > MAX_LINE_CHARS:
        return None
    negate = line.startswith("!")
    if negate or line.startswith(("\\#", "\\!")):
        line = line[1:]
    dirs_only = line.endswith("/")
    body = line.rstrip("/")
    anchored = "/" in body
    body = body.lstrip("/")
    if not body:
        return None
    part = _name_part(body, anchored)
    if part is not None:  # the index files it; its test is built only if a name needs it
        return _Rule(negate, dirs_only, name=compile_segments([part])[0])
    try:
        matcher = compile_glob(body + ("/" if dirs_only else ""), "gitignore line",
                               anchored=anchored, braces=False)
    except Refusal:  # a line with "..": git never matches it either
        return None
    return _Rule(negate, dirs_only, matcher=matcher)


class IgnoreFile:
    """The rules of one .gitignore, last line first (those that can match
    a file apart: a directory-only line never decides for a file).

    For :class:`IgnoreScope`, the lines that match a name at any depth are
    indexed by their literal name, end or start (:class:`NameIndex`), once
    for directories and once for files, and the anchored ones (a ``/`` in
    the line) are listed by position: a walk carries their automaton
    states per directory."""

    def __init__(self, rules: list[_Rule]) -> None:
        self._rules = rules[::-1]
        self._file_rules = [r for r in self._rules if not r.dirs_only]
        named = [i for i, r in enumerate(self._rules) if r.name is not None]
        files = [i for i in named if not self._rules[i].dirs_only]
        self._dir_names = (named, NameIndex([self._segment(i) for i in named]))
        self._file_names = (files, NameIndex([self._segment(i) for i in files]))
        self.anchored = tuple(i for i, r in enumerate(self._rules) if r.name is None)

    def _segment(self, i: int) -> Segment:
        segment = self._rules[i].name
        assert segment is not None
        return segment

    def _matcher(self, i: int) -> GlobMatcher:
        matcher = self._rules[i].matcher
        assert matcher is not None
        return matcher

    def __len__(self) -> int:
        return len(self._rules)

    def start(self, i: int) -> frozenset[int]:
        """The automaton states of the anchored line ``i`` in the file's own directory."""
        return self._matcher(i).start

    def step(self, i: int, states: frozenset[int], name: str) -> frozenset[int]:
        return self._matcher(i).step(states, name)

    def names_may_match(self, names: list[str], is_dir: bool, ends_with: str = "") -> list[str]:
        """The names some line matching at any depth may match (a superset);
        ``ends_with``: what every name is known to end with."""
        return (self._dir_names if is_dir else self._file_names)[1].filter(names, ends_with)

    def no_file_ends_with(self, end: str) -> bool:
        """Whether no line that may match a file can match a name ending with ``end``."""
        return self._file_names[1].none_end_with(end)

    def dir_quick(self) -> _Quick | None:
        """:meth:`NameIndex.quick` of the lines that may match a directory."""
        return self._dir_names[1].quick()

    def has_general(self, is_dir: bool) -> bool:
        """Whether a line matching at any depth has no literal to index it by."""
        return (self._dir_names if is_dir else self._file_names)[1].always

    def waiting(self, i: int, states: frozenset[int]) -> list[Segment] | None:
        """The name patterns the anchored line ``i`` in ``states`` needs the
        next name to match (``None``: any name may do, at a ``**``)."""
        return self._matcher(i).waiting(states)

    def decide_in(self, name: str, is_dir: bool, layer: _Layer,
                  tick: Callable[[], None] | None = None) -> bool | None:
        """:meth:`decide` for the entry ``name`` of the directory ``layer``
        is at (where the anchored lines are in the layer's states); ``tick``
        is called every :data:`TICK_RULES` lines tested (one name may meet
        thousands of candidate lines, each built on first use)."""
        positions, index = self._dir_names if is_dir else self._file_names
        anchored = layer.anchored_candidates(name)
        if not anchored and not index.may_match(name):
            return None
        order = [positions[j] for j in index.candidates(name)]
        states = dict(anchored)
        if states:
            order = sorted(order + list(states))
        for k, i in enumerate(order, 1):
            if tick is not None and k % TICK_RULES == 0:
                tick()
            rule = self._rules[i]
            if rule.name is not None:
                hit = rule.name.test(name)
            elif rule.dirs_only and not is_dir:
                continue
            else:
                hit = self._matcher(i).accepts(states[i], name)
            if hit:
                return not rule.negate
        return None

    def decide(self, sub: str, name: str, is_dir: bool) -> bool | None:
        """``True`` ignored, ``False`` re-included, ``None`` no line applies
        (``sub`` relative to the file's directory, ``name`` its last part)."""
        for rule in self._rules if is_dir else self._file_rules:
            if rule.matches(sub, name):
                return not rule.negate
        return None


def parse_ignore(data: bytes) -> IgnoreFile | None:
    """The rules of one .gitignore (``None`` if it has none)."""
    rules = []
    for line in data.decode("utf-8", "replace").split("\n"):
        rule = _rule(line)
        if rule is not None:
            rules.append(rule)
            if len(rules) >= MAX_RULES:
                break
    return IgnoreFile(rules) if rules else None


class IgnoreRules:
    """The .gitignore files in force at one point of a walk.

    Each is kept with the root-relative directory it sits in (``""`` for
    the root, else ``"a/b/"``); a path is checked against the deepest first
    and the first file that has a matching line decides.  ``in_repository``:
    whether the directory they were gathered for is inside a git work tree
    (outside one no .gitignore applies, as git and ripgrep read them).
    """

    def __init__(self, *, in_repository: bool = False) -> None:
        self._files: list[tuple[str, IgnoreFile]] = []
        self.in_repository = in_repository

    def __bool__(self) -> bool:
        return bool(self._files)

    @property
    def files(self) -> tuple[tuple[str, IgnoreFile], ...]:
        """The files in force, outermost first, each with its directory prefix."""
        return tuple(self._files)

    def push(self, prefix: str, spec: IgnoreFile) -> None:
        self._files.append((prefix, spec))

    def pop(self) -> None:
        self._files.pop()

    def ignored(self, real: str, is_dir: bool, name: str | None = None) -> bool:
        """Whether the root-relative ``real`` path (whose last part is
        ``name``) is ignored; its parent directories are taken to have been
        checked already."""
        if name is None:
            name = real.rsplit("/", 1)[-1]
        for prefix, spec in reversed(self._files):
            if real.startswith(prefix):
                verdict = spec.decide(real[len(prefix):], name, is_dir)
                if verdict is not None:
                    return verdict
        return False

    def ignored_path(self, real: str, is_dir: bool) -> bool:
        """Whether ``real`` or one of its parent directories is ignored."""
        parts = real.split("/")
        for depth in range(1, len(parts)):
            if self.ignored("/".join(parts[:depth]), True):
                return True
        return self.ignored(real, is_dir)


_Live = tuple[tuple[int, frozenset[int]], ...]  # (line position, automaton states)


class _Layer:
    """One .gitignore in force at one directory: the file and the states of
    its anchored lines there (only those that can still match).  With many
    such lines, the name patterns their states wait on are indexed
    (:class:`NameIndex`, built once per layer when first needed), so a name
    costs a few lookups, not a step of every line."""

    __slots__ = ("file", "live", "_index")

    SMALL = 8  # up to this many live lines are simply all tried

    def __init__(self, file: IgnoreFile, live: _Live) -> None:
        self.file = file
        self.live = live
        self._index: tuple[NameIndex, list[int], list[int]] | None = None

    def _built(self) -> tuple[NameIndex, list[int], list[int]]:
        if self._index is None:
            segments, owners, always = [], [], []
            for k, (i, states) in enumerate(self.live):
                waiting = self.file.waiting(i, states)
                if waiting is None:
                    always.append(k)
                    continue
                segments += waiting
                owners += [k] * len(waiting)
            self._index = (NameIndex(segments), owners, always)
        return self._index

    def anchored_candidates(self, name: str) -> _Live:
        """The live lines the name ``name`` may step on or match (a superset)."""
        live = self.live
        if len(live) <= self.SMALL:
            return live
        index, owners, always = self._built()
        found = set(always)
        found.update(owners[j] for j in index.candidates(name))
        return tuple(live[k] for k in sorted(found))

    def child(self, name: str) -> _Layer:
        if not self.live:
            return self
        file = self.file
        live = []
        for i, states in self.anchored_candidates(name):  # the others cannot survive it
            after = file.step(i, states, name)
            if after:
                live.append((i, after))
        return _Layer(file, tuple(live))


class IgnoreScope:
    """The .gitignore rules in force for the entries of one directory of a
    walk, deepest file first: :meth:`IgnoreRules.ignored` for every entry,
    where a name no line can match (the common case) costs a few string
    tests, and a subdirectory's scope costs one automaton step per anchored
    line still alive (none, mostly: then it is this scope itself)."""

    __slots__ = ("_layers", "_files_always", "_live", "_dir_quick")

    def __init__(self, layers: tuple[_Layer, ...]) -> None:
        self._layers = layers
        self._files_always = any(layer.live or layer.file.has_general(False) for layer in layers)
        self._live = any(layer.live for layer in layers)
        # the few literal names, ends and starts a directory's name must have
        # for some line to match it, when every line is indexed by one (a
        # walk then tests a directory's name with three string operations)
        self._dir_quick = self._quick_dirs()

    @classmethod
    def of(cls, rules: IgnoreRules, real: str) -> IgnoreScope:
        """The scope of the directory ``real`` (canonical) under ``rules``
        (the files of its ancestors, as :func:`ancestor_rules` found them)."""
        layers = []
        for prefix, file in rules.files:
            layer = _Layer(file, tuple((i, file.start(i)) for i in file.anchored))
            rel = "" if real in (".", "") else (real + "/")[len(prefix):]
            for part in rel.split("/")[:-1]:
                layer = layer.child(part)
            layers.append(layer)
        return cls(tuple(reversed(layers)))

    def __bool__(self) -> bool:
        return bool(self._layers)

    def pushed(self, file: IgnoreFile) -> IgnoreScope:
        """This directory's scope with its own .gitignore (the deepest) added."""
        own = _Layer(file, tuple((i, file.start(i)) for i in file.anchored))
        return IgnoreScope((own, *self._layers))

    def child(self, name: str) -> IgnoreScope:
        """The scope of the subdirectory ``name`` (before its own .gitignore)."""
        if not self._live:
            return self
        return IgnoreScope(tuple(layer.child(name) for layer in self._layers))

    def _quick_dirs(self) -> _Quick | None:
        """The names, ends and starts of :meth:`NameIndex.quick` of every
        layer's directory lines, when no anchored line is alive and each
        layer's lines are all indexed so (``None``: a name needs the full test)."""
        if self._live:
            return None
        names: set[str] = set()
        ends: list[str] = []
        starts: list[str] = []
        for layer in self._layers:
            quick = layer.file.dir_quick()
            if quick is None:
                return None
            names |= quick[0]
            ends += quick[1]
            starts += quick[2]
        return frozenset(names), tuple(ends), tuple(starts)

    def ignored(self, name: str, is_dir: bool, tick: Callable[[], None] | None = None) -> bool:
        if is_dir:
            quick = self._dir_quick
            if quick is not None and not (
                    name in quick[0] or name.endswith(quick[1]) or name.startswith(quick[2])):
                return False  # no line can match it: the common case of a walk
        for layer in self._layers:
            verdict = layer.file.decide_in(name, is_dir, layer, tick)
            if verdict is not None:
                return verdict
        return False

    def keeps_every_file(self, ends_with: str = "") -> bool:
        """Whether :meth:`kept_files` keeps every name ending with
        ``ends_with``, whatever the names (no line can match such a file)."""
        if not self._layers:
            return True
        return not self._files_always and bool(ends_with) and all(
            layer.file.no_file_ends_with(ends_with) for layer in self._layers)

    def kept_files(self, names: list[str], ends_with: str = "",
                   tick: Callable[[], None] | None = None) -> tuple[list[str], int]:
        """The file names of ``names`` that are not ignored, in order, and
        how many were (``ends_with``: what every name is known to end with).
        ``tick`` is called every :data:`TICK_NAMES` names decided in full
        (a checkpoint: lines built to match many names can make each cost
        many tests)."""
        if not self._layers:
            return names, 0
        if self._files_always:
            maybe: list[str] | set[str] = names
        elif ends_with and all(layer.file.no_file_ends_with(ends_with) for layer in self._layers):
            return names, 0  # no line can match a name ending so ("*.py" against "*.log")
        else:
            maybe = set()
            for layer in self._layers:
                maybe.update(layer.file.names_may_match(names, False, ends_with))
        ignored = set()
        for k, name in enumerate(maybe, 1):
            if self.ignored(name, False, tick):
                ignored.add(name)
            if tick is not None and k % TICK_NAMES == 0:
                tick()
        if not ignored:
            return names, 0
        return [n for n in names if n not in ignored], len(ignored)
