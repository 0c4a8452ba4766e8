"""Reading a model's regular expression before any engine sees it.

One linear pass (:func:`tokenize`) splits a pattern into tokens; the rest
of grep's regex handling works on them, never on Python's private
``re._parser``:

* :func:`translate`: constructs from other dialects whose meaning for a
  line search is unambiguous become RE2 syntax, and each is named (GNU
  ``\\<`` ``\\>``, PCRE ``\\h`` ``\\e`` ``\\Z`` ``\\K``, ``\\uXXXX``), so the
  answer can say what was translated; ``$`` also matches before the ``\\r``
  of a CRLF line.
* :func:`unsupported`: what RE2 cannot run (lookaround, backreferences,
  possessive quantifiers, atomic groups, conditionals), each with the
  pattern that finds the same lines or a superset of them.
* :func:`required_literal`: a literal every match contains (a prefilter).
* :func:`backtracking_risk`: for the ``re`` fallback, why a pattern could
  take more than linear time, or ``None``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "Token",
    "Unsupported",
    "backtracking_risk",
    "bre_to_ere",
    "looks_bre",
    "looks_double_escaped",
    "required_literal",
    "tokenize",
    "translate",
    "undouble_escapes",
    "unsupported",
]

_LOOK = {"(?=": "a lookahead", "(?!": "a negative lookahead", "(?<=": "a lookbehind",
         "(?<!": "a negative lookbehind"}
_SIMPLE_ESCAPES = frozenset("dDwWsSbBAzpPxnrtfvaQE0123456789")
_WORDY = re.compile(r"[A-Za-z0-9_]")
_QUANT = re.compile(r"\{(\d*)(,?)(\d*)\}")


class Token(NamedTuple):
    kind: str  # lit, esc, class, dot, anchor, open, close, alt, quant, backref, foreign
    text: str
    start: int
    group: str = ""  # for "open": capture, plain, look, atomic, flags, cond


def _class_end(p: str, i: int) -> int:
    """Index just past the class opened at ``p[i]`` (``len(p)`` if unclosed)."""
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1
    while j < len(p):
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if c == "[" and p.startswith("[:", j):
            end = p.find(":]", j + 2)
            if end > 0:
                j = end + 2
                continue
        if c == "]":
            return j + 1
        j += 1
    return len(p)


_BRACED = {"k": ("<", ">", "backref"), "g": ("{", "}", "backref"), "p": ("{", "}", "esc"),
           "P": ("{", "}", "esc"), "x": ("{", "}", "esc")}
_UNICODE = re.compile(r"\\u(\{[0-9A-Fa-f]{1,6}\}|[0-9A-Fa-f]{4})|\\U[0-9A-Fa-f]{8}")


def _braced(p: str, i: int) -> tuple[Token, int] | None:
    """``\\k<name>``, ``\\g{1}``, ``\\p{L}``, ``\\x{e9}`` at ``p[i]``."""
    spec = _BRACED.get(p[i + 1])
    if spec is None or not p.startswith(spec[0], i + 2):
        return None
    end = p.find(spec[1], i + 3)
    end = len(p) - 1 if end < 0 else end
    return Token(spec[2], p[i:end + 1], i), end + 1


def _escape(p: str, i: int) -> tuple[Token, int]:
    """The escape at ``p[i]`` (a backslash)."""
    if i + 1 >= len(p):
        return Token("lit", "\\", i), i + 1
    c = p[i + 1]
    if c in "123456789":
        return Token("backref", p[i:i + 2], i), i + 2
    braced = _braced(p, i)
    if braced is not None:
        return braced
    m = _UNICODE.match(p, i) if c in "uU" else None
    if m:
        return Token("foreign", m.group(), i), m.end()
    kind = ("foreign" if c in "<>hHeZKR" else "anchor" if c in "bBAz" else
            "esc" if c in _SIMPLE_ESCAPES else "lit")  # lit: an escaped metacharacter
    return Token(kind, p[i:i + 2], i), i + 2


def _group(p: str, i: int) -> tuple[Token, int]:
    for opener in ("(?<=", "(?<!", "(?=", "(?!"):
        if p.startswith(opener, i):
            return Token("open", opener, i, "look"), i + len(opener)
    if p.startswith("(?>", i):
        return Token("open", "(?>", i, "atomic"), i + 3
    if p.startswith("(?(", i) or p.startswith("(?R", i) or re.match(r"\(\?[+-]?\d", p[i:i + 5]):
        return Token("open", p[i:i + 3], i, "cond"), i + 3
    if p.startswith("(?P=", i):
        end = p.find(")", i)
        end = len(p) - 1 if end < 0 else end
        return Token("backref", p[i:end + 1], i), end + 1
    m = re.compile(r"\(\?(P?<[A-Za-z_][A-Za-z0-9_]*>|'[A-Za-z_][A-Za-z0-9_]*')").match(p, i)
    if m:
        return Token("open", m.group(), i, "capture"), m.end()
    m = re.compile(r"\(\?[a-zA-Z-]*([:)])").match(p, i)
    if m:
        kind = "plain" if m.group(1) == ":" else "flags"
        return Token("open", m.group(), i, kind), m.end()
    return Token("open", "(", i, "capture"), i + 1


def tokenize(p: str) -> list[Token]:
    """The tokens of ``p``, in one pass (malformed input still tokenizes;
    the engine reports what is wrong with it)."""
    out: list[Token] = []
    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            tok, i = _escape(p, i)
        elif c == "[":
            end = _class_end(p, i)
            tok, i = Token("class", p[i:end], i), end
        elif c == "(":
            tok, i = _group(p, i)
        elif c == ")":
            tok, i = Token("close", ")", i), i + 1
        elif c == "|":
            tok, i = Token("alt", "|", i), i + 1
        elif c in "*+?" or (c == "{" and _QUANT.match(p, i)):
            m = _QUANT.match(p, i) if c == "{" else None
            end = m.end() if m else i + 1
            if end < len(p) and p[end] in "?+":
                end += 1
            tok, i = Token("quant", p[i:end], i), end
        elif c == ".":
            tok, i = Token("dot", ".", i), i + 1
        elif c in "^$":
            tok, i = Token("anchor", c, i), i + 1
        else:
            tok, i = Token("lit", c, i), i + 1
        out.append(tok)
    return out


# -- translation ----------------------------------------------------------------------

_FOREIGN = {"\\<": ("\\b", "GNU \\< (start of word) as \\b"),
            "\\>": ("\\b", "GNU \\> (end of word) as \\b"),
            "\\h": ("[\\t ]", "PCRE \\h as [\\t ]"), "\\H": ("[^\\t ]", "PCRE \\H as [^\\t ]"),
            "\\e": ("\\x1b", "PCRE \\e as \\x1b"), "\\Z": ("$", "\\Z as $ (end of line)"),
            "\\K": ("", "PCRE \\K dropped (it only moves where a match starts)"),
            "\\R": ("$", "PCRE \\R as $ (grep matches within a line)")}


def translate(tokens: list[Token]) -> tuple[str, str, list[str]]:
    """The pattern in RE2 syntax as shown (foreign constructs translated),
    as run (``$`` also matching before a CRLF's ``\\r``), and a note for
    each foreign construct translated."""
    out: list[str] = []
    shown: list[str] = []
    notes: list[str] = []
    for tok in tokens:
        if tok.kind == "foreign":
            if tok.text in _FOREIGN:
                text, note = _FOREIGN[tok.text]
            else:  # \uXXXX, \u{X}, \UXXXXXXXX
                digits = tok.text[2:].strip("{}")
                text, note = f"\\x{{{digits}}}", f"{tok.text} as \\x{{{digits}}}"
            out.append(text)
            shown.append(text)
            if note not in notes:
                notes.append(note)
        elif tok.kind == "anchor" and tok.text == "$":
            out.append("(?:\\r?$)")
            shown.append("$")
        else:
            out.append(tok.text)
            shown.append(tok.text)
    return "".join(shown), "".join(out), notes


# -- what RE2 cannot run ---------------------------------------------------------------

class Unsupported(NamedTuple):
    what: str  # "a lookahead", "a backreference", ...
    rewrite: str | None  # a pattern RE2 runs that finds the same lines, or more
    exact: bool  # the rewrite finds exactly the same lines


def _group_spans(tokens: list[Token]) -> dict[int, tuple[int, int]]:
    """Token index of each group's opener -> (opener index, closer index)."""
    spans: dict[int, tuple[int, int]] = {}
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.kind == "open":
            stack.append(i)
        elif tok.kind == "close" and stack:
            start = stack.pop()
            spans[start] = (start, i)
    return spans


def _depth_zero(tokens: list[Token], index: int) -> bool:
    depth = 0
    for tok in tokens[:index]:
        depth += (tok.kind == "open") - (tok.kind == "close")
    return depth == 0


def _quantified(tokens: list[Token], close: int) -> bool:
    return close + 1 < len(tokens) and tokens[close + 1].kind == "quant"


def _joined(tokens: list[Token], start: int, stop: int, middle: str) -> str:
    """The pattern with tokens ``start..stop`` (inclusive) replaced by ``middle``."""
    return "".join(t.text for t in tokens[:start]) + middle + \
        "".join(t.text for t in tokens[stop + 1:])


def _lookaround(tokens: list[Token], i: int, spans: dict[int, tuple[int, int]]) -> Unsupported:
    start, close = spans.get(i, (i, len(tokens)))
    negative = "!" in tokens[i].text
    inner = "".join(t.text for t in tokens[start + 1:close])
    rest = _joined(tokens, start, close, "" if negative else f"(?:{inner})")
    top_alt = any(t.kind == "alt" and _depth_zero(tokens, j) for j, t in enumerate(tokens))
    exact = not negative and not top_alt and _depth_zero(tokens, i) and \
        not _quantified(tokens, close)
    what = _LOOK[tokens[i].text]
    if "<" in tokens[i].text and any(t.kind in ("quant", "alt") for t in tokens[start + 1:close]):
        # Python and PCRE refuse this for its width; RE2 runs no lookbehind at all
        what = what.replace("lookbehind", "variable-width lookbehind")
    return Unsupported(what, rest or None, exact)


def _one_unsupported(tokens: list[Token], i: int, spans: dict[int, tuple[int, int]],
                     captures: list[int]) -> Unsupported | None:
    tok = tokens[i]
    if tok.kind == "open" and tok.group == "look":
        return _lookaround(tokens, i, spans)
    if tok.kind == "backref":
        body = _backref_body(tok, tokens, spans, captures)
        return Unsupported("a backreference", _joined(tokens, i, i, body), False)
    if tok.kind == "quant" and len(tok.text) > 1 and tok.text.endswith("+"):
        return Unsupported("a possessive quantifier", _joined(tokens, i, i, tok.text[:-1]), False)
    if tok.kind == "open" and tok.group == "atomic":
        return Unsupported("an atomic group", _joined(tokens, i, i, "(?:"), False)
    if tok.kind == "open" and tok.group == "cond":
        return Unsupported("a conditional or recursive group", None, False)
    return None


def unsupported(tokens: list[Token]) -> Unsupported | None:
    """The first construct RE2 cannot run, with a rewrite (module doc)."""
    spans = _group_spans(tokens)
    captures = [i for i, t in enumerate(tokens) if t.kind == "open" and t.group == "capture"]
    for i in range(len(tokens)):
        found = _one_unsupported(tokens, i, spans, captures)
        if found is not None:
            return found
    return None


def _backref_body(tok: Token, tokens: list[Token], spans: dict[int, tuple[int, int]],
                  captures: list[int]) -> str:
    """The referenced group's own pattern (a superset of what it repeats)."""
    text = tok.text
    target: int | None = None
    if text[1:].isdigit():
        n = int(text[1:])
        target = captures[n - 1] if 0 < n <= len(captures) else None
    else:
        name = re.sub(r"^(\\k<|\\g\{|\(\?P=)|[>})]$", "", text)
        for i in captures:
            if re.search(rf"[<']{re.escape(name)}[>']", tokens[i].text):
                target = i
        if name.isdigit() and int(name) <= len(captures):
            target = captures[int(name) - 1]
    if target is None or target not in spans:
        return "(?:.*)"
    start, close = spans[target]
    return "(?:" + "".join(t.text for t in tokens[start + 1:close]) + ")"


# -- a prefilter -------------------------------------------------------------------------

def required_literal(tokens: list[Token]) -> str | None:
    """The longest literal run every match must contain, or ``None``: only
    top-level runs count, in a pattern with no top-level ``|`` and no
    case-folding flag."""
    depth = 0
    best = run = ""
    for i, tok in enumerate(tokens):
        if tok.kind == "open":
            if tok.group in ("flags", "plain") and "i" in tok.text.split("-")[0]:
                return None
            depth, run = depth + 1, ""
            continue
        if tok.kind == "close":
            depth, run = depth - 1, ""
            continue
        if depth or tok.kind == "quant":
            continue
        if tok.kind == "alt":
            return None
        if tok.kind != "lit":
            run = ""
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        quantified = nxt is not None and nxt.kind == "quant"
        if quantified and (nxt.text[0] in "*?" or nxt.text.startswith(("{0", "{,"))):  # type: ignore[union-attr]
            run = ""
            continue
        run += tok.text[-1]
        if len(run) > len(best):
            best = run
        if quantified:
            run = ""  # "ab+c": "ab" is required, "abc" is not
    return best or None


def backtracking_risk(tokens: list[Token]) -> str | None:
    """For the ``re`` fallback: why ``tokens`` could take more than about
    linear time per line, or ``None``.  Strict on purpose: a quantifier
    may follow only a single-character atom, groups are not repeated, and
    at most two unbounded quantifiers appear (each adds a factor of the
    line length to a backtracking search)."""
    unbounded = 0
    for i, tok in enumerate(tokens):
        if tok.kind == "backref":
            return "a backreference"
        if tok.kind != "quant":
            continue
        prev = tokens[i - 1] if i else None
        if prev is None or prev.kind in ("close", "quant", "open", "alt", "anchor"):
            return "a repeated group or a repeated quantifier"
        if tok.text[0] in "*+" or re.match(r"\{\d*,\}", tok.text):
            unbounded += 1
    if unbounded > 2:
        return "more than two unbounded quantifiers"
    return None


# -- other dialects' habits ---------------------------------------------------------------

def looks_bre(pattern: str) -> bool:
    """GNU grep's basic syntax: ``\\|`` alternation, ``\\(``...``\\)`` groups."""
    return "\\|" in pattern or ("\\(" in pattern and "\\)" in pattern) or \
        re.search(r"\\\{\d", pattern) is not None


def bre_to_ere(pattern: str) -> str:
    """GNU basic syntax to extended: ``\\| \\( \\) \\{ \\} \\+ \\?`` lose the
    backslash (a literal ``|``, ``(``... gets one)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "|(){}+?" else pattern[i:i + 2])
            i += 2
            continue
        out.append("\\" + c if c in "|(){}+?" else c)
        i += 1
    return "".join(out)


def looks_double_escaped(pattern: str) -> bool:
    return re.search(r"\\\\[.()\[\]{}*+?|^$dwsbDWSB]", pattern) is not None


def undouble_escapes(pattern: str) -> str:
    """``config\\\\.get\\\\(`` (escaped twice, as in a JSON or source string)
    as ``config\\.get\\(``."""
    return pattern.replace("\\\\", "\\")
