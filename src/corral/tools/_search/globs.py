"""Glob patterns without backtracking: ``**``, ``*``, ``?``, ``[..]``, ``{a,b}``.

A pattern is split into path segments, and each segment into fixed-length
*chunks* at its stars (``*a?c*d`` is ``["", "a?c", "d"]``).  A name matches
a segment when the first chunk is its start, the last chunk its end, and
the middle chunks occur in order in between; taking each middle chunk at
its leftmost occurrence is always right (a later one only leaves less room
for the rest), so a segment costs at most (name length x pattern length)
and never backtracks: ``*a*a*a*a*a*a*a*a*b`` against a long name is
linear in it.  Chunks hold no quantifier, so the ``re`` pattern a chunk
with ``?`` or a class becomes cannot backtrack either.

Segments are then matched like an automaton over the path's names: the
set of positions in the pattern reached after each directory
(:meth:`GlobMatcher.step`), with ``**`` staying put or moving on.  The walk
keeps one state set per open directory, so matching a tree costs one step
per entry, whatever the pattern (``**/a/**/a/**/...`` over a deep tree
included).

Semantics (shared by glob, grep's ``include`` and .gitignore lines): a
pattern without ``/`` matches a name at any depth (``*.py`` is
``**/*.py``); ``*`` and ``?`` never cross ``/`` and do match a leading dot;
``a**b`` inside a segment is ``a*b``; a trailing ``/`` asks for directories.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import compress, repeat
from collections.abc import Callable, Sequence

from .._refusals.catalogue import Code, Kind, Refusal

__all__ = [
    "GLOB_CHARS",
    "MAX_ALTERNATIVES",
    "GlobMatcher",
    "NameIndex",
    "Segment",
    "compile_glob",
    "kept_glob",
    "compile_segments",
    "expand_braces",
    "split_top",
]

MAX_ALTERNATIVES = 64  # what one {a,b} pattern may expand to
_MATCHERS_KEPT = 8  # a call's pattern and its retry's probes kept (each with bounded memories)
GLOB_CHARS = frozenset("*?[{")
NameTest = Callable[[str], bool]
States = frozenset[int]


def _bad_pattern(field_name: str, pattern: str, problem: str, hint: str, kind: Kind) -> Refusal:
    return Refusal(Code.INVALID_ARGUMENT, f"{field_name} {pattern!r} {problem}", hint,
                   details={"field": field_name, "pattern": pattern}, kind=kind)


# -- braces ------------------------------------------------------------------------

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


def split_top(text: str, sep: str) -> list[str]:
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


def _group_end(text: str, i: int) -> int:
    """Index just past the ``}`` closing the brace at ``text[i]`` (or past the end)."""
    depth, j = 1, i + 1
    while j < len(text) and depth:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        depth += (c == "{") - (c == "}")
        j += 1
    return j if depth == 0 else -1


def _brace_span(text: str) -> tuple[int, int] | None:
    """The first ``{...}`` holding a top-level comma (else braces are literal)."""
    i = 0
    while i < len(text):
        after = _skip_literal(text, i)
        if after is not None:
            i = after
            continue
        if text[i] == "{":
            j = _group_end(text, i)
            if j > 0 and len(split_top(text[i + 1:j - 1], ",")) > 1:
                return i, j - 1
        i += 1
    return None


def expand_braces(text: str, limit: int = MAX_ALTERNATIVES) -> list[str] | None:
    """Every alternative of ``{a,b}`` groups (nested allowed), in order;
    ``None`` if there would be more than ``limit``, or if the expansion
    would take more than ``16 * limit`` steps: groups whose choices repeat
    (``{x,x}`` forty times) have few distinct alternatives but 2**40
    strings to go through before they are told apart."""
    out: list[str] = []
    pending = [text]
    steps = 16 * limit
    while pending:
        steps -= 1
        if steps < 0:
            return None
        item = pending.pop(0)
        span = _brace_span(item)
        if span is None:
            if item not in out:
                out.append(item)
            if len(out) > limit:
                return None
            continue
        start, end = span
        choices = split_top(item[start + 1:end], ",")
        pending[0:0] = [item[:start] + c + item[end + 1:] for c in choices]
        if len(pending) + len(out) > 4 * limit:
            return None
    return out


# -- one segment -----------------------------------------------------------------------

# re.escape of one character: only these change (ASCII; every other character is itself)
_ESCAPE = {c: re.escape(c) for c in map(chr, range(128)) if re.escape(c) != c}


def _tokens(seg: str) -> list[str]:
    """Regex text of each single-character token of ``seg``, ``"*"`` for a star."""
    out: list[str] = []
    escape = _ESCAPE.get
    i = 0
    while i < len(seg):
        ch = seg[i]
        if ch == "*":
            if not out or out[-1] != "*":  # "a**b" inside a segment is "a*b"
                out.append("*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and _class_end(seg, i) > 0:
            end = _class_end(seg, i)
            body = seg[i + 1:end]
            negate = body[:1] in ("!", "^")
            chars = _class_body(body[negate:])
            out.append(f"[^{chars}]" if negate else f"[{chars}]")
            i = end
        elif ch == "\\" and i + 1 < len(seg):
            i += 1
            out.append(escape(seg[i], seg[i]))
        else:
            out.append(escape(ch, ch))
        i += 1
    return out


def _class_body(body: str) -> str:
    """The regex of a ``[...]`` class's characters and ``a-z`` ranges, each
    character escaped.  A range that ends before it starts stands for its
    first character alone, as git reads it (``[z-a]`` is ``z``): the regex
    would not compile."""
    escape = _ESCAPE.get
    out: list[str] = []
    i = 0
    while i < len(body):
        first = body[i]
        if i + 2 < len(body) and body[i + 1] == "-":
            last = body[i + 2]
            out.append(f"{escape(first, first)}-{escape(last, last)}" if first <= last
                       else escape(first, first))
            i += 3
        else:
            out.append(escape(first, first))
            i += 1
    return "".join(out)


def _is_literal(piece: str) -> bool:
    """Whether the token ``piece`` is one literal character (not ``*``, ``?``, a class)."""
    return piece != "*" and piece == _ESCAPE.get(piece[-1], piece[-1])


class _Chunk:
    """A fixed-length piece of a segment: a literal, or a quantifier-free regex."""

    __slots__ = ("literal", "regex", "size")

    def __init__(self, tokens: list[str]) -> None:
        self.size = len(tokens)
        text = "".join(tokens)
        plain = all(map(_is_literal, tokens))  # "?" is ".", a class "[..]"
        self.literal: str | None = "".join(t[-1] for t in tokens) if plain else None
        self.regex = None if plain else re.compile(text, re.DOTALL)

    def at(self, name: str, pos: int) -> bool:
        if self.literal is not None:
            return name.startswith(self.literal, pos)
        return self.regex.match(name, pos, pos + self.size) is not None  # type: ignore[union-attr]

    def find(self, name: str, pos: int, end: int) -> int:
        """End of the leftmost occurrence in ``name[pos:end]``, or -1."""
        if self.literal is not None:
            i = name.find(self.literal, pos, end)
            return -1 if i < 0 else i + self.size
        m = self.regex.search(name, pos, end)  # type: ignore[union-attr]
        return -1 if m is None else m.end()


class Segment:
    """One path segment of a pattern: ``"**"`` or a name pattern.

    ``affix`` is a cheap necessary condition of :attr:`test` (a name can
    match only if it starts with ``affix[0]`` and ends with ``affix[1]``),
    ``exact`` the one name that matches when the segment is a plain
    literal, ``required`` the longest literal every match contains: an
    index of many segments (:class:`NameIndex`) tests those with string
    methods before running any test, and the test itself is built the
    first time it is needed (a .gitignore of many lines mostly never
    needs most of them)."""

    __slots__ = ("source", "recursive", "affix", "exact", "required", "suffix_only", "_tokens",
                 "_test")

    def __init__(self, source: str, recursive: bool, tokens: list[str] | None = None) -> None:
        self.source = source
        self.recursive = recursive
        self._tokens = tokens
        self._test: NameTest | None = _any_name if recursive else None
        runs = _literals(tokens) if tokens is not None else ["", ""]
        self.exact: str | None = runs[0] if len(runs) == 1 else None  # no wildcard at all
        self.affix = (runs[0], runs[-1])
        self.required = max(runs, key=len)
        # "*<literal>": the test is name.endswith(affix[1])
        self.suffix_only = tokens is not None and tokens[:1] == ["*"] and len(runs) == 2 \
            and len(runs[1]) == len(tokens) - 1

    @property
    def test(self) -> NameTest:
        test = self._test
        if test is None:
            tokens = self._tokens or []
            test = self._test = self.exact.__eq__ if self.exact is not None \
                else _segment_test(tokens)
        return test


def _segment_test(tokens: list[str]) -> NameTest:
    if "*" not in tokens:
        whole = _Chunk(tokens)
        if whole.literal is not None:
            return whole.literal.__eq__
        return lambda name: len(name) == whole.size and whole.at(name, 0)
    pieces: list[list[str]] = [[]]
    for t in tokens:
        if t == "*":
            pieces.append([])
        else:
            pieces[-1].append(t)
    first, *middle, last = [_Chunk(p) for p in pieces]
    least = sum(c.size for c in (first, *middle, last))
    if not middle and first.literal is not None and last.literal is not None:
        head, tail = first.literal, last.literal
        if not head:
            return lambda name: name.endswith(tail)  # "*.py": a string test is enough
        return lambda name: len(name) >= least and name.startswith(head) and name.endswith(tail)

    def test(name: str) -> bool:
        n = len(name)
        if n < least or not first.at(name, 0) or not last.at(name, n - last.size):
            return False
        pos, end = first.size, n - last.size
        for chunk in middle:
            pos = chunk.find(name, pos, end)
            if pos < 0:
                return False
        return True
    return test


def _names_matching(segment: Segment, names: list[str]) -> list[str]:
    """The names (in order) ``segment`` matches: those with its literal end
    and start (:attr:`Segment.affix`) found by string methods run in C, the
    test run on them alone (a long run of names that never end as the
    pattern does, ``*a*a*a*b`` among ``*.txt``, costs no Python per name)."""
    head, tail = segment.affix
    if tail:
        names = list(compress(names, map(str.endswith, names, repeat(tail))))
        if segment.suffix_only:
            return names  # "*.py": the end is the whole test
    if head and names:
        names = list(compress(names, map(str.startswith, names, repeat(head))))
    return list(filter(segment.test, names)) if names else names


def _literals(tokens: list[str]) -> list[str]:
    """The runs of literal tokens, in order ("" between two wildcards)."""
    runs = [""]
    for t in tokens:
        if _is_literal(t):
            runs[-1] += t[-1]
        else:
            runs.append("")
    return runs


def _any_name(name: str) -> bool:
    return True


def compile_segments(parts: Sequence[str]) -> list[Segment]:
    """The segments of one alternative (consecutive ``**`` are one)."""
    out: list[Segment] = []
    for part in parts:
        if part == "**":
            if not (out and out[-1].recursive):
                out.append(Segment("**", True))
        else:
            out.append(Segment(part, False, _tokens(part)))
    return out


class NameIndex:
    """Which of many name tests can match a name, found with string methods
    first: each test is filed under its segment's literal name, end or
    start (:attr:`Segment.affix`), or else, when there are many such, under
    a piece of the longest literal it contains (:attr:`Segment.required`);
    only those with no literal at all are run for every name.
    :meth:`may_match` is a necessary condition (``False``: no test
    matches); :meth:`candidates` the tests that may, in the order they were
    given.  Ends, starts and pieces are looked up by length, so a name costs
    one lookup per distinct length (per position, for pieces), however many
    tests there are."""

    __slots__ = ("_exact", "_exact_names", "_tails", "_heads", "_inner", "_always",
                 "_few_tails", "_few_heads", "_ends")

    FEW = 16  # up to this many ends (starts) are tried with one str.endswith
    INNER_FROM = 8  # more tests than this with only an inner literal: index them
    PIECE = 8  # characters of an inner literal an index files it under

    def __init__(self, segments: Sequence[Segment]) -> None:
        self._exact: dict[str, list[int]] = {}
        self._tails: dict[int, dict[str, list[int]]] = {}
        self._heads: dict[int, dict[str, list[int]]] = {}
        self._inner: dict[int, dict[str, list[int]]] = {}
        always: list[int] = []
        inner: list[tuple[int, str]] = []
        for i, seg in enumerate(segments):
            head, tail = seg.affix
            if seg.exact is not None:
                self._exact.setdefault(seg.exact, []).append(i)
            elif tail:
                self._tails.setdefault(len(tail), {}).setdefault(tail, []).append(i)
            elif head:
                self._heads.setdefault(len(head), {}).setdefault(head, []).append(i)
            elif seg.required:
                inner.append((i, seg.required[:self.PIECE]))  # a piece of it is required too
            else:
                always.append(i)
        if len(inner) > self.INNER_FROM:
            for i, piece in inner:
                self._inner.setdefault(len(piece), {}).setdefault(piece, []).append(i)
        else:
            always = sorted(always + [i for i, _ in inner])
        self._always = tuple(always)
        self._exact_names = frozenset(self._exact)
        self._few_tails = self._few(self._tails)
        self._few_heads = self._few(self._heads)
        self._ends: dict[str, tuple[frozenset[str], tuple[str, ...]] | None] = {}

    @classmethod
    def _few(cls, by_length: dict[int, dict[str, list[int]]]) -> tuple[str, ...] | None:
        affixes = tuple(a for group in by_length.values() for a in group)
        return affixes if len(affixes) <= cls.FEW else None

    @property
    def always(self) -> bool:
        """Whether some test has no literal to file it under (runs for every name)."""
        return bool(self._always)

    def quick(self) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]] | None:
        """The literal names, ends and starts one of which every name some
        test may match has (:meth:`may_match` as three string operations),
        or ``None`` where a test has no such literal or there are many."""
        if self._always or self._inner or self._few_tails is None or self._few_heads is None:
            return None
        return self._exact_names, self._few_tails, self._few_heads

    def _tail_of(self, name: str) -> bool:
        few = self._few_tails
        if few is not None:
            return name.endswith(few)
        n = len(name)
        return any(length <= n and name[n - length:] in group
                   for length, group in self._tails.items())

    def _head_of(self, name: str) -> bool:
        few = self._few_heads
        if few is not None:
            return name.startswith(few)
        return any(name[:length] in group for length, group in self._heads.items())

    def _inside(self, name: str) -> bool:
        return any(name[i:i + length] in group for length, group in self._inner.items()
                   for i in range(len(name) - length + 1))

    def may_match(self, name: str) -> bool:
        return bool(self._always) or name in self._exact or self._tail_of(name) \
            or self._head_of(name) or bool(self._inner and self._inside(name))

    def filter(self, names: list[str], ends_with: str = "") -> list[str]:
        """The names some test may match (:meth:`may_match`), in order;
        ``ends_with``: what every name is known to end with, so only the
        literal names and ends agreeing with it are tried."""
        if self._always:
            return names
        heads = self._few_heads
        if ends_with and heads is not None:
            agreeing = self._agreeing(ends_with)
            if agreeing is None:
                return []
            exact, tails = agreeing
        else:
            exact, tails = self._exact_names, self._few_tails  # type: ignore[assignment]
        if tails is not None and heads is not None and not self._inner:  # the common case
            if not heads and exact.isdisjoint(names):  # only the ends can match: tested in C
                return list(compress(names, map(str.endswith, names, repeat(tails)))) \
                    if tails else []
            return [n for n in names if n in exact or n.endswith(tails) or n.startswith(heads)]
        return [n for n in names if self.may_match(n)]

    def none_end_with(self, end: str) -> bool:
        """Whether no test can match a name ending with ``end`` (as
        :meth:`filter` of such names finds: nothing, whatever the names)."""
        return not self._always and self._few_heads is not None and (
            self._agreeing(end) is None)

    def _agreeing(self, end: str) -> tuple[frozenset[str], tuple[str, ...]] | None:
        """The literal names and ends a name ending with ``end`` may have
        (``None``: none, and nothing else to try); the few-ends case only."""
        if end not in self._ends:
            exact = frozenset(n for n in self._exact if n.endswith(end))
            tails = tuple(t for t in self._few_tails or ()
                          if t.endswith(end) or end.endswith(t))
            found = (exact, tails) if exact or tails or self._few_heads or self._inner else None
            if len(self._ends) < 64:
                self._ends[end] = found
            return found
        return self._ends[end]

    def candidates(self, name: str) -> list[int]:
        """The indices of the tests that may match ``name``, ascending."""
        found = list(self._always)
        found += self._exact.get(name, ())
        n = len(name)
        for length, group in self._tails.items():
            if length <= n:
                found += group.get(name[n - length:], ())
        for length, group in self._heads.items():
            found += group.get(name[:length], ())
        if self._inner:
            pieces = {name[i:i + length] for length in self._inner
                      for i in range(n - length + 1)}
            for length, group in self._inner.items():
                for piece in pieces:
                    if len(piece) == length:
                        found += group.get(piece, ())
            return sorted(set(found))
        found.sort()
        return found


# -- a whole pattern ----------------------------------------------------------------------

class GlobMatcher:
    """A compiled glob: an automaton over path segments (module doc).

    A state is the index of a segment in the flattened alternatives.  Paths
    given to it are relative to the search base.
    """

    def __init__(self, alternatives: list[list[Segment]], dirs_only: bool) -> None:
        self.dirs_only = dirs_only
        segments: list[Segment] = []
        ends: list[int] = []  # the index of each state's alternative's last segment
        starts: list[int] = []
        for alt in alternatives:
            starts.append(len(segments))
            segments.extend(alt)
            ends.extend([len(segments) - 1] * len(alt))
        self._segments = segments
        self._ends = ends
        # "**/<name pattern>" only: the name alone decides, at any depth
        self.name_only = all(len(a) == 2 and a[0].recursive for a in alternatives)
        #: for name_only matchers: the name segment of each alternative
        self.name_segments: list[Segment] = [a[1] for a in alternatives] if self.name_only else []
        self._name_tests = [seg.test for seg in self.name_segments]
        #: a name_only matcher that is one "*<literal>" ("*.py"): the literal, so
        #: a walk can test names with str.endswith alone ("" matches every name)
        self.name_suffix: str | None = None
        if len(self.name_segments) == 1 and self.name_segments[0].suffix_only:
            self.name_suffix = self.name_segments[0].affix[1]
        # for name_only matchers: whether a name matches (one test bound directly: hot)
        self.match_name: NameTest = (self._name_tests[0] if len(self._name_tests) == 1
                                     else self._any_name_test)
        self.start = self._closure(frozenset(starts))
        self._memo: dict[tuple[States, str], States] = {}
        self._final: dict[States, tuple[NameTest, ...]] = {}

    def _closure(self, states: States) -> States:
        """``states`` plus what a ``**`` reaches by matching no segment."""
        out = set(states)
        todo = list(states)
        segments, ends = self._segments, self._ends
        while todo:
            s = todo.pop()
            if segments[s].recursive and s < ends[s] and s + 1 not in out:
                out.add(s + 1)
                todo.append(s + 1)
        return frozenset(out)

    def step(self, states: States, name: str) -> States:
        """The states after entering the directory ``name`` (empty: nothing
        below can match, so it need not be walked)."""
        if self.name_only:
            return states
        key = (states, name)
        memo = self._memo.get(key)
        if memo is not None:
            return memo
        segments, ends = self._segments, self._ends
        nxt: set[int] = set()
        for s in states:
            seg = segments[s]
            if seg.recursive:
                nxt.add(s)
            elif s < ends[s] and seg.test(name):
                nxt.add(s + 1)
        result = self._closure(frozenset(nxt))
        if len(self._memo) < 4096:
            self._memo[key] = result
        return result

    def waiting(self, states: States) -> list[Segment] | None:
        """The name patterns the next name must match for any of ``states``
        to step on or accept (``None``: one is a ``**``, any name does)."""
        segments = self._segments
        if any(segments[s].recursive for s in states):
            return None
        return [segments[s] for s in states]

    def accepts(self, states: States, name: str) -> bool:
        """Whether ``name``, in a directory reached in ``states``, matches."""
        if self.name_only:
            return any(test(name) for test in self._name_tests)
        segments, ends = self._segments, self._ends
        return any(s == ends[s] and segments[s].test(name) for s in states)

    def accepted(self, states: States, names: list[str]) -> list[str]:
        """The names among ``names`` (in order) that :meth:`accepts` in a
        directory reached in ``states``: the tests of the states that end
        a pattern are found once a directory, then each name costs them
        alone (a deep ``**/a/**/a/b`` carries many states, few of them final)."""
        if self.name_only:
            if len(self.name_segments) == 1:
                return _names_matching(self.name_segments[0], names)
            match = self.match_name
            return [n for n in names if match(n)]
        tests = self._final.get(states)
        if tests is None:
            segments, ends = self._segments, self._ends
            tests = tuple(segments[s].test for s in sorted(states) if s == ends[s])
            if len(self._final) < 4096:
                self._final[states] = tests
        if not tests:
            return []
        if len(tests) == 1:
            return list(filter(tests[0], names))
        return [n for n in names if any(test(n) for test in tests)]

    def _any_name_test(self, name: str) -> bool:
        return any(test(name) for test in self._name_tests)

    def match(self, sub: str) -> bool:
        """Whether the path ``sub`` (``/``-separated, below the base) matches."""
        parts = sub.split("/")
        states = self.start
        for part in parts[:-1]:
            states = self.step(states, part)
            if not states:
                return False
        return self.accepts(states, parts[-1])


def compile_glob(pattern: str, field_name: str = "pattern", *, anchored: bool = False,
                 braces: bool = True) -> GlobMatcher:
    """Compile ``pattern`` (already root-normalised by the caller: no
    leading ``/``).  A trailing ``/`` matches directories only.  Refuses
    ``..`` segments and brace groups that expand too far."""
    dirs_only = pattern.endswith("/")
    text = pattern.rstrip("/") if dirs_only else pattern
    if text in ("", "."):
        raise _bad_pattern(field_name, pattern, "names nothing to match",
                           "Pass a pattern such as \"**/*.py\" or \"src/*\".", Kind.PATTERN)
    alternatives = expand_braces(text) if braces else [text]
    if alternatives is None:
        raise _bad_pattern(field_name, pattern, f"expands to more than {MAX_ALTERNATIVES} "
                           "alternatives", "Use fewer or smaller {a,b} groups.", Kind.PATTERN)
    compiled = []
    for alt in alternatives:
        segments = [s for s in alt.split("/") if s not in ("", ".")]
        if ".." in segments:
            raise _bad_pattern(field_name, pattern, "contains '..'; patterns only match below "
                               "'path'", "Remove '..' from the pattern and pass the directory "
                               "to search as 'path' instead.", Kind.DOTDOT)
        if alt.startswith("/"):
            raise _bad_pattern(field_name, pattern, "has an alternative that starts with '/'",
                               "Write every alternative relative to 'path'.", Kind.ABSOLUTE)
        if not segments:
            raise _bad_pattern(field_name, pattern, "names nothing to match",
                               "Pass a pattern such as \"**/*.py\" or \"src/*\".", Kind.PATTERN)
        if len(segments) == 1 and not anchored:
            segments = ["**", *segments]
        compiled.append(compile_segments(segments))
    return GlobMatcher(compiled, dirs_only)


@lru_cache(maxsize=_MATCHERS_KEPT)
def kept_glob(pattern: str, anchored: bool = False) -> GlobMatcher:
    """:func:`compile_glob` of a glob call's own pattern, the last few
    kept: a model repeats its patterns, and a matcher's memories of the
    steps it took (a pure function of the pattern, each bounded) then serve
    its next walk too; so are the patterns a retry probes (the same for
    the same call).  A .gitignore's lines are compiled afresh and never
    push them out."""
    return compile_glob(pattern, anchored=anchored)
