"""Where an edit's oldText is in a file, and why it is not: pure logic, no I/O.

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
:func:`diagnose` finds the closest window of lines and says what differs.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from itertools import accumulate
from math import gcd

from ._edit_text import Lines

__all__ = ["Region", "Search", "search", "normalize_breaks", "applied_copies", "distinctive",
           "occurrences", "strip_line_numbers", "unescape", "placeholder_lines", "diagnose",
           "Diagnosis", "Difference", "apply_regions", "remap", "compose", "indent_style",
           "MAX_LISTED", "Placement", "Span"]

MAX_LISTED = 100  # line numbers listed in one answer

_BREAKS = re.compile(r"\r\n|\r")
_LEAD = re.compile(r"[ \t]*")
# A line-number prefix as read tools print them: "12\t", "    12→", "12: ", "L12: ", "12 | ".
_NUMBERED = re.compile(r"^[ \t]*L?(\d+)(?:\t|→|:[ \t]?|[ \t]?\|[ \t]?|(?=$))")
# A line standing for code left out: a comment (or a line in brackets) with an
# ellipsis and a phrase such as "rest of", "existing", "unchanged".
_COMMENTED = re.compile(r"^\s*(?:#|//|/\*|<!--|--|;|\*|\{/\*)|^\s*[(\[{].*[)\]}]\s*$")
_PHRASE = re.compile(r"\b(?:rest of|existing|unchanged|remaining|omitted|same as (?:before|above)|"
                     r"other (?:code|methods|functions)|code (?:here|goes here)|as before)\b",
                     re.IGNORECASE)
_BARE_ELISION = re.compile(r"^\s*(?:#|//|/\*|<!--|--|;)\s*(?:\.\.\.|…)\s*(?:\*/|-->)?\s*$")

# Look-alike characters a model types as their ASCII twins (one to one, so
# positions never move).
_LOOKALIKE = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u00a0": " ", "\u2007": " ", "\u202f": " ", "\u2009": " ", "\u200a": " ", "\u3000": " ",
}
_QUOTES = set("\u2018\u2019\u201a\u201b\u2032\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb'\"")
_LOOKALIKE_TABLE = str.maketrans(_LOOKALIKE)


def normalize_breaks(text: str) -> str:
    return _BREAKS.sub("\n", text) if "\r" in text else text


@dataclass
class Region:
    """``[start, end)`` in the normalized text, and what replaces it (``\\n`` breaks)."""

    start: int
    end: int
    replacement: str


@dataclass
class Search:
    strategy: str  # exact, line_endings, trailing_whitespace, indentation
    count: int  # occurrences (non-overlapping)
    regions: list[Region]  # the first ``limit`` of them, in order


# -- the ladder ----------------------------------------------------------------


def occurrences(text: str, needle: str, limit: int) -> tuple[int, list[int]]:
    """Count of non-overlapping ``needle`` in ``text`` and the first ``limit`` starts."""
    count = text.count(needle)
    starts: list[int] = []
    at = text.find(needle)
    while at >= 0 and len(starts) < limit:
        starts.append(at)
        at = text.find(needle, at + len(needle))
    return count, starts


def search(lines: Lines, old_raw: str, new_raw: str, limit: int) -> Search | None:
    """The first rung of the ladder that finds ``old_raw``, with up to
    ``limit`` regions (``None`` when no rung finds it)."""
    old = normalize_breaks(old_raw)
    new = normalize_breaks(new_raw)
    count, starts = occurrences(lines.normalized, old, limit)
    if count:
        regions = [Region(s, s + len(old), new) for s in starts]
        return Search(_exact_or_endings(lines, old_raw, regions), count, regions)
    if old.strip(" \t\n") == "":
        return None  # whitespace itself is matched exactly or not at all
    found = _trailing(lines, old, new, limit)
    if found is not None:
        return found
    return _indentation(lines, old, new, limit)


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


def _split_block(text: str) -> tuple[list[str], bool]:
    """Lines of ``text`` and whether it ended with a line break."""
    parts = text.split("\n")
    if len(parts) > 1 and parts[-1] == "":
        return parts[:-1], True
    return parts, False


def _indentation(lines: Lines, old: str, new: str, limit: int) -> Search | None:
    old_lines, ends_nl = _split_block(old)
    keys = [line.strip() for line in old_lines]
    first = next((j for j, k in enumerate(keys) if k), None)
    if first is None:
        return None
    contents = lines.contents
    n, k = len(contents), len(old_lines)
    last_start = n - k - (1 if ends_nl else 0)  # a final oldText break needs a line after
    key0 = keys[first]
    found: list[tuple[int, dict[int, str]]] = []
    count = 0
    next_free = 0
    for i, line in enumerate(contents):
        s = i - first
        if s < next_free or s > last_start or line.strip() != key0:
            continue
        if any(contents[s + j].strip() != keys[j] for j in range(k)):
            continue
        mapping = _correspondence(old_lines, contents[s:s + k])
        if mapping is None:
            continue
        count += 1
        next_free = s + k
        if len(found) < limit:
            found.append((s, mapping))
    if not count:
        return None
    new_lines = new.split("\n")
    regions = []
    for s, mapping in found:
        start = lines.nstarts[s]
        end = lines.nstarts[s + k - 1] + len(contents[s + k - 1]) + (1 if ends_nl else 0)
        regions.append(Region(start, end, _reindent(new_lines, old_lines, mapping, lines)))
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
    if any(a >= b for a, b in zip(depths, depths[1:])):
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
        below = [x for x in ordered if x <= w]
        anchor = below[-1] if below else ordered[0]
        levels, extra = divmod(w - anchor, unit_old)
        indent = mapping[anchor]
        if levels >= 0:
            indent += unit_file * levels
        else:
            for _ in range(-levels):
                if indent.endswith(unit_file):
                    indent = indent[:-len(unit_file)]
                else:
                    indent = indent[:-1]
        out.append(indent + " " * extra + line[len(lead):])
    return "\n".join(out)


def _units(mapping: dict[int, str], old_lines: list[str], new_lines: list[str],
           lines: Lines) -> tuple[int, str]:
    """One level of indentation in the model's text (a width) and in the
    file (a string)."""
    ordered = sorted(mapping)
    steps = []
    for a, b in zip(ordered, ordered[1:]):
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
    diffs = [b - a for a, b in zip(widths, widths[1:]) if b - a >= 2]
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


# -- how oldText went wrong ---------------------------------------------------------


def strip_line_numbers(old: str) -> str | None:
    """``old`` without read-output line-number prefixes, when every line has
    one and the numbers count up by one; ``None`` otherwise."""
    lines, ends_nl = _split_block(old)
    numbers = []
    out = []
    for line in lines:
        m = _NUMBERED.match(line)
        if m is None:
            return None
        numbers.append(int(m.group(1)))
        rest = line[m.end():]
        out.append(rest)
    if any(b != a + 1 for a, b in zip(numbers, numbers[1:])):
        return None
    return "\n".join(out) + ("\n" if ends_nl else "")


_ESCAPES = re.compile(r"\\(\\|n|t|r|\"|')")


def unescape(old: str) -> str | None:
    """``old`` with ``\\n``, ``\\t``, ``\\"`` escape sequences turned into the
    characters, when it has escaped newlines and no real ones."""
    if "\n" in old or "\\n" not in old:
        return None
    table = {"\\": "\\", "n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'"}
    return _ESCAPES.sub(lambda m: table[m.group(1)], old)


def placeholder_lines(text: str) -> list[tuple[int, str]]:
    """Lines of ``text`` (0-based index, line) that stand for code left out:
    ``# ... rest of the code ...``, ``// ... existing code ...``."""
    out = []
    for i, line in enumerate(text.split("\n")):
        if _is_elision(line):
            out.append((i, line))
    return out


@dataclass
class Difference:
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
    start: int | None = None  # closest window, 1-based file lines (None: nothing close)
    end: int | None = None
    text: str = ""  # the file's text there (\n breaks)
    similarity: float = 0.0
    differences: list[Difference] = field(default_factory=list)


_FUZZY_MAX_LINES = 50_000  # fuzzy line search only in files up to this many lines
_COMMON = 200  # a line key seen more often than this anchors nothing (e.g. "}")


def _key(line: str) -> str:
    return " ".join(line.translate(_LOOKALIKE_TABLE).split())


def diagnose(lines: Lines, old: str, old_raw: str) -> Diagnosis:
    """The window of ``lines`` closest to ``old`` (normalized oldText) and
    what differs there."""
    old_lines, _ = _split_block(old)
    old_keys = [_key(x) for x in old_lines]
    file_keys = [_key(x) for x in lines.contents]
    found = _closest(old_keys, file_keys)
    if found is None or found[2] < 0.4:
        return Diagnosis(differences=_elisions(old_lines, set(file_keys)))
    a, b, similarity = found
    window = lines.contents[a:b]
    diffs = _differences(old_lines, window, a, set(file_keys))
    style = lines.style()
    mine = "crlf" if "\r\n" in old_raw else ("cr" if "\r" in old_raw else "lf")
    if "\n" in old and style not in ("none", mine):
        diffs.append(Difference("line_endings", f"the file's line endings are {style.upper()} "
                                f"and oldText's are {mine.upper()} (that alone is tolerated)"))
    return Diagnosis(a + 1, b, "\n".join(window), round(similarity, 2), diffs)


def _closest(old_keys: list[str], file_keys: list[str]) -> tuple[int, int, float] | None:
    """File lines ``[a, b)`` most like oldText, and how alike (0..1).

    Candidate first lines come from votes of lines that match once
    whitespace and look-alikes are ignored (else, in files that are not too
    large, of merely similar lines); each candidate is grown over lines
    oldText leaves out or has in excess, and the one matching most of
    oldText's lines, then the most similar, wins."""
    wanted: dict[str, list[int]] = {}
    for j, key in enumerate(old_keys):
        if key:
            wanted.setdefault(key, []).append(j)
    hits: dict[str, list[int]] = {key: [] for key in wanted}
    for i, key in enumerate(file_keys):
        if key in hits:
            hits[key].append(i)
    votes: Counter[int] = Counter()
    for key, found in hits.items():
        if len(found) > _COMMON:
            continue
        for j in wanted[key]:
            for i in found:
                votes[i - j] += 1
    if not votes:
        votes = _token_votes(old_keys, file_keys)
    if not votes and len(file_keys) <= _FUZZY_MAX_LINES:
        scored: dict[int, float] = {}
        longest = sorted(((len(k), j) for j, k in enumerate(old_keys) if len(k) >= 4),
                         reverse=True)[:3]
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        for _, j in longest:
            matcher.set_seq2(old_keys[j])
            for i, key in enumerate(file_keys):
                matcher.set_seq1(key)
                if (matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6
                        and (r := matcher.ratio()) >= 0.6):
                    scored[i - j] = scored.get(i - j, 0.0) + r
        ranked = sorted(scored, key=lambda s: -scored[s])[:10]
    else:
        ranked = [s for s, _ in votes.most_common(10)]
    if not ranked:
        return None
    n = len(file_keys)
    joined_old = "\n".join(old_keys)
    best: tuple[tuple[int, float], int, int] | None = None
    for s in ranked:
        a, b, matched = _window(old_keys, file_keys, max(0, min(s, n - 1)))
        ratio = difflib.SequenceMatcher(None, "\n".join(file_keys[a:b]), joined_old,
                                        autojunk=False).ratio()
        if best is None or (matched, ratio) > best[0]:
            best = ((matched, ratio), a, b)
    assert best is not None
    return best[1], best[2], best[0][1]


_TOKEN = re.compile(r"\w{4,}")
_RARE = 20  # a token found more often than this anchors nothing


def _token_votes(old_keys: list[str], file_keys: list[str]) -> Counter[int]:
    """Votes for first lines from rare words of oldText (identifiers,
    numbers) found in the file: cheap at any size, and they survive a typo
    elsewhere in the line."""
    tokens: dict[str, int] = {}
    for j, key in enumerate(old_keys):
        for token in _TOKEN.findall(key):
            tokens.setdefault(token, j)
    if not tokens:
        return Counter()
    joined = "\n".join(file_keys)
    starts = list(accumulate(map((1).__add__, map(len, file_keys)), initial=0))
    rare = sorted((joined.count(t), t) for t in list(tokens)[:64])
    votes: Counter[int] = Counter()
    for count, token in rare[:8]:
        if not 1 <= count <= _RARE:
            continue
        at = joined.find(token)
        while at >= 0:
            votes[bisect_right(starts, at) - 1 - tokens[token]] += 1
            at = joined.find(token, at + len(token))
    return votes


def _window(old_keys: list[str], file_keys: list[str], start: int) -> tuple[int, int, int]:
    """File lines ``[a, b)`` that correspond to oldText around ``start``,
    grown over lines oldText leaves out or has in excess, and how many
    non-blank oldText lines are found in it."""
    k = len(old_keys)
    span = file_keys[start:start + 2 * k + 10]
    blocks = [blk for blk in difflib.SequenceMatcher(None, old_keys, span,
                                                     autojunk=False).get_matching_blocks()
              if blk.size]
    if not blocks:
        return start, min(len(file_keys), start + k), 0
    first, last = blocks[0], blocks[-1]
    a = max(0, start + first.b - first.a)
    b = min(len(file_keys), start + last.b + last.size + (k - last.a - last.size))
    matched = sum(1 for blk in blocks for j in range(blk.a, blk.a + blk.size) if old_keys[j])
    return a, max(b, a + 1), matched


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


def _shown(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _line_shown(line: str) -> str:
    return _shown(line.strip()) if line.strip() else "a blank line"


def _is_elision(line: str) -> bool:
    if len(line) > 200:
        return False
    if _BARE_ELISION.match(line):
        return True
    return ("..." in line or "…" in line) and bool(_COMMENTED.match(line)) \
        and bool(_PHRASE.search(line))


def _elision(line: str, j: int, file_line: int | None) -> Difference:
    return Difference("elision", f"oldText line {j + 1} ({_shown(line.strip())}) stands for "
                      "text it leaves out, but oldText must be the file's text itself",
                      file_line, j + 1)


def _elisions(old_lines: list[str], file_keys: set[str]) -> list[Difference]:
    return [_elision(line, j, None) for j, line in enumerate(old_lines)
            if _is_elision(line) and _key(line) not in file_keys]


def _differences(old_lines: list[str], window: list[str], first: int,
                 file_keys: set[str]) -> list[Difference]:
    """What differs between oldText and the file lines ``window`` (which
    start at 0-based line ``first``)."""
    out: list[Difference] = []
    matcher = difflib.SequenceMatcher(None, [_key(x) for x in old_lines],
                                      [_key(x) for x in window], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for o in range(i1, i2):
                out.extend(_line_differences(old_lines[o], window[j1 + o - i1], o + 1,
                                             first + j1 + o - i1 + 1))
        elif tag == "replace":
            elided = [o for o in range(i1, i2) if _is_elision(old_lines[o])]
            if elided:
                o = elided[0]
                span = (f"line {first + j1 + 1}" if j2 - j1 == 1 else
                        f"lines {first + j1 + 1}-{first + j2}")
                out.append(Difference("elision", f"oldText line {o + 1} "
                                      f"({_shown(old_lines[o].strip())}) stands for {span} of "
                                      "the file, but oldText must be the file's text itself",
                                      first + j1 + 1, o + 1))
                continue
            for o, f in zip(range(i1, i2), range(j1, j2)):
                out.append(Difference("content", f"line {first + f + 1} reads "
                                      f"{_shown(window[f].strip())} where oldText line {o + 1} "
                                      f"reads {_shown(old_lines[o].strip())}",
                                      first + f + 1, o + 1))
            if i2 - i1 > j2 - j1:
                o = i1 + (j2 - j1)
                out.append(Difference("extra_lines", f"oldText line {o + 1} "
                                      f"({_shown(old_lines[o].strip())}) is not in the file "
                                      "there", None, o + 1))
            elif j2 - j1 > i2 - i1:
                f = j1 + (i2 - i1)
                out.append(Difference("missing_lines", f"line {first + f + 1} "
                                      f"({_line_shown(window[f])}) is in the file but not "
                                      "in oldText", first + f + 1, None))
        elif tag == "delete":
            for o in range(i1, i2):
                if _is_elision(old_lines[o]):
                    out.append(_elision(old_lines[o], o, None))
                else:
                    out.append(Difference("extra_lines", f"oldText line {o + 1} "
                                          f"({_shown(old_lines[o].strip())}) is not in the "
                                          "file there", None, o + 1))
        elif tag == "insert":
            count = j2 - j1
            out.append(Difference("missing_lines", f"the file has {count} line"
                                  f"{'s' if count > 1 else ''} at line {first + j1 + 1} that "
                                  f"oldText leaves out ({_line_shown(window[j1])}"
                                  f"{' first' if count > 1 else ''})", first + j1 + 1, None))
    return out


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
        if tf and not to:
            text = (f"line {line_no} ends with {_describe_indent(tf)} that oldText line "
                    f"{old_no} leaves out")
        elif to and not tf:
            text = f"oldText line {old_no} ends with {_describe_indent(to)} that line {line_no} " \
                   "does not have"
        else:
            text = f"line {line_no} ends with {_describe_indent(tf)}, oldText line {old_no} " \
                   f"with {_describe_indent(to)}"
        out.append(Difference("trailing_whitespace", text, line_no, old_no))
    if core_o != core_f:
        for x, y in zip(core_f, core_o):
            if x != y:
                break
        else:
            x = y = ""
        if x and y and x in _QUOTES and y in _QUOTES:
            out.append(Difference("quotes", f"line {line_no} has the quote {x} where oldText "
                                  f"line {old_no} has {y}", line_no, old_no))
        elif x and y and _LOOKALIKE.get(x, x) == _LOOKALIKE.get(y, y):
            out.append(Difference("lookalike", f"line {line_no} has {x!r} (U+{ord(x):04X}) "
                                  f"where oldText line {old_no} has {y!r} (U+{ord(y):04X})",
                                  line_no, old_no))
        else:
            out.append(Difference("spacing", f"the spacing inside line {line_no} differs from "
                                  f"oldText line {old_no}", line_no, old_no))
    return out


# -- applying -----------------------------------------------------------------------

Placement = tuple[int, int, int, int]  # original [a, b) became [na, nb) in the new text


def _with_breaks(lines: Lines, region: Region) -> str:
    """The replacement with its line breaks written as the file writes them:
    the k-th break takes the terminator of the k-th break it replaces (so a
    mixed file stays mixed line by line), extra ones the last of those, and
    with none replaced the terminator of the line it lands in."""
    text = region.replacement
    if not lines.has_cr or "\n" not in text:
        return text
    replaced = lines.breaks_in(region.start, region.end)
    fallback = replaced[-1] if replaced else lines.local_eol(region.start)
    if all(e == fallback for e in replaced):
        return text.replace("\n", fallback)
    parts = text.split("\n")
    out = [parts[0]]
    for k, part in enumerate(parts[1:]):
        out.append(replaced[k] if k < len(replaced) else fallback)
        out.append(part)
    return "".join(out)


def apply_regions(lines: Lines, regions: list[Region]) -> tuple[str, list[Placement]]:
    """The original text with ``regions`` (sorted, not overlapping) replaced,
    line breaks written as the file writes them (see :func:`_with_breaks`:
    an ``\\n`` newText in a CRLF file is written with CRLF)."""
    text = lines.text
    pieces = []
    placements: list[Placement] = []
    cursor = 0
    size = 0
    for region in regions:
        a, b = lines.to_original(region.start), lines.to_original(region.end)
        new = _with_breaks(lines, region)
        pieces.append(text[cursor:a])
        size += a - cursor
        placements.append((a, b, size, size + len(new)))
        pieces.append(new)
        size += len(new)
        cursor = b
    pieces.append(text[cursor:])
    return "".join(pieces), placements


def remap(ranges: list[tuple[int, int]], placements: list[Placement]) -> list[tuple[int, int]]:
    """Where ranges of the old text are in the new one: moved by the
    replacements before them, widened over a replacement they overlap."""
    if not placements:
        return ranges
    starts = [p[0] for p in placements]

    def start(x: int) -> int:
        i = bisect_right(starts, x) - 1
        if i < 0:
            return x
        a, b, na, nb = placements[i]
        return na if x < b or a == b == x else x + (nb - b)

    def end(y: int) -> int:
        i = bisect_right(starts, y - 1) - 1  # the last replacement starting before y
        if i < 0:
            return y
        a, b, na, nb = placements[i]
        return nb if y <= b else y + (nb - b)

    out = []
    for x, y in ranges:
        nx = start(x)
        out.append((nx, nx) if x == y else (nx, max(nx, end(y))))
    return out


Span = tuple[int, int, int, int]  # base text [ba, bb) is now [ca, cb); outside spans both agree


def compose(spans: list[Span], placements: list[Placement]) -> list[Span]:
    """The changed spans after one more edit: ``spans`` (base -> current)
    combined with ``placements`` (current -> new), merging what overlaps or
    touches.  Outside the spans the base and the new text are identical, so
    a diff needs to look only inside them."""
    out: list[Span] = []
    i = j = 0
    d_span = d_place = 0  # growth of the spans / placements passed so far
    while i < len(spans) or j < len(placements):
        if j >= len(placements) or (i < len(spans) and spans[i][2] <= placements[j][0]):
            ga, gb = spans[i][2], spans[i][3]
        else:
            ga, gb = placements[j][0], placements[j][1]
        span_before, place_before = d_span, d_place
        while True:
            if i < len(spans) and spans[i][2] <= gb:
                ba, bb, ca, cb = spans[i]
                gb = max(gb, cb)
                d_span += (cb - ca) - (bb - ba)
                i += 1
            elif j < len(placements) and placements[j][0] <= gb:
                a, b, na, nb = placements[j]
                gb = max(gb, b)
                d_place += (nb - na) - (b - a)
                j += 1
            else:
                break
        out.append((ga - span_before, gb - d_span, ga + place_before, gb + d_place))
    return out
