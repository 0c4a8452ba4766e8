"""Finding matching lines in a buffer: bytes in, ``(start, end, at, line)`` out.

Literal search runs in the cffi module's memchr/memmem scanner
(``native/corral_scan.h``) when it is built, else in an equivalent loop of
``bytes.find`` / ``bytes.count`` (:data:`NATIVE` says which).  Either way
the buffer is never decoded or split into lines: only the lines that hold
a match are located (their start, the offset of their ``\\n`` or the
buffer's end, the first match in them and their 1-based number).

A regular expression (an RE2 or guarded ``re`` pattern object with
``search(buf, pos, endpos)``) is run over the whole buffer; a match never
spans a line break (:mod:`._search_regex` compiles with ``never_nl``), so
its line is found around it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Protocol

__all__ = ["ABSENT", "BINARY", "HARDLINK", "NATIVE", "NATIVE_FILES", "OPEN", "OPEN_ERROR",
           "READ_ERROR", "SPECIAL", "FileScanner", "Hit", "count_newlines", "literal_lines",
           "regex_lines"]

Hit = tuple[int, int, int, int]  # line start, line end, match offset, line number
_BATCH = 256  # hits fetched per native call


class Searcher(Protocol):
    def search(self, text: bytes, pos: int = ..., endpos: int = ...) -> Any: ...


try:
    from ..._native import ffi as _ffi
    from ..._native import lib as _lib
    NATIVE = hasattr(_lib, "corral_scan_lines")
except ImportError:  # the module was not built: the pure-Python scanner
    NATIVE = False


def _line_of(buf: bytes, pos: int, at: int, line: int, size: int) -> Hit:
    """The line holding offset ``at`` of ``buf[:size]``, found from the line
    start ``pos`` (numbered ``line``)."""
    start = buf.rfind(b"\n", pos, at) + 1 or pos
    end = buf.find(b"\n", at, size)
    return start, size if end < 0 else end, at, line + count_newlines(buf, pos, start)


def _py_literal_lines(needle: bytes, buf: bytes, pos: int, line: int, size: int
                      ) -> Iterator[Hit]:
    find = buf.find
    while pos < size:
        at = find(needle, pos, size)
        if at < 0:
            return
        hit = _line_of(buf, pos, at, line, size)
        yield hit
        pos, line = hit[1] + 1, hit[3] + 1


def _native_literal_lines(needle: bytes, buf: bytes, pos: int, line: int, size: int
                          ) -> Iterator[Hit]:
    out = _ffi.new("int64_t[]", 4 * _BATCH)
    state = _ffi.new("int64_t[2]")
    nlen = len(needle)
    scan = _lib.corral_scan_lines
    while pos < size:
        hits = scan(buf, size, pos, line, needle, nlen, out, _BATCH, state)
        values = _ffi.unpack(out, 4 * hits)
        for i in range(0, 4 * hits, 4):
            yield values[i], values[i + 1], values[i + 2], values[i + 3]
        if hits < _BATCH:
            return
        pos, line = state[0], state[1]


def literal_lines(needle: bytes, buf: bytes, pos: int = 0, line: int = 1,
                  end: int | None = None, *, native: bool = NATIVE) -> Iterator[Hit]:
    """The lines of ``buf[pos:end]`` (``pos`` a line start, numbered
    ``line``; ``end`` a line end or the buffer's) that contain ``needle``
    (not empty)."""
    size = len(buf) if end is None else end
    if native:
        return _native_literal_lines(needle, buf, pos, line, size)
    return _py_literal_lines(needle, buf, pos, line, size)


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


def count_newlines(buf: bytes, start: int = 0, end: int | None = None) -> int:
    """The number of line breaks in ``buf[start:end]`` (eight bytes at a
    time in the native scanner)."""
    stop = len(buf) if end is None else end
    if NATIVE:
        return int(_lib.corral_count_newlines(buf, len(buf), start, stop))
    return buf.count(b"\n", start, stop)


# corral_scan_files' statuses (native/scan.cdef), checked against the module below
ABSENT, OPEN, BINARY, SPECIAL, HARDLINK, OPEN_ERROR, READ_ERROR = range(7)
NATIVE_FILES = NATIVE and hasattr(_lib, "corral_scan_files") and tuple(range(7)) == (
    _lib.CORRAL_SCAN_ABSENT, _lib.CORRAL_SCAN_OPEN, _lib.CORRAL_SCAN_BINARY,
    _lib.CORRAL_SCAN_SPECIAL, _lib.CORRAL_SCAN_HARDLINK, _lib.CORRAL_SCAN_OPEN_ERROR,
    _lib.CORRAL_SCAN_READ_ERROR)


_buffers = threading.local()  # one read buffer per thread, reused by every grep call


def _read_buffer(size: int) -> Any:
    buf = getattr(_buffers, "buf", None)
    if buf is None or len(buf) < size:
        buf = _buffers.buf = _ffi.new("char[]", size)
    return buf


class FileScanner:
    """grep's per-file work for a directory's worth of files in one C call
    (``corral_scan_files``, native/corral_scan.h): open each name below the
    directory fd (``O_NOFOLLOW|O_NONBLOCK``), fstat it, and read a regular
    file ``chunk`` bytes at a time, looking for ``needle``, until found.
    :meth:`scan` gives four values per file done: the status
    (:data:`ABSENT` ... :data:`READ_ERROR`), the fd of an :data:`OPEN` file
    (the caller's to close) or an errno, st_size, st_nlink.  Files of
    :data:`BUDGET` bytes or more come back :data:`OPEN` unread, so that one
    call never reads much more than that.  Only when :data:`NATIVE_FILES`."""

    BATCH = 256  # files per call
    BUDGET = 32 << 20  # bytes read per call, so the caller's checkpoints come often

    def __init__(self, needle: bytes | None, *, sniff: int, keep_links: bool, chunk: int) -> None:
        self._needle = needle or b""
        self._sniff = sniff
        self._keep = int(keep_links)
        self._size = chunk
        self._buf = _read_buffer(chunk)
        self._out = _ffi.new("int64_t[]", 4 * self.BATCH)
        self._consumed = _ffi.new("int64_t[1]")

    def scan(self, dir_fd: int, names: bytes, offset: int, count: int) -> tuple[list[int], int]:
        """Files from ``names[offset:]`` (``count`` names left, each
        NUL-terminated): the rows of those done, and the offset of the
        first name not done."""
        start = _ffi.from_buffer(names) + offset
        done = _lib.corral_scan_files(dir_fd, start, len(names) - offset, min(count, self.BATCH),
                                      self._needle,
                                      len(self._needle), self._sniff, self._keep, self._buf,
                                      self._size, self.BUDGET, self._out, self._consumed)
        return _ffi.unpack(self._out, 4 * done), offset + int(self._consumed[0])
