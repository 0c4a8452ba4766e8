"""Reading a patch: the Codex envelope and V4A, into one typed form.

Models send the envelope with a little noise around it, and the parser takes
the forms they really send: a shell heredoc around it (``apply_patch <<'EOF'``
... ``EOF``), marker lines with spaces around them, no final newline, a blank
line inside a hunk (an empty context line) or inside an added file (an empty
line).  Anything else that is not the grammar is a :class:`PatchSyntaxError`
naming the line, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple

__all__ = ["CODEX", "V4A", "AddFile", "DeleteFile", "Dialect", "FileOp", "Hunk", "Patch",
           "PatchSyntaxError", "UpdateFile", "parse_patch", "parse_v4a_create",
           "parse_v4a_update", "v4a_patch", "file_header"]

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File:"
DELETE = "*** Delete File:"
UPDATE = "*** Update File:"
MOVE = "*** Move to:"
END_OF_FILE = "*** End of File"
_FILE_HEADERS = (ADD, DELETE, UPDATE)
_HEREDOC = re.compile(r"^\s*(?:apply_patch\s+)?<<-?\s*(['\"]?)(\w+)\1\s*$")


class Dialect(NamedTuple):
    """Where the two dialects decide differently (everything else is shared).

    ``addition_only_at_end``: a hunk with no context nor removed line is
    appended to the file (Codex) or inserted where the hunk's anchors leave
    the cursor (V4A).  ``anchor_required``: an ``@@`` line that matches no
    line of the file fails the hunk (Codex), or, alone, is only a hint (V4A;
    several stacked anchors must match).  ``new_file_final_newline``: a
    created file ends with a newline (Codex) or exactly as its ``+`` lines
    end (V4A).  ``new_file_crlf_as_sent``: a created file's lines end with
    ``\n`` (Codex) or with ``\r\n`` when they were sent so (V4A)."""

    name: str
    addition_only_at_end: bool
    anchor_required: bool
    new_file_final_newline: bool
    new_file_crlf_as_sent: bool


CODEX = Dialect("codex", addition_only_at_end=True, anchor_required=True,
                new_file_final_newline=True, new_file_crlf_as_sent=False)
V4A = Dialect("v4a", addition_only_at_end=False, anchor_required=False,
              new_file_final_newline=False, new_file_crlf_as_sent=True)


class PatchSyntaxError(ValueError):
    """The text is not a patch.  ``line`` is 1-based in the text as sent (0
    when the fault is the whole text); ``text`` is that line."""

    def __init__(self, message: str, line: int = 0, text: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.text = text


Op = Literal[" ", "-", "+"]


@dataclass(frozen=True)
class Hunk:
    """One ``@@`` section: the anchors that narrow where it applies, its lines
    as (op, text) pairs, whether it is tied to the end of the file, and the
    line of the patch it starts on (for messages)."""

    anchors: tuple[str, ...]
    lines: tuple[tuple[Op, str], ...]
    at_end: bool
    patch_line: int

    @cached_property  # asked once per later hunk when checking for ambiguity
    def old(self) -> list[str]:
        return [text for op, text in self.lines if op != "+"]

    @cached_property
    def new(self) -> list[str]:
        return [text for op, text in self.lines if op != "-"]

    @property
    def removes_or_keeps(self) -> bool:
        return any(op != "+" for op, _ in self.lines)


class AddFile(NamedTuple):
    path: str
    lines: tuple[str, ...]
    crlf: bool = False  # its lines were sent ending with "\r\n"


class DeleteFile(NamedTuple):
    path: str


class UpdateFile(NamedTuple):
    path: str
    move_to: str | None
    hunks: tuple[Hunk, ...]


FileOp = AddFile | DeleteFile | UpdateFile


class Patch(NamedTuple):
    ops: tuple[FileOp, ...]


class _Lines:
    """The patch's lines with a cursor; numbers are 1-based as sent."""

    def __init__(self, lines: list[str], first_number: int,
                 crlf: list[bool] | None = None) -> None:
        self.lines = lines
        self.first = first_number
        self.i = 0
        self.crlf = crlf or []  # per line of the text as sent: did it end with "\r\n"

    def crlf_among(self, start: int, stop: int) -> bool:
        """Whether any of lines ``start`` to ``stop`` (cursor positions)
        ended with ``\r\n`` as sent."""
        base = self.first - 1
        return any(self.crlf[base + k] for k in range(start, stop)
                   if 0 <= base + k < len(self.crlf))

    def done(self) -> bool:
        return self.i >= len(self.lines)

    def peek(self) -> str:
        return self.lines[self.i]

    def number(self) -> int:
        return self.first + self.i

    def fail(self, message: str) -> PatchSyntaxError:
        text = self.lines[self.i] if not self.done() else ""
        return PatchSyntaxError(message, self.number() if not self.done() else 0, text)


def _split(text: str) -> list[str]:
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _marker(line: str, marker: str) -> bool:
    return line.strip() == marker


def file_header(line: str) -> tuple[str, str] | None:
    """The file header ``line`` is (``*** Add File:``, ``*** Update File:``,
    ``*** Delete File:`` or ``*** Move to:``) and the path it names, or
    ``None``: where a host that routes patches by path reads them."""
    return _header(line)


def _header(line: str) -> tuple[str, str] | None:
    # From the first column only: a context line (" *** x") is text, not a header.
    stripped = line.rstrip()
    for header in (*_FILE_HEADERS, MOVE):
        if stripped.startswith(header):
            return header, stripped[len(header):].strip()
    return None


def _unwrap(lines: list[str]) -> tuple[list[str], int]:
    """The envelope's lines without blank lines or a heredoc around them, and
    the 1-based number of the first line kept."""
    start, stop = 0, len(lines)
    while start < stop and not lines[start].strip():
        start += 1
    while stop > start and not lines[stop - 1].strip():
        stop -= 1
    if start < stop and (match := _HEREDOC.match(lines[start])):
        if stop - start < 2 or lines[stop - 1].strip() != match.group(2):
            raise PatchSyntaxError(f"the heredoc opened on line {start + 1} is not closed by "
                                   f"a line {match.group(2)}", start + 1, lines[start])
        start, stop = start + 1, stop - 1
    return lines[start:stop], start + 1


def parse_patch(text: str) -> Patch:
    """The Codex envelope: one or more files between ``*** Begin Patch`` and
    ``*** End Patch``."""
    body, first = _unwrap(_split(text))
    if not body:
        raise PatchSyntaxError("the patch is empty: it must start with '*** Begin Patch'")
    if not _marker(body[0], BEGIN):
        raise PatchSyntaxError("the first line must be '*** Begin Patch'", first, body[0])
    if not _marker(body[-1], END):
        raise PatchSyntaxError("the last line must be '*** End Patch' (was the patch cut "
                               "off?)", first + len(body) - 1, body[-1])
    cursor = _Lines(body[1:-1], first + 1, [line.endswith("\r") for line in text.split("\n")])
    ops: list[FileOp] = []
    while not cursor.done():
        if not cursor.peek().strip():
            cursor.i += 1
            continue
        ops.append(_file_op(cursor))
    if not ops:
        raise PatchSyntaxError("the patch changes no file: add an '*** Add File:', "
                               "'*** Update File:' or '*** Delete File:' section")
    return Patch(tuple(ops))


def _file_op(cursor: _Lines) -> FileOp:
    header = _header(cursor.peek())
    if header is None or header[0] == MOVE:
        raise cursor.fail("expected '*** Add File:', '*** Update File:' or "
                          "'*** Delete File:' followed by a path")
    kind, path = header
    if not path:
        raise cursor.fail(f"'{kind}' needs a path after it")
    cursor.i += 1
    if kind == DELETE:
        return DeleteFile(path)
    if kind == ADD:
        start = cursor.i
        added = tuple(_added_lines(cursor))
        return AddFile(path, added, cursor.crlf_among(start, cursor.i))
    move_to = None
    if not cursor.done() and (move := _header(cursor.peek())) is not None and move[0] == MOVE:
        if not move[1]:
            raise cursor.fail("'*** Move to:' needs a path after it")
        move_to = move[1]
        cursor.i += 1
    hunks = _hunks(cursor, stop_at_file_header=True)
    if not hunks and move_to is None:
        raise PatchSyntaxError(f"'*** Update File: {path}' has no hunk: an update needs at "
                               "least one '@@' section of ' ', '-' and '+' lines",
                               cursor.number() - 1)
    return UpdateFile(path, move_to, tuple(hunks))


def _added_lines(cursor: _Lines) -> list[str]:
    lines: list[str] = []
    while not cursor.done() and _header(cursor.peek()) is None:
        line = cursor.peek()
        if line.startswith("+"):
            lines.append(line[1:])
        elif not line.strip():
            lines.append("")
        else:
            raise cursor.fail("every line of an added file starts with '+'")
        cursor.i += 1
    return lines


def _hunks(cursor: _Lines, *, stop_at_file_header: bool) -> list[Hunk]:
    hunks: list[Hunk] = []
    while not cursor.done():
        if stop_at_file_header and _header(cursor.peek()) is not None:
            break
        start = cursor.number()
        anchors: list[str] = []
        had_marker = False
        while not cursor.done() and cursor.peek().startswith("@@"):
            had_marker = True
            marker = cursor.peek()
            anchor = marker[3:] if marker.startswith("@@ ") else marker[2:]
            if anchor.strip():
                anchors.append(anchor)
            cursor.i += 1
        if not had_marker and hunks:
            raise cursor.fail("a new hunk starts with an '@@' line")
        lines, at_end = _hunk_lines(cursor, stop_at_file_header)
        if not lines:
            raise PatchSyntaxError("this hunk has no ' ', '-' or '+' line", start,
                                   cursor.lines[start - cursor.first]
                                   if 0 <= start - cursor.first < len(cursor.lines) else "")
        hunks.append(Hunk(tuple(anchors), tuple(lines), at_end, start))
    return hunks


def _hunk_lines(cursor: _Lines, stop_at_file_header: bool) -> tuple[list[tuple[Op, str]], bool]:
    lines: list[tuple[Op, str]] = []
    while not cursor.done():
        line = cursor.peek()
        if line.startswith("@@") or (stop_at_file_header and _header(line) is not None):
            break
        if line.rstrip() == END_OF_FILE:
            cursor.i += 1
            return lines, True
        if line.startswith("***"):
            raise cursor.fail("unknown '***' line inside a hunk")
        if not line:
            lines.append((" ", ""))
        elif line[0] in " -+":
            op: Op = " " if line[0] == " " else ("-" if line[0] == "-" else "+")
            lines.append((op, line[1:]))
        else:
            raise cursor.fail("every line of a hunk starts with ' ' (context), '-' "
                              "(removed) or '+' (added)")
        cursor.i += 1
    return lines, False


def parse_v4a_create(diff: str) -> tuple[str, ...]:
    """The lines of a new file from a V4A create diff (every line ``+``)."""
    cursor = _Lines(_split(diff), 1)
    added = _added_lines(cursor)
    if not cursor.done():
        raise cursor.fail("every line of a new file's diff starts with '+'")
    return tuple(added)


def parse_v4a_update(diff: str) -> tuple[Hunk, ...]:
    """The hunks of a V4A update diff, as the Responses API sends it for one
    file (no envelope, no file header)."""
    cursor = _Lines(_split(diff), 1)
    if cursor.done():
        raise PatchSyntaxError("the diff is empty: an update needs at least one hunk")
    if _header(cursor.peek()) is not None:
        raise cursor.fail("a V4A diff carries no file header: send only its '@@' hunks")
    return tuple(_hunks(cursor, stop_at_file_header=False))


def v4a_patch(kind: str, path: str, diff: str | None = None, move_to: str | None = None) -> str:
    """The envelope for one operation of the Responses API's apply_patch tool
    (``create_file``, ``update_file`` with a V4A diff, ``delete_file``), to
    apply with the V4A dialect.  The diff is read on its own first, so no
    line of it can open another file's section; a :class:`PatchSyntaxError`
    (a ``ValueError``) says what is wrong with the operation."""
    names = [path, *([move_to] if move_to is not None else [])]
    if not all(isinstance(n, str) and n.strip() and "\n" not in n and "\r" not in n
               for n in names):
        raise PatchSyntaxError("an operation's path is one line of text, not empty")
    if kind == "delete_file":
        if diff:
            raise PatchSyntaxError("delete_file carries no diff")
        return f"{BEGIN}\n{DELETE} {path}\n{END}\n"
    if not isinstance(diff, str):
        raise PatchSyntaxError(f"{kind} needs its diff as text")
    if kind == "create_file":
        if move_to is not None:
            raise PatchSyntaxError("create_file has no move_to")
        parse_v4a_create(diff)
        header = f"{ADD} {path}"
    elif kind == "update_file":
        parse_v4a_update(diff)
        header = f"{UPDATE} {path}" + (f"\n{MOVE} {move_to}" if move_to is not None else "")
    else:
        raise PatchSyntaxError(f"unknown operation {kind!r}: create_file, update_file or "
                               "delete_file")
    body = diff if not diff or diff.endswith("\n") else diff + "\n"  # its line endings kept
    return f"{BEGIN}\n{header}\n{body}{END}\n"
