"""grep: find lines by text or regular expression in one file or a tree.

Decisions (DESIGN.md leaves them to the tool):

* ``path`` is a file or a directory (ADR 0069); ``include`` filters the
  file's name in both cases (a pattern with ``/`` is matched against the
  path below ``path``).
* Regular expressions are Python's ``re``; the forms that backtrack
  exponentially are refused before anything runs (``unsafe_regex``), see
  :mod:`._search_text`.  A line break in the pattern is refused: matching is
  per line.
* Files are read in chunks of whole lines (1 MiB), never whole; a line
  longer than 1 MiB is searched in 1 MiB windows.  A file whose first 8,000
  bytes hold a NUL is binary (git's rule) and skipped.  Binary, unreadable
  (permission, I/O error, vanished), special (FIFO, socket, device) and
  hard-linked files and symlinks are skipped and counted; symlinks are never
  followed, so nothing is searched twice or outside the root.
* ``.gitignore`` and ``.git`` as for glob (counted; ``includeIgnored``).
* Results are in path order, then line order; ``truncated`` is true only
  when one more result than the limit was found (or the walk hit
  ``Limits.search_files``).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as st
from typing import Any

from ..contained import SpecialFileError
from ._context import ToolContext
from ._refusal import Code, Kind, Refusal
from ._registry import Suggests, ToolSpec, success_schema
from ._requests import GrepRequest
from ._search import (Base, GlobMatcher, IgnoreRules, Walk, WalkStats, ancestor_rules,
                      compile_glob, ignored_note, open_base)
from ._search_text import Matcher, compile_matcher

CHUNK = 1 << 20  # bytes read at a time from a large file
MAX_LINE = 1 << 20  # a longer line is searched in windows of this size
BINARY_SNIFF = 8000  # git's rule: a NUL in the first 8,000 bytes means binary

MODES = ("matches", "files", "counts")

DESCRIPTION = (
    "Search file contents for a regular expression (Python re syntax) or, with regex: false, "
    "for literal text. 'path' is one file or a directory searched recursively (default \".\"); "
    "'include' filters file names with a glob (e.g. \"*.py\", \"*.{ts,tsx}\"), also when 'path' "
    "is a file. outputMode \"matches\" (default) gives path, 1-based line and the line's text "
    "(with 'context' lines before and after), \"files\" the paths that contain a match, "
    "\"counts\" the number of matching lines per file; 'limit' caps the results and "
    "'truncated' says when there were more. Matching is per line. Binary files, unreadable "
    "files, FIFOs and devices are skipped and counted; symlinks are not followed; paths "
    "ignored by .gitignore and .git directories are skipped and counted (includeIgnored: true "
    "searches them). Regular expressions that can backtrack exponentially (nested quantifiers "
    "like (a+)+, backreferences) are refused. To find files by name use glob."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1, "maxLength": 2000,
                    "description": "Regular expression, or literal text with regex: false."},
        "path": {"type": "string", "minLength": 1, "maxLength": 4096, "default": ".",
                 "description": "File or directory to search, relative to the root (default "
                                "\".\")."},
        "include": {"type": "string", "minLength": 1, "maxLength": 1000,
                    "description": "Glob on file names, e.g. \"*.py\" or \"*.{js,ts}\"."},
        "regex": {"type": "boolean", "default": True,
                  "description": "false searches for the pattern as literal text."},
        "caseInsensitive": {"type": "boolean", "default": False},
        "context": {"type": "integer", "minimum": 0, "default": 0,
                    "description": "Lines shown before and after each matching line."},
        "limit": {"type": "integer", "minimum": 1,
                  "description": "Most results (lines, files or counts) to return."},
        "outputMode": {"type": "string", "enum": list(MODES), "default": "matches"},
        "includeIgnored": {"type": "boolean", "default": False,
                           "description": "Also search paths ignored by .gitignore, and .git."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


class _Search:
    """The state of one grep call."""

    def __init__(self, ctx: ToolContext, matcher: Matcher, mode: str, limit: int,
                 context: int) -> None:
        self.ctx = ctx
        self.backend = ctx.root.backend
        self.matcher = matcher
        self.mode = mode
        self.limit = limit
        self.context = context
        self.results: list[Any] = []
        self.searched = 0
        self.skipped = {"binary": 0, "unreadable": 0, "symlinks": 0, "special": 0,
                        "hardlinks": 0}
        self.binary_path: str | None = None

    @property
    def full(self) -> bool:
        return len(self.results) > self.limit

    # -- one file ---------------------------------------------------------
    def file(self, fd: int, path: str) -> None:
        """Search the open file ``fd`` (named ``path`` in results)."""
        backend = self.backend
        info = backend.fstat(fd)
        if not st.S_ISREG(info.st_mode):
            self.skipped["special"] += 1
            return
        if info.st_nlink > 1 and not self.ctx.allow_hardlinks:
            self.skipped["hardlinks"] += 1  # its content may be a file outside the root
            return
        want = info.st_size + 1 if info.st_size < CHUNK else CHUNK
        data = backend.read(fd, want)
        if b"\x00" in data[:BINARY_SNIFF]:
            self.skipped["binary"] += 1
            self.binary_path = path
            return
        self.searched += 1
        matcher = self.matcher
        eof = len(data) < want
        if eof and not matcher.text and not matcher.any_in(data, 0, len(data)):
            return  # the common case: a small file without a match
        self._stream(fd, path, data, eof)

    def _stream(self, fd: int, path: str, data: bytes, eof: bool) -> None:
        matcher, backend, mode = self.matcher, self.backend, self.mode
        nl = matcher.nl
        newlines = 0  # line breaks before the current buffer
        last_line = 0  # a long line searched in windows is reported once
        count = 0
        found: list[dict[str, Any]] = []
        carry = b""
        while True:
            raw = carry + data if carry else data
            if eof:
                end = len(raw)
            else:
                end = raw.rfind(b"\n") + 1
                if end == 0:
                    if len(raw) < MAX_LINE:
                        carry, data = raw, backend.read(fd, CHUNK)
                        eof = not data
                        continue
                    end = len(raw)  # one very long line: search this window of it
            buf = matcher.prepare(raw[:end]) if matcher.text else raw
            bend = len(buf) if matcher.text else end
            if matcher.any_in(buf, 0, bend):
                counted = 0
                for ls, le, at in matcher.lines(buf, 0, bend):
                    newlines += buf.count(nl, counted, ls)  # type: ignore[arg-type]
                    counted = ls
                    line = newlines + 1
                    if line == last_line:
                        continue
                    last_line = line
                    if mode == "files":
                        self.results.append(path)
                        return
                    count += 1
                    if mode == "matches":
                        item = {"path": path, "line": line}
                        item.update(self._text(buf[ls:le], at - ls))
                        found.append(item)
                        self.results.append(item)
                        if self.full:
                            break
                newlines += buf.count(nl, counted, bend)  # type: ignore[arg-type]
                if self.full:
                    break
            else:
                newlines += buf.count(nl, 0, bend)  # type: ignore[arg-type]
            carry = raw[end:]
            if eof:
                break
            data = backend.read(fd, CHUNK)
            eof = not data
        if mode == "counts" and count:
            self.results.append({"path": path, "count": count})
        if found and self.context:
            self._add_context(fd, found)

    def _text(self, line: bytes | str, at: int) -> dict[str, Any]:
        """The shown text of a matching line, cut around the match."""
        cap = self.ctx.limits.search_line_chars
        if isinstance(line, bytes):
            if len(line) <= cap:
                text = line.decode("utf-8", "replace")
                at = len(line[:at].decode("utf-8", "replace"))
            else:  # decode a window only: the line may be a megabyte
                lo = max(0, at - 4 * cap)
                window = line[lo:at + 4 * cap]
                text = window.decode("utf-8", "replace")
                at = len(line[lo:at].decode("utf-8", "replace"))
                if lo:
                    text, at = "\ufffd" + text, at + 1  # a cut character at the front is fine
        else:
            text = line
        text = text.rstrip("\r")
        if len(text) <= cap:
            return {"text": text}
        start = max(0, min(at - cap // 4, len(text) - cap))
        return {"text": text[start:start + cap], "cut": True}

    def _short(self, line: bytes) -> str:
        cap = self.ctx.limits.search_line_chars
        return line[:4 * cap].decode("utf-8", "replace").rstrip("\r")[:cap]

    def _add_context(self, fd: int, found: list[dict[str, Any]]) -> None:
        """Fill ``before``/``after`` of this file's matches, re-reading it as
        a stream; a context never repeats a line shown by a neighbour."""
        c = self.context
        lines = [m["line"] for m in found]
        wanted: set[int] = set()
        spans = []
        shown = 0  # the last line a previous match showed (itself or after it)
        for i, line in enumerate(lines):
            low = max(line - c, shown + 1, 1)
            high = line + c if i + 1 == len(lines) else min(line + c, lines[i + 1] - 1)
            high = max(high, line)
            spans.append((low, high))
            wanted.update(range(low, high + 1))
            shown = high
        wanted.difference_update(lines)
        last = max(high for _, high in spans)
        texts: dict[int, str] = {}
        number, offset, carry = 0, 0, b""
        while number < last:
            data = self.backend.pread(fd, CHUNK, offset)
            offset += len(data)
            if not data:
                if carry:
                    number += 1
                    if number in wanted:
                        texts[number] = self._short(carry)
                break
            parts = (carry + data).split(b"\n")
            carry = parts.pop()
            if len(carry) > MAX_LINE:
                carry = carry[:MAX_LINE]  # only its start can be shown
            for part in parts:
                number += 1
                if number in wanted:
                    texts[number] = self._short(part)
                if number >= last:
                    break
        for match, (low, high) in zip(found, spans):
            line = match["line"]
            match["before"] = [texts[n] for n in range(low, line) if n in texts]
            match["after"] = [texts[n] for n in range(line + 1, high + 1) if n in texts]


def _explicit(args: dict[str, Any]) -> dict[str, Any]:
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
                      details={"field": "include", "kind": "directory"})
    return compile_glob(text, "include")


def _include_matches(include: GlobMatcher | None, dir_sub: str, name: str) -> bool:
    if include is None:
        return True
    return include.match_name(name) if include.name_only else include.match(dir_sub + name)


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rel = ctx.rel(args["path"])
    pattern = args["pattern"]
    try:
        matcher = compile_matcher(pattern, regex=args["regex"],
                                  ignore_case=args["caseInsensitive"])
    except Refusal as refusal:
        if refusal.kind is Kind.REGEX:  # a literal search of the same text works
            raise refusal.replace(suggest=("grep", {**_explicit(args), "regex": False})) from None
        raise
    include = _include(args.get("include"))
    ctx.check_deny(rel)
    info = ctx.root.stat(rel)
    shown = rel.rstrip("/") or "."
    is_dir = st.S_ISDIR(info.st_mode)
    if not is_dir:
        if not st.S_ISREG(info.st_mode):
            ctx.root.backend.close(ctx.root.open(rel, os.O_RDONLY))  # raises SpecialFileError
        ctx.check_hardlink(shown, info)
    context_cap, limit_cap = ctx.limits.grep_context, ctx.limits.search_results
    context = min(args["context"], context_cap)
    limit = min(args.get("limit") or limit_cap, limit_cap)
    mode = args["outputMode"]
    ctx.authorize(GrepRequest(shown, pattern))
    flags = os.O_RDONLY | (os.O_DIRECTORY if is_dir else 0)
    base = open_base(ctx, rel, info, flags)
    search = _Search(ctx, matcher, mode, limit, context if mode == "matches" else 0)
    notes: list[str] = []
    result: dict[str, Any] = {"path": base.shown, "pattern": pattern, "outputMode": mode}
    try:
        if is_dir:
            stats, ignored = _grep_tree(ctx, search, base, include, args["includeIgnored"],
                                        notes)
        else:
            stats, ignored = WalkStats(), None
            if _include_matches(include, "", posixpath.basename(base.shown)):
                search.file(base.fd, base.shown)
            else:
                notes.append(f"include {args['include']!r} does not match the name of "
                             f"{base.shown}, so it was not searched.")
    finally:
        ctx.root.backend.close(base.fd)
    over = search.full
    results = search.results[:limit]
    result[mode] = results
    result["truncated"] = over or stats.incomplete
    result["filesSearched"] = search.searched
    skipped = dict(search.skipped)
    skipped.update({"unreadableDirectories": stats.unreadable_dirs, "tooDeep": stats.too_deep,
                    "undecodableNames": stats.undecodable})
    result["skipped"] = {k: v for k, v in skipped.items()
                         if v or k in ("binary", "unreadable")}
    if ignored is not None:
        result["ignored"] = {"paths": ignored, "directories": stats.ignored_dirs}
        if stats.ignored_examples:
            result["ignored"]["examples"] = stats.ignored_examples
    if stats.denied:
        result["denied"] = stats.denied
    if args["context"] > context_cap:
        notes.append(f"context was capped at {context_cap} lines.")
    if args.get("limit") and args["limit"] > limit_cap:
        notes.append(f"limit was capped at {limit_cap}.")
    result["limit"] = limit
    if context and mode == "matches":
        result["context"] = context
    _finish_notes(result, notes, search, over, stats, ignored, pattern, args, ctx, is_dir)
    return result


def _grep_tree(ctx: ToolContext, search: _Search, base: Base, include: GlobMatcher | None,
               include_ignored: bool, notes: list[str]) -> tuple[WalkStats, int]:
    root = ctx.root
    rules: IgnoreRules | None = None
    if not include_ignored:
        rules = ancestor_rules(ctx, base.real)
        if rules and base.real != "." and rules.ignored(base.real, True):
            notes.append(f"{base.shown} is ignored by .gitignore; it was searched because it "
                         "was named.")
            rules = IgnoreRules()
    enter = include.could_contain if include is not None and include.prunes else None
    walk = Walk(ctx, base, rules=rules, skip_git=not include_ignored, enter=enter)
    skipped = search.skipped
    ignored = 0
    with walk:
        for dir_sub, name, kind, dir_fd in walk:
            if not _include_matches(include, dir_sub, name):
                continue
            if kind == "symlink":
                skipped["symlinks"] += 1
                continue
            if kind == "other":
                skipped["special"] += 1
                continue
            if rules and walk.ignored(dir_sub, name, False):
                ignored += 1
                continue
            if walk.denied(dir_sub, name):
                walk.stats.denied += 1
                continue
            try:
                fd = root.open(name, os.O_RDONLY, dir_fd=dir_fd)
            except SpecialFileError:
                skipped["special"] += 1
                continue
            except OSError as exc:  # vanished, permissions, swapped for a link since listing
                skipped["symlinks" if exc.errno == errno.ELOOP else "unreadable"] += 1
                continue
            try:
                search.file(fd, base.shown_path(dir_sub + name))
            except OSError:  # EIO and the like, mid-read: keep what the others gave
                skipped["unreadable"] += 1
            finally:
                root.backend.close(fd)
            if search.full:
                break
    return walk.stats, ignored


def _finish_notes(result: dict[str, Any], notes: list[str], search: _Search, over: bool,
                  stats: WalkStats, ignored: int | None, pattern: str, args: dict[str, Any],
                  ctx: ToolContext, is_dir: bool) -> None:
    what = {"matches": "matching lines", "files": "files", "counts": "files"}[search.mode]
    if over:
        more = (", or use outputMode \"files\" or \"counts\" for an overview"
                if search.mode == "matches" else "")
        notes.append(f"Showing the first {search.limit} {what}; there are more. Narrow 'path', "
                     f"'include' or the pattern{more}.")
    if stats.incomplete:
        notes.append(f"The search stopped after {ctx.limits.search_files} files, so matches may "
                     "be missing; search a smaller directory.")
    if ignored or stats.ignored_dirs:
        notes.append(ignored_note(ignored or 0, "file", stats))
    if not is_dir and search.binary_path:
        notes.append(f"{search.binary_path} is a binary file; it was not searched.")
    if not search.results and not over:
        if args["regex"] and "\\n" in pattern:
            notes.insert(0, "grep matches one line at a time, so \\n never matches.")
        notes.insert(0, f"No {'line' if search.mode == 'matches' else 'file'} matches "
                        f"{pattern!r}.")
    if notes:
        result["note"] = " ".join(notes)


# TODO(search): describe the success fields fully (the shape depends on outputMode).
OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"}, "pattern": {"type": "string"},
    "outputMode": {"type": "string"}, "truncated": {"type": "boolean"},
    "filesSearched": {"type": "integer"},
}, ["path", "pattern", "outputMode", "truncated", "filesSearched"])

TOOL = ToolSpec(name="grep", title="Search file contents", description=DESCRIPTION,
                schema=SCHEMA, output_schema=OUTPUT_SCHEMA, run=run, request=GrepRequest,
                suggests=Suggests(retry_on=frozenset({"file", "directory"})))
