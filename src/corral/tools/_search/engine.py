"""grep's pattern: RE2 (linear time) for regexes, the native scanner for literals.

:func:`compile_pattern` reads the pattern (:mod:`._search_syntax`),
translates what other dialects mean unambiguously, and compiles it with
google-re2 on bytes (UTF-8 semantics, ``never_nl``: a match never spans a
line, so whole buffers are searched and only matching lines located).  A
case-sensitive literal search needs no engine at all
(:func:`._search_scan.literal_lines`).  What RE2 cannot run raises
:class:`PatternProblem` with a rewrite, which grep verifies before
offering it.

Without RE2 (a platform with no wheel) regexes run on Python's ``re``
behind strict guards (:func:`._search_syntax.backtracking_risk`) and each
line is searched in windows of :data:`FALLBACK_WINDOW` bytes; grep says so
in its answer and :func:`engine_report` tells ``corral doctor``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.machinery import PathFinder
from typing import Any

from . import syntax
from .._refusals.catalogue import Kind
from ...contained import Backend, default_backend
from .scan import Hit, literal_lines, regex_lines

__all__ = [
    "ENGINE",
    "FALLBACK_WINDOW",
    "Pattern",
    "PatternProblem",
    "compile_pattern",
    "engine_report",
]


@functools.cache
def _re2() -> Any:
    """google-re2, imported at the first pattern that needs it (some 4 ms
    that a process which never greps a regex does not pay); ``None`` where
    it cannot be imported."""
    try:
        import re2  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - exercised by forcing ENGINE in tests
        return None
    return re2


# found, not imported: a broken install falls back to ``re`` at the first pattern
ENGINE = "re2" if PathFinder.find_spec("re2") is not None else "re"
FALLBACK_WINDOW = 4096  # bytes of one line one guarded ``re`` search looks at
FALLBACK_NOTE = ("RE2 is not installed, so the regex ran on Python re with strict guards; lines "
                 f"longer than {FALLBACK_WINDOW} bytes were searched in pieces.")


def engine_report() -> dict[str, Any]:
    """What runs grep's patterns, for ``corral doctor``."""
    re2 = _re2()
    version = getattr(re2, "__version__", None) if re2 is not None else None
    return {"regex": ENGINE if re2 is not None else "re", "re2": re2 is not None,
            "re2Version": version, "literalScanner": _literal_scanner(),
            "note": None if re2 is not None else FALLBACK_NOTE}


def _literal_scanner() -> str:
    """Which scanner the default backend runs literal searches in."""
    try:
        backend = default_backend()
    except OSError as exc:  # none can be had here (pyfakefs): say so
        return f"none ({exc.strerror or exc})"
    except ValueError as exc:  # CORRAL_BACKEND names no backend (the report says so too)
        return f"none ({exc})"
    return "native" if backend.batches else "python"


class PatternProblem(Exception):
    """A pattern that cannot run as given: ``kind`` is ``regex`` (malformed),
    ``regex_unsupported`` (RE2 cannot run it), ``unsafe_regex`` (the ``re``
    fallback's guard) or ``multiline``; ``rewrite`` a pattern that would run
    (``exact``: finding the same lines)."""

    def __init__(self, kind: Kind, message: str, *, reason: str | None = None,
                 rewrite: str | None = None, exact: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.reason = reason
        self.rewrite = rewrite
        self.exact = exact


@dataclass
class Pattern:
    """A compiled grep pattern: how to find the matching lines of a buffer."""

    source: str
    text: str  # as translated (what runs may also let "$" match before a "\\r")
    notes: list[str] = field(default_factory=list)  # what was translated
    literal: bytes | None = None  # case-sensitive literal: the scanner, no engine
    searcher: Any = None  # an RE2 or re pattern object on bytes
    required: bytes | None = None  # every matching line contains this
    fallback: bool = False

    def could_match(self, buf: bytes, end: int | None = None) -> bool:
        """Cheap whole-buffer test of ``buf[:end]``: ``False`` means no line matches."""
        needle = self.literal or self.required
        if needle is not None:
            return buf.find(needle, 0, len(buf) if end is None else end) >= 0
        return True

    def lines(self, buf: bytes, pos: int = 0, line: int = 1, end: int | None = None, *,
              backend: Backend) -> Iterator[Hit]:
        """The matching lines of ``buf[pos:end]`` (``end`` a line end); a
        literal is searched for by ``backend``."""
        if self.literal is not None:
            return literal_lines(self.literal, buf, pos, line, end, backend=backend)
        if self.fallback:
            return self._window_lines(buf, pos, line, len(buf) if end is None else end)
        return regex_lines(self.searcher, buf, pos, line, end)

    def _window_lines(self, buf: bytes, pos: int, line: int, size: int) -> Iterator[Hit]:
        search = self.searcher.search
        required = self.required
        while pos < size:
            end = buf.find(b"\n", pos, size)
            end = size if end < 0 else end
            if required is None or buf.find(required, pos, end) >= 0:
                for lo in range(pos, max(end, pos + 1), FALLBACK_WINDOW):
                    m = search(buf, lo, min(end, lo + FALLBACK_WINDOW))
                    if m is not None:
                        yield pos, end, m.start(), line
                        break
            pos, line = end + 1, line + 1


def _re2_options(re2: Any, ignore_case: bool) -> Any:
    options = re2.Options()
    options.never_nl = True
    options.log_errors = False
    options.case_sensitive = not ignore_case
    return options


def _re2_reason(exc: Exception) -> str:
    text = exc.args[0] if exc.args else ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text).split(": ", 1)[0] or "not a valid regular expression"


def _literal(pattern: str, ignore_case: bool) -> Pattern:
    if not ignore_case:
        return Pattern(pattern, pattern, literal=pattern.encode("utf-8"))
    re2 = _re2()
    if re2 is not None:
        options = _re2_options(re2, True)
        options.literal = True
        return Pattern(pattern, pattern, searcher=re2.compile(pattern.encode("utf-8"), options))
    compiled = re.compile(re.escape(pattern).encode("utf-8"), re.IGNORECASE)
    return Pattern(pattern, pattern, searcher=compiled, fallback=True)


def compile_pattern(pattern: str, *, regex: bool, ignore_case: bool,
                    engine: str = ENGINE) -> Pattern:
    """The :class:`Pattern` for a grep call, or :class:`PatternProblem`."""
    if "\n" in pattern or "\r" in pattern:
        raise PatternProblem(Kind.MULTILINE, "the pattern contains a line break, and grep matches "
                             "within one line")
    if not regex:
        return _literal(pattern, ignore_case)
    tokens = syntax.tokenize(pattern)
    problem = syntax.unsupported(tokens)
    if problem is not None:
        raise PatternProblem(Kind.REGEX_UNSUPPORTED, f"the pattern uses {problem.what}, which "
                             "grep's regex engine (RE2, linear time) does not run",
                             reason=problem.what, rewrite=problem.rewrite, exact=problem.exact)
    shown, text, notes = syntax.translate(tokens)
    required = syntax.required_literal(tokens) if not ignore_case else None
    needle = required.encode("utf-8") if required else None
    re2 = _re2() if engine == "re2" else None
    if re2 is not None:
        try:
            searcher = re2.compile(("(?m)" + text).encode("utf-8"), _re2_options(re2, ignore_case))
        except re2.error as exc:
            reason = _re2_reason(exc)
            raise PatternProblem(Kind.REGEX, f"the pattern is not a valid regular expression: "
                                 f"{reason}", reason=reason) from None
        return Pattern(pattern, shown, notes, searcher=searcher, required=needle)
    return _fallback(pattern, shown, text, notes, tokens, ignore_case, needle)


def _fallback(pattern: str, shown: str, text: str, notes: list[str],
              tokens: list[syntax.Token], ignore_case: bool, needle: bytes | None) -> Pattern:
    risk = syntax.backtracking_risk(tokens)
    if risk is not None:
        raise PatternProblem(Kind.UNSAFE_REGEX, f"the pattern has {risk}, which Python's re (used "
                             "because RE2 is not installed) could take exponential time on",
                             reason=risk)
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        searcher = re.compile(text.encode("utf-8"), flags)
    except (re.error, OverflowError, RecursionError, ValueError) as exc:
        reason = getattr(exc, "msg", None) or type(exc).__name__
        raise PatternProblem(Kind.REGEX, f"the pattern is not a valid regular expression: {reason}",
                             reason=reason) from None
    return Pattern(pattern, shown, [*notes, FALLBACK_NOTE], searcher=searcher, required=needle,
                   fallback=True)
