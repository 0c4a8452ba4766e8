"""grep: find lines by text or regular expression in one file or a tree.

Decisions (DESIGN.md leaves them to the tool):

* ``path`` is a file or a directory (both are searched, so a model's wrong
  guess costs no call); ``include`` filters the file's name in both cases (a
  pattern with ``/`` is matched against the path below ``path``).
* Regular expressions run on RE2 (linear time; the syntax of ripgrep's
  Rust regex, which models learned); constructs of other dialects whose
  meaning is plain are translated and the answer says so; lookaround,
  backreferences and the like are refused with a pattern that runs (see
  :mod:`corral.tools._search.engine`).  A literal search (``regex: false``) runs in the
  native scanner.  A line break in the pattern is refused: matching is per
  line.
* Files are read with large preads (:data:`CHUNK` at a time, each chunk
  cut after its last line break) and searched as bytes, whole buffers at
  a time; only the lines that hold a match are located and decoded.  With
  the native module in use, a directory's worth of files is opened (one name,
  ``O_NOFOLLOW|O_NONBLOCK``, below the directory fd the walk holds), read
  and searched for the literal, or the regex's required literal, in one C
  call (the backend's :meth:`~corral.contained.Backend.file_scanner`): a file without it costs no
  Python; the others come back open and are searched here.  A file whose first 8,000 bytes hold a
  NUL is binary (git's rule) and skipped.  Binary, unreadable, special
  (FIFO, socket, device) and hard-linked files and symlinks are skipped
  and counted; symlinks are never followed.
* ``.gitignore`` and ``.git`` as for glob (counted; ``includeIgnored``).
* Results are in path order, then line order; ``truncated`` is true only
  when one more result than the limit was found (or the walk hit
  ``Limits.search_files``).  Nothing found is never a bare answer: the
  likely mistakes are checked (:mod:`._search_hints`).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as st
from typing import Any, Protocol

from ...contained import (FileScan, ScanStatus, TreeStats)
from .._runtime.answer import AnswerPath
from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._refusals.catalogue import Code, Kind, Refusal
from .._runtime.registry import Suggests, ToolSpec, success_schema
from .._runtime.request_types import GrepRequest
from .._runtime.view_read import OpenFile
from .._policy.rules import Op
from .._runtime.view import adopt_listed, listed_file_scanner, open_listed, walk_tree
from .._search.walk import (Base, Budget, SearchCounts, SearchVisitor, base_rules, ignored_note,
                            open_base, stopped_note)
from .._search.globs import GlobMatcher, compile_glob
from .._read.textform import decode_wide, wide_encoding
from .._search.results import IGNORED_SCHEMA, GrepResult
from .._search.hints import Finds, grep_retry, path_as_pattern, pattern_refusal
from .._search.engine import Pattern, PatternProblem, compile_pattern
from .._search.scan import count_newlines

CHUNK = 1 << 20  # bytes read at a time from a large file (a smaller one is read in one)
BINARY_SNIFF = 8000  # git's rule: a NUL in the first 8,000 bytes means binary

MODES = ("matches", "files", "counts")

DESCRIPTION = (
    "Search file contents line by line for a regular expression (RE2: no lookaround or "
    "backreferences) or, with regex: false, literal text. path is a file or directory; "
    "include filters file names ('*.py'). outputMode files or counts gives only paths or "
    "counts per file. What .gitignore ignores is skipped unless includeIgnored. To find "
    "files by name use glob."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1, "maxLength": 2000},
        "path": {"type": "string", "minLength": 1, "maxLength": 4096, "default": "."},
        "include": {"type": "string", "minLength": 1, "maxLength": 1000},
        "regex": {"type": "boolean", "default": True},
        "caseInsensitive": {"type": "boolean", "default": False},
        "context": {"type": "integer", "minimum": 0, "default": 0,
                    "description": "Lines before and after each match."},
        "limit": {"type": "integer", "minimum": 1},
        "outputMode": {"type": "string", "enum": list(MODES), "default": "matches"},
        "includeIgnored": {"type": "boolean", "default": False},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


class Readable(Protocol):
    """A file open for reading: what a search reads through (the view's
    :class:`OpenFile`, or an entry the walk opened below its directory)."""

    def pread(self, size: int, offset: int, /) -> bytes: ...


class _Search:
    """The state of one grep call."""

    def __init__(self, ctx: ToolContext, pattern: Pattern, mode: str, limit: int,
                 context: int, budget: Budget) -> None:
        self.ctx = ctx
        self.backend = ctx.view.backend  # its scans of the bytes read
        self.pattern = pattern
        self.mode = mode
        self.limit = limit
        self.context = context
        self.budget = budget
        self.results: list[Any] = []
        self.searched = 0
        self.included = 0  # files that passed 'include'
        self.skipped = {"binary": 0, "unreadable": 0, "symlinks": 0, "special": 0,
                        "hardlinks": 0}
        self.binary_path: str | None = None
        self.binary_paths: list[str] = []  # the first few, looked at for a wide encoding

    @property
    def full(self) -> bool:
        return len(self.results) > self.limit

    # -- one file ---------------------------------------------------------
    def file(self, handle: Readable, path: str, info: os.stat_result) -> None:
        """Search the open file ``handle`` (named ``path`` in results;
        ``info`` its fstat)."""
        if not st.S_ISREG(info.st_mode):
            self.skipped["special"] += 1
            return
        if info.st_nlink > 1 and not self.ctx.allow_hardlinks:
            self.skipped["hardlinks"] += 1  # its content may be a file outside the root
            return
        self.regular(handle, path, info.st_size)

    def regular(self, handle: Readable, path: str, size: int) -> None:
        """Search the open regular file ``handle`` (``size`` bytes at its fstat)."""
        want = min(size + 1, CHUNK)
        data = handle.pread(want, 0)
        if data.find(b"\x00", 0, BINARY_SNIFF) >= 0:
            self.skipped["binary"] += 1
            self.binary_path = path
            if len(self.binary_paths) < _WIDE_LOOKED_AT:
                self.binary_paths.append(path)
            return
        self.searched += 1
        eof = len(data) < want
        if eof and not self.pattern.could_match(data):
            return  # the common case: a small file without a match
        self._stream(handle, path, data, eof)

    def _stream(self, handle: Readable, path: str, data: bytes, eof: bool) -> None:
        """Search the file a chunk at a time, each cut after its last line
        break; the next chunk is read from there (the partial line is read
        again rather than copied onto the next chunk)."""
        line = 1  # the number of the first line of the chunk
        offset = 0  # where in the file the chunk starts
        state = [0, 0]  # matching lines counted, the last line reported
        found: list[dict[str, Any]] = []
        while True:
            end = len(data) if eof else data.rfind(b"\n") + 1 or len(data)
            if self._lines(data, end, path, line, state, found) or eof:
                break
            self.budget.check()
            # a line longer than a chunk goes on
            line += count_newlines(data, 0, end, backend=self.backend)
            offset += end
            data = handle.pread(CHUNK, offset)
            eof = len(data) < CHUNK
            if not data:
                break
        if self.mode == "counts" and state[0]:
            self.results.append({"path": path, "count": state[0]})
        if found and self.context:
            self._add_context(handle, found)

    def _lines(self, buf: bytes, size: int, path: str, line: int, state: list[int],
               found: list[dict[str, Any]]) -> bool:
        """Record the matching lines of ``buf[:size]``; ``True`` when done with the file."""
        if not self.pattern.could_match(buf, size):
            return False
        mode, results = self.mode, self.results
        for start, end, at, number in self.pattern.lines(buf, 0, line, size,
                                                         backend=self.backend):
            if number == state[1]:
                continue  # one very long line, searched in pieces, is reported once
            state[1] = number
            if mode == "files":
                results.append(AnswerPath(path))
                return True
            state[0] += 1
            if mode == "matches":
                item = {"path": path, "line": number, **self._text(buf[start:end], at - start)}
                found.append(item)
                results.append(item)
                if len(results) > self.limit:
                    return True
        return False

    def _text(self, line: bytes, at: int) -> dict[str, Any]:
        """The shown text of a matching line, cut around the match."""
        cap = self.ctx.limits.search_line_chars
        if len(line) <= cap:
            text = line.decode("utf-8", "replace")
            at = len(line[:at].decode("utf-8", "replace"))
        else:  # decode a window only: the line may be a megabyte
            lo = max(0, at - 4 * cap)
            text = line[lo:at + 4 * cap].decode("utf-8", "replace")
            at = len(line[lo:at].decode("utf-8", "replace"))
            if lo:
                text, at = "\ufffd" + text, at + 1  # a cut character at the front is fine
        text = text.rstrip("\r")
        if len(text) <= cap:
            return {"text": text}
        start = max(0, min(at - cap // 4, len(text) - cap))
        return {"text": text[start:start + cap], "cut": True}

    def _short(self, line: bytes) -> str:
        cap = self.ctx.limits.search_line_chars
        return line[:4 * cap].decode("utf-8", "replace").rstrip("\r")[:cap]

    def _add_context(self, handle: Readable, found: list[dict[str, Any]]) -> None:
        """Fill ``before``/``after`` of this file's matches, re-reading it as
        a stream; a context never repeats a line shown by a neighbour."""
        spans = _context_spans([m["line"] for m in found], self.context)
        wanted = {n for low, high in spans for n in range(low, high + 1)}
        wanted.difference_update(m["line"] for m in found)
        texts = self._lines_text(handle, wanted, max(high for _, high in spans))
        for match, (low, high) in zip(found, spans):
            line = match["line"]
            match["before"] = [texts[n] for n in range(low, line) if n in texts]
            match["after"] = [texts[n] for n in range(line + 1, high + 1) if n in texts]

    def _lines_text(self, handle: Readable, wanted: set[int], last: int) -> dict[int, str]:
        texts: dict[int, str] = {}
        number, offset, carry = 0, 0, b""
        while number < last:
            self.budget.check()
            data = handle.pread(CHUNK, offset)
            offset += len(data)
            if not data:
                if carry and number + 1 in wanted:
                    texts[number + 1] = self._short(carry)
                break
            parts = (carry + data).split(b"\n")
            carry = parts.pop()[:CHUNK]  # only the start of a very long line can be shown
            for part in parts:
                number += 1
                if number in wanted:
                    texts[number] = self._short(part)
                if number >= last:
                    break
        return texts


def _context_spans(lines: list[int], c: int) -> list[tuple[int, int]]:
    spans = []
    shown = 0  # the last line a previous match showed (itself or after it)
    for i, line in enumerate(lines):
        low = max(line - c, shown + 1, 1)
        high = line + c if i + 1 == len(lines) else min(line + c, lines[i + 1] - 1)
        high = max(high, line)
        spans.append((low, high))
        shown = high
    return spans


def explicit(args: dict[str, Any]) -> dict[str, Any]:
    """The arguments that differ from the schema's defaults."""
    props = SCHEMA["properties"]
    return {k: v for k, v in args.items()
            if v is not None and not ("default" in props[k] and props[k]["default"] == v)}


def _include(text: str | None) -> GlobMatcher | None:
    if not text:
        return None
    if text.endswith("/"):
        raise Refusal(Code.INVALID_ARGUMENT, f"include {text!r} names a directory, and include "
                      "filters file names", "Pass the directory as 'path' and a file pattern "
                      "such as \"*.py\" as 'include'.",
                      details={"field": "include"}, kind=Kind.DIRECTORY)
    return compile_glob(text, "include")


def _include_matches(include: GlobMatcher | None, dir_sub: str, name: str,
                     state: frozenset[int]) -> bool:
    if include is None:
        return True
    return include.match_name(name) if include.name_only else include.accepts(state, name)


class _Outcome:
    """What the walk over a directory tree left besides the results."""

    def __init__(self) -> None:
        self.stats = TreeStats()
        self.counts = SearchCounts()
        self.ignored: int | None = None
        self.incomplete = False


class _Unmatched:
    """An ``include`` (matching by name alone) a probe's walk also tests
    every file it meets against, reading none more for it: ``met`` counts
    the names it matches, ``whole`` says the walk met every file."""

    def __init__(self, include: GlobMatcher) -> None:
        self.include = include
        self.met = 0
        self.whole = False


def run(ctx: ToolContext, args: dict[str, Any]) -> GrepResult:
    rel = ctx.rel(args["path"])
    finds = _finder(ctx)
    try:
        pattern = compile_pattern(args["pattern"], regex=args["regex"],
                                  ignore_case=args["caseInsensitive"])
    except PatternProblem as problem:
        raise pattern_refusal(ctx, args, problem, finds, explicit) from None
    include = _include(args.get("include"))
    try:
        # one resolution: the policy is decided on what was opened (a FIFO
        # or device is refused by the open), and a file is searched from it
        opened = ctx.view.open_read(rel, Op.SEARCH)
    except FileNotFoundError:
        path_as_pattern(ctx, args, finds, explicit)  # its own refusal when the path is a glob
        raise
    with opened:
        info = opened.stat()
        shown = opened.shown
        if not st.S_ISDIR(info.st_mode):
            ctx.check_hardlink(shown, info)
        ctx.view.ask_read(GrepRequest(shown, args["pattern"]), opened, rel, info)
        result = search(ctx, args, pattern, include, rel, info, opened=opened)
    if not _listed_of(result) and not result["truncated"]:
        grep_retry(ctx, args, result, finds, explicit,
                   without_include=getattr(finds, "without_include", None))
    return result


def _finder(ctx: ToolContext) -> Finds:
    """Whether a trial grep (a suggestion being checked) finds anything."""
    return _Finder(ctx)


class _Finder:
    """Whether a trial grep (a suggestion being checked) finds anything
    (:data:`Finds`); :meth:`without_include` is the trial that drops an
    include which matched no file."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx

    def __call__(self, trial: dict[str, Any]) -> bool:
        return self._probe(trial, None)

    def without_include(self, sent: dict[str, Any]) -> tuple[bool, bool]:
        """The trial of ``sent`` without its ``include`` (which matched no
        file): whether it finds anything, and whether its walk, going on to
        the end, met no file the include matches either, so that ``sent``
        finds nothing then, as a search of its own would show (it would
        walk the tree once more; an include of a path, ``src/*.py``, is
        left to that search)."""
        try:
            include = _include(sent.get("include"))
        except Refusal:
            include = None
        unmatched = _Unmatched(include) if include is not None and include.name_only else None
        found = self._probe({**sent, "include": None}, unmatched)
        return found, found and unmatched is not None and unmatched.whole \
            and not unmatched.met

    def _probe(self, trial: dict[str, Any], unmatched: _Unmatched | None) -> bool:
        ctx = self.ctx
        try:
            pattern = compile_pattern(trial["pattern"], regex=trial["regex"],
                                      ignore_case=trial["caseInsensitive"])
            include = _include(trial.get("include"))
            rel = ctx.rel(trial["path"])
            with ctx.view.open_read(rel, Op.SEARCH) as opened:
                info = opened.stat()
                if not (st.S_ISDIR(info.st_mode) or st.S_ISREG(info.st_mode)):
                    return False
                ctx.check_hardlink(rel, info)
                return bool(search(ctx, trial, pattern, include, rel, info, probe=True,
                                   opened=opened, unmatched=unmatched)["files"])
        except Refusal as refusal:
            if refusal.kind is Kind.CANCELLED:
                raise
            return False  # out of time included: the suggestion is not verified
        except (PatternProblem, OSError):
            return False


def search(ctx: ToolContext, args: dict[str, Any], pattern: Pattern,
           include: GlobMatcher | None, rel: str, info: os.stat_result, *,
           opened: OpenFile, probe: bool = False,
           unmatched: _Unmatched | None = None) -> GrepResult:
    """One grep over ``rel`` (``opened`` by the view, its fstat ``info``),
    authorized already: a file is searched from ``opened``; with ``probe``,
    only whether anything matches (the first result).  ``unmatched``: an
    include every file of a directory's walk is tested against (to its end)."""
    is_dir = st.S_ISDIR(info.st_mode)
    context_cap, limit_cap = ctx.limits.grep_context, ctx.limits.search_results
    context = min(args["context"], context_cap)
    limit = 1 if probe else min(args.get("limit") or limit_cap, limit_cap)
    mode = "files" if probe else args["outputMode"]
    budget = Budget(ctx, "grep")
    grep = _Search(ctx, pattern, mode, limit, context if mode == "matches" else 0, budget)
    if not is_dir:
        return _search_file(ctx, args, grep, opened, include, info, context, limit)
    base = open_base(ctx, rel, info)
    notes: list[str] = []
    outcome = _Outcome()
    try:
        _grep_tree(ctx, grep, base, include, args["includeIgnored"], notes, outcome, unmatched)
    except Refusal as refusal:
        if not Budget.is_time_limit(refusal):
            raise
        raise _partial(grep, base.shown, args, limit) from None
    finally:
        base.close()
    return _result(ctx, args, grep, base.shown, base.info, outcome, notes, context, limit)


def _search_file(ctx: ToolContext, args: dict[str, Any], grep: _Search, opened: OpenFile,
                 include: GlobMatcher | None, info: os.stat_result, context: int,
                 limit: int) -> GrepResult:
    """grep of one file: searched from the file the view opened (its
    ``info``), never opened again."""
    notes: list[str] = []
    shown = opened.shown
    try:
        if _include_matches(include, "", posixpath.basename(shown), frozenset()):
            grep.included += 1
            grep.file(opened, shown, info)
        else:
            notes.append(f"include {args['include']!r} does not match the name of "
                         f"{_said(shown)}, so it was not searched.")
    except Refusal as refusal:
        if not Budget.is_time_limit(refusal):
            raise
        raise _partial(grep, shown, args, limit) from None
    return _result(ctx, args, grep, shown, info, _Outcome(), notes, context, limit)


def _partial(grep: _Search, shown: str, args: dict[str, Any], limit: int) -> Refusal:
    """The time-limit refusal carrying what was found so far."""
    mode = grep.mode
    return grep.budget.over(shown, {"pattern": args["pattern"], "outputMode": mode,
                                    mode: grep.results[:limit], "filesSearched": grep.searched})


def _result(ctx: ToolContext, args: dict[str, Any], grep: _Search, shown: str,
            info: os.stat_result, outcome: _Outcome, notes: list[str], context: int,
            limit: int) -> GrepResult:
    mode = grep.mode
    over = grep.full
    result = _opening(shown, args["pattern"], mode, grep.results[:limit],
                      over or outcome.incomplete, grep.searched)
    stats, counts = outcome.stats, outcome.counts
    skipped = dict(grep.skipped)
    skipped.update({"unreadableDirectories": stats.unreadable_dirs, "tooDeep": stats.too_deep,
                    "undecodableNames": stats.undecodable})
    result["skipped"] = {k: v for k, v in skipped.items() if v or k in ("binary", "unreadable")}
    if outcome.ignored is not None:
        result["ignored"] = {"paths": outcome.ignored, "directories": counts.ignored_dirs}
        if counts.ignored_examples:
            result["ignored"]["examples"] = counts.ignored_examples
    if counts.hidden:
        result["denied"] = counts.hidden
    if grep.pattern.notes:
        result["translated"] = {"pattern": grep.pattern.text, "notes": grep.pattern.notes}
        notes.insert(0, "The pattern was read as " + repr(grep.pattern.text) + " ("
                     + "; ".join(grep.pattern.notes) + ").")
    if args["context"] > ctx.limits.grep_context:
        notes.append(f"context was capped at {ctx.limits.grep_context} lines.")
    if args.get("limit") and args["limit"] > ctx.limits.search_results:
        notes.append(f"limit was capped at {ctx.limits.search_results}.")
    result["limit"] = limit
    if context and mode == "matches":
        result["context"] = context
    if args.get("include"):
        result["include"] = args["include"]
    _finish_notes(ctx, result, notes, grep, over, outcome, info)
    result["filesIncluded"] = grep.included
    return result


def _opening(shown: str, pattern: str, mode: str, results: list[Any], truncated: bool,
             searched: int) -> GrepResult:
    """An answer's first fields; the results under the key outputMode names."""
    if mode == "matches":
        return {"path": shown, "pattern": pattern, "outputMode": mode, "matches": results,
                "truncated": truncated, "filesSearched": searched}
    if mode == "counts":
        return {"path": shown, "pattern": pattern, "outputMode": mode, "counts": results,
                "truncated": truncated, "filesSearched": searched}
    return {"path": shown, "pattern": pattern, "outputMode": mode, "files": results,
            "truncated": truncated, "filesSearched": searched}


def _listed_of(result: GrepResult) -> list[Any]:
    """The results under the key outputMode names."""
    return result.get("matches") or result.get("files") or result.get("counts") or []


def _grep_tree(ctx: ToolContext, grep: _Search, base: Base, include: GlobMatcher | None,
               include_ignored: bool, notes: list[str], outcome: _Outcome,
               unmatched: _Unmatched | None = None) -> None:
    rules = base_rules(ctx, base, include_ignored, notes)
    visitor = SearchVisitor(ctx, base, rules=rules, skip_git=not include_ignored,
                            prune=include, budget=grep.budget)
    outcome.counts = visitor.counts
    outcome.ignored = 0
    skipped = grep.skipped
    tree = walk_tree(ctx.view, base.directory, visitor.start, visitor,
                     max_entries=ctx.limits.search_files)
    outcome.stats = tree.stats
    scanner = _scanner(grep)
    searching = True
    with tree:
        for dir_sub, dir_fd, state, listed, kinds in tree:
            names = run = visitor.shown_files(state, listed)
            if unmatched is not None:
                unmatched.met += len(unmatched.include.accepted(state.globs, run))
                if not searching:
                    continue  # full: the walk goes on for the include alone
            if include is not None:
                names = include.accepted(state.globs, run)
            grep.included += len(names)
            odd = kinds.keys() & names if kinds else None  # found in C: most have none
            if odd:  # links and special files are counted, never opened
                links = sum(1 for n in odd if kinds[n] == "symlink")
                skipped["symlinks"] += links
                skipped["special"] += len(odd) - links
                names = [n for n in names if n not in odd]
            names, ignored = visitor.kept_files(state, names)
            outcome.ignored += ignored
            if not names:
                continue
            # read by name in a directory the walk holds, which may be moved out
            # of the root meanwhile: the walk shows it beneath again after
            tree.opened_in(dir_fd)
            if _grep_names(grep, scanner, dir_fd, base, dir_sub, names):
                if unmatched is None:
                    return
                searching = False
    outcome.incomplete = tree.stats.incomplete
    if unmatched is not None:
        unmatched.whole = not outcome.incomplete


def _grep_names(grep: _Search, scanner: FileScan | None, dir_fd: int, base: Base,
                dir_sub: str, names: list[str]) -> bool:
    """Search the files ``names`` of ``dir_fd``, in C where ``scanner``
    is; ``True`` once the results are full."""
    if scanner is not None:
        return _grep_native(grep, scanner, dir_fd, base, dir_sub, names)
    return _grep_files(grep, dir_fd, base, dir_sub, names)


def _grep_files(grep: _Search, dir_fd: int, base: Base, dir_sub: str,
                names: list[str]) -> bool:
    """Search the files ``names`` of the directory ``dir_fd`` (``dir_sub``
    below the base), one at a time through the root; ``True``
    once the results are full."""
    for name in names:
        _grep_file(grep, dir_fd, base, dir_sub + name)
        if grep.full:
            return True
    return False


def _scanner(grep: _Search) -> FileScan | None:
    """The backend's file scanner, where it reads files in batches (none
    for a backend that must see every call)."""
    pattern = grep.pattern
    return listed_file_scanner(grep.ctx.view, pattern.literal or pattern.required,
                               sniff=BINARY_SNIFF, keep_links=grep.ctx.allow_hardlinks,
                               chunk=CHUNK)


def _grep_native(grep: _Search, scanner: FileScan, dir_fd: int, base: Base,
                 dir_sub: str, names: list[str]) -> bool:
    """:func:`_grep_files` with the per-file work in C (a batch of files per
    call): a file without the needle costs no Python at all; the files C
    left open (a hit, no needle to test, a large file) are searched here.
    ``True`` once the results are full."""
    blob = ("\0".join(names) + "\0").encode("utf-8")  # the walk left out names not UTF-8
    done, offset = 0, 0
    while done < len(names):
        grep.budget.check()
        rows, offset = scanner.scan(dir_fd, blob, offset, len(names) - done)
        statuses = rows[0::4]
        absent = statuses.count(ScanStatus.ABSENT)
        grep.searched += absent
        if absent < len(statuses):
            try:
                _scanned(grep, base, dir_sub, names, done, rows)
            finally:
                for i in range(1, len(rows), 4):  # what was not searched (full, or a refusal)
                    if rows[i - 1] == ScanStatus.OPEN and rows[i] >= 0:
                        os.close(rows[i])
            if grep.full:
                return True
        done += len(statuses)
    return False


def _scanned(grep: _Search, base: Base, dir_sub: str, names: list[str], first: int,
             rows: list[int]) -> None:
    """Count and search what the scanner gave for ``names[first:]``; each
    searched fd is marked taken (-1) in ``rows``."""
    skipped = grep.skipped
    for k in range(0, len(rows), 4):
        status, value = rows[k], rows[k + 1]
        if status == ScanStatus.ABSENT:
            continue
        name = names[first + k // 4]
        if status == ScanStatus.OPEN:
            rows[k + 1] = -1
            shown = base.shown_path(dir_sub + name)
            with adopt_listed(grep.ctx.view, value, base.real_path(dir_sub + name),
                              shown) as handle:
                try:
                    grep.regular(handle, shown, rows[k + 2])
                except OSError:  # EIO and the like, mid-read
                    skipped["unreadable"] += 1
            if grep.full:
                return
        elif status == ScanStatus.BINARY:
            skipped["binary"] += 1
            grep.binary_path = base.shown_path(dir_sub + name)
            if len(grep.binary_paths) < _WIDE_LOOKED_AT:
                grep.binary_paths.append(grep.binary_path)
        elif status == ScanStatus.SPECIAL:
            skipped["special"] += 1
        elif status == ScanStatus.HARDLINK:
            skipped["hardlinks"] += 1
        elif status == ScanStatus.OPEN_ERROR and value == errno.ELOOP:
            skipped["symlinks"] += 1  # swapped for a link since the listing
        else:
            skipped["unreadable"] += 1


def _grep_file(grep: _Search, dir_fd: int, base: Base, sub: str) -> None:
    """Open and search the entry ``sub`` (below the base) of ``dir_fd``."""
    skipped = grep.skipped
    try:
        handle, info = open_listed(grep.ctx.view, dir_fd, sub.rsplit("/", 1)[-1],
                                   base.real_path(sub), base.shown_path(sub))
    except OSError as exc:  # vanished, permissions, swapped for a link since listing
        skipped["symlinks" if exc.errno == errno.ELOOP else "unreadable"] += 1
        return
    try:
        grep.budget.check()
        grep.file(handle, base.shown_path(sub), info)  # a special file swapped in: counted
    except OSError:  # EIO and the like, mid-read: keep what the others gave
        skipped["unreadable"] += 1
    finally:
        handle.close()


_WIDE_LOOKED_AT = 20  # files skipped as binary whose first bytes are read for a BOM


def _wide_files(ctx: ToolContext, paths: list[str]) -> dict[str, str]:
    """Of the files skipped as binary, those that are UTF-16/UTF-32 text
    with a byte order mark, and the encoding of each."""
    out: dict[str, str] = {}
    for path in paths:
        try:
            # opened again by name: decided again on what is there now
            with ctx.view.open_read(path, Op.SEARCH, follow=False) as opened:
                head = opened.pread(4096, 0)
        except (OSError, Refusal):
            continue
        encoding = wide_encoding(head)
        if encoding is not None and decode_wide(head[:len(head) - len(head) % 4]) is not None:
            out[path] = encoding
    return out


def _finish_notes(ctx: ToolContext, result: GrepResult, notes: list[str], grep: _Search,
                  over: bool, outcome: _Outcome, info: os.stat_result) -> None:
    what = {"matches": "matching lines", "files": "files", "counts": "files"}[grep.mode]
    if over:
        more = (", or use outputMode \"files\" or \"counts\" for an overview"
                if grep.mode == "matches" else "")
        notes.append(f"Showing the first {grep.limit} {what}; there are more. Narrow 'path', "
                     f"'include' or the pattern{more}.")
    if outcome.incomplete:
        notes.append(stopped_note(ctx))
    if outcome.ignored or outcome.counts.ignored_dirs:
        notes.append(ignored_note(outcome.ignored or 0, "file", outcome.counts))
    if st.S_ISDIR(info.st_mode) and result.get("include") and not grep.included:
        notes.append(f"include {result['include']!r} matched no file.")
    wide = _wide_files(ctx, grep.binary_paths)
    if wide:
        result["encodings"] = wide
        shown = ", ".join(f"{_said(path)} ({encoding.upper()})" for path, encoding in
                          list(wide.items())[:5])
        notes.append(f"Not searched, being UTF-16 or UTF-32 text rather than UTF-8: {shown}; "
                     "read_file reads them.")
    if not st.S_ISDIR(info.st_mode) and grep.binary_path and grep.binary_path not in wide:
        notes.append(f"{_said(grep.binary_path)} is a binary file; it was not searched.")
    if not grep.results and not over:
        pattern = result["pattern"]
        if grep.pattern.searcher is not None and "\\n" in pattern:
            notes.insert(0, "grep matches one line at a time, so \\n never matches.")
        notes.insert(0, f"No {'line' if grep.mode == 'matches' else 'file'} matches "
                        f"{pattern!r}.")
    if notes:
        result["note"] = " ".join(notes)


# the list under the key outputMode names (matches, files or counts) is described there
OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"}, "pattern": {"type": "string"},
    "outputMode": {"type": "string", "enum": list(MODES)},
    "matches": {"type": "array", "items": {"type": "object"}},
    "files": {"type": "array", "items": {"type": "string"}},
    "counts": {"type": "array", "items": {"type": "object"}},
    "truncated": {"type": "boolean"},
    "filesSearched": {"type": "integer", "description": "Files whose content was read."},
    "filesIncluded": {"type": "integer", "description": (
        "Files under 'path' whose names passed 'include' (every file when it is not given), "
        "read or not: links, special, binary, unreadable and secret files are counted here "
        "and skipped, so it may be larger than filesSearched.")},
    "limit": {"type": "integer"},
    "context": {"type": "integer"}, "include": {"type": "string"},
    "skipped": {"type": "object"}, "ignored": IGNORED_SCHEMA,
    "encodings": {"type": "object", "additionalProperties": {"type": "string"},
                  "description": "files not searched being UTF-16/UTF-32 text: their encoding"},
    "denied": {"type": "integer"},
    "translated": {"type": "object", "properties": {
        "pattern": {"type": "string"}, "notes": {"type": "array", "items": {"type": "string"}}},
        "required": ["pattern", "notes"]},
    "note": {"type": "string"}, "suggestedTool": {"type": "string"},
    "suggestedArgs": {"type": "object"}, "diagnosis": {"type": "string"},
}, ["path", "pattern", "outputMode", "truncated", "filesSearched"])

TOOL = ToolSpec(name="grep", title="Search file contents", description=DESCRIPTION,
                schema=SCHEMA, output_schema=OUTPUT_SCHEMA, run=run, request=GrepRequest,
                suggests=Suggests(retry_on=frozenset({"file", "directory"})))
