"""The text model behind edit_file: free of I/O.

A file's bytes become text with what a model cannot see kept aside: the
UTF-8 byte-order mark, each line's own terminator (``\\r\\n``, ``\\n``, or
none on a last line without a final newline).  Lines are split as read_file
splits them, so line numbers agree: at ``\\n`` (a ``\\r`` before it belongs
to the terminator), or at a lone ``\\r`` only in a file with no ``\\n``.
Matching runs on the *normalized* text (every terminator an ``\\n``);
:class:`Lines` maps positions between the two, so an edit replaces exactly
the original characters it matched and every byte outside them survives.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

__all__ = ["BOM", "Undecodable", "decode", "encode", "Lines", "unified_diff", "to_breaks",
           "changed_lines", "BREAK"]

BOM = b"\xef\xbb\xbf"
# Longest first: a UTF-32-LE mark starts with the UTF-16-LE one.
_OTHER_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
               (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))

BREAK = re.compile(r"\r\n|\r|\n")  # a break in text a model sends (never \v, \f, U+2028...)
_SPLIT = re.compile(r"(\r\n|\n)")


class Undecodable(Exception):
    """The bytes are not UTF-8 text: ``kind`` is ``binary`` or ``encoding``;
    ``facts`` gives where (``line``, ``byteOffset`` of the first bad byte)
    or which ``encoding`` a byte-order mark announced."""

    def __init__(self, kind: str, facts: dict[str, object]) -> None:
        super().__init__(kind)
        self.kind = kind
        self.facts = facts


@dataclass(frozen=True)
class Decoded:
    text: str
    bom: bool


def decode(data: bytes) -> Decoded:
    """UTF-8 text of ``data`` (its BOM set aside), or :class:`Undecodable`."""
    for mark, name in _OTHER_BOMS:
        if data.startswith(mark):
            raise Undecodable("encoding", {"encoding": name})
    nul = data.find(b"\x00")
    if nul >= 0:
        raise Undecodable("binary", {"offset": nul})
    bom = data.startswith(BOM)
    body = data[len(BOM):] if bom else data
    try:
        return Decoded(body.decode("utf-8"), bom)
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(BOM) if bom else 0)
        raise Undecodable("encoding", {"line": data.count(b"\n", 0, offset) + 1,
                                       "byteOffset": offset}) from None


def encode(text: str, bom: bool) -> bytes:
    data = text.encode("utf-8")
    return BOM + data if bom else data


def to_breaks(normalized: str, eol: str) -> str:
    """``normalized`` (``\\n`` breaks) with every break written as ``eol``."""
    return normalized if eol == "\n" else normalized.replace("\n", eol)


class Lines:
    """``text`` split into lines, each with its own terminator.

    ``normalized`` is the text with every terminator written ``\\n``; a
    position in it maps back with :meth:`to_original` (a normalized ``\\n``
    maps to the first character of the original terminator, so a region
    never splits a ``\\r\\n``).
    """

    __slots__ = ("text", "contents", "eols", "starts", "nstarts", "normalized")

    def __init__(self, text: str) -> None:
        self.text = text
        if "\r" not in text or "\n" not in text:
            sep = "\n" if "\r" not in text else "\r"
            contents = text.split(sep)
            eols = [sep] * (len(contents) - 1) + [""]
        else:
            parts = _SPLIT.split(text)
            contents = parts[0::2]
            eols = parts[1::2] + [""]
        self.contents: list[str] = contents
        self.eols: list[str] = eols
        lengths = [len(c) + len(e) for c, e in zip(contents, eols)]
        self.starts: list[int] = [0, *accumulate(lengths)][:-1]
        self.nstarts: list[int] = [0, *accumulate(len(c) + 1 for c in contents)][:-1]
        self.normalized = "\n".join(contents)

    def __len__(self) -> int:
        return len(self.contents)

    def line_index(self, npos: int) -> int:
        """0-based line of a normalized position."""
        return bisect_right(self.nstarts, npos) - 1

    def to_original(self, npos: int) -> int:
        i = self.line_index(npos)
        return self.starts[i] + (npos - self.nstarts[i])

    def line_of(self, pos: int) -> int:
        """1-based line of an original position (a terminator belongs to the
        line it ends)."""
        return bisect_right(self.starts, pos)

    def style(self) -> str:
        """``lf``, ``crlf``, ``cr``, ``mixed`` or ``none`` (no line break)."""
        kinds = set(self.eols[:-1])
        if not kinds:
            return "none"
        if len(kinds) > 1:
            return "mixed"
        return {"\n": "lf", "\r\n": "crlf", "\r": "cr"}[kinds.pop()]

    def dominant_eol(self) -> str:
        """The most common terminator (``\\n`` when there is none; ties go
        to the one seen first)."""
        counts: dict[str, int] = {}
        for eol in self.eols[:-1]:
            counts[eol] = counts.get(eol, 0) + 1
        if not counts:
            return "\n"
        return max(counts, key=lambda e: counts[e])

    def local_eol(self, npos: int) -> str:
        """The terminator new line breaks get when written at ``npos``: the
        one ending that line, else the file's dominant one."""
        eol = self.eols[self.line_index(npos)]
        return eol or self.dominant_eol()


def _diff_lines(lines: Lines) -> list[str]:
    """Normalized lines with ``\\n`` kept, the last one without when the
    text has no final newline (so that difference shows in a diff)."""
    out = [c + "\n" for c in lines.contents]
    last = lines.contents[-1]
    out[-1] = last
    if last == "":
        out.pop()  # the text ends with a newline (or is empty)
    return out


def unified_diff(path: str, before: Lines, after: Lines, context: int = 3) -> str:
    """A git-style unified diff of two texts, with ``\\n`` line breaks and
    ``\\ No newline at end of file`` markers.  A change of only a line's
    terminator does not show (edit_file never makes one)."""
    a, b = _diff_lines(before), _diff_lines(after)
    # Skip the common head and tail first: a small edit in a large file then
    # costs the size of the edit, not of the file.
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    lo = max(0, head - context)
    a_mid, b_mid = a[lo:len(a) - max(0, tail - context)], b[lo:len(b) - max(0, tail - context)]
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(lo + i1, i2 - i1)} +{_range(lo + j1, j2 - j1)} @@\n")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out.extend(_marked(" ", a_mid[x1:x2]))
                continue
            out.extend(_marked("-", a_mid[x1:x2]))
            out.extend(_marked("+", b_mid[y1:y2]))
    return "".join(out) if len(out) > 2 else ""


def _range(start: int, length: int) -> str:
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


def _marked(sign: str, lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(sign + line)
        else:
            out.append(f"{sign}{line}\n\\ No newline at end of file\n")
    return out


def changed_lines(before: Lines, after: Lines, limit: int = 20) -> list[list[int]]:
    """Line ranges ``[first, last]`` of ``after`` (1-based) that differ from
    ``before``; a deletion is given as the one line where it happened."""
    a, b = before.contents, after.contents
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[list[int]] = []
    last = max(1, len(b))
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        first = min(j1 + 1, last)
        out.append([first, max(first, j2)])
        if len(out) == limit:
            break
    return out
