"""Applying hunks to a file's text: where each hunk goes, and the new text.

Each hunk's old lines (context and removed) are looked for from where the
previous hunk ended, first exactly, then ignoring trailing whitespace, then
ignoring surrounding whitespace, then with Unicode punctuation normalised
(dashes, quotes, non-breaking spaces), as models copy text imperfectly.  A
hunk is placed only where it is meant: if its old lines occur more often
after the cursor than the hunks still to come that carry the same lines, it
is ambiguous and refused, never applied at the first match.  Every line the
hunks do not touch keeps its bytes, its own line terminator included; new
lines take the file's dominant terminator, and the file keeps its final
newline or its lack of one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal, NamedTuple

from ._parse import Dialect, Hunk

__all__ = ["Applied", "HunkMismatch", "apply_update", "new_file_text"]

_PUNCTUATION = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                    "\u202f\u205f\u3000", " "),
})

Level = Literal["exact", "trailing_whitespace", "whitespace", "punctuation"]


def _same(line: str) -> str:
    return line


_LEVELS: tuple[tuple[Level, Callable[[str], str]], ...] = (
    ("exact", _same),
    ("trailing_whitespace", str.rstrip),
    ("whitespace", str.strip),
    ("punctuation", lambda line: line.strip().translate(_PUNCTUATION)),
)
_NEAREST_SCAN = 20_000  # lines compared when a hunk is not found (bounded work)
_CANDIDATES_SHOWN = 10


class HunkMismatch(ValueError):
    """A hunk does not apply.  ``kind`` says why: ``not_found`` (its lines are
    not in the file after the previous hunk; ``nearest`` is the window most
    like them, 1-based), ``ambiguous`` (they are there more than once;
    ``candidates`` are the 1-based lines where), ``anchor`` (its ``@@`` line
    is not in the file), ``too_costly`` (placing the hunks would take more
    looks than the patch and the file earn)."""

    def __init__(self, kind: Literal["not_found", "ambiguous", "anchor", "too_costly"], hunk: int,
                 patch_line: int, message: str, *, nearest: tuple[int, list[str]] | None = None,
                 candidates: Sequence[int] = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.hunk = hunk
        self.patch_line = patch_line
        self.message = message
        self.nearest = nearest
        self.candidates = list(candidates)


class Applied(NamedTuple):
    """The new text, and for each hunk the 1-based line it applied at and how
    loosely it matched."""

    text: str
    lines: list[int]
    levels: list[Level]


@dataclass
class _File:
    """A file's text split in lines, with each line's terminator kept."""

    raw: list[str]     # each line as in the text, without its "\n" (a "\r" kept)
    bodies: list[str]  # each line without its terminator
    ends: list[str]    # each line's terminator ("" only on a last line)
    newline: str       # the dominant terminator, for new lines
    final_newline: bool


def _split(text: str) -> _File:
    raw = text.split("\n")
    last = raw.pop()  # "" when the text ends with a newline (or is empty)
    ends = ["\r\n" if line.endswith("\r") else "\n" for line in raw]
    crlf = ends.count("\r\n")
    bodies = [line[:-1] if line.endswith("\r") else line for line in raw] if crlf else list(raw)
    if last:
        raw.append(last)
        bodies.append(last)
        ends.append("")
    newline = "\r\n" if crlf > len(ends) - crlf - (1 if ends and not ends[-1] else 0) else "\n"
    return _File(raw, bodies, ends, newline, bool(ends) and ends[-1] != "")


class _Budget:
    """The looks placing hunks may take: a base plus a share per line of the
    file and the patch, so the work stays linear in the input; every so
    many, the call's ``checkpoint`` (its deadline and cancellation)."""

    _EVERY = 1 << 16

    def __init__(self, allowance: int, checkpoint: Callable[[], None]) -> None:
        self.left = allowance
        self.checkpoint = checkpoint
        self.until_check = self._EVERY

    def spend(self, looks: int) -> None:
        self.left -= looks
        if self.left < 0:
            raise _OverBudget
        self.until_check -= looks
        if self.until_check <= 0:
            self.until_check = self._EVERY
            self.checkpoint()


class _OverBudget(Exception):
    pass


def _no_checkpoint() -> None:
    return None


_BUDGET_BASE = 2_000_000
_BUDGET_PER_LINE = 16


class _Level:
    """A file's lines normalised at one level, and where each distinct
    normalised line occurs (ascending), so a search costs the occurrences of
    a pattern's rarest line, not the length of the file."""

    def __init__(self, bodies: list[str], norm: Callable[[str], str] | None) -> None:
        self.norm = norm or _same
        self.lines = bodies if norm is None else [norm(line) for line in bodies]
        self.where: dict[str, list[int]] = {}
        for i, line in enumerate(self.lines):
            self.where.setdefault(line, []).append(i)

    def matches(self, pattern: list[str], start: int, budget: _Budget,
                more_than: int | None = 0) -> list[int]:
        """Where ``pattern`` occurs from ``start`` on, ascending: the first
        place and enough places to tell whether there are more than
        ``more_than``, or every place (``None``)."""
        if not pattern:
            return []
        want = [self.norm(line) for line in pattern]
        lines, width = self.lines, len(want)
        last = len(lines) - width
        budget.spend(width)
        if last < start:
            return []
        probe, positions = 0, None
        for k, line in enumerate(want):  # the rarest line's places are the candidates
            at = self.where.get(line)
            if at is None:
                return []
            if positions is None or len(at) < len(positions):
                probe, positions = k, at
        assert positions is not None
        first = bisect_left(positions, start + probe)
        stop = bisect_right(positions, last + probe)
        # no more candidates than more_than: the count cannot exceed it
        enough = stop - first if more_than is None else \
            1 if stop - first <= more_than else more_than + 1
        head = want[0]
        found: list[int] = []
        looks = 0
        for j in range(first, stop):
            i = positions[j] - probe
            looks += 1
            if lines[i] == head:
                looks += 1  # the slice compared below: C, a look's cost for the widths hunks have
                if lines[i:i + width] == want:
                    found.append(i)
                    if len(found) >= enough:
                        break
            if looks >= 4096:
                budget.spend(looks)
                looks = 0
        budget.spend(looks)
        return found


class _Seeker:
    """Finds line sequences in a file's lines, each level's normalised lines
    computed once, when a search first needs that level."""

    def __init__(self, bodies: list[str], budget: _Budget) -> None:
        self.bodies = bodies
        self.budget = budget
        self.levels: dict[Level, _Level] = {}

    def _level(self, level: Level, norm: Callable[[str], str]) -> _Level:
        made = self.levels.get(level)
        if made is None:
            self.budget.spend(len(self.bodies))
            made = self.levels[level] = _Level(self.bodies, None if level == "exact" else norm)
        return made

    def find(self, pattern: list[str], start: int, *, at_end: bool = False,
             more_than: int | None = 0) -> tuple[list[int], Level]:
        # a hunk tied to the end is looked for there at every level before
        # anywhere else: a looser match at the end is the place it names
        tail = len(self.bodies) - len(pattern)
        if at_end and tail >= start:
            for level, norm in _LEVELS:
                if self._level(level, norm).matches(pattern, tail, self.budget) == [tail]:
                    return [tail], level
        for level, norm in _LEVELS:
            found = self._level(level, norm).matches(pattern, start, self.budget, more_than)
            if found:
                return found, level
        return [], "exact"


def _same_place_after(hunks: Sequence[Hunk]) -> list[int]:
    """For each hunk, how many hunks from it on carry its anchors and lines
    (itself included): one pass from the end."""
    seen: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}
    counts = [0] * len(hunks)
    for index in range(len(hunks) - 1, -1, -1):
        key = (hunks[index].anchors, tuple(hunks[index].old))
        counts[index] = seen[key] = seen.get(key, 0) + 1
    return counts


def _nearest(bodies: list[str], pattern: list[str], start: int) -> tuple[int, list[str]] | None:
    probe = next((line.strip() for line in pattern if line.strip()), "")
    if not probe or not bodies:
        return None
    best, best_ratio = -1, 0.0
    matcher = SequenceMatcher(b=probe, autojunk=False)
    for i in range(start, min(len(bodies), start + _NEAREST_SCAN)):
        matcher.set_seq1(bodies[i].strip())
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    if best < 0 or best_ratio < 0.5:
        return None
    first = best - next(k for k, line in enumerate(pattern) if line.strip())
    first = max(first, 0)
    return first + 1, bodies[first:first + len(pattern)]


def _place(seeker: _Seeker, hunks: Sequence[Hunk], index: int, cursor: int,
           dialect: Dialect, later: int) -> tuple[int, int, Level]:
    """Where hunk ``index`` applies: (first line, lines replaced, level);
    ``later`` hunks from this one on carry the same lines."""
    hunk = hunks[index]
    bodies = seeker.bodies
    for anchor in hunk.anchors:
        found, _ = seeker.find([anchor], cursor)
        if found:
            cursor = found[0] + 1
        elif dialect.anchor_required or len(hunk.anchors) > 1:
            raise HunkMismatch("anchor", index + 1, hunk.patch_line,
                               f"hunk {index + 1}: its '@@ {anchor.strip()}' line is not in "
                               "the file after the previous hunk")
    old = hunk.old
    if not hunk.removes_or_keeps:
        if dialect.addition_only_at_end and not hunk.anchors:
            return len(bodies), 0, "exact"
        return cursor, 0, "exact"
    found, level = seeker.find(old, cursor, at_end=hunk.at_end, more_than=later)
    if not found and len(old) > 1 and old[-1] == "":
        found, level = seeker.find(old[:-1], cursor, at_end=hunk.at_end, more_than=later)
        old = old[:-1]
    if not found:
        raise HunkMismatch("not_found", index + 1, hunk.patch_line,
                           f"hunk {index + 1}: its context and removed lines are not in the "
                           "file" + (" after the previous hunk" if index else ""),
                           nearest=_nearest(bodies, old, cursor))
    if len(found) > later:
        found, _ = seeker.find(old, cursor, more_than=None)  # every place, for the answer
        raise HunkMismatch("ambiguous", index + 1, hunk.patch_line,
                           f"hunk {index + 1}: its context and removed lines occur "
                           f"{len(found)} times", candidates=[i + 1 for i in
                                                              found[:_CANDIDATES_SHOWN]])
    return found[0], len(old), level


def apply_update(text: str, hunks: Sequence[Hunk], dialect: Dialect,
                 checkpoint: Callable[[], None] = _no_checkpoint) -> Applied:
    """``text`` with every hunk applied, or :class:`HunkMismatch` for the first
    that does not apply (nothing is applied then).  ``checkpoint`` is called
    every so often while hunks are placed (a call's deadline)."""
    file = _split(text)
    patch_lines = sum(len(hunk.lines) + len(hunk.anchors) for hunk in hunks)
    budget = _Budget(_BUDGET_BASE + _BUDGET_PER_LINE * (len(file.bodies) + patch_lines),
                     checkpoint)
    seeker = _Seeker(file.bodies, budget)
    later = _same_place_after(hunks)
    cursor = 0
    edits: list[tuple[int, int, list[str]]] = []
    lines: list[int] = []
    levels: list[Level] = []
    for index, hunk in enumerate(hunks):
        try:
            start, length, level = _place(seeker, hunks, index, cursor, dialect, later[index])
        except _OverBudget:
            raise HunkMismatch("too_costly", index + 1, hunk.patch_line,
                               f"hunk {index + 1}: placing the patch's hunks takes more looks "
                               "than its size allows (their lines occur in too many places)"
                               ) from None
        if start < cursor:
            raise HunkMismatch("not_found", index + 1, hunk.patch_line,
                               f"hunk {index + 1} overlaps the hunk before it")
        new = hunk.new if length == len(hunk.old) else hunk.new[:-1] if \
            hunk.new and hunk.new[-1] == "" else hunk.new
        edits.append((start, length, new))
        lines.append(start + 1)
        levels.append(level)
        cursor = start + length
    return Applied(_join(file, edits), lines, levels)


def _join(file: _File, edits: list[tuple[int, int, list[str]]]) -> str:
    out: list[str] = []
    count = len(file.raw)

    def keep(first: int, stop: int) -> None:
        # untouched lines keep their bytes; a last line without a terminator
        # gets one here (taken off again below if nothing follows it)
        if first < stop:
            out.append("\n".join(file.raw[first:stop]))
            out.append("\n" if stop < count or file.final_newline else file.newline)

    position = 0
    for start, length, new in edits:
        keep(position, start)
        out.extend(line + file.newline for line in new)
        position = start + length
    keep(position, count)
    text = "".join(out)
    if not file.final_newline and file.bodies and text.endswith(file.newline):
        text = text[:-len(file.newline)]
    return text


def new_file_text(lines: Sequence[str], dialect: Dialect, crlf: bool = False) -> str:
    """The text of a file a patch creates from its ``+`` lines (``crlf``:
    they were sent ending with ``\r\n``)."""
    newline = "\r\n" if crlf and dialect.new_file_crlf_as_sent else "\n"
    text = newline.join(lines)
    return text + newline if dialect.new_file_final_newline and lines else text
