"""Where an edit's oldText is in a file: pure logic, no I/O, linear.

Matching runs on the line-ending-normalized text (see :class:`Lines`), so an
``\\n`` oldText matches a ``\\r\\n`` file.  The ladder, each rung tried only
when the one before found nothing:

``exact``
    oldText as written (``line_endings`` when it matched only because line
    breaks were normalized).
``trailing_whitespace``
    spaces and tabs at line ends ignored on both sides.
``indentation``
    whole lines compared without their leading and trailing whitespace,
    *and* the indentation must correspond consistently (one oldText width
    maps to one file indentation, in the same order).  newText is then
    re-indented through the same correspondence, so spaces typed for a
    tab-indented file come out as tabs.

A tolerant rung applies only when its match is unique; several tolerant
matches are reported, never chosen between.  When nothing matches,
:mod:`corral.tools._edit.diagnosis` says why.

Cost: the exact and trailing-whitespace rungs are ``str.find`` scans.  The
indentation rung finds the runs of file lines whose stripped text equals
oldText's by one ``str.find`` over the lines encoded one character each;
checking the indentation of each run draws on a budget proportional to
the file and oldText, and a rung cut short says so (:attr:`Search.note`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate, pairwise
from math import gcd

from .budget import Work, proportional
from .spans import Region
from .text import Lines

__all__ = [
    "MAX_LISTED",
    "Search",
    "applied_copies",
    "distinctive",
    "indent_style",
    "normalize_breaks",
    "occurrences",
    "search",
    "split_block",
]

MAX_LISTED = 100  # line numbers listed in one answer

_BREAKS = re.compile(r"\r\n|\r")
_LEAD = re.compile(r"[ \t]*")


def normalize_breaks(text: str) -> str:
    return _BREAKS.sub("\n", text) if "\r" in text else text


@dataclass
class Search:
    strategy: str  # exact, line_endings, trailing_whitespace, indentation
    count: int  # occurrences (non-overlapping); 0 only with a note
    regions: list[Region]  # the first ``limit`` of them, in order
    note: str | None = None  # a rung that was cut short, in words


# -- the ladder ----------------------------------------------------------------


def occurrences(text: str, needle: str, limit: int) -> tuple[int, list[int]]:
    """Count of non-overlapping ``needle`` in ``text`` and the first ``limit`` starts."""
    count = text.count(needle)
    starts: list[int] = []
    at = text.find(needle) if count else -1
    while at >= 0 and len(starts) < limit:
        starts.append(at)
        at = text.find(needle, at + len(needle))
    return count, starts


def search(lines: Lines, old_raw: str, new_raw: str, limit: int, work: Work) -> Search | None:
    """The first rung of the ladder that finds ``old_raw``, with up to
    ``limit`` regions (``None`` when no rung finds it; a Search with count
    0 when a rung was cut short before it could tell)."""
    old = normalize_breaks(old_raw)
    new = normalize_breaks(new_raw)
    count, starts = occurrences(lines.normalized, old, limit)
    work.step(len(starts) + 1)
    if count:
        regions = [Region(s, s + len(old), new) for s in starts]
        return Search(_exact_or_endings(lines, old_raw, regions), count, regions)
    if old.strip(" \t\n") == "":
        return None  # whitespace itself is matched exactly or not at all
    found = _trailing(lines, old, new, limit)
    if found is not None:
        return found
    work.check()
    return _indentation(lines, old, new, limit, work)


def _exact_or_endings(lines: Lines, old_raw: str, regions: list[Region]) -> str:
    if "\r" not in lines.text and "\r" not in old_raw:
        return "exact"
    for region in regions:
        a, b = lines.to_original(region.start), lines.to_original(region.end)
        if lines.text[a:b] != old_raw:
            return "line_endings"
    return "exact"


def _trailing(lines: Lines, old: str, new: str, limit: int) -> Search | None:
    stripped = [c.rstrip(" \t") for c in lines.contents]
    old_t = "\n".join(line.rstrip(" \t") for line in old.split("\n"))
    if old_t == old and all(len(s) == len(c) for s, c in zip(stripped, lines.contents)):
        return None  # nothing to ignore: this rung would find what exact did not
    text = "\n".join(stripped)
    count, starts = occurrences(text, old_t, limit)
    if not count:
        return None
    tstarts = [0, *accumulate(len(s) + 1 for s in stripped)][:-1]

    def to_normalized(tpos: int) -> int:
        """A character of the stripped text to the same character of the
        normalized one (a line's ``\\n`` comes after its trailing blanks)."""
        i = bisect_right(tstarts, tpos) - 1
        col = tpos - tstarts[i]
        if col < len(stripped[i]):
            return lines.nstarts[i] + col
        return lines.nstarts[i] + len(lines.contents[i])

    # The region ends after its last matched character, so blanks after the
    # last line of oldText stay in the file.
    regions = [Region(to_normalized(s), to_normalized(s + len(old_t) - 1) + 1, new)
               for s in starts]
    return Search("trailing_whitespace", count, regions)


def _leading(line: str) -> str:
    return _LEAD.match(line).group()  # type: ignore[union-attr]


def _width(indent: str) -> int:
    return len(indent.expandtabs(4))


def split_block(text: str) -> tuple[list[str], bool]:
    """Lines of ``text`` and whether it ended with a line break."""
    parts = text.split("\n")
    if len(parts) > 1 and parts[-1] == "":
        return parts[:-1], True
    return parts, False


def _encoded(keys: list[str], ids: dict[str, int], wide: bool) -> str:
    """Each key as one character (two when there are too many distinct
    keys: a high one from a range no low one uses, so a match found by
    ``str.find`` always starts on a key)."""
    if not wide:
        return "".join(map(chr, map(ids.__getitem__, keys)))
    return "".join(chr(0x100000 + (i >> 16)) + chr(i & 0xFFFF) for i in map(ids.__getitem__, keys))


def _runs(file_keys: list[str], old_keys: list[str]) -> tuple[str, str, int] | None:
    """The file's and oldText's lines encoded for ``str.find`` and the width
    of one line; ``None`` when some oldText line is nowhere in the file."""
    ids = {key: i for i, key in enumerate(dict.fromkeys(file_keys))}
    if any(key not in ids for key in old_keys):
        return None
    wide = len(ids) >= 0x100000
    return _encoded(file_keys, ids, wide), _encoded(old_keys, ids, wide), 2 if wide else 1


def _indentation(lines: Lines, old: str, new: str, limit: int, work: Work) -> Search | None:
    old_lines, ends_nl = split_block(old)
    keys = [line.strip() for line in old_lines]
    if not any(keys):
        return None
    contents = lines.contents
    n, k = len(contents), len(old_lines)
    last_start = n - k - (1 if ends_nl else 0)  # a final oldText break needs a line after
    if last_start < 0:
        return None
    work.step(n + k)
    encoded = _runs([line.strip() for line in contents], keys)
    if encoded is None:
        return None
    text, pattern, width = encoded
    budget = work.budget(proportional(n, k, per=4))
    found: list[tuple[int, dict[int, str]]] = []
    count = 0
    at = text.find(pattern)
    while 0 <= at <= last_start * width:
        s = at // width
        if not budget.spend(k):
            return Search("indentation", 0, [], note=(
                "the search ignoring indentation stopped early: too many places match oldText "
                "but for indentation"))
        mapping = _correspondence(old_lines, contents[s:s + k])
        if mapping is None:
            at = text.find(pattern, at + width)
            continue
        count += 1
        if len(found) < limit:
            found.append((s, mapping))
        at = text.find(pattern, at + k * width)
    if not count:
        return None
    new_lines = new.split("\n")
    regions = []
    for s, mapping in found:
        start = lines.nstarts[s]
        end = lines.nstarts[s + k - 1] + len(contents[s + k - 1]) + (1 if ends_nl else 0)
        # only a unique tolerant match is applied: the others need no newText
        replacement = _reindent(new_lines, old_lines, mapping, lines) if count == 1 else ""
        regions.append(Region(start, end, replacement))
    return Search("indentation", count, regions)


def _correspondence(old_lines: list[str], file_lines: list[str]) -> dict[int, str] | None:
    """oldText indentation width -> the file's indentation, if one width
    always meets one indentation and the order of depths is the same."""
    mapping: dict[int, str] = {}
    for o, f in zip(old_lines, file_lines):
        if not o.strip():
            continue
        w, indent = _width(_leading(o)), _leading(f)
        if mapping.setdefault(w, indent) != indent:
            return None
    depths = [len(mapping[w].expandtabs(8)) for w in sorted(mapping)]
    if any(a >= b for a, b in pairwise(depths)):
        return None
    return mapping


def indent_style(lines: Lines) -> str:
    """The file's indentation unit: ``"\\t"`` or a run of spaces."""
    tabs = spaces = 0
    widths: Counter[int] = Counter()
    for line in lines.contents:
        if line.startswith("\t"):
            tabs += 1
        elif line.startswith(" ") and line.strip():
            spaces += 1
            widths[len(_leading(line))] += 1
    if tabs > spaces:
        return "\t"
    g = 0
    for w in widths:
        g = gcd(g, w)
    return " " * (g if 2 <= g <= 8 else 4)


def _reindent(new_lines: list[str], old_lines: list[str], mapping: dict[int, str],
              lines: Lines) -> str:
    """newText with each line's indentation carried through ``mapping``
    (depths between or beyond its entries by the inferred units)."""
    unit_old, unit_file = _units(mapping, old_lines, new_lines, lines)
    ordered = sorted(mapping)
    out = []
    for line in new_lines:
        if line == "":
            out.append(line)
            continue
        lead = _leading(line)
        w = _width(lead)
        if w in mapping:
            out.append(mapping[w] + line[len(lead):])
            continue
        below = bisect_right(ordered, w)
        anchor = ordered[below - 1] if below else ordered[0]
        levels, extra = divmod(w - anchor, unit_old)
        indent = mapping[anchor]
        if levels >= 0:
            indent += unit_file * levels
        else:
            for _ in range(-levels):
                indent = indent[:-len(unit_file)] if indent.endswith(unit_file) else indent[:-1]
        out.append(indent + " " * extra + line[len(lead):])
    return "\n".join(out)


def _units(mapping: dict[int, str], old_lines: list[str], new_lines: list[str],
           lines: Lines) -> tuple[int, str]:
    """One level of indentation in the model's text (a width) and in the
    file (a string)."""
    ordered = sorted(mapping)
    steps = []
    for a, b in pairwise(ordered):
        if mapping[b].startswith(mapping[a]):
            steps.append((b - a, mapping[b][len(mapping[a]):]))
    if steps:
        width, suffix = min(steps)
        if suffix and (set(suffix) == {"\t"} or set(suffix) == {" "}):
            # the smallest step in the match is one level, unless it is
            # visibly several tabs
            if suffix[0] == "\t" and len(suffix) > 1 and width % len(suffix) == 0:
                return width // len(suffix), "\t"
            return width, suffix
    widths = sorted({_width(_leading(x)) for x in old_lines + new_lines if x.strip()})
    diffs = [b - a for a, b in pairwise(widths) if b - a >= 2]
    return (min(diffs) if diffs else 4), indent_style(lines)


# -- an edit already made --------------------------------------------------------


def applied_copies(text: str, starts: list[int], old: str, new: str) -> list[int]:
    """Of the matches of ``old`` at ``starts``, those that sit inside a copy
    of ``new`` at the place the edit would have put it (``new`` contains
    ``old``): the edit was already made there, and making it again would
    duplicate text.  Returns the starts of those copies of ``new``."""
    at = new.find(old) if old else -1
    if at < 0 or new == old:
        return []
    out = []
    for s in starts:
        begin = s - at
        if begin >= 0 and text.startswith(new, begin):
            out.append(begin)
    return out


def distinctive(new: str) -> bool:
    """Whether finding ``new`` in a file says something: blank or very
    short text occurs by chance."""
    body = new.strip()
    return len(body) >= 16 or (body.count("\n") >= 1 and len(body) >= 6)
