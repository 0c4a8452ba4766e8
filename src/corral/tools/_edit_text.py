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
from functools import cached_property
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
    never splits a ``\\r\\n``).  Everything is computed on first use: a
    file without ``\\r`` (the common case) is its own normalized form and is
    never split unless line numbers are asked for.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.has_cr = "\r" in text
        if not self.has_cr:
            self.normalized = text

    @cached_property
    def _split(self) -> tuple[list[str], list[str]]:
        text = self.text
        if not self.has_cr or "\n" not in text:
            sep = "\r" if self.has_cr else "\n"
            contents = text.split(sep)
            return contents, [sep] * (len(contents) - 1) + [""]
        parts = _SPLIT.split(text)
        return parts[0::2], parts[1::2] + [""]

    @property
    def contents(self) -> list[str]:
        return self._split[0]

    @property
    def eols(self) -> list[str]:
        return self._split[1]

    @cached_property
    def normalized(self) -> str:  # type: ignore[no-redef]
        return "\n".join(self.contents)

    @cached_property
    def nstarts(self) -> list[int]:
        """Where each line starts in the normalized text."""
        return [0, *accumulate(len(c) + 1 for c in self.contents)][:-1]

    @cached_property
    def starts(self) -> list[int]:
        """Where each line starts in the original text."""
        if not self.has_cr:
            return self.nstarts
        return [0, *accumulate(len(c) + len(e) for c, e in zip(self.contents, self.eols))][:-1]

    def __len__(self) -> int:
        return len(self.contents)

    def line_index(self, npos: int) -> int:
        """0-based line of a normalized position."""
        return bisect_right(self.nstarts, npos) - 1

    def to_original(self, npos: int) -> int:
        if not self.has_cr:
            return npos
        i = self.line_index(npos)
        return self.starts[i] + (npos - self.nstarts[i])

    def line_of(self, pos: int) -> int:
        """1-based line of an original position (a terminator belongs to the
        line it ends)."""
        return bisect_right(self.starts, pos)

    def style(self) -> str:
        """``lf``, ``crlf``, ``cr``, ``mixed`` or ``none`` (no line break)."""
        if not self.has_cr:
            return "lf" if "\n" in self.text else "none"
        kinds = set(self.eols[:-1])
        if not kinds:
            return "none"
        if len(kinds) > 1:
            return "mixed"
        return {"\n": "lf", "\r\n": "crlf", "\r": "cr"}[kinds.pop()]

    def dominant_eol(self) -> str:
        """The most common terminator (``\\n`` when there is none; ties go
        to the one seen first)."""
        if not self.has_cr:
            return "\n"
        counts: dict[str, int] = {}
        for eol in self.eols[:-1]:
            counts[eol] = counts.get(eol, 0) + 1
        if not counts:
            return "\n"
        return max(counts, key=lambda e: counts[e])

    def breaks_in(self, nstart: int, nend: int) -> list[str]:
        """The terminators of the normalized region ``[nstart, nend)``, in order."""
        if not self.has_cr:
            return ["\n"] * self.text.count("\n", nstart, nend)
        first, last = self.line_index(nstart), self.line_index(nend)
        # a line's terminator is in the region when its normalized \n is
        return [self.eols[i] for i in range(first, last + 1)
                if self.eols[i] and nstart <= self.nstarts[i] + len(self.contents[i]) < nend]

    def local_eol(self, npos: int) -> str:
        """The terminator a new line break gets at ``npos``: the one ending
        that line, else the file's dominant one."""
        if not self.has_cr:
            return "\n"
        eol = self.eols[self.line_index(npos)]
        return eol or self.dominant_eol()


_BLOCK = 4096


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, compared a block at a time in C."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i:i + _BLOCK] == b[i:i + _BLOCK]:
        i += _BLOCK
    i = min(i, n)
    end = min(i + _BLOCK, n)
    while i < end and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most ``limit``."""
    i = 0
    la, lb = len(a), len(b)
    while i < limit and a[max(la - i - _BLOCK, la - limit):la - i] == \
            b[max(lb - i - _BLOCK, lb - limit):lb - i]:
        i = min(i + _BLOCK, limit)
    end = min(i + _BLOCK, limit)
    while i < end and a[la - i - 1] == b[lb - i - 1]:
        i += 1
    return i


def _keep_lines(text: str) -> list[str]:
    """Lines of a normalized text with their ``\\n`` (the last one without
    when the text has no final newline)."""
    out = text.split("\n")
    last = out.pop()
    out = [line + "\n" for line in out]
    if last:
        out.append(last)
    return out


def unified_diff(path: str, before: Lines, after: Lines, context: int = 3) -> str:
    """A git-style unified diff of two texts, with ``\\n`` line breaks and
    ``\\ No newline at end of file`` markers.  A change of only a line's
    terminator does not show (edit_file never makes one)."""
    a, b = before.normalized, after.normalized
    if a == b:
        return ""
    # Skip the common head and tail at C speed first: a small edit in a large
    # file then costs about the size of the edit, not of the file.
    head = a.rfind("\n", 0, _common_prefix(a, b)) + 1  # a line start before the change
    tail = _common_suffix(a, b, min(len(a), len(b)) - head)
    cut = a.find("\n", len(a) - tail) + 1 if tail else 0  # first whole line of the tail
    a_end = cut if cut else len(a)
    b_end = len(b) - (len(a) - a_end)
    for _ in range(context):  # context lines around the change
        if head:
            head = a.rfind("\n", 0, head - 1) + 1
        if a_end < len(a):
            nxt = a.find("\n", a_end)
            step = (nxt + 1 if nxt >= 0 else len(a)) - a_end
            a_end += step
            b_end += step
    a_lines, b_lines = _keep_lines(a[head:a_end]), _keep_lines(b[head:b_end])
    offset = a.count("\n", 0, head)
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(offset + i1, i2 - i1)} +{_range(offset + j1, j2 - j1)} @@\n")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out.extend(_marked(" ", a_lines[x1:x2]))
                continue
            out.extend(_marked("-", a_lines[x1:x2]))
            out.extend(_marked("+", b_lines[y1:y2]))
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
