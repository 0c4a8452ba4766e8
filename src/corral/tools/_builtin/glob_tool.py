"""glob: find paths by pattern below a directory, sorted, capped honestly.

Decisions (DESIGN.md leaves them to the tool):

* A pattern without ``/`` matches names at any depth (``*.py`` is
  ``**/*.py``); with a ``/`` it is matched against the whole path below
  ``path``.  A trailing ``/`` asks for directories (listed with a ``/``).
* ``..`` in a pattern is refused (``INVALID_ARGUMENT``): patterns only ever
  match below ``path``.  An absolute pattern is taken like an absolute path:
  inside the root it is read root-relative (and anchored), outside it is
  ``OUTSIDE_ROOT``.
* Symlinks are never followed while walking.  A symlink whose name matches
  is listed only if it leads, inside the root, to a regular file (so every
  listed file can be read); other links are skipped and counted.  FIFOs,
  sockets and devices are skipped and counted.
* ``.gitignore`` files at every level (and above ``path``) are honoured, and
  ``.git`` directories skipped; both are counted, and ``includeIgnored``
  turns that off.  A ``path`` that is itself ignored is searched anyway
  (it was named), with a note.
"""

from __future__ import annotations

import os
import posixpath
from itertools import compress, repeat
import stat as st
from typing import Any

from ...contained import Tree, without_temp_names
from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._policy.rules import Op
from .._refusals.catalogue import Code, Kind, Refusal
from .._runtime.registry import Suggests, ToolSpec, success_schema
from .._runtime.request_types import GlobRequest
from .._runtime.view import link_ends, walk_tree
from .._runtime.view_walk import LinkEnd
from .._search.walk import (Base, Budget, DirState, SearchCounts, SearchVisitor, base_rules,
                            ignored_note, open_base, stopped_note)
from .._search.globs import GlobMatcher, kept_glob
from .._search.results import IGNORED_SCHEMA, GlobResult
from .._search.hints import case_variants, glob_escaped, glob_retry, glob_tidy, spaced_braces

DESCRIPTION = (
    "Find files by name: '*' and '?' match within a name, '**' any directories, '{a,b}' "
    "either. A pattern without '/' matches at any depth; one with '/' matches the path "
    "below path. End it with '/' to find directories. .git and what .gitignore ignores are "
    "skipped unless includeIgnored. To search contents use grep."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1, "maxLength": 4096},
        "path": {"type": "string", "minLength": 1, "maxLength": 4096, "default": "."},
        "includeIgnored": {"type": "boolean", "default": False},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


def _relative_pattern(ctx: ToolContext, pattern: str, base: str) -> tuple[str, bool]:
    """The pattern relative to ``base``, and whether it is anchored (an
    absolute pattern is; it is root-relative once its root prefix is gone)."""
    if not (pattern.startswith(("/", "~/")) or pattern == "~"):
        return pattern, False
    inside = ctx.rel(pattern, "pattern")  # OUTSIDE_ROOT unless it lies inside the root
    prefix = base.rstrip("/")
    if prefix in ("", "."):
        return inside, True
    if inside.startswith(prefix + "/"):
        return inside[len(prefix) + 1:], True
    # the pattern is a host path: never echoed (it would name host directories)
    raise Refusal(Code.INVALID_ARGUMENT, f"the absolute pattern is not below path {prefix}",
                  "Pass a pattern relative to 'path', or leave 'path' at \".\".",
                  details={"field": "pattern", "path": prefix}, kind=Kind.PATTERN_OUTSIDE_PATH)


def _not_a_directory(shown: str, info: os.stat_result, given: str) -> Refusal:
    regular = st.S_ISREG(info.st_mode)
    said = _said(shown)
    message = f"{said} is a file, not a directory" if regular else f"{said} is not a directory"
    parent = posixpath.dirname(shown) or "."
    return Refusal(Code.INVALID_ARGUMENT, message,
                   f"glob searches a directory: pass one as 'path' (its directory is "
                   f"{_said(parent)}); to read this file use read_file.",
                   details={"path": shown}, kind=Kind.NOT_DIRECTORY,
                   suggested_tool="glob", suggested_args={"pattern": given, "path": parent})


def run(ctx: ToolContext, args: dict[str, Any]) -> GlobResult:
    rel = ctx.rel(args["path"])
    given = args["pattern"]
    if not given.strip():
        raise Refusal(Code.INVALID_ARGUMENT, "glob: argument 'pattern' is only whitespace, so it "
                      "names nothing", "Pass a pattern such as \"**/*.py\", or \"**/*\" for "
                      "every file.", details={"field": "pattern"}, kind=Kind.PATTERN,
                      suggested_tool="glob", suggested_args={"pattern": "**/*", "path": rel})
    pattern, anchored = _relative_pattern(ctx, given, rel)
    matcher = kept_glob(pattern, anchored)
    ctx.check_deny(rel)
    info = ctx.view.stat(rel)
    shown = rel.rstrip("/") or "."
    if not st.S_ISDIR(info.st_mode):
        raise _not_a_directory(shown, info, given)
    ctx.authorize(GlobRequest(shown, given))
    base = open_base(ctx, rel, info)
    try:
        # the retry's probe for directories the pattern names is the first
        # walk's own automaton (a relative pattern not ending in / or **):
        # that walk sees whether one is shown
        seek_dirs = not anchored and not given.endswith(("/", "**"))
        found = _Found(case_variants(given), seek_dirs=seek_dirs)
        result = _glob(ctx, base, matcher, given, args["includeIgnored"], found=found)

        def probe(m: GlobMatcher, include: bool) -> GlobResult:
            return _glob(ctx, base, m, given, include, probe=True)

        def first(m: GlobMatcher, include: bool) -> GlobResult:
            return _glob(ctx, base, m, given, include, probe=True, first=True)
        if not result["paths"] and not result["truncated"]:
            if not _literal(ctx, rel, given, result):
                # what would find something: one path says it
                glob_retry(args, result, first, matcher, other_case=found.other_case,
                           dirs_named=found.dir_named or not seek_dirs)
        else:
            glob_tidy(args, result, probe)
        return result
    finally:
        base.close()


def _literal(ctx: ToolContext, rel: str, given: str, result: GlobResult) -> bool:
    """A pattern that matched nothing but, read as a plain path, names a
    file that exists (a route folder named ``[id]`` or ``(group)``): that
    path is the answer, and the note says how to ask for it as a pattern."""
    if not any(c in given for c in "[]{}*?"):
        return False
    base = "" if rel.rstrip("/") in ("", ".") else rel.rstrip("/") + "/"
    try:
        # one resolution, decided on what it reached (a denied or hidden
        # file is as absent: the answer stays "no match"); its canonical
        # path is the one listed, as the walk lists what it reaches
        with ctx.view.look(base + given.strip("/"), Op.SEARCH) as entry:
            literal, info = entry.path, entry.info
    except (OSError, Refusal):
        return False
    if not ctx.visible(literal) or not st.S_ISREG(info.st_mode):
        return False
    escaped = glob_escaped(given)
    result["paths"] = [literal]
    result["literal"] = True
    result["note"] = (f"As a pattern {given!r} matches nothing ([...] is a set of characters, "
                      f"{{...}} a set of alternatives), but {literal} exists and is listed; as a "
                      f"pattern that matches it, escape them: {escaped}")
    return True


class _Found:
    """What one glob walk collected.  ``variants``: the characters looked
    for in the names listed while nothing is found (``None``: not looked
    for); ``other_case``: whether a name held one of them; ``seek_dirs``:
    whether the walk looks for directories its pattern matches, and
    ``dir_named`` whether it saw one (looked for while nothing is found)."""

    def __init__(self, variants: frozenset[str] | None = None, *,
                 seek_dirs: bool = False) -> None:
        self.paths: list[str] = []
        self.ignored = self.symlinks = self.special = 0
        self.incomplete = False
        self.variants = variants
        self.other_case = False
        self.seek_dirs = seek_dirs
        self.dir_named = False

    def look_for_variants(self, names: list[str]) -> None:
        """Note whether one of ``names`` holds one of :attr:`variants`
        (each a scan in C of the names joined); once one does, or once a
        path is found (no retry then), they are no longer looked for."""
        variants = self.variants
        if variants is None:
            return
        if self.paths:
            self.variants = None
            return
        joined = "\0".join(names)
        if any(v in joined for v in variants):
            self.other_case = True
            self.variants = None


def _walk(ctx: ToolContext, base: Base, matcher: GlobMatcher, visitor: SearchVisitor,
          found: _Found, stop: int) -> Tree[DirState]:
    """Walk below the base collecting what ``matcher`` matches, until
    ``stop`` paths are found."""
    tree = walk_tree(ctx.view, base.directory, visitor.start, visitor,
                     yield_dirs=matcher.dirs_only, max_entries=ctx.limits.search_files)
    paths = found.paths
    name_only, accepts, match_name = matcher.name_only, matcher.accepts, matcher.match_name
    accepted = matcher.accepted
    suffix = matcher.name_suffix
    counts = visitor.counts
    # the .gitignore scope last met and whether it keeps every matching file
    # (a walk's directories mostly share one scope object: asked once)
    last_ignore: object = False
    ignore_keeps = False
    with tree:
        for dir_sub, fd, state, listed, kinds in tree:
            if matcher.dirs_only:
                globs = state.globs
                paths.extend(base.shown_path(dir_sub + name) + "/" for name in listed
                             if kinds.get(name) == "dir" and accepts(globs, name))
                if len(paths) >= stop:
                    break
                continue
            # every name of the run is decided, not only those that match
            # (visitor.shown_files written out: one call less per run)
            names = without_temp_names(listed, is_sorted=True)  # none in flight is there
            policy = state.policy
            if policy is not None and names:
                shown = policy.visible_names(names)
                if len(shown) != len(names):
                    counts.hidden += len(names) - len(shown)
                names = shown
            if found.variants is not None and names:
                found.look_for_variants(names)  # what is shown only: hidden names change nothing
            if suffix is not None:  # "*.py": the test of each name made in C
                matched = list(compress(names, map(str.endswith, names, repeat(suffix)))) \
                    if suffix else names
            elif name_only:
                matched = [n for n in names if match_name(n)]
            else:
                matched = accepted(state.globs, names)
            if matched:
                ignore = state.ignore
                if ignore is not last_ignore:
                    last_ignore = ignore
                    ignore_keeps = ignore is None or ignore.keeps_every_file(suffix or "")
                if ignore_keeps and not kinds:
                    # no link, no special file, nothing .gitignore can drop: all listed
                    paths.extend(map(base.shown_path(dir_sub).__add__, matched))
                else:
                    _take(ctx, base, visitor, found, state, (dir_sub, fd), matched, kinds,
                          suffix)
                if paths:
                    visitor.dirs_sought = None  # a file found: no retry to decide
                if len(paths) >= stop:
                    break
    found.incomplete = tree.stats.incomplete
    return tree


def _take(ctx: ToolContext, base: Base, visitor: SearchVisitor, found: _Found, state: DirState,
          where: tuple[str, int], matched: list[str], kinds: dict[str, str],
          suffix: str | None) -> None:
    """Matching non-directories of one directory (``where``: its path below
    the base and the walk's fd of it): listed, or counted as what kept them
    out (in this order: special, ignored, hidden, a link that does not lead
    to a file)."""
    dir_sub, fd = where
    odd = kinds.keys() & matched if kinds else None  # the links and special files, in C
    if odd:
        special = {n for n in odd if kinds[n] == "other"}
        if special:
            found.special += len(special)
            matched = [n for n in matched if n not in special]
            odd -= special
    kept, ignored = visitor.kept_files(state, matched, suffix or "")
    found.ignored += ignored
    if odd:
        linked = sorted(odd.intersection(kept))  # the links .gitignore left
        if linked:
            # one resolution each: a link to no file is counted as a link,
            # one to a file a rule hides is hidden as that file is
            directory = base.real_path(dir_sub.rstrip("/")) if dir_sub else base.real
            ends = link_ends(ctx.view, fd, directory, linked)
            links = sum(1 for end in ends.values() if end is LinkEnd.OTHER)
            hidden = sum(1 for end in ends.values() if end is LinkEnd.HIDDEN)
            found.symlinks += links
            visitor.counts.hidden += hidden
            if links or hidden:
                kept = [n for n in kept if ends.get(n, LinkEnd.FILE) is LinkEnd.FILE]
    found.paths.extend(map(base.shown_path(dir_sub).__add__, kept))


def _glob(ctx: ToolContext, base: Base, matcher: GlobMatcher, given: str,
          include_ignored: bool, *, probe: bool = False, first: bool = False,
          found: _Found | None = None) -> GlobResult:
    """One walk's answer; a ``probe`` lists at most one path, and with
    ``first`` stops at the first it finds (whether more match is then not
    known: ``truncated`` is false); ``found``: where the walk collects
    (a fresh one when not given)."""
    cap = 1 if probe else ctx.limits.search_results
    notes: list[str] = []
    rules = base_rules(ctx, base, include_ignored, notes)
    budget = Budget(ctx, "glob")
    visitor = SearchVisitor(ctx, base, rules=rules, skip_git=not include_ignored,
                            prune=matcher, budget=budget)
    if found is None:
        found = _Found()
    if found.seek_dirs:
        visitor.dirs_sought = matcher
    try:
        # one more than the cap: "truncated" is then a fact
        tree = _walk(ctx, base, matcher, visitor, found, 1 if first else cap + 1)
        found.dir_named = visitor.dir_matched
    except Refusal as refusal:
        if not Budget.is_time_limit(refusal):
            raise
        raise budget.over(base.shown, {"pattern": given, "paths": found.paths[:cap],
                                        "truncated": True}) from None
    paths = found.paths
    counts = visitor.counts
    over = len(paths) > cap
    del paths[cap:]
    result: GlobResult = {"path": base.shown, "pattern": given, "paths": paths,
                          "truncated": over or found.incomplete,
                          "ignored": {"paths": found.ignored, "directories": counts.ignored_dirs}}
    if counts.ignored_examples:
        result["ignored"]["examples"] = counts.ignored_examples
    stats = tree.stats
    skipped = {"symlinks": found.symlinks, "special": found.special,
               "unreadableDirectories": stats.unreadable_dirs, "tooDeep": stats.too_deep,
               "undecodableNames": stats.undecodable}
    skipped = {k: v for k, v in skipped.items() if v}
    if skipped:
        result["skipped"] = skipped
    if counts.hidden:
        result["denied"] = counts.hidden
    _notes(ctx, result, notes, found, counts, over, cap, given, base)
    return result


def _notes(ctx: ToolContext, result: GlobResult, notes: list[str], found: _Found,
           counts: SearchCounts, over: bool, cap: int, given: str, base: Base) -> None:
    tail = []
    if over:
        tail.append(f"More than {cap} paths match; the first {cap} in sorted order are listed. "
                    "Narrow the pattern or the path to see the rest.")
    if found.incomplete:
        tail.append(stopped_note(ctx))
    if found.ignored or counts.ignored_dirs:
        tail.append(ignored_note(found.ignored, "matching path", counts))
    tidy = spaced_braces(given)
    if tidy is not None and found.paths:
        tail.append(f"Spaces around the commas of a {{...}} group belong to its alternatives "
                    f"(they match names with those spaces); without them the pattern is "
                    f"{tidy!r}.")
    tail.extend(notes)
    if not found.paths and not over:
        what = "directories" if given.endswith("/") else "files"
        where = "the root" if _said(base.shown) == "." else _said(base.shown)  # not "under .."
        tail.insert(0, f"No {what} match {given!r} under {where}.")
    if tail:
        result["note"] = " ".join(tail)


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"}, "pattern": {"type": "string"},
    "paths": {"type": "array", "items": {"type": "string"}},
    "truncated": {"type": "boolean"},
    "ignored": IGNORED_SCHEMA, "skipped": {"type": "object"},
    "denied": {"type": "integer"}, "note": {"type": "string"},
    "literal": {"type": "boolean", "description": "the pattern named an existing path "
                                                  "literally, which is listed"},
    "suggestedTool": {"type": "string"}, "suggestedArgs": {"type": "object"},
    "diagnosis": {"type": "string"},
}, ["path", "pattern", "paths", "truncated"])

TOOL = ToolSpec(name="glob", title="Find files by name", description=DESCRIPTION,
                schema=SCHEMA, output_schema=OUTPUT_SCHEMA, run=run, request=GlobRequest,
                suggests=Suggests(retry_on=frozenset({"directory"})))
