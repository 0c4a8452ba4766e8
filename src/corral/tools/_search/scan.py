"""Finding matching lines in a buffer: bytes in, ``(start, end, at, line)`` out.

Literal search and line counting are the backend's
(:meth:`corral.contained.Backend.literal_lines`, ``count_newlines``): the
native backend's memchr/memmem scanner in C, any other backend's equivalent
loop of ``bytes.find`` / ``bytes.count``.  Either way the buffer is never
decoded or split into lines: only the lines that hold a match are located
(their start, the offset of their ``\\n`` or the buffer's end, the first
match in them and their 1-based number).

A regular expression (an RE2 or guarded ``re`` pattern object with
``search(buf, pos, endpos)``) is run over the whole buffer; a match never
spans a line break (:mod:`.engine` compiles with ``never_nl``), so its line
is found around it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from ...contained import Backend

__all__ = ["Hit", "count_newlines", "literal_lines", "regex_lines"]

Hit = tuple[int, int, int, int]  # line start, line end, match offset, line number


class Searcher(Protocol):
    def search(self, text: bytes, pos: int = ..., endpos: int = ...) -> Any: ...


def _line_of(buf: bytes, pos: int, at: int, line: int, size: int) -> Hit:
    """The line holding offset ``at`` of ``buf[:size]``, found from the line
    start ``pos`` (numbered ``line``)."""
    start = buf.rfind(b"\n", pos, at) + 1 or pos
    end = buf.find(b"\n", at, size)
    return start, size if end < 0 else end, at, line + buf.count(b"\n", pos, start)


def literal_lines(needle: bytes, buf: bytes, pos: int = 0, line: int = 1,
                  end: int | None = None, *, backend: Backend) -> Iterator[Hit]:
    """The lines of ``buf[pos:end]`` (``pos`` a line start, numbered
    ``line``; ``end`` a line end or the buffer's) that contain ``needle``
    (not empty), found by ``backend``."""
    return backend.literal_lines(needle, buf, pos, line, end)


def regex_lines(regex: Searcher, buf: bytes, pos: int = 0, line: int = 1,
                end: int | None = None) -> Iterator[Hit]:
    """The lines of ``buf[pos:end]`` with a match of ``regex`` (as
    :func:`literal_lines`)."""
    size = len(buf) if end is None else end
    search = regex.search
    last = size - 1 if size and buf[size - 1] == 10 else size  # no line after a final "\n"
    while pos < size:
        m = search(buf, pos, size)
        if m is None:
            return
        hit = _line_of(buf, pos, m.start(), line, size)
        if hit[0] > last:
            return  # an empty match after the final line break: not a line
        yield hit
        pos, line = hit[1] + 1, hit[3] + 1


def count_newlines(buf: bytes, start: int = 0, end: int | None = None, *,
                   backend: Backend) -> int:
    """The number of line breaks in ``buf[start:end]``, counted by
    ``backend`` (eight bytes at a time in the native one)."""
    return backend.count_newlines(buf, start, end)
