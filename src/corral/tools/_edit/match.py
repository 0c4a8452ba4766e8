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
    tab-indented file come out as tabs; unless newText already carries the
    file's indentation (see :func:`_frame`), which is then kept as written.
``whitespace``
    the same, with runs of spaces inside a line taken as one and spaces
    next to brackets and separators ignored (``f( a, b )`` is ``f(a, b)``).

A tolerant rung applies only when its match is unique, or to every match
when the model asked for every occurrence; otherwise several tolerant
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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple
from itertools import accumulate, pairwise
from math import gcd

from .budget import Work, proportional
from .spans import Region
from .text import Lines

__all__ = [
    "MAX_LISTED",
    "Search",
    "applied_copies",
    "collapsed_lines",
    "distinctive",
    "indent_style",
    "tab_indented",
    "has_space_indented_line",
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
    """Where an oldText was found in the file, and by which strategy."""

    strategy: str  # exact, line_endings, trailing_whitespace, indentation, whitespace
    count: int  # occurrences (non-overlapping); 0 only with a note
    regions: list[Region]  # the first ``limit`` of them, in order
    note: str | None = None  # a rung that was cut short, in words
    # newText lines (1-based) whose indentation cannot be told to be the
    # file's or oldText's, when the two readings would write different text
    unclear_indent: list[int] = field(default_factory=list)
    # every region holds the same text but for a common indentation (only
    # then does replaceAll apply a tolerant match everywhere)
    uniform: bool = True


# -- the ladder ----------------------------------------------------------------


def occurrences(text: str, needle: str, limit: int) -> tuple[int, list[int]]:
    """Count of non-overlapping ``needle`` in ``text`` and the first ``limit``
    starts, in one pass over ``text`` (the starts found, then the rest counted)."""
    if not needle:
        return text.count(needle), [0] * max(limit, 0)
    starts: list[int] = []
    at = text.find(needle)
    while at >= 0 and len(starts) < limit:
        starts.append(at)
        at = text.find(needle, at + len(needle))
    if at < 0:
        return len(starts), starts
    return len(starts) + text.count(needle, at), starts


def search(lines: Lines, old_raw: str, new_raw: str, limit: int, work: Work, *,
           every: bool = False) -> Search | None:
    """The first rung of the ladder that finds ``old_raw``, with up to
    ``limit`` regions (``None`` when no rung finds it; a Search with count
    0 when a rung was cut short before it could tell).  A tolerant rung
    builds the replacement of every region it returns when ``every`` (the
    model asked for every occurrence), else only of a unique match."""
    old = lines.normalize(old_raw)
    new = lines.normalize(new_raw)
    count, starts = occurrences(lines.normalized, old, limit)
    work.step(len(starts) + 1)
    if count:
        regions = [Region(s, s + len(old), new) for s in starts]
        return Search(_exact_or_endings(lines, old_raw, regions), count, regions)
    if old.strip(" \t\n") == "":
        return None  # whitespace itself is matched exactly or not at all
    work.step(len(lines.normalized) // 256 + 1)
    absent = _absent_lines(lines, old)
    if absent.inner:
        return None
    found = _trailing(lines, old, new, limit)
    if found is not None:
        return found
    if absent.edge:
        return None
    work.check()
    found = _indentation(lines, old, new, limit, work, every, strip_keys, "indentation")
    if found is not None:
        return found
    work.check()
    return _indentation(lines, old, new, limit, work, every, spacing_keys, "whitespace")


# Every whitespace character but the line break (str.isspace's set: none is
# above U+3000), deleted by str.translate, which runs in C on ASCII text.
_NO_BLANKS = {i: None for i in range(0x3001) if chr(i).isspace() and i != 10}


def blank_free_lines(text: str) -> list[str]:
    """Every line of ``text`` (``\\n`` breaks) without its whitespace: a
    key each tolerant rung's key maps onto (they only drop or fold blanks)."""
    if text.isascii():
        return text.translate(_NO_BLANKS).split("\n")
    return ["".join(line.split()) for line in text.split("\n")]


class _Absent(NamedTuple):
    """oldText lines no file line equals, whitespace aside: then no
    tolerant rung can match them."""

    inner: bool  # a line between its first and last (the trailing rung needs those whole)
    edge: bool  # any line (the indentation and whitespace rungs compare whole lines)


_FEW_ABSENT = 8  # oldText lines not in the file as written, looked for one by one


def _absent_lines(lines: Lines, old: str) -> _Absent:
    """Which tolerant rungs oldText's lines rule out, by the lines of
    oldText not in the file as written (a near miss has a few: a typo),
    looked for without whitespace among the file's lines: one pass over the
    file, not the rungs' keys of the whole file."""
    parts = old.split("\n")
    # as split_block: a last line of blanks after the final break is none
    whole = parts[:-1] if len(parts) > 1 and not parts[-1].strip() else parts
    # a line in the file as written is in it without whitespace too
    unmatched = set(whole).difference(lines.contents)
    if not unmatched:
        return _Absent(False, False)
    text = lines.normalized
    # the file's lines without whitespace: a few looked for in its text, more in a set
    keys: _BlankFreeText | set[str] = \
        _BlankFreeText(text) if len(unmatched) <= _FEW_ABSENT and text.isascii() \
        else set(blank_free_lines(text))
    absent = {line for line in unmatched if _blank_free(line) not in keys}
    return _Absent(not absent.isdisjoint(parts[1:-1]), bool(absent))


def _blank_free(line: str) -> str:
    """One line without its whitespace (as :func:`blank_free_lines`)."""
    return line.translate(_NO_BLANKS) if line.isascii() else "".join(line.split())


class _BlankFreeText:
    """The file's lines without whitespace, as one text between line
    breaks: a line is looked for by one ``str.find`` (for a few lines, cheaper
    than a set of every file line)."""

    def __init__(self, text: str) -> None:
        self.text = "\n" + text.translate(_NO_BLANKS) + "\n"

    def __contains__(self, key: str) -> bool:
        return "\n" + key + "\n" in self.text


_SPACES = re.compile(r"\s+")
# A space beside a bracket or separator, as two lookarounds with an empty
# replacement: a group template (r"\1") is expanded in Python for every match,
# which made a long near-miss line cost several times as much.
_BEFORE_MARK = re.compile(r" (?=[()\[\]{}<>,;:=])")
_AFTER_MARK = re.compile(r"(?<=[()\[\]{}<>,;:=]) ")


_BLANKS = re.compile(r"[^\S\n]+")
# the blanks \s takes on ASCII but the space and the line break (each
# looked for by memchr: a class scan in the regex engine is some ten times slower)
_ASCII_BLANKS_NOT_SPACE = "\t\x0b\x0c\r\x1c\x1d\x1e\x1f"
# A space beside a bracket or separator, either side, in one pass: the
# literal space first lets the engine skip to the spaces.
_BESIDE_MARK = re.compile(r" (?:(?=[()\[\]{}<>,;:=])|(?<=[()\[\]{}<>,;:=] ))")


def strip_keys(text: str) -> list[str]:
    """The indentation rung's key of every line of ``text`` (``\\n`` breaks)."""
    return [line.strip() for line in text.split("\n")]


def spacing_key(line: str) -> str:
    """A line as the whitespace rung compares it: runs of spaces as one, and
    none next to a bracket or separator."""
    return _AFTER_MARK.sub("", _BEFORE_MARK.sub("", _SPACES.sub(" ", line.strip())))


def collapsed_lines(text: str) -> str:
    """``text`` with each line stripped and its runs of blanks one space
    (``" ".join(line.split())`` line by line), in C: the runs are replaced
    only where one is not already a single space (code is mostly such)."""
    stripped = "\n".join(strip_keys(text))
    if "  " in stripped or not stripped.isascii() or \
            any(blank in stripped for blank in _ASCII_BLANKS_NOT_SPACE):
        return _BLANKS.sub(" ", stripped)
    return stripped


def spacing_keys(text: str) -> list[str]:
    """:func:`spacing_key` of every line of ``text`` (``\\n`` breaks), by
    passes in C over the whole text, not three per line.  Once runs are one
    space, a space is never beside another, so removing those before a mark
    leaves the same spaces after one: both go in one pass."""
    return _BESIDE_MARK.sub("", collapsed_lines(text)).split("\n")


def _exact_or_endings(lines: Lines, old_raw: str, regions: list[Region]) -> str:
    if "\r" not in lines.text and "\r" not in old_raw:
        return "exact"
    for region in regions:
        a, b = lines.to_original(region.start), lines.to_original(region.end)
        if lines.text[a:b] != old_raw:
            return "line_endings"
    return "exact"


def _ends_a_line_with_blanks(text: str) -> bool:
    return " \n" in text or "\t\n" in text or text.endswith((" ", "\t"))


def _trailing(lines: Lines, old: str, new: str, limit: int) -> Search | None:
    if not _ends_a_line_with_blanks(old) and not _ends_a_line_with_blanks(lines.normalized):
        return None  # nothing to ignore: this rung would find what exact did not
    stripped = [c.rstrip(" \t") for c in lines.contents]
    old_t = "\n".join(line.rstrip(" \t") for line in old.split("\n"))
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


def _indentation(lines: Lines, old: str, new: str, limit: int, work: Work, every: bool,
                 keys_of: Callable[[str], list[str]], strategy: str) -> Search | None:
    old_lines, ends_nl = split_block(old)
    keys = keys_of("\n".join(old_lines))
    if not any(keys):
        return None
    contents = lines.contents
    n, k = len(contents), len(old_lines)
    last_start = n - k - (1 if ends_nl else 0)  # a final oldText break needs a line after
    if last_start < 0:
        return None
    work.step(n + k)
    encoded = _runs(keys_of(lines.normalized), keys)
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
            return Search(strategy, 0, [], note=(
                f"the search ignoring {strategy} stopped early: too many places match oldText "
                f"but for {strategy}"))
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
    unclear: list[int] = []
    uniform = len({_dedented(contents[s:s + k]) for s, _ in found}) == 1
    every = every and uniform
    for s, mapping in found:
        start = lines.nstarts[s]
        end = lines.nstarts[s + k - 1] + len(contents[s + k - 1]) + (1 if ends_nl else 0)
        replacement = ""  # a tolerant match that is not applied needs no newText
        if count == 1 or every:
            work.step(len(new_lines))
            replacement, lost = _placed(new_lines, old_lines, contents[s:s + k], mapping, lines)
            unclear = unclear or lost
        regions.append(Region(start, end, replacement))
    return Search(strategy, count, regions, unclear_indent=unclear, uniform=uniform)


def _dedented(block: list[str]) -> tuple[tuple[int, str], ...]:
    """``block`` as its lines' widths of indentation beyond the least one
    (a tab as four) and text: the same for two blocks that differ only in
    how deep the whole block is, or in tabs for four spaces."""
    widths = [_width(_leading(x)) for x in block if x.strip()]
    least = min(widths, default=0)
    return tuple((_width(_leading(x)) - least if x.strip() else 0, x.strip()) for x in block)


def _placed(new_lines: list[str], old_lines: list[str], matched: list[str],
            mapping: dict[int, str], lines: Lines) -> tuple[str, list[int]]:
    """newText as it goes in place of ``matched``, and the newText lines
    (1-based) whose indentation cannot be decided (empty when it can)."""
    as_written = "\n".join(new_lines)
    reindented = _reindent(new_lines, old_lines, mapping, lines)
    frame = _frame(new_lines, old_lines, matched)
    if frame == "file" or reindented == as_written:
        return as_written, []
    if frame == "old":
        return reindented, []
    moved = reindented.split("\n")
    return as_written, [j + 1 for j, (a, b) in enumerate(zip(new_lines, moved)) if a != b]


def _frame(new_lines: list[str], old_lines: list[str], matched: list[str]) -> str:
    """Whose indentation newText is written in: ``"file"`` (the matched
    text's, so it is kept as written), ``"old"`` (oldText's, so it is carried
    over to the file's) or ``"unclear"``.

    First the newText lines that are oldText lines but for indentation say
    it: one indented as in the file and not as in oldText votes for the
    file, and the other way round.  When none tells, each line's
    indentation is looked up among the file's and oldText's indentations
    in the match.  Votes both ways are unclear."""
    by_key: dict[str, list[int]] = {}
    for i, line in enumerate(old_lines):
        if line.strip():
            by_key.setdefault(line.strip(), []).append(i)
    votes = _votes((_leading(line), {_leading(old_lines[i]) for i in by_key[line.strip()]},
                    {_leading(matched[i]) for i in by_key[line.strip()]})
                   for line in new_lines if line.strip() in by_key)
    if votes == "none":
        olds = {_leading(x) for x in old_lines if x.strip()}
        files = {_leading(x) for x in matched if x.strip()}
        votes = _votes((_leading(line), olds, files) for line in new_lines if line.strip())
    return "unclear" if votes in ("none", "both") else votes


def _votes(cases: Iterable[tuple[str, set[str], set[str]]]) -> str:
    file = old = False
    for lead, olds, files in cases:
        in_old, in_file = lead in olds, lead in files
        file |= in_file and not in_old
        old |= in_old and not in_file
    return "both" if file and old else "file" if file else "old" if old else "none"


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


def tab_indented(lines: Lines) -> bool:
    """Whether :func:`indent_style` is ``"\\t"`` (more lines start with a
    tab than with spaces before text), from counts made in C where they
    settle it: no line starts with a tab, or more do than start with a
    space at all; a line at a time otherwise."""
    if not lines.has_cr:
        text = lines.text
        tabs = text.startswith("\t") + text.count("\n\t")
        if not tabs:
            return False
        if tabs > text.startswith(" ") + text.count("\n "):
            return True
    return indent_style(lines) == "\t"


def has_space_indented_line(lines: Lines) -> bool:
    """Whether a line starts with a space."""
    if not lines.has_cr:
        return lines.text.startswith(" ") or "\n " in lines.text
    return any(line.startswith(" ") for line in lines.contents)


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
