"""What glob and grep share: glob patterns, .gitignore rules and the walk.

* :func:`compile_glob` turns a glob (``**``, ``*``, ``?``, ``[..]``,
  ``{a,b}``) into a :class:`GlobMatcher`.  A pattern without ``/`` matches a
  name at any depth (``*.py`` is ``**/*.py``), as in .gitignore and ripgrep.
  ``*`` and ``?`` never cross ``/`` and do match a leading dot.
* :class:`IgnoreRules` applies the ``.gitignore`` files met on the way down,
  with git's precedence (a deeper file wins, and in one file the last
  matching line wins; an ignored directory is not entered, so nothing in it
  can be re-included).  The patterns themselves are pathspec's, and so is
  one known difference from git: pathspec's ``*`` also matches every
  directory, so the "ignore all but" idiom ``*`` + ``!*/`` does not re-open
  directories (``*`` + ``!*.py`` works for files in the same directory).
  Symlinked .gitignore files are not read (git does not follow them either).
* :class:`Walk` lists a tree below one directory fd, in code-point order of
  the full path, so a capped search can stop at the cap plus one and still
  be sorted.  Directories are entered with ``Root.open(name, dir_fd=fd)``
  (one plain name, ``O_NOFOLLOW``): a symlink is never followed, so nothing
  outside the root (and no directory twice) is ever walked.
"""

from __future__ import annotations

import os
import re
import stat as st
from dataclasses import dataclass, field
from typing import Callable, Iterator

import pathspec

from ._context import ToolContext
from ._refusal import Code, Refusal

__all__ = ["GlobMatcher", "compile_glob", "IgnoreRules", "Walk", "Base", "open_base",
           "ignored_note", "IGNORE_FILE", "GIT_DIR"]

IGNORE_FILE = ".gitignore"
GIT_DIR = ".git"
MAX_ALTERNATIVES = 64  # what one {a,b} pattern may expand to
MAX_DEPTH = 128  # directories below the base; each level holds one fd
MAX_IGNORE_FILE_BYTES = 1024 * 1024  # a larger .gitignore is read up to here
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY


# -- glob patterns -------------------------------------------------------------

def _bad_pattern(field_name: str, pattern: str, problem: str, hint: str, kind: str) -> Refusal:
    return Refusal(Code.INVALID_ARGUMENT, f"{field_name} {pattern!r} {problem}", hint,
                   details={"field": field_name, "pattern": pattern, "kind": kind})


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside ``{}``, ``[]`` and escapes."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        after = _skip_literal(text, i)
        if after is not None:
            i = after
            continue
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _skip_literal(text: str, i: int) -> int | None:
    """Index just past the escape or ``[...]`` class at ``text[i]`` (where
    braces and commas are plain characters), or ``None``."""
    if text[i] == "\\":
        return i + 2
    if text[i] == "[":
        end = _class_end(text, i)
        if end > 0:
            return end + 1
    return None


def _class_end(text: str, i: int) -> int:
    """Index of the ``]`` closing the class opened at ``text[i]``, or -1."""
    j = i + 1
    if j < len(text) and text[j] in "!^":
        j += 1
    if j < len(text) and text[j] == "]":
        j += 1
    end = text.find("]", j)
    if end < 0 or "/" in text[i:end]:
        return -1
    return end


def _brace_span(text: str) -> tuple[int, int] | None:
    """The first ``{...}`` holding a top-level comma (else braces are literal)."""
    i = 0
    while i < len(text):
        after = _skip_literal(text, i)
        if after is not None:
            i = after
            continue
        if text[i] == "{":
            depth, j = 1, i + 1
            while j < len(text) and depth:
                c = text[j]
                if c == "\\":
                    j += 2
                    continue
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                j += 1
            if depth == 0 and len(_split_top(text[i + 1:j - 1], ",")) > 1:
                return i, j - 1
        i += 1
    return None


def expand_braces(text: str, limit: int = MAX_ALTERNATIVES) -> list[str] | None:
    """Every alternative of ``{a,b}`` groups (nested allowed), in order;
    ``None`` if there would be more than ``limit``."""
    out: list[str] = []
    pending = [text]
    while pending:
        item = pending.pop(0)
        span = _brace_span(item)
        if span is None:
            if item not in out:
                out.append(item)
            if len(out) > limit:
                return None
            continue
        start, end = span
        choices = _split_top(item[start + 1:end], ",")
        pending[0:0] = [item[:start] + c + item[end + 1:] for c in choices]
        if len(pending) + len(out) > 4 * limit:
            return None
    return out


def _segment_regex(seg: str) -> str:
    """Regex text for one path segment (no ``/``)."""
    out, i = [], 0
    while i < len(seg):
        ch = seg[i]
        if ch == "*":
            while i + 1 < len(seg) and seg[i + 1] == "*":
                i += 1  # "a**b" inside a segment is "a*b"
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = _class_end(seg, i)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = seg[i + 1:end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                chars = "".join("-" if c == "-" else re.escape(c) for c in body)
                out.append(f"[^/{chars}]" if negate else f"(?!/)[{chars}]")
                i = end
        elif ch == "\\" and i + 1 < len(seg):
            i += 1
            out.append(re.escape(seg[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _plain_suffix(segment: str) -> str | None:
    """``".py"`` for the segment ``*.py``: a star then plain characters."""
    if segment.startswith("*") and len(segment) > 1 and \
            not any(c in "*?[]{}\\" for c in segment[1:]):
        return segment[1:]
    return None


@dataclass
class _Alternative:
    segments: list[str]  # "**" or the regex text of one segment
    prefix: list[re.Pattern[str]] = field(default_factory=list)  # segments before the first **
    recursive: bool = False  # has a ** segment
    source: str = ""  # the last segment as written

    def regex(self) -> str:
        out = []
        last = len(self.segments) - 1
        for i, seg in enumerate(self.segments):
            if seg == "**":
                out.append(".*" if i == last else "(?:[^/]+/)*")
            else:
                out.append(seg if i == last else seg + "/")
        return "".join(out)


class GlobMatcher:
    """A compiled glob.  Paths given to it are relative to the search base."""

    def __init__(self, alternatives: list[_Alternative], dirs_only: bool) -> None:
        self.dirs_only = dirs_only
        self._alts = alternatives
        self._regex = re.compile("(?s:" + "|".join(a.regex() for a in alternatives) + ")")
        # "**/<name pattern>" only: the name alone decides (no path built)
        self.name_only = all(len(a.segments) == 2 and a.segments[0] == "**" for a in alternatives)
        self._suffix: str | None = None
        if self.name_only:
            self._name_regex = re.compile("(?s:" + "|".join(a.segments[1] for a in alternatives)
                                          + ")")
            if len(alternatives) == 1:
                self._suffix = _plain_suffix(alternatives[0].source)
        self.prunes = not all(a.recursive and not a.prefix for a in alternatives)

    def match_name(self, name: str) -> bool:
        if self._suffix is not None:  # "*.py": a string test is enough
            return name.endswith(self._suffix)
        return self._name_regex.fullmatch(name) is not None

    def match(self, sub: str) -> bool:
        return self._regex.fullmatch(sub) is not None

    def could_contain(self, dir_sub: str) -> bool:
        """Whether anything below the directory ``dir_sub`` can match."""
        if not self.prunes:
            return True
        parts = dir_sub.split("/")
        depth = len(parts)
        for alt in self._alts:
            if not alt.recursive and depth >= len(alt.segments):
                continue
            if all(p.fullmatch(part) for p, part in zip(alt.prefix, parts)):
                return True
        return False


def compile_glob(pattern: str, field_name: str = "pattern", *,
                 anchored: bool = False) -> GlobMatcher:
    """Compile ``pattern`` (already root-normalised by the caller: no
    leading ``/``).  A trailing ``/`` matches directories only.  Refuses
    ``..`` segments and brace groups that expand too far."""
    dirs_only = pattern.endswith("/")
    text = pattern.rstrip("/") if dirs_only else pattern
    if text in ("", "."):
        raise _bad_pattern(field_name, pattern, "names nothing to match",
                           "Pass a pattern such as \"**/*.py\" or \"src/*\".", "pattern")
    alternatives = expand_braces(text)
    if alternatives is None:
        raise _bad_pattern(field_name, pattern, f"expands to more than {MAX_ALTERNATIVES} "
                           "alternatives", "Use fewer or smaller {a,b} groups.", "pattern")
    compiled = []
    for alt in alternatives:
        segments = [s for s in alt.split("/") if s not in ("", ".")]
        if ".." in segments:
            raise _bad_pattern(field_name, pattern, "contains '..'; patterns only match below "
                               "'path'", "Remove '..' from the pattern and pass the directory "
                               "to search as 'path' instead.", "dotdot")
        if alt.startswith("/"):
            raise _bad_pattern(field_name, pattern, "has an alternative that starts with '/'",
                               "Write every alternative relative to 'path'.", "absolute")
        if not segments:
            raise _bad_pattern(field_name, pattern, "names nothing to match",
                               "Pass a pattern such as \"**/*.py\" or \"src/*\".", "pattern")
        if len(segments) == 1 and not anchored:
            segments = ["**", *segments]
        # consecutive ** are one **
        merged: list[str] = []
        for seg in segments:
            if not (seg == "**" and merged and merged[-1] == "**"):
                merged.append(seg)
        regexes = [s if s == "**" else _segment_regex(s) for s in merged]
        recursive = "**" in regexes
        prefix_len = regexes.index("**") if recursive else len(regexes)
        prefix = [re.compile("(?s:" + r + ")") for r in regexes[:prefix_len]]
        compiled.append(_Alternative(regexes, prefix, recursive, merged[-1]))
    return GlobMatcher(compiled, dirs_only)


# -- .gitignore ------------------------------------------------------------------

def parse_ignore(data: bytes) -> pathspec.GitIgnoreSpec | None:
    """The rules of one .gitignore (``None`` if it has none).  A line
    pathspec cannot parse is dropped, as git drops it."""
    lines = data.decode("utf-8", "replace").splitlines()
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # one bad line: keep the others
        good = []
        for line in lines:
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except Exception:
                continue
            good.append(line)
        spec = pathspec.GitIgnoreSpec.from_lines(good)
    return spec if len(spec) else None


_NAMED_GROUP = re.compile(r"\(\?P<[^>]*>")


def _any_line(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """One regex that matches whatever at least one line of ``spec``
    matches: a cheap "no line applies" test before pathspec's exact (and
    slower) decision.  ``None`` when it cannot be built (then every path
    goes to pathspec)."""
    parts = []
    for pattern in spec.patterns:
        if pattern.include is None:
            continue  # comments and blank lines
        regex = getattr(pattern, "regex", None)
        text = getattr(regex, "pattern", None)
        if not isinstance(text, str):
            return None
        parts.append("(?:" + _NAMED_GROUP.sub("(?:", text) + ")")
    if not parts:
        return None
    try:
        return re.compile("|".join(parts))
    except re.error:
        return None


class IgnoreRules:
    """The .gitignore files in force at one point of a walk.

    Each is kept with the root-relative directory it sits in (``""`` for
    the root, else ``"a/b/"``); a path is checked against the deepest first
    and the first file that has a matching line decides.
    """

    def __init__(self) -> None:
        self._specs: list[tuple[str, pathspec.GitIgnoreSpec, re.Pattern[str] | None]] = []

    def __bool__(self) -> bool:
        return bool(self._specs)

    def push(self, prefix: str, spec: pathspec.GitIgnoreSpec) -> None:
        self._specs.append((prefix, spec, _any_line(spec)))

    def pop(self) -> None:
        self._specs.pop()

    def ignored(self, real: str, is_dir: bool) -> bool:
        """Whether the root-relative ``real`` path is ignored."""
        for prefix, spec, any_line in reversed(self._specs):
            if not real.startswith(prefix):
                continue
            sub = real[len(prefix):] + ("/" if is_dir else "")
            if any_line is not None and any_line.search(sub) is None:
                continue  # no line of this file applies
            result = spec.check_file(sub)
            if result.include is not None:
                return bool(result.include)
        return False


def read_small(ctx: ToolContext, fd: int, limit: int) -> bytes:
    backend = ctx.root.backend
    chunks, size = [], 0
    while size < limit:
        chunk = backend.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def load_ignore_at(ctx: ToolContext, dir_fd: int) -> pathspec.GitIgnoreSpec | None:
    """The .gitignore in the directory ``dir_fd``; ``None`` if absent,
    unreadable, or a symlink (git does not follow those either)."""
    try:
        fd = ctx.root.open(IGNORE_FILE, os.O_RDONLY, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not st.S_ISREG(ctx.root.backend.fstat(fd).st_mode):
            return None
        return parse_ignore(read_small(ctx, fd, MAX_IGNORE_FILE_BYTES))
    except OSError:
        return None
    finally:
        ctx.root.backend.close(fd)


def ancestor_rules(ctx: ToolContext, real: str) -> IgnoreRules:
    """The .gitignore files of the directories above ``real`` (the root
    down to its parent), which apply to everything below it."""
    rules = IgnoreRules()
    if real == ".":
        return rules
    parts = real.split("/")
    for depth in range(len(parts)):
        directory = "/".join(parts[:depth]) or "."
        try:
            fd = ctx.root.open(directory, _DIR_FLAGS)
        except OSError:
            continue
        try:
            spec = load_ignore_at(ctx, fd)
        finally:
            ctx.root.backend.close(fd)
        if spec is not None:
            rules.push("" if directory == "." else directory + "/", spec)
    return rules


# -- the base of a search --------------------------------------------------------

@dataclass
class Base:
    """An opened search base: ``shown`` is the path as the caller wrote it
    (results are named from it), ``real`` where it really is (deny rules and
    .gitignore files are judged there)."""

    fd: int
    shown: str
    real: str
    info: os.stat_result

    def shown_path(self, sub: str) -> str:
        return sub if self.shown == "." else f"{self.shown}/{sub}"

    def real_path(self, sub: str) -> str:
        return sub if self.real == "." else f"{self.real}/{sub}"


def open_base(ctx: ToolContext, rel: str, before: os.stat_result, flags: int) -> Base:
    """Open ``rel`` (after authorization) and fail closed (``STALE``) if it
    is no longer what was stat-ed and authorized before."""
    fd = ctx.root.open(rel, flags)
    try:
        info = ctx.root.backend.fstat(fd)
        if (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
            shown = rel.rstrip("/") or "."
            raise Refusal(Code.STALE, f"{shown} was replaced while the call was being "
                          "authorized; nothing was searched", "Repeat the call to search what "
                          "is there now.", details={"path": shown, "kind": "swapped"})
        real = ctx.root.realpath(rel)
    except BaseException:
        ctx.root.backend.close(fd)
        raise
    shown = rel.rstrip("/") or "."
    return Base(fd, shown, real, info)


# -- the walk ------------------------------------------------------------------------

@dataclass
class WalkStats:
    ignored_dirs: int = 0
    ignored_examples: list[str] = field(default_factory=list)
    unreadable_dirs: int = 0
    too_deep: int = 0
    undecodable: int = 0
    denied: int = 0
    incomplete: bool = False  # stopped at Limits.search_files

    def note_ignored(self, shown: str) -> None:
        self.ignored_dirs += 1
        if len(self.ignored_examples) < 10:
            self.ignored_examples.append(shown)


class Walk:
    """Entries below ``base``, sorted by full path, never through a symlink.

    Iterating yields ``(dir_sub, name, kind, dir_fd)`` for every entry that
    is not a directory, and for directories too when ``yield_dirs``:
    ``dir_sub`` is the containing directory relative to the base (``""`` or
    ``"a/b/"``), ``kind`` is ``file``, ``dir``, ``symlink`` or ``other``, and
    ``dir_fd`` is valid until the next step.  ``enter(dir_sub_of_child)``
    may veto entering a directory.  ``.git`` and ignored directories are not
    entered (counted in :attr:`stats`) unless ``rules`` is ``None``.
    """

    def __init__(self, ctx: ToolContext, base: Base, *, rules: IgnoreRules | None,
                 skip_git: bool, enter: Callable[[str], bool] | None = None,
                 yield_dirs: bool = False) -> None:
        self.ctx = ctx
        self.base = base
        self.rules = rules
        self.skip_git = skip_git
        self.enter = enter
        self.yield_dirs = yield_dirs
        self.stats = WalkStats()
        self.files = 0
        # skip building real paths for deny checks when there is no deny list
        self._may_deny = ctx.may_deny

    def ignored(self, dir_sub: str, name: str, is_dir: bool) -> bool:
        rules = self.rules
        return bool(rules) and rules.ignored(self.base.real_path(dir_sub + name), is_dir)

    def denied(self, dir_sub: str, name: str) -> bool:
        return self._may_deny and self.ctx.is_denied(self.base.real_path(dir_sub + name))

    def _list(self, fd: int) -> list[tuple[str, str, str]]:
        """``(sort key, name, kind)`` of each entry, sorted.  A directory
        sorts as ``name/``, so walking in this order lists full paths in
        code-point order (``a.txt`` < ``a/b`` because ``.`` < ``/``)."""
        entries = []
        append = entries.append
        with self.ctx.root.backend.scandir(fd) as it:
            for entry in it:
                name = entry.name
                if not name.isascii():
                    try:
                        name.encode("utf-8")
                    except UnicodeEncodeError:  # not UTF-8 on disk: no model can name it
                        self.stats.undecodable += 1
                        continue
                if entry.is_file(follow_symlinks=False):
                    append((name, name, "file"))
                elif entry.is_dir(follow_symlinks=False):
                    append((name + "/", name, "dir"))
                elif entry.is_symlink():
                    append((name, name, "symlink"))
                else:
                    append((name, name, "other"))
        entries.sort()
        return entries

    def __iter__(self) -> Iterator[tuple[str, str, str, int]]:
        self._gen = self._entries()
        return self._gen

    def __enter__(self) -> "Walk":
        return self

    def __exit__(self, *exc: object) -> None:
        # a search that stops early closes its directory fds now, not when
        # the generator happens to be collected
        gen = getattr(self, "_gen", None)
        if gen is not None:
            gen.close()

    def _entries(self) -> Iterator[tuple[str, str, str, int]]:
        ctx, root, backend = self.ctx, self.ctx.root, self.ctx.root.backend
        stats, rules, limit = self.stats, self.rules, ctx.limits.search_files
        base = self.base
        # frames: (fd, dir_sub, entries iterator, pushed a .gitignore)
        stack: list[tuple[int, str, Iterator[tuple[str, str, str]], bool]] = []
        try:
            entries = self._list(base.fd)
            pushed = self._push_rules(base.fd, "", entries)
            stack.append((base.fd, "", iter(entries), pushed))
            while stack:
                fd, dir_sub, it, pushed = stack[-1]
                for _key, name, kind in it:
                    if kind != "dir":
                        self.files += 1
                        if self.files > limit:
                            stats.incomplete = True
                            return
                        yield dir_sub, name, kind, fd
                        continue
                    sub = dir_sub + name
                    enter = self.enter
                    if enter is not None and not self.yield_dirs and not enter(sub):
                        continue  # nothing below can match: not even counted as ignored
                    if name == GIT_DIR and self.skip_git:
                        stats.note_ignored(base.shown_path(sub))
                        continue
                    if rules is not None and rules and rules.ignored(base.real_path(sub), True):
                        stats.note_ignored(base.shown_path(sub))
                        continue
                    if self._may_deny and ctx.is_denied(base.real_path(sub)):
                        stats.denied += 1
                        continue
                    if self.yield_dirs:
                        yield dir_sub, name, kind, fd
                        if enter is not None and not enter(sub):
                            continue
                    if len(stack) > MAX_DEPTH:
                        stats.too_deep += 1
                        continue
                    try:
                        child = root.open(name, _DIR_FLAGS, dir_fd=fd)
                    except OSError:  # gone, or swapped for a link since listing
                        stats.unreadable_dirs += 1
                        continue
                    try:
                        child_entries = self._list(child)
                    except OSError:
                        backend.close(child)
                        stats.unreadable_dirs += 1
                        continue
                    child_pushed = self._push_rules(child, sub + "/", child_entries)
                    stack.append((child, sub + "/", iter(child_entries), child_pushed))
                    break
                else:
                    stack.pop()
                    if pushed:
                        rules.pop()  # type: ignore[union-attr]
                    if fd != base.fd:
                        backend.close(fd)
        finally:
            for fd, _, _, _ in stack:
                if fd != base.fd:
                    backend.close(fd)

    def _push_rules(self, fd: int, dir_sub: str, entries: list[tuple[str, str, str]]) -> bool:
        if self.rules is None:
            return False
        if (IGNORE_FILE, IGNORE_FILE, "file") not in entries:
            return False
        spec = load_ignore_at(self.ctx, fd)
        if spec is None:
            return False
        real = self.base.real_path(dir_sub.rstrip("/")) if dir_sub else self.base.real
        self.rules.push("" if real == "." else real + "/", spec)
        return True


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"1 {word}"
    return f"{count} {word[:-1]}ies" if word.endswith("y") else f"{count} {word}s"


def ignored_note(ignored: int, what: str, stats: WalkStats) -> str:
    """The sentence saying what .gitignore and .git kept out, and how to get it."""
    parts = []
    if ignored:
        parts.append(f"{plural(ignored, what)} ignored by .gitignore")
    if stats.ignored_dirs:
        examples = ", ".join(stats.ignored_examples[:3])
        more = ", ..." if stats.ignored_dirs > 3 else ""
        parts.append(f"{plural(stats.ignored_dirs, 'directory')} not searched ({examples}{more}: "
                     ".gitignore or .git)")
    return " and ".join(parts) + "; pass includeIgnored: true to include them."
