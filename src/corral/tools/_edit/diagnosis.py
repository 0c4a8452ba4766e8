"""Why an edit's oldText is not in a file: the closest text and what
differs.  Pure logic, no I/O, bounded.

:func:`diagnose` compares *keys* of lines (look-alike characters folded,
whitespace runs collapsed; computed for the whole file by a few C-level
passes).  Candidate first lines come from votes of oldText lines found in
the file (lines too common to anchor anything are skipped), else of rare
words, else of lines merely similar (rapidfuzz, on lines cut to
:data:`SIMILAR_CHARS`).  Each candidate is aligned with oldText
(:mod:`corral.tools._edit.align`), and the one matching most of oldText's
lines, then the most similar, wins; what differs is said line by line.

Bounds: an oldText of more than :data:`DIAGNOSED_LINES` lines is compared
around the place where it first stops matching the file (found by C-level
searches); the alignment and similarity work draws on a budget
proportional to the file and oldText, and fewer candidates are compared
when it runs low.  Either is said in :attr:`Diagnosis.note`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import cast
from itertools import accumulate, compress
from operator import itemgetter, sub

from .content import is_placeholder
from .align import Opcode, align, first_difference
from .budget import Budget, Work, proportional
from .match import collapsed_lines, split_block
from .text import Lines

_FIRST = itemgetter(0)

__all__ = ["DIAGNOSED_LINES", "Diagnosis", "Difference", "diagnose", "keys_of"]

DIAGNOSED_LINES = 2000  # oldText lines compared with the file, at most
SIMILAR_CHARS = 200  # line length compared for similarity
CANDIDATES = 10  # windows compared, at most
_COMMON = 200  # a line key seen more often than this anchors nothing (e.g. "}")
_PAIRS = 400  # votes one key may cast (its count in oldText times in the file)
_FUZZY_LINES = 200_000  # similar-line search only in files up to this many lines
_TOKEN = re.compile(r"\w{4,}")
_RARE = 20  # a token found more often than this anchors nothing

# Look-alike characters a model types as their ASCII twins (one to one, so
# positions never move).
LOOKALIKE = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u00a0": " ", "\u2007": " ", "\u202f": " ", "\u2009": " ", "\u200a": " ", "\u3000": " ",
}
QUOTES = set("\u2018\u2019\u201a\u201b\u2032\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb'\"")
_LOOKALIKE_TABLE = str.maketrans(LOOKALIKE)
_LEAD = re.compile(r"[ \t]*")


def keys_of(text: str) -> list[str]:
    """The key of every line of ``text`` (``\\n`` breaks): look-alikes
    folded, whitespace runs one space, none at the ends; as
    ``" ".join(line.split())`` line by line, in C."""
    if not text.isascii():
        text = text.translate(_LOOKALIKE_TABLE)
    return collapsed_lines(text).split("\n")


@dataclass
class Difference:
    """One way the file's closest text differs from an oldText, said for a model."""

    kind: str
    text: str  # one clause, phrased for a model
    line: int | None = None  # file line (1-based)
    old_line: int | None = None  # oldText line (1-based)

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "detail": self.text}
        if self.line is not None:
            out["line"] = self.line
        if self.old_line is not None:
            out["oldTextLine"] = self.old_line
        return out


@dataclass
class Diagnosis:
    """Why an oldText was not found: the file's closest window and how it differs."""

    start: int | None = None  # closest window, 1-based file lines (None: nothing close)
    end: int | None = None
    text: str = ""  # the file's text there (\n breaks)
    similarity: float = 0.0
    differences: list[Difference] = field(default_factory=list)
    note: str | None = None  # what was left out of the comparison, in words


@dataclass
class _Excerpt:
    """The oldText lines a diagnosis compares, and where they lie in it."""

    lines: list[str]  # the oldText lines compared
    offset: int  # index of the first of them in oldText
    total: int  # oldText's lines


def _excerpt(lines: Lines, old: str, work: Work) -> _Excerpt:
    """oldText's lines, or for a long one the DIAGNOSED_LINES around the
    place where it first stops matching the file (where the longest match
    of its start, found with C-level searches, ends)."""
    old_lines, _ = split_block(old)
    if len(old_lines) <= DIAGNOSED_LINES:
        return _Excerpt(old_lines, 0, len(old_lines))
    text = lines.normalized
    head = old[:64]
    longest, at = 0, text.find(head)
    for _ in range(16):  # the first few places its start is found
        if at < 0:
            break
        work.check()
        longest = max(longest, first_difference(text[at:at + len(old)], old))
        at = text.find(head, at + 1)
    first = max(0, old.count("\n", 0, longest) - 20)
    first = min(first, len(old_lines) - DIAGNOSED_LINES)
    return _Excerpt(old_lines[first:first + DIAGNOSED_LINES], first, len(old_lines))


def diagnose(lines: Lines, old: str, old_raw: str, work: Work) -> Diagnosis:
    """The window of ``lines`` closest to ``old`` (normalized oldText) and
    what differs there."""
    excerpt = _excerpt(lines, old, work)
    old_lines = excerpt.lines
    note = None
    if excerpt.total > len(old_lines):
        note = (f"oldText has {excerpt.total} lines; only its lines {excerpt.offset + 1}-"
                f"{excerpt.offset + len(old_lines)}, around where it first differs from the "
                "file, were compared")
    old_keys = keys_of("\n".join(old_lines))
    work.step(len(lines.normalized) // 64 + 1)
    file_keys = keys_of(lines.normalized)
    budget = work.budget(proportional(len(file_keys), len(old_keys), per=8))
    found = _closest(old_keys, file_keys, budget)
    if budget.cut:
        note = (note + "; " if note else "") + "fewer places in the file were compared with it"
    if found is None or found[2] < 0.4:
        return Diagnosis(differences=_elisions(old_lines, excerpt.offset, set(file_keys)),
                         note=note)
    a, b, similarity = found
    window = lines.contents[a:b]
    opcodes = align(old_keys, file_keys[a:b], budget).opcodes()
    diffs = _differences(old_lines, window, a, excerpt.offset, opcodes, work)
    diffs += _ending_differences(lines, old, old_raw, b)
    return Diagnosis(a + 1, b, "\n".join(window), round(similarity, 2), diffs, note)


def _ending_differences(lines: Lines, old: str, old_raw: str, end: int) -> list[Difference]:
    """Line-ending style, and a final line break the file does not have."""
    out = []
    style = lines.style()
    mine = "crlf" if "\r\n" in old_raw else ("cr" if "\r" in old_raw else "lf")
    if "\n" in old and style not in ("none", mine):
        out.append(Difference("line_endings", f"the file's line endings are {style.upper()} "
                              f"and oldText's are {mine.upper()} (that alone is tolerated)"))
    if end >= len(lines.contents) and old.endswith("\n") and not lines.normalized.endswith("\n"):
        out.append(Difference("final_newline", f"oldText ends with a line break, but the file "
                              f"ends after line {end} without one", end, None))
    return out


def _closest(old_keys: list[str], file_keys: list[str],
             budget: Budget) -> tuple[int, int, float] | None:
    """File lines ``[a, b)`` most like oldText, and how alike (0..1)."""
    votes = _line_votes(old_keys, file_keys, budget)
    if not votes:
        votes = _token_votes(old_keys, file_keys, budget)
    if not votes and len(file_keys) <= _FUZZY_LINES:
        votes = _similar_votes(old_keys, file_keys, budget)
    if not votes:
        return None
    k = len(old_keys)
    n = len(file_keys)
    affordable = max(1, budget.left // (3 * k + 10))
    ranked = [s for s, _ in votes.most_common(min(CANDIDATES, affordable))]
    if len(ranked) < min(CANDIDATES, len(votes)):
        budget.cut = True
    best: tuple[tuple[int, float], int, int] | None = None
    for s in ranked:
        a, b, matched = _window(old_keys, file_keys, max(0, min(s, n - 1)), budget)
        ratio = _similarity(old_keys, file_keys[a:b], budget)
        if best is None or (matched, ratio) > best[0]:
            best = ((matched, ratio), a, b)
    assert best is not None
    return best[1], best[2], best[0][1]


def _line_votes(old_keys: list[str], file_keys: list[str], budget: Budget) -> Counter[int]:
    """Votes for first lines (file line minus oldText line) from oldText
    lines found in the file, skipping keys too common to mean anything."""
    wanted: dict[str, list[int]] = {}
    for j, key in enumerate(old_keys):
        if key:
            wanted.setdefault(key, []).append(j)
    # the file lines that are oldText lines, found by compress in C: most
    # lines of a large file are not, and are then no step in Python
    hits = list(compress(range(len(file_keys)), map(wanted.__contains__, file_keys)))
    counts = Counter(map(file_keys.__getitem__, hits))
    rare = {key: js for key, js in wanted.items()
            if 0 < counts[key] <= _COMMON and counts[key] * len(js) <= _PAIRS}
    budget.work.step(len(file_keys) + len(old_keys))
    # the hits on rare keys, each paid for (a step per oldText line it is)
    # in file order while the budget lasts: the first it cannot pay for
    # ends the votes (found by halving the running cost, in C)
    found = list(map(rare.get, map(file_keys.__getitem__, hits)))
    hit_lines = list(compress(hits, found))
    hit_js = cast(list[list[int]], list(compress(found, found)))  # (the keys found: rare)
    costs = list(accumulate(map(len, hit_js)))
    paid = bisect_right(costs, budget.left)
    if paid:
        budget.spend(costs[paid - 1])
    if paid < len(costs):
        budget.spend(costs[paid] - costs[paid - 1] if paid else costs[0])  # refused: cut
        del hit_lines[paid:], hit_js[paid:]
    if paid == (costs[paid - 1] if paid else 0):  # (every key paid for once in oldText)
        return Counter(map(sub, hit_lines, map(_FIRST, hit_js)))
    return Counter(i - j for i, js in zip(hit_lines, hit_js) for j in js)


def _token_votes(old_keys: list[str], file_keys: list[str], budget: Budget) -> Counter[int]:
    """Votes from rare words of oldText (identifiers, numbers) found in the
    file: cheap at any size, and they survive a typo elsewhere in the line."""
    tokens: dict[str, int] = {}
    for j, key in enumerate(old_keys):
        for token in _TOKEN.findall(key):
            tokens.setdefault(token, j)
        if len(tokens) >= 32:
            break
    if not tokens:
        return Counter()
    joined = "\n".join(file_keys)
    starts = list(accumulate(map((1).__add__, map(len, file_keys)), initial=0))
    budget.work.step(len(joined) // 16 + 1)
    rare = sorted((joined.count(t), t) for t in tokens)
    votes: Counter[int] = Counter()
    for count, token in rare[:8]:
        if not 1 <= count <= _RARE:
            continue
        at = joined.find(token)
        while at >= 0:
            votes[bisect_right(starts, at) - 1 - tokens[token]] += 1
            at = joined.find(token, at + len(token))
    return votes


def _similar_votes(old_keys: list[str], file_keys: list[str], budget: Budget) -> Counter[int]:
    """Votes from file lines similar to oldText's three longest lines."""
    from rapidfuzz import fuzz, process  # only a failed edit's diagnosis needs it

    longest = sorted(((len(k), j) for j, k in enumerate(old_keys) if len(k) >= 4),
                     reverse=True)[:3]
    choices = [key[:SIMILAR_CHARS] for key in file_keys]
    scored: Counter[int] = Counter()
    for _, j in longest:
        if not budget.spend(len(file_keys)):
            break
        query = old_keys[j][:SIMILAR_CHARS]
        for _, score, i in process.extract(query, choices, scorer=fuzz.ratio, score_cutoff=60,
                                           limit=None):
            scored[i - j] += round(score)
    return scored


def _window(old_keys: list[str], file_keys: list[str], start: int,
            budget: Budget) -> tuple[int, int, int]:
    """File lines ``[a, b)`` that correspond to oldText around ``start``,
    grown over lines oldText leaves out or has in excess, and how many
    non-blank oldText lines are found in it."""
    k = len(old_keys)
    span = file_keys[start:start + 2 * k + 10]
    blocks = align(old_keys, span, budget).blocks
    if not blocks:
        return start, min(len(file_keys), start + k), 0
    (fa, fb, _), (la, lb, lsize) = blocks[0], blocks[-1]
    a = max(0, start + fb - fa)
    b = min(len(file_keys), start + lb + lsize + (k - la - lsize))
    matched = sum(1 for ba, _, size in blocks for j in range(ba, ba + size) if old_keys[j])
    return a, max(b, a + 1), matched


def _similarity(old_keys: list[str], window: list[str], budget: Budget) -> float:
    """How alike the two texts are (0..1), as the share of characters in a
    common subsequence: lines aligned, then the characters of each pair of
    unequal aligned lines (cut to SIMILAR_CHARS)."""
    from rapidfuzz.distance import LCSseq  # only a failed edit's diagnosis needs it

    total = sum(map(len, old_keys)) + sum(map(len, window)) + len(old_keys) + len(window) - 2
    if total <= 0:
        return 1.0
    common = pairs = 0
    for tag, i1, i2, j1, j2 in align(old_keys, window, budget).opcodes():
        if tag == "equal":
            common += sum(map(len, old_keys[i1:i2]))
            pairs += i2 - i1
        elif tag == "replace":
            for x, y in zip(old_keys[i1:i2], window[j1:j2]):
                if not budget.spend(1 + min(len(x), SIMILAR_CHARS) // 32):
                    break
                common += int(LCSseq.similarity(x[:SIMILAR_CHARS], y[:SIMILAR_CHARS]))
                pairs += 1
    return min(1.0, 2 * (common + max(0, pairs - 1)) / total)


# -- what differs ----------------------------------------------------------------


def _describe_indent(indent: str) -> str:
    if not indent:
        return "no indentation"
    tabs, spaces = indent.count("\t"), indent.count(" ")
    parts = []
    if tabs:
        parts.append(f"{tabs} tab{'s' if tabs > 1 else ''}")
    if spaces:
        parts.append(f"{spaces} space{'s' if spaces > 1 else ''}")
    return " and ".join(parts)


def shown(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _line_shown(line: str) -> str:
    return shown(line.strip()) if line.strip() else "a blank line"


def _elision(line: str, j: int, file_line: int | None) -> Difference:
    return Difference("elision", f"oldText line {j + 1} ({shown(line.strip())}) stands for "
                      "text it leaves out, but oldText must be the file's text itself",
                      file_line, j + 1)


def _elisions(old_lines: list[str], offset: int, file_keys: set[str]) -> list[Difference]:
    found = [(j, line) for j, line in enumerate(old_lines) if is_placeholder(line)]
    keys = keys_of("\n".join(line for _, line in found)) if found else []
    return [_elision(line, offset + j, None) for (j, line), key in zip(found, keys)
            if key not in file_keys]


_MAX_DIFFERENCES = 200  # found, before the most telling are chosen


def _differences(old_lines: list[str], window: list[str], first: int, offset: int,
                 opcodes: list[Opcode], work: Work) -> list[Difference]:
    """What differs between oldText lines (``offset`` is the first one's
    index in oldText) and the file lines ``window`` (which start at 0-based
    line ``first``), given their alignment."""
    out: list[Difference] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if len(out) >= _MAX_DIFFERENCES:
            break
        work.step(i2 - i1 + j2 - j1 + 1)
        if tag == "equal":
            if old_lines[i1:i2] == window[j1:j2]:
                continue  # the same lines (compared in C): no difference to say
            for o in range(i1, i2):
                out.extend(_line_differences(old_lines[o], window[j1 + o - i1], offset + o + 1,
                                             first + j1 + o - i1 + 1))
        elif tag == "replace":
            out.extend(_replaced(old_lines, window, first, offset, i1, i2, j1, j2))
        elif tag == "delete":
            out.extend(_elision(old_lines[o], offset + o, None) if is_placeholder(old_lines[o])
                       else Difference("extra_lines", f"oldText line {offset + o + 1} "
                                       f"({shown(old_lines[o].strip())}) is not in the file "
                                       "there", None, offset + o + 1)
                       for o in range(i1, i2))
        elif tag == "insert":
            count = j2 - j1
            out.append(Difference("missing_lines", f"the file has {count} line"
                                  f"{'s' if count > 1 else ''} at line {first + j1 + 1} that "
                                  f"oldText leaves out ({_line_shown(window[j1])}"
                                  f"{' first' if count > 1 else ''})", first + j1 + 1, None))
    return out


def _replaced(old_lines: list[str], window: list[str], first: int, offset: int, i1: int,
              i2: int, j1: int, j2: int) -> list[Difference]:
    """The differences of oldText lines ``[i1, i2)`` that stand where the
    file has lines ``[j1, j2)``."""
    elided = [o for o in range(i1, i2) if is_placeholder(old_lines[o])]
    if elided:
        o = elided[0]
        span = (f"line {first + j1 + 1}" if j2 - j1 == 1 else
                f"lines {first + j1 + 1}-{first + j2}")
        return [Difference("elision", f"oldText line {offset + o + 1} "
                           f"({shown(old_lines[o].strip())}) stands for {span} of the file, "
                           "but oldText must be the file's text itself", first + j1 + 1,
                           offset + o + 1)]
    out = []
    for o, f in zip(range(i1, min(i2, i1 + 20)), range(j1, j2)):
        out.append(Difference("content", f"line {first + f + 1} reads "
                              f"{shown(window[f].strip())} where oldText line {offset + o + 1} "
                              f"reads {shown(old_lines[o].strip())}", first + f + 1,
                              offset + o + 1))
    if i2 - i1 > j2 - j1:
        o = i1 + (j2 - j1)
        out.append(Difference("extra_lines", f"oldText line {offset + o + 1} "
                              f"({shown(old_lines[o].strip())}) is not in the file there", None,
                              offset + o + 1))
    elif j2 - j1 > i2 - i1:
        f = j1 + (i2 - i1)
        out.append(Difference("missing_lines", f"line {first + f + 1} ({_line_shown(window[f])}) "
                              "is in the file but not in oldText", first + f + 1, None))
    return out


def _leading(line: str) -> str:
    return _LEAD.match(line).group()  # type: ignore[union-attr]


def _line_differences(old: str, line: str, old_no: int, line_no: int) -> list[Difference]:
    """Differences between two lines whose keys are equal: whitespace and
    look-alike characters only."""
    if old == line:
        return []
    out = []
    lo, lf = _leading(old), _leading(line)
    body_o, body_f = old[len(lo):], line[len(lf):]
    to, tf = body_o[len(body_o.rstrip(" \t")):], body_f[len(body_f.rstrip(" \t")):]
    core_o, core_f = body_o[:len(body_o) - len(to)], body_f[:len(body_f) - len(tf)]
    if lo != lf and core_o:
        kind = "tabs_vs_spaces" if ("\t" in lo) != ("\t" in lf) else "indentation"
        out.append(Difference(kind, f"line {line_no} is indented with {_describe_indent(lf)}, "
                              f"oldText line {old_no} with {_describe_indent(lo)}",
                              line_no, old_no))
    if to != tf:
        out.append(Difference("trailing_whitespace", _trailing_text(to, tf, old_no, line_no),
                              line_no, old_no))
    if core_o != core_f:
        out.append(_inner_difference(core_o, core_f, old_no, line_no))
    return out


def _trailing_text(to: str, tf: str, old_no: int, line_no: int) -> str:
    if tf and not to:
        return (f"line {line_no} ends with {_describe_indent(tf)} that oldText line {old_no} "
                "leaves out")
    if to and not tf:
        return (f"oldText line {old_no} ends with {_describe_indent(to)} that line {line_no} "
                "does not have")
    return (f"line {line_no} ends with {_describe_indent(tf)}, oldText line {old_no} with "
            f"{_describe_indent(to)}")


def _inner_difference(core_o: str, core_f: str, old_no: int, line_no: int) -> Difference:
    at = first_difference(core_f, core_o)
    x, y = core_f[at:at + 1], core_o[at:at + 1]
    if x and y and x in QUOTES and y in QUOTES:
        return Difference("quotes", f"line {line_no} has the quote {x} where oldText line "
                          f"{old_no} has {y}", line_no, old_no)
    if x and y and LOOKALIKE.get(x, x) == LOOKALIKE.get(y, y):
        return Difference("lookalike", f"line {line_no} has {x!r} (U+{ord(x):04X}) where "
                          f"oldText line {old_no} has {y!r} (U+{ord(y):04X})", line_no, old_no)
    return Difference("spacing", f"the spacing inside line {line_no} differs from oldText line "
                      f"{old_no}", line_no, old_no)
