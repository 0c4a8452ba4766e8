"""grep's matcher: compile a pattern safely and find matching lines in bytes.

Python's ``re`` backtracks, and a backtracking search cannot be interrupted,
so the patterns that make it exponential are refused before anything runs
(:func:`unsafe_reason`): backreferences, a variable quantifier nested in a
repeated group (``(a+)+``, ``(\\w+\\s?)*``) and alternatives that can start
with the same character inside a repeated group (``(a|ab)*``).  Possessive
quantifiers and atomic groups do not backtrack and are allowed, which is the
rewrite the refusal suggests.  What remains is at worst polynomial in the
length of one line.

Files are searched as bytes, a chunk of whole lines at a time, and split
into lines only around a match.  A pattern with non-ASCII characters (or
``\\u`` escapes) is searched as text decoded from UTF-8 instead, so ``.``
and classes mean characters and case folding is Unicode's.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Iterator, Union

from ._refusal import Code, Refusal

__all__ = ["Matcher", "compile_matcher", "unsafe_reason"]

Buffer = Union[bytes, str]

_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT)
_DIGITS = frozenset(range(0x30, 0x3A))
_SPACES = frozenset((0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20))
_ANY = None  # a first-character set we cannot bound


def _first(items: list, fold: bool) -> frozenset[int] | None:
    """Characters a sequence can start with (``None``: unknown or empty)."""
    for op, av in items:
        if op is C.AT:  # zero-width anchor: look at what follows
            continue
        if op is C.LITERAL:
            return _folded(frozenset((av,)), fold)
        if op is C.IN:
            chars: set[int] = set()
            for iop, iav in av:
                if iop is C.LITERAL:
                    chars.add(iav)
                elif iop is C.RANGE and iav[1] - iav[0] <= 4096:
                    chars.update(range(iav[0], iav[1] + 1))
                elif iop is C.CATEGORY and iav is C.CATEGORY_DIGIT:
                    chars.update(_DIGITS)
                elif iop is C.CATEGORY and iav is C.CATEGORY_SPACE:
                    chars.update(_SPACES)
                else:
                    return _ANY
            return _folded(frozenset(chars), fold)
        if op is C.SUBPATTERN:
            return _first(av[-1], fold)
        if op is C.ATOMIC_GROUP:
            return _first(av, fold)
        if op in _REPEATS or op is C.POSSESSIVE_REPEAT:
            return _first(av[2], fold) if av[0] > 0 else _ANY
        if op is C.BRANCH:
            union: set[int] = set()
            for alt in av[1]:
                first = _first(alt, fold)
                if first is _ANY:
                    return _ANY
                union |= first
            return frozenset(union)
        return _ANY
    return _ANY  # can match the empty string: what follows decides


def _folded(chars: frozenset[int], fold: bool) -> frozenset[int]:
    if not fold:
        return chars
    return frozenset(ord(c) for ch in chars for c in (chr(ch).lower(), chr(ch).upper())
                     if len(c) == 1)


def _overlapping(alternatives: list, fold: bool) -> bool:
    seen: set[int] = set()
    for alt in alternatives:
        first = _first(alt, fold)
        if first is _ANY or seen & first:
            return True
        seen |= first
    return False


def _scan(items: list, repeated: bool, fold: bool) -> str | None:
    for op, av in items:
        if op in (C.GROUPREF, C.GROUPREF_EXISTS):
            return "a backreference"
        if op in _REPEATS:
            low, high, body = av
            if repeated and low != high:
                return "a quantifier nested inside a repeated group"
            reason = _scan(body, repeated or high > 1, fold)
        elif op is C.POSSESSIVE_REPEAT:
            reason = _scan(av[2], False, fold)  # never backtracked into
        elif op is C.ATOMIC_GROUP:
            reason = _scan(av, False, fold)
        elif op is C.SUBPATTERN:
            reason = _scan(av[-1], repeated, fold)
        elif op is C.BRANCH:
            if repeated and _overlapping(av[1], fold):
                return "alternatives that can start with the same character inside a repeated group"
            reason = None
            for alt in av[1]:
                reason = reason or _scan(alt, repeated, fold)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            reason = _scan(av[1], repeated, fold)
        else:
            reason = None
        if reason:
            return reason
    return None


def unsafe_reason(pattern: str, ignore_case: bool = False) -> str | None:
    """Why ``pattern`` could make a backtracking search take exponential
    time, or ``None``.  ``pattern`` must already compile."""
    return _scan(_parser.parse(pattern).data, False, ignore_case)


class Matcher:
    """Finds the lines of a buffer that contain a match.

    ``text`` says whether buffers are ``str`` (decoded UTF-8) or ``bytes``.
    """

    def __init__(self, literal: bytes | None, regex: re.Pattern | None, text: bool,
                 anchored_end: bool = False) -> None:
        self.literal = literal
        self.regex = regex
        self.text = text
        self.nl: Buffer = "\n" if text else b"\n"
        # "$" must also match before the "\r" of a CRLF line: such chunks
        # are searched line by line with the "\r" left out
        self._crlf: Buffer | None = ("\r\n" if text else b"\r\n") if anchored_end else None

    def prepare(self, data: bytes) -> Buffer:
        return data.decode("utf-8", "surrogateescape") if self.text else data

    def any_in(self, buf: Buffer, start: int, end: int) -> bool:
        """Cheap test: could any line in ``buf[start:end]`` match?"""
        if self.literal is not None:
            return buf.find(self.literal, start, end) >= 0  # type: ignore[arg-type]
        if self._crlf is not None and buf.find(self._crlf, start, end) >= 0:  # type: ignore
            return True
        return self.regex.search(buf, start, end) is not None  # type: ignore[union-attr]

    def lines(self, buf: Buffer, start: int, end: int) -> Iterator[tuple[int, int, int]]:
        """``(line_start, line_end, match_start)`` for each line of
        ``buf[start:end]`` (whole lines) that contains a match."""
        nl = self.nl
        pos = start
        literal = self.literal
        if literal is not None:
            while pos < end:
                i = buf.find(literal, pos, end)  # type: ignore[arg-type]
                if i < 0:
                    return
                ls = buf.rfind(nl, pos, i) + 1 or pos  # type: ignore[arg-type]
                le = buf.find(nl, i, end)  # type: ignore[arg-type]
                if le < 0:
                    le = end
                yield ls, le, i
                pos = le + 1
            return
        search = self.regex.search  # type: ignore[union-attr]
        if self._crlf is not None and buf.find(self._crlf, start, end) >= 0:  # type: ignore
            yield from self._crlf_lines(buf, start, end)
            return
        while pos < end:
            m = search(buf, pos, end)
            if m is None:
                return
            i = m.start()
            ls = buf.rfind(nl, pos, i) + 1 or pos  # type: ignore[arg-type]
            if ls >= end:
                return  # an empty match after the last line break: not a line
            le = buf.find(nl, i, end)  # type: ignore[arg-type]
            if le < 0:
                le = end
            if i == le and i > ls or m.end() > le:
                # the match began at the line break or ran past it: does the
                # line hold a match of its own?
                m = search(buf, ls, le)
                if m is not None:
                    yield ls, le, m.start()
            else:
                yield ls, le, i
            pos = le + 1


    def _crlf_lines(self, buf: Buffer, start: int, end: int) -> Iterator[tuple[int, int, int]]:
        search, nl = self.regex.search, self.nl  # type: ignore[union-attr]
        cr = "\r" if self.text else 13
        ls = start
        while ls < end:
            le = buf.find(nl, ls, end)  # type: ignore[arg-type]
            if le < 0:
                le = end
            stop = le - 1 if le > ls and buf[le - 1] == cr else le
            m = search(buf, ls, stop)
            if m is not None:
                yield ls, le, m.start()
            ls = le + 1


def compile_matcher(pattern: str, *, regex: bool, ignore_case: bool) -> Matcher:
    """A :class:`Matcher` for ``pattern`` or an ``INVALID_ARGUMENT`` refusal
    (a bad or unsafe regex, a line break in the pattern)."""
    if "\n" in pattern or "\r" in pattern:
        raise Refusal(Code.INVALID_ARGUMENT, "the pattern contains a line break, and grep "
                      "matches within one line", "Search for one line of the text at a time.",
                      details={"field": "pattern", "kind": "multiline"})
    text = not pattern.isascii() or (regex and re.search(r"\\[uUN]", pattern) is not None)
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    if not regex:
        if not ignore_case and not text:
            return Matcher(pattern.encode("ascii"), None, False)
        source = re.escape(pattern)
        compiled = re.compile(source if text else source.encode("ascii"), flags)
        return Matcher(None, compiled, text)
    try:
        re.compile(pattern, flags)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise Refusal(Code.INVALID_ARGUMENT, f"the pattern is not a valid regular expression: "
                      f"{exc.msg}{where}", "Fix the regular expression (Python re syntax), or "
                      "pass regex: false to search for the text literally.",
                      details={"field": "pattern", "kind": "regex", "reason": exc.msg,
                               "position": exc.pos}) from None
    except (OverflowError, RecursionError, ValueError) as exc:
        raise Refusal(Code.INVALID_ARGUMENT, "the pattern is not a usable regular expression: "
                      f"{type(exc).__name__}", "Use a simpler regular expression, or pass "
                      "regex: false to search for the text literally.",
                      details={"field": "pattern", "kind": "regex"}) from None
    reason = unsafe_reason(pattern, ignore_case)
    if reason:
        raise Refusal(Code.INVALID_ARGUMENT, f"the pattern has {reason}, which can make the "
                      "search take exponential time", "Rewrite it without nested or overlapping "
                      "repetition (a possessive quantifier like a++ or an atomic group (?>...) "
                      "is fine), or pass regex: false for a literal search.",
                      details={"field": "pattern", "kind": "unsafe_regex", "reason": reason})
    compiled = re.compile(pattern if text else pattern.encode("ascii"), flags)
    return Matcher(None, compiled, text, anchored_end="$" in pattern or "\\Z" in pattern)
