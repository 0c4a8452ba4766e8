"""A bounded reader of the YAML hook managers and tools write their
configs in (pre-commit, lefthook, aider, Continue), for what they run.

Reads block mappings and sequences, flow ``[...]`` and ``{...}`` (over
several lines too), plain, single- and double-quoted scalars (escapes
read), literal and folded block scalars (``|``, ``>-``...), comments, one
document, anchors and aliases (``<<`` merges).  Scalars stay strings: a
command is a string whatever YAML would make of it.  Anything else (a tag,
a complex key, a second document, a directive), nesting deeper than
``MAX_DEPTH``, or more than ``MAX_NODES`` nodes once aliases are expanded,
raises :class:`Unread`: the caller then protects every path, since what
the host reads there is not known (as past the other readers' bounds).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Unread", "load", "MAX_DEPTH", "MAX_NODES"]

MAX_DEPTH = 64
MAX_NODES = 100_000


class Unread(ValueError):
    """The text is outside what this reader reads, or past its bounds."""


# what a plain key may not start with (an indicator of another kind of node)
_NOT_PLAIN_KEY = frozenset("#'\"[]{},&*!|>%@`")
_BLOCK_HEADER = re.compile(r"^([|>])([+-]?)([1-9]?)([+-]?)\s*(?:#.*)?$")
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
            "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
            "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}


def load(text: str) -> Any:
    """The value of the one document ``text`` holds (``None`` if empty)."""
    reader = _Reader(text)
    value = reader.document()
    if reader.aliased:
        _count(value, [0])
    return value


def _count(value: Any, seen: list[int], depth: int = 0) -> None:
    """Each node counted as often as aliases repeat it (``Unread`` past the bound)."""
    seen[0] += 1
    if seen[0] > MAX_NODES or depth > MAX_DEPTH * 4:
        raise Unread("too many nodes once aliases are expanded")
    if isinstance(value, dict):
        for item in value.values():
            _count(item, seen, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _count(item, seen, depth + 1)


def _strip_comment(line: str) -> str:
    """``line`` without a comment (a ``#`` at the start or after a space,
    outside quotes)."""
    if "#" not in line:
        return line.rstrip()
    quote = ""
    i = 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == "\\" and quote == '"':
                i += 1  # the escaped character is no closing quote
            elif char == quote:
                quote = ""
        elif char in "'\"" and (i == 0 or line[i - 1] in " \t[{,:-"):
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
        i += 1
    return line.rstrip()


class _Reader:
    def __init__(self, text: str) -> None:
        if "\t" in "".join(line[:len(line) - len(line.lstrip(" \t"))]
                           for line in text.splitlines()):
            raise Unread("a tab in indentation")
        self.raw = text.lstrip("\ufeff").splitlines()
        if "..." in self.raw:  # the document's end: only comments may follow
            end = self.raw.index("...")
            if any(_strip_comment(line).strip() for line in self.raw[end + 1:]):
                raise Unread("more than one document")
            del self.raw[end:]
        self.at = 0
        self.nodes = 0
        self.anchors: dict[str, Any] = {}
        self.aliased = False

    # -- lines -------------------------------------------------------------------
    def _next(self) -> tuple[int, str] | None:
        """The indentation and content of the next line holding anything."""
        while self.at < len(self.raw):
            line = _strip_comment(self.raw[self.at])
            if line.strip():
                return len(line) - len(line.lstrip(" ")), line.strip()
            self.at += 1
        return None

    def document(self) -> Any:
        first = self._next()
        if first is not None and first[1].startswith("%"):
            raise Unread("a directive")
        if first is not None and first[0] == 0 and (first[1] == "---"
                                                     or first[1].startswith("--- ")):
            rest = first[1][3:].strip()
            if rest:
                self.raw[self.at] = rest
            else:
                self.at += 1
        value = self.block(0, 0) if self._next() is not None else None
        if self._next() is not None:
            raise Unread("more than one document, or a line out of place")
        return value

    def _node(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise Unread("too many nodes")

    def block(self, indent: int, depth: int) -> Any:
        """The node whose first line is the next one, at least ``indent`` deep."""
        if depth > MAX_DEPTH:
            raise Unread("nested too deep")
        self._node()
        line = self._next()
        if line is None or line[0] < indent:
            return None
        column, content = line
        anchor = None
        if content.startswith("&"):
            name, _, rest = content.partition(" ")
            anchor = name[1:]
            if not rest.strip():  # the anchored node is on the lines below
                self.at += 1
                below = self.block(indent, depth + 1)
                self.anchors[anchor] = below
                return below
            content = rest.strip()
            column = len(self.raw[self.at]) - len(self.raw[self.at].lstrip(" "))
            self.raw[self.at] = " " * column + content
        if content == "-" or content.startswith("- "):
            value: Any = self.sequence(column, depth)
        elif _key(content) is not None or content.startswith(("<<:", "? ")):
            value = self.mapping(column, depth)
        else:
            value = self.scalar_lines(column, content, indent, depth)
        if anchor is not None:
            self.anchors[anchor] = value
        return value

    def sequence(self, column: int, depth: int) -> list[Any]:
        items: list[Any] = []
        while True:
            line = self._next()
            if line is None or line[0] != column or not (line[1] == "-"
                                                        or line[1].startswith("- ")):
                if line is not None and line[0] > column:
                    raise Unread("a line out of place in a sequence")
                return items
            rest = line[1][1:]
            if not rest.strip():
                self.at += 1
                nxt = self._next()
                items.append(self.block(column + 1, depth + 1)
                             if nxt is not None and nxt[0] > column else None)
                continue
            inner = column + 1 + (len(rest) - len(rest.lstrip(" ")))
            self.raw[self.at] = " " * inner + rest.strip()
            items.append(self.block(inner, depth + 1))

    def mapping(self, column: int, depth: int) -> dict[str, Any]:
        found: dict[str, Any] = {}
        while True:
            line = self._next()
            if line is None or line[0] != column:
                if line is not None and line[0] > column:
                    raise Unread("a line out of place in a mapping")
                return found
            content = line[1]
            if content.startswith("? "):
                raise Unread("a complex key")
            if content.startswith("<<:"):
                key, rest = "<<", content[3:].strip()
            else:
                split = _key(content)
                if split is None:
                    if content == "-" or content.startswith("- "):
                        return found  # a sequence at a parent key's own column
                    raise Unread("a line that is not a key in a mapping")
                key, rest = split
            self.at += 1
            value = self.value_after_key(rest, column, depth)
            if key == "<<":
                for merged in (value if isinstance(value, list) else [value]):
                    if not isinstance(merged, dict):
                        raise Unread("a merge of something not a mapping")
                    for name, item in merged.items():
                        found.setdefault(name, item)
            else:
                found[key] = value

    def value_after_key(self, rest: str, column: int, depth: int) -> Any:
        """The value of a key whose line held ``rest`` after the colon."""
        if not rest:
            nxt = self._next()
            if nxt is None:
                return None
            if nxt[0] > column or (nxt[0] == column and (nxt[1] == "-"
                                                        or nxt[1].startswith("- "))):
                return self.block(nxt[0], depth + 1)
            return None
        self.at -= 1
        self.raw[self.at] = " " * (column + 1) + rest
        return self.inline(column + 1, rest, column, depth + 1)

    def inline(self, at: int, content: str, parent: int, depth: int) -> Any:
        """A value starting on the line at ``self.at`` (``content``), its
        further lines deeper than ``parent``."""
        if depth > MAX_DEPTH:
            raise Unread("nested too deep")
        self._node()
        anchor = None
        if content.startswith("&"):
            name, _, rest = content.partition(" ")
            anchor, content = name[1:], rest.strip()
            if not content:
                self.at += 1
                nxt = self._next()
                value = self.block(nxt[0], depth + 1) if nxt is not None and \
                    nxt[0] > parent else None
                self.anchors[anchor] = value
                return value
        value = self.scalar_lines(at, content, parent + 1, depth)
        if anchor is not None:
            self.anchors[anchor] = value
        return value

    def scalar_lines(self, column: int, content: str, indent: int, depth: int) -> Any:
        """A scalar, an alias, a flow collection or a block scalar starting
        at the current line (``content``); consumes its lines."""
        if content.startswith("!"):
            raise Unread("a tag")
        if content.startswith("*"):
            self.at += 1
            name = content[1:].strip()
            if name not in self.anchors:
                raise Unread("an alias to no anchor")
            self.aliased = True
            return self.anchors[name]
        header = _BLOCK_HEADER.match(content)
        if header is not None:
            self.at += 1
            return self.block_scalar(header, indent)
        if content[0] in "[{":
            return self.flow_lines(content, depth)
        if content[0] in "\"'":
            return self.quoted_lines(content, indent)
        if content[0] in "@`%|>":
            raise Unread("a reserved indicator")
        # a plain scalar, folded over its more-indented lines
        words = [content]
        self.at += 1
        while True:
            nxt = self._next()
            if nxt is None or nxt[0] < indent or _key(nxt[1]) is not None or nxt[1] == "-" \
                    or nxt[1].startswith("- "):
                break
            words.append(nxt[1])
            self.at += 1
        return " ".join(words)

    def block_scalar(self, header: re.Match[str], indent: int) -> str:
        chomp = header.group(2) or header.group(4)
        lines: list[str] = []
        width: int | None = int(header.group(3)) + max(indent - 1, 0) \
            if header.group(3) else None
        while self.at < len(self.raw):
            raw = self.raw[self.at]
            if raw.strip():
                deep = len(raw) - len(raw.lstrip(" "))
                if width is None:
                    width = deep
                if deep < width or deep < indent:
                    break
                lines.append(raw[width:])
            else:
                lines.append("")
            self.at += 1
        while lines and not lines[-1] and chomp != "+":
            lines.pop()
        text = "\n".join(lines) if header.group(1) == "|" else _folded(lines)
        return text if chomp == "-" else text + "\n"

    def quoted_lines(self, content: str, indent: int) -> str:
        """A quoted scalar, over as many lines as it takes (each line
        scanned once)."""
        quote = content[0]
        balance = _Balance(quote)
        balance.feed(content[1:])
        pieces = [content]
        self.at += 1
        while not balance.done:
            if self.at >= len(self.raw):
                raise Unread("a quoted scalar never closed")
            line = self.raw[self.at].strip()
            balance.feed("\n" + line)
            pieces.append(line)
            self.at += 1
        text = "\n".join(pieces)
        try:
            body, end = _quoted(text, quote)
        except _Incomplete:
            raise Unread("a quoted scalar out of shape") from None
        if text[end:].strip() and not text[end:].strip().startswith("#"):
            raise Unread("text after a quoted scalar")
        return body

    def flow_lines(self, content: str, depth: int) -> Any:
        """A flow collection, over as many lines as it takes (each line
        scanned once, the whole read when its brackets close)."""
        balance = _Balance("")
        balance.feed(content)
        pieces = [content]
        self.at += 1
        while not balance.done:
            if self.at >= len(self.raw):
                raise Unread("a flow collection never closed")
            line = _strip_comment(self.raw[self.at]).strip()
            balance.feed(" " + line)
            pieces.append(line)
            self.at += 1
        text = " ".join(pieces)
        try:
            value, end = _Flow(text, depth).value(0)
        except _Incomplete:
            raise Unread("a flow collection out of shape") from None
        if text[end:].strip():
            raise Unread("text after a flow collection")
        return value


class _Balance:
    """Where a quoted scalar or a flow collection ends, fed its text a
    line at a time: ``done`` once its quote or outer bracket closes."""

    def __init__(self, quote: str) -> None:
        self.quote = quote
        self.scalar = bool(quote)  # a quoted scalar, not a flow collection
        self.depth = 0
        self.escaped = False
        self.done = False
        self.before = "["  # the last character outside quotes that was not a space

    def feed(self, chunk: str) -> None:
        i = 0
        while i < len(chunk) and not self.done:
            char = chunk[i]
            if self.escaped:
                self.escaped = False
            elif self.quote:
                if self.quote == '"' and char == "\\":
                    self.escaped = True
                elif char == self.quote:
                    if self.quote == "'" and chunk[i + 1:i + 2] == "'":
                        i += 1
                    else:
                        self.quote = ""
                        self.done = self.scalar
                        self.before = char
            elif char in "\"'" and self.before in "[{,:":
                self.quote = char
            elif char in "[{":
                self.depth += 1
            elif char in "]}":
                self.depth -= 1
                self.done = self.depth <= 0
            if not self.quote and char not in " \t\n":
                self.before = char
            i += 1


def _key(content: str) -> tuple[str, str] | None:
    """The key a line of a block mapping starts with and the text after its
    colon, or ``None`` when the line is no such key.  Linear in the line."""
    if not content:
        return None
    if content[0] in "\"'":
        try:
            key, end = _quoted(content, content[0])
        except _Incomplete:
            return None
        after = content[end:].lstrip(" ")
        if after == ":" or after.startswith((": ", ":\t")):
            return key, after[1:].strip()
        return None
    if content[0] in _NOT_PLAIN_KEY or (content[0] == "-" and content[1:2] in ("", " ")):
        return None
    at = 0
    while True:
        at = content.find(":", at)
        if at < 0:
            return None
        if at + 1 == len(content) or content[at + 1] in " \t":
            key = content[:at].rstrip()
            return (key, content[at + 1:].strip()) if " #" not in key else None
        at += 1


def _folded(lines: list[str]) -> str:
    """A folded block scalar's lines joined: a line break between two
    lines of text is a space, a blank line a line break; a more-indented
    line keeps its breaks."""
    if not lines:
        return ""
    out = lines[0]
    for before, line in zip(lines, lines[1:]):
        if not line:
            out += "\n"
        elif before and not before.startswith(" ") and not line.startswith(" "):
            out += " " + line
        elif before.startswith(" ") or line.startswith(" "):
            out += "\n" + line
        else:
            out += line
    return out


def _quoted(text: str, quote: str) -> tuple[str, int]:
    """The value of the quoted scalar at the start of ``text`` and where it ends."""
    i, out = 1, []
    while i < len(text):
        char = text[i]
        if quote == "'" and char == "'":
            if text[i + 1:i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return _fold_quoted("".join(out), escapes=False), i + 1
        if quote == '"' and char == '"':
            return _fold_quoted("".join(out), escapes=True), i + 1
        if quote == '"' and char == "\\":
            out.append("\\" + text[i + 1:i + 2])
            i += 2
            continue
        out.append(char)
        i += 1
    raise _Incomplete


def _fold_quoted(body: str, *, escapes: bool) -> str:
    """Line breaks inside a quoted scalar read as YAML reads them (one a
    space, an escaped one nothing), then a double-quoted one's escapes."""
    if escapes:
        body = re.sub(r"\\\n[ \t]*", "", body)
    body = re.sub(r"[ \t]*\n[ \t]*", lambda m: " " if m.group().count("\n") == 1 else
                  "\n" * (m.group().count("\n") - 1), body)
    return _unescape(body) if escapes else body


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    out, i = [], 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = body[i + 1:i + 2]
        size = {"x": 2, "u": 4, "U": 8}.get(code)
        if size is not None:
            digits = body[i + 2:i + 2 + size]
            if len(digits) != size or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise Unread("a bad escape")
            out.append(chr(int(digits, 16)) if int(digits, 16) <= 0x10FFFF else "")
            i += 2 + size
            continue
        if code not in _ESCAPES:
            raise Unread("an unknown escape")
        out.append(_ESCAPES[code])
        i += 2
    return "".join(out)


class _Incomplete(Exception):
    """A flow collection or quoted scalar goes on past the text so far."""


class _Flow:
    """A flow collection read from one string."""

    def __init__(self, text: str, depth: int) -> None:
        self.text = text
        self.depth = depth

    def skip(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t\n":
            i += 1
        return i

    def value(self, i: int, depth: int = 0) -> tuple[Any, int]:
        if self.depth + depth > MAX_DEPTH:
            raise Unread("nested too deep")
        i = self.skip(i)
        if i >= len(self.text):
            raise _Incomplete
        char = self.text[i]
        if char == "[":
            items: list[Any] = []
            i = self.skip(i + 1)
            while True:
                if i >= len(self.text):
                    raise _Incomplete
                if self.text[i] == "]":
                    return items, i + 1
                item, i = self.value(i, depth + 1)
                i = self.skip(i)
                if i < len(self.text) and self.text[i] == ":":  # [a: b], a one-pair map
                    pair, i = self.value(i + 1, depth + 1)
                    item = {str(item): pair}
                    i = self.skip(i)
                items.append(item)
                i = self.separator(i, "]")
        if char == "{":
            found: dict[str, Any] = {}
            i = self.skip(i + 1)
            while True:
                if i >= len(self.text):
                    raise _Incomplete
                if self.text[i] == "}":
                    return found, i + 1
                key, i = self.value(i, depth + 1)
                i = self.skip(i)
                if i < len(self.text) and self.text[i] == ":":
                    item, i = self.value(i + 1, depth + 1)
                else:
                    item = None
                found[str(key)] = item
                i = self.separator(self.skip(i), "}")
        if char in "\"'":
            body, end = _quoted(self.text[i:], char)
            return body, i + end
        if char in "!&*":
            raise Unread("a tag or an anchor in a flow collection")
        start = i
        while i < len(self.text):
            char = self.text[i]
            if char in ",[]{}" or (char == ":" and (i + 1 >= len(self.text)
                                                    or self.text[i + 1] in " ,]}")):
                break
            i += 1
        return self.text[start:i].strip(), i

    def separator(self, i: int, closing: str) -> int:
        if i >= len(self.text):
            raise _Incomplete
        if self.text[i] == ",":
            return self.skip(i + 1)
        if self.text[i] == closing:
            return i
        raise Unread("a flow collection out of shape")
