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

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate
from operator import add
from typing import Any, Generic, NamedTuple, TypeVar, overload

from .._read.textform import HEAD, decode_wide, encode_wide, many_controls

__all__ = ["BOM", "Decoded", "Lines", "Undecodable", "decode", "encode"]

BOM = b"\xef\xbb\xbf"
# Longest first: a UTF-32-LE mark starts with the UTF-16-LE one.
_OTHER_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
               (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_WIDE_FIRST = frozenset(mark[:1] for mark, _ in _OTHER_BOMS)

_SPLIT = re.compile(r"(\r\n|\n)")
_BREAKS = re.compile(r"\r\n|\r")


class Undecodable(Exception):
    """The bytes are not UTF-8 text: ``kind`` is ``binary`` or ``encoding``;
    ``facts`` gives where (``line``, ``byteOffset`` of the first bad byte)
    or which ``encoding`` a byte-order mark announced."""

    def __init__(self, kind: str, facts: dict[str, object]) -> None:
        super().__init__(kind)
        self.kind = kind
        self.facts = facts


class Decoded(NamedTuple):
    text: str
    bom: bool
    encoding: str | None = None  # a wide encoding announced by its mark (kept on writing)


def decode(data: bytes) -> Decoded:
    """Text of ``data`` (its BOM set aside): UTF-8, or UTF-16/UTF-32 with a
    byte order mark; or :class:`Undecodable`."""
    for mark, name in _OTHER_BOMS if data[:1] in _WIDE_FIRST else ():
        if data.startswith(mark):
            wide = decode_wide(data)
            if wide is None:
                raise Undecodable("encoding", {"encoding": name})
            return Decoded(wide[1], True, wide[0])
    nul = data.find(b"\x00")
    if nul >= 0:
        raise Undecodable("binary", {"offset": nul})
    if many_controls(data[:HEAD]):  # (no NUL: found above)
        raise Undecodable("binary", {"controls": True})
    bom = data.startswith(BOM)
    body = data[len(BOM):] if bom else data
    try:
        return Decoded(body.decode("utf-8"), bom)
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(BOM) if bom else 0)
        raise Undecodable("encoding", {"line": data.count(b"\n", 0, offset) + 1,
                                       "byteOffset": offset}) from None


def encode(text: str, bom: bool, encoding: str | None = None) -> bytes:
    if encoding is not None:
        return encode_wide(text, encoding)
    data = text.encode("utf-8")
    return BOM + data if bom else data


_T = TypeVar("_T")


class _once(Generic[_T]):
    """A value computed on first use and kept on the instance, as
    ``functools.cached_property`` without its per-access lock (Python
    3.11 takes one on every first access; a :class:`Lines` is never shared
    between threads)."""

    def __init__(self, compute: Callable[[Any], _T]) -> None:
        self._compute = compute
        self._name = compute.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _once[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...

    def __get__(self, obj: object, owner: type | None = None) -> _T | _once[_T]:
        if obj is None:
            return self
        value = self._compute(obj)
        obj.__dict__[self._name] = value
        return value


_NEAR = 64  # lines a line lookup walks from the last one found, at most


class Lines:
    """``text`` split into lines, each with its own terminator.

    ``normalized`` is the text with every terminator written ``\\n``; a
    position in it maps back with :meth:`to_original` (a normalized ``\\n``
    maps to the first character of the original terminator, so a region
    never splits a ``\\r\\n``).  Everything is computed on first use: a
    file without ``\\r`` (the common case) is its own normalized form and is
    never split unless its lines are asked for; a line number there is its
    count of line breaks between it and the line found last, counted in C,
    until those counts would cost more than one pass over the text (then
    the line starts are built once).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.has_cr = "\r" in text
        self._counted = 0  # characters scanned by line lookups that counted breaks
        self._anchor = (0, 0)  # a line and the offset it starts at, found by counting
        if not self.has_cr:
            self.normalized = text

    def _counted_line(self, pos: int) -> int | None:
        """The 0-based line of ``pos`` by counting the line breaks between
        it and the anchor (a line start), which it becomes; ``None`` in a
        text with ``\\r``, once the line starts were built, or when the
        counting would go past one pass over the text (lookups near one
        another, as an edit's are, cost their distance, not their offset)."""
        if self.has_cr or pos < 0 or "nstarts" in self.__dict__:
            return None
        text = self.text
        pos = min(pos, len(text))
        line, offset = self._anchor
        spent = self._counted + (pos - offset if pos >= offset else offset - pos)
        if spent > len(text):
            return None
        self._counted = spent
        if pos >= offset:
            line += text.count("\n", offset, pos)
            start = text.rfind("\n", offset, pos) + 1 or offset
        else:
            line -= text.count("\n", pos, offset)
            start = text.rfind("\n", 0, pos) + 1
        self._anchor = (line, start)
        return line

    @_once
    def _split(self) -> tuple[list[str], list[str]]:
        text = self.text
        if not self.has_cr or "\n" not in text:
            sep = "\r" if self.has_cr else "\n"
            contents = text.split(sep)
            return contents, [sep] * (len(contents) - 1) + [""]
        parts = _SPLIT.split(text)
        return parts[0::2], parts[1::2] + [""]

    @_once
    def cr_inside_lines(self) -> bool:
        """Whether a line of this text holds a lone ``\\r``: the text has
        ``\\n`` (so it is split there only) and a ``\\r`` not before one."""
        text = self.text
        return self.has_cr and "\n" in text and text.count("\r") != text.count("\r\n")

    def normalize(self, sent: str) -> str:
        """A model's text (an oldText, a newText) with its line breaks
        written ``\\n``, as :attr:`normalized` writes this text's: a
        ``\\r\\n`` is a break; a lone ``\\r`` too, unless a line of this
        text holds one, where it is that character, as read_file shows it
        (read as a break, an oldText copied from such a line would never
        match, and a ``\\r`` would match a line break the model never
        named)."""
        if "\r" not in sent:
            return sent
        if self.cr_inside_lines:
            return sent.replace("\r\n", "\n")
        return _BREAKS.sub("\n", sent)

    @property
    def contents(self) -> list[str]:
        return self._split[0]

    def presplit(self) -> Lines:
        """This text with its lines split now: for a few lines, cheaper
        than finding each line when it is asked for (their starts are not
        found: a line's number is still counted in C)."""
        self._split  # noqa: B018 (computed and kept on first use)
        return self

    @property
    def eols(self) -> list[str]:
        return self._split[1]

    @_once
    def normalized(self) -> str:
        return "\n".join(self.contents)

    @_once
    def nstarts(self) -> list[int]:
        """Where each line starts in the normalized text."""
        # line i starts after the i lines before it and their i breaks; map,
        # accumulate and add run in C (range ends the list at the last line)
        contents = self.contents
        return list(map(add, accumulate(map(len, contents), initial=0), range(len(contents))))

    @_once
    def starts(self) -> list[int]:
        """Where each line starts in the original text."""
        if not self.has_cr:
            return self.nstarts
        starts = list(accumulate(map(add, map(len, self.contents), map(len, self.eols)),
                                 initial=0))
        starts.pop()
        return starts

    @_once
    def breaks(self) -> int:
        """``\\n`` characters in the text."""
        return self.text.count("\n")

    def replaced(self, text: str, placements: Iterable[tuple[int, int, int, int]]) -> Lines:
        """The lines of ``text``, this text with each ``[a, b)`` of
        ``placements`` become ``text[na:nb]``: its line breaks counted from
        this text's and the replaced pieces', not by another pass over it."""
        out = Lines(text)
        out.breaks = self.breaks + sum(text.count("\n", na, nb) - self.text.count("\n", a, b)
                                       for a, b, na, nb in placements)
        return out

    @_once
    def _count(self) -> int:
        if not self.has_cr and "_split" not in self.__dict__:
            text = self.text
            return self.breaks + (0 if not text or text.endswith("\n") else 1)
        return len(self.contents) - (1 if self.contents[-1] == "" else 0)

    def count(self) -> int:
        """Lines as a diff counts them (an empty text after the last line
        break is not one)."""
        return self._count

    def line(self, i: int) -> str:
        """Normalized line ``i`` (0-based) with its ``\\n`` if it has one."""
        text = self.contents[i]
        return text + "\n" if i < len(self.contents) - 1 else text

    def lines(self, i: int, j: int) -> list[str]:
        """Normalized lines ``[i, j)``, each as :meth:`line` gives it."""
        if not self.has_cr and "_split" not in self.__dict__ and i >= 0:
            near = self._near_lines(i, j) if i < j else []
            if near is not None:
                return near
        contents = self.contents
        out = [c + "\n" for c in contents[i:j]]
        if out and j >= len(contents):
            out[-1] = out[-1][:-1]
        return out

    def _near_lines(self, i: int, j: int) -> list[str] | None:
        """:meth:`lines` of a text without ``\\r`` cut from the text itself,
        when line ``i`` is within :data:`_NEAR` lines of the last line found
        by counting (``None``: farther, split the text instead)."""
        total = self._count + (1 if self.text.endswith("\n") or not self.text else 0)
        if i >= total:
            return []
        start = self._line_start(i)
        if start is None:
            return None
        text = self.text
        if j >= total:  # to the end: the last line has no break of its own
            pieces = text[start:].split("\n")
            last = pieces.pop()
            return [piece + "\n" for piece in pieces] + [last]
        end = self._line_start(j)
        if end is None:
            return None
        pieces = text[start:end].split("\n")
        pieces.pop()  # the empty text after line j - 1's break
        return [piece + "\n" for piece in pieces]

    def _line_start(self, i: int) -> int | None:
        """Where line ``i`` (0-based, it exists) starts in a text without
        ``\\r``, walked from the anchor a line at a time; ``None`` when it
        is more than :data:`_NEAR` lines away."""
        line, offset = self._anchor
        if abs(i - line) > _NEAR:
            return None
        text = self.text
        while line < i:
            offset = text.index("\n", offset) + 1
            line += 1
        while line > i:
            offset = text.rfind("\n", 0, offset - 1) + 1
            line -= 1
        self._anchor = (line, offset)
        return offset

    def at_line_start(self, pos: int) -> bool:
        """Whether the original position ``pos`` starts a line."""
        if not self.has_cr and 0 <= pos <= len(self.text):
            return pos == 0 or self.text[pos - 1] == "\n"
        return self.starts[self.line_of(pos) - 1] == pos

    def __len__(self) -> int:
        return len(self.contents)

    def line_index(self, npos: int) -> int:
        """0-based line of a normalized position."""
        counted = self._counted_line(npos)
        if counted is not None:
            return counted
        return bisect_right(self.nstarts, npos) - 1

    def to_original(self, npos: int) -> int:
        if not self.has_cr:
            return npos
        i = self.line_index(npos)
        return self.starts[i] + (npos - self.nstarts[i])

    def line_of(self, pos: int) -> int:
        """1-based line of an original position (a terminator belongs to the
        line it ends)."""
        counted = self._counted_line(pos)
        if counted is not None:
            return counted + 1
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
