"""read_file: a window of lines of one regular UTF-8 text file.

The file is read once from one fd: the digest covers the whole file, lines
are counted to the end, and only the requested window is kept, so a window
of a multi-gigabyte file costs one streaming pass and little memory.  Small
files (the common case) are read in one call; their numbered window is
rendered in one call of the native module (``corral_text_window``,
native/corral_read.h) when it is built and the file is plain (no ``\r``,
no byte order mark, no line that may need cutting), else in Python, with
the same answer either way.  The whole-file sha256 of a file unchanged since
an earlier read is remembered, not recomputed (:mod:`._read_cache`).

Lines end at ``\\n``; a ``\\r`` before it (CRLF) is not part of the line's
text (``lineEndings`` says which endings the file uses).  A file whose only
line endings are lone ``\\r`` is split at ``\\r``.
"""

from __future__ import annotations

import hashlib
import os
import stat as st
from typing import Any, NotRequired, TypedDict
from collections.abc import Callable

from ...contained import TextWindow
from ...hosts.render import NumberedText
from .._read import media as _media
from .._read import cache as read_cache
from .._runtime.answer import AnswerPath
from .._runtime.answer import sentence_path as _said
from .._runtime.context import PlainCall, ToolContext, clean_path
from .._policy.rules import Op
from .._refusals.catalogue import (Code, Kind, Refusal, binary_file, directory_given, special_file,
                                   special_kind)
from .._runtime.registry import Suggests, ToolSpec, success_schema
from .._runtime.request_types import ReadRequest
from .._runtime.view_read import OpenFile
from .._read.textform import HEAD, decode_wide, looks_binary

DESCRIPTION = (
    "Read a UTF-8 text file. The first, last and every tenth line shown (hundredth in a "
    "read of over 1000 lines; none under 10) follow their number and a tab (never copy "
    "those into oldText or content); other lines are as they are. A footer in brackets "
    "gives, for part of a file, the lines shown of the total (go on at the last plus one), "
    "and last the sha256 (for expectedSha256). offset is the first line (1-based), limit "
    "how many (at most 2000). Images (PNG, JPEG, GIF, WebP) are returned as images."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096},
        "offset": {"type": "integer", "minimum": 1, "default": 1},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["path"],
    "additionalProperties": False,
}

FAST_BYTES = 2 * 1024 * 1024  # files up to this size are read in one call
CHUNK = 1024 * 1024  # larger files are streamed in chunks of this size

_BOM8 = b"\xef\xbb\xbf"
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
              (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_WIDE_BOM_STARTS = frozenset(bom[0] for bom, _ in _WIDE_BOMS)
_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 continuation bytes: no character starts there
_PREFIX_CACHE_MAX = 100_000
#: the NUL byte as the int ``in`` looks for: ``b"\0" in data`` first tries the
#: one-byte needle as an int, making and dropping a TypeError (ten times the memchr)
_NUL = 0
_prefixes: list[str] = [""]  # _prefixes[n] == "\nN\t"; index 0 unused

#: Ask the root's backend to render a small file's window first (the native
#: backend does it in C; the others decline, and the Python path renders it).
NATIVE_WINDOW = True


def _cut_marker(cap: int, chars: int) -> str:
    return f" [... line cut: {cap} of {chars} characters shown]"


class _Facts:
    """What one pass over the file found."""

    __slots__ = ("sha256", "size", "bom", "endings", "total", "lines", "true_chars", "short_lines",
                 "crlf", "index_sep", "rendered", "encoding")

    def __init__(self) -> None:
        self.sha256 = ""
        self.size = 0
        self.bom = False
        self.endings = "none"
        self.total = 0
        self.lines: list[str] = []  # the window, as text (long lines possibly only a head)
        self.true_chars: dict[int, int] = {}  # window index -> length of a line kept as a head
        self.short_lines = False  # known: no line is longer than the cap
        self.crlf = False  # some line ends with \r\n
        self.index_sep = b""  # the separator lines were split at (streaming path)
        self.rendered: tuple[str, int, list[int]] | None = None  # the native window, if it ran
        self.encoding: str | None = None  # a UTF-16/UTF-32 file's encoding (read whole)

    @staticmethod
    def of_window(sha256: str, size: int, total: int, has_newline: bool,
                  rendered: tuple[str, int, list[int]]) -> _Facts:
        """The facts of a file the native window rendered: only those
        :func:`_answer` reads of such a window (no ``lines`` to render: it
        reads ``rendered``), set without :meth:`__init__`'s twelve (the
        commonest call makes one)."""
        facts: _Facts = _new_object(_Facts)
        facts.sha256 = sha256
        facts.size = size
        facts.bom = False  # (the native window declines a byte order mark)
        facts.endings = "lf" if has_newline else "none"
        facts.total = total
        facts.rendered = rendered
        facts.encoding = None
        return facts


_new_object = object.__new__


class Window(TypedDict):
    """Where the next window starts, and which lines were cut, when so."""

    nextOffset: NotRequired[int]
    cutLines: NotRequired[list[int]]
    encoding: NotRequired[str]  # a UTF-16/UTF-32 file's encoding


class TextResult(Window):
    """read_file's answer for a text file: a window of its lines."""

    path: str
    content: str
    startLine: int
    endLine: int
    totalLines: int
    truncated: bool
    sha256: str
    size: int
    lineEndings: str
    bom: bool


def run(ctx: ToolContext, args: dict[str, Any]) -> TextResult | _media.ImageResult:
    rel = ctx.rel(args["path"])
    limits = ctx.limits
    offset: int = args["offset"]
    limit = args.get("limit")
    limit = limits.read_lines if limit is None else min(limit, limits.read_lines)
    try:
        opened = ctx.view.open_read(rel, Op.READ)
    except FileNotFoundError:
        _refuse_pattern(ctx, rel)  # a glob pattern: answer with what it matches
        raise
    with opened:  # one resolution: the policy, the host and the read all see this file
        info = opened.opened_stat()
        if not st.S_ISREG(info.st_mode):
            raise _not_regular(rel, info)
        if info.st_nlink > 1:
            ctx.check_hardlink(rel, info)
        if ctx.asks_host:
            # THREATS row 10: the name swapped while the host decided fails closed
            ctx.view.ask_read(ReadRequest(rel), opened, rel, info)
        reader = _Reader(opened, ctx.checkpoint)
        small = _read_small(reader, info) if info.st_size <= FAST_BYTES else None
        if (small is None or _may_be_image(small)) and (
                image := _media.read_image(ctx, rel, opened, info)) is not None:
            return image  # a small file's one read tells it is no image
        facts = _scan(rel, reader, info, offset, limit, limits.read_line_chars,
                      limits.read_bytes, small, opened)
    return _answer(rel, offset, facts, limits.read_line_chars, limits.read_bytes)


def run_plain(call: PlainCall, args: dict[str, Any]) -> TextResult | None:
    """:func:`run` of the commonest call, for a call nothing else hears
    (``ToolSpec.plain``: no host asked, no progress): a clean path
    naming a regular file of one link, small enough to be read whole, that
    is no image.  The same open, decision and read as :func:`run`, without
    the call's :class:`ToolContext`; ``None`` for any other call (what
    changed taken in, ``call.readied``, and nothing else done): :func:`run`
    then answers it."""
    rel: str = args["path"]
    limits = call.limits
    if not clean_path(rel, limits):
        return None  # a path to forgive or refuse, as run() says it
    call.ready(False)
    try:
        opened = call.open_read(rel)
    except FileNotFoundError:
        if _GLOB_CHARS.isdisjoint(rel):
            raise
        return None  # maybe a glob pattern: run() answers with what it matches
    with opened:
        # the object is decided on before a byte of it is read: a hard link
        # (which run() decides on) is never read here
        info = opened.opened_stat()
        if not st.S_ISREG(info.st_mode):
            raise _not_regular(rel, info)
        if info.st_nlink > 1 or info.st_size > FAST_BYTES:
            return None  # a hard link (allowed or not), or a file to stream: run()'s
        reader = _Reader(opened, call.checkpoint)
        small = _read_small(reader, info)
        if _may_be_image(small):
            return None
        limit = args.get("limit")
        limit = limits.read_lines if limit is None else min(limit, limits.read_lines)
        offset: int = args["offset"]
        facts = _scan(rel, reader, info, offset, limit, limits.read_line_chars,
                      limits.read_bytes, small, opened)
    return _answer(rel, offset, facts, limits.read_line_chars, limits.read_bytes)


def _may_be_image(small: _Small) -> bool:
    """Whether a small file's bytes may be an image (:mod:`._media` says)."""
    data = small.data
    return data[:1] in _media.FIRST_BYTES and \
        _media.sniff(data[:_media.HEAD_BYTES]) is not None


def _answer(rel: str, offset: int, facts: _Facts, cap: int, budget: int) -> TextResult:
    """read_file's answer: the window ``facts`` found from line ``offset``."""
    if offset > max(facts.total, 1):
        raise Refusal(Code.INVALID_ARGUMENT,
                      f"offset {offset} is past the end of {_said(rel)}, which has {facts.total} "
                      f"line{'s' if facts.total != 1 else ''}",
                      f"Pass an offset from 1 to {max(facts.total, 1)}; the file may have changed, "
                      "so read it again from the start.",
                      details={"path": rel, "field": "offset", "totalLines": facts.total,
                               "currentSha256": facts.sha256}, kind=Kind.OFFSET_PAST_END,
                      suggested_tool="read_file", suggested_args={"path": rel})
    content, shown, cut = facts.rendered or _render(offset, facts, cap, budget)
    end_line = offset + shown - 1
    if end_line >= facts.total and not cut and not facts.encoding:
        # the commonest answer: the window reaches the end, nothing cut
        # (the same keys in the same order, without the window's own dict)
        return {"path": rel, "content": content, "startLine": offset, "endLine": end_line,
                "totalLines": facts.total, "truncated": False, "sha256": facts.sha256,
                "size": facts.size, "lineEndings": facts.endings, "bom": facts.bom}
    window: Window = {}
    if end_line < facts.total:
        window["nextOffset"] = end_line + 1
    if cut:
        window["cutLines"] = cut
    if facts.encoding:
        window["encoding"] = facts.encoding
    return {"path": rel, "content": content, "startLine": offset, "endLine": end_line,
            "totalLines": facts.total, "truncated": end_line < facts.total, **window,
            "sha256": facts.sha256, "size": facts.size, "lineEndings": facts.endings,
            "bom": facts.bom}


_GLOB_CHARS = frozenset("*?[")
MAX_MATCHES_SHOWN = 20


def _refuse_pattern(ctx: ToolContext, rel: str) -> None:
    """Refuse a path that is a glob pattern matching files, with the matches."""
    parts = rel.rstrip("/").split("/")
    first = next((i for i, part in enumerate(parts) if _GLOB_CHARS & set(part)), None)
    if first is None:
        return
    base = "/".join(parts[:first]) or "."
    found = ctx.try_tool("glob", {"pattern": "/".join(parts[first:]), "path": base})
    paths: list[str] = list(found.get("paths", ())) if found else []
    if not paths:
        return
    total = len(paths)
    details: dict[str, Any] = {"path": rel, "field": "path",
                               "matches": [AnswerPath(p) for p in paths[:MAX_MATCHES_SHOWN]],
                               "total": total, "truncated": bool(found and found.get("truncated"))}
    if total == 1:
        suggest: tuple[str, dict[str, Any]] = ("read_file", {"path": paths[0]})
        hint = f"Read the file it matches: {_said(paths[0])}."
    else:
        suggest = ("glob", {"pattern": "/".join(parts[first:]), "path": base})
        hint = "Read the files one by one (read_file takes one path); they are in details.matches."
    shown = ", ".join(_said(p) for p in paths[:3]) + (", ..." if total > 3 else "")
    raise Refusal(Code.INVALID_ARGUMENT, f"{_said(rel)} is a glob pattern, not a file; it matches "
                  f"{total} file{'s' if total != 1 else ''} ({shown})", hint, details=details,
                  kind=Kind.PATH_IS_PATTERN, suggested_tool=suggest[0], suggested_args=suggest[1])


def _not_regular(rel: str, info: os.stat_result) -> Refusal:
    if st.S_ISDIR(info.st_mode):
        return directory_given(rel, "read_file")
    # The core refuses FIFOs, sockets and devices when opening; this is a backstop.
    return special_file(rel, special_kind(info.st_mode),
                        hint="Use regular files only; this one cannot be read.")


# -- reading -------------------------------------------------------------------

class _Reader:
    """Positioned reads of one handle, each after the call's checkpoint."""

    __slots__ = ("file", "_pread", "_checkpoint")

    def __init__(self, file: OpenFile, checkpoint: Callable[[], None]) -> None:
        self.file = file
        self._pread = file.pread
        self._checkpoint = checkpoint

    def __call__(self, size: int, offset: int) -> bytes:
        self._checkpoint()
        return self._pread(size, offset)


class _Small:
    """A small file's one read, and its remembered sha256 if its stamps are trusted."""

    __slots__ = ("data", "remembered", "began")

    def __init__(self, data: bytes, remembered: str | None, began: int) -> None:
        self.data = data
        self.remembered = remembered
        self.began = began  # when the read began (for the racy rule), if not remembered


def _read_small(pread: _Reader, info: os.stat_result) -> _Small:
    """Read a file of at most FAST_BYTES whole.  One byte more than fstat
    said is asked for: getting exactly the size means the end was reached."""
    remembered = read_cache.digest(info)
    began = 0 if remembered is not None else read_cache.started()  # before the read: racy rule
    return _Small(pread(info.st_size + 1, 0), remembered, began)


def _scan(rel: str, pread: _Reader, info: os.stat_result, offset: int, limit: int, cap: int,
          budget: int, small: _Small | None, file: OpenFile) -> _Facts:
    """One pass over the file: digest, facts, and the window ``[offset, offset+limit)``;
    for a large file already known unchanged, only the window's bytes; a small
    one was read whole (``small``)."""
    size = info.st_size
    if small is None:
        known = read_cache.lookup(info)
        if known is not None:
            return _known(pread, known, offset, limit, cap, budget)
        began = read_cache.started()
        index: tuple[list[int], list[int]] = ([], [])
        facts = _stream(rel, pread, size, pread(CHUNK, 0), offset, limit, cap, budget, index)
        if facts.index_sep == b"\n" and pread.file.unchanged(info):
            read_cache.store(info, began, sha256=facts.sha256, endings=facts.endings,
                             bom=facts.bom, total=facts.total, crlf=facts.crlf,
                             lines=index[0], offsets=index[1])
        return facts
    data, remembered = small.data, small.remembered
    # Shorter than fstat said is confirmed with a one-byte read (not a
    # CHUNK-sized one, which would allocate a megabyte).
    if len(data) == size or (len(data) < size and not pread(1, len(data))):
        # a remembered digest is the bytes' only if the stamps still hold
        # now that they are read (a write between the fstat and the read)
        if remembered is None or len(data) != size or \
                not pread.file.unchanged(info):
            remembered = hashlib.sha256(data).hexdigest()
            if len(data) == size:
                read_cache.remember_digest(info, small.began, remembered)
        return _whole(rel, data, remembered, offset, limit, cap, budget, file)
    first = data  # the file grew since fstat: stream it
    return _stream(rel, pread, size, first, offset, limit, cap, budget, None)


def _known(pread: _Reader, known: read_cache.Whole, offset: int, limit: int, cap: int,
           budget: int) -> _Facts:
    """The window of a file whose whole-file facts are known: read from the
    indexed line at or before ``offset`` only as far as the window needs."""
    facts = _Facts()
    facts.sha256, facts.size, facts.endings, facts.bom = (known.sha256, known.size,
                                                          known.endings, known.bom)
    line, pos = known.start_before(offset, len(_BOM8) if known.bom else 0)
    window = _Window(b"\n", offset, limit, cap, budget)
    window.lineno = line
    while window.lineno < window.end and pos < known.size:
        chunk = pread(CHUNK, pos)
        if not chunk:
            break
        window.feed(chunk)
        pos += len(chunk)
    window.finish(facts, strip_cr=known.crlf)
    facts.total = known.total
    return facts


def _whole(rel: str, data: bytes, sha256: str, offset: int, limit: int, cap: int,
           budget: int, file: OpenFile) -> _Facts:
    """The fast path: the whole file is in ``data`` (its digest ``sha256``),
    read from ``file`` (whose backend may render the window natively)."""
    if data and data[0] in _WIDE_BOM_STARTS:
        wide = decode_wide(data)
        if wide is not None:  # UTF-16/UTF-32 with its mark: lines of the decoded text
            facts = _Facts()
            facts.sha256 = sha256
            facts.size = len(data)
            facts.encoding, decoded = wide
            _split(decoded.encode("utf-8", "surrogatepass"), decoded, offset, limit, cap, facts)
            facts.bom = True
            return facts
        _check_text_start(rel, data)
    window = _native_window(data, offset, limit, cap, budget, file)
    if window is not None and window.plain and offset == 1 and window.shown == window.total:
        # every byte of the file was shown and is printable ASCII, a tab or a
        # line feed: ASCII with no NUL and no control character, as the
        # looks below would find
        return _rendered(sha256, window, offset, data, None)
    if _NUL in data:
        raise _binary(rel, len(data))
    ascii_only = data.isascii()  # then it is UTF-8; otherwise decoding says whether it is
    if ascii_only and window is not None:
        # the control characters of the head are counted in the window's pass
        if window.controls * 10 > min(len(data), HEAD):  # looks_binary's rule
            raise _binary(rel, len(data))
        return _rendered(sha256, window, offset, data, None)
    if looks_binary(data[:HEAD]):
        raise _binary(rel, len(data))
    text = None if ascii_only else _decoded(rel, data)
    if window is not None and not ascii_only:
        return _rendered(sha256, window, offset, data, text)
    facts = _Facts()
    facts.sha256 = sha256
    facts.size = len(data)
    _split(data, data.decode("ascii") if text is None else text, offset, limit, cap, facts)
    return facts


def _native_window(data: bytes, offset: int, limit: int, cap: int, budget: int,
                   file: OpenFile) -> TextWindow | None:
    """The backend's window of ``data`` (the control characters of its head
    counted in the same pass), or ``None`` where it declines, or where
    ``data`` is not UTF-8 (decoding says why)."""
    if not NATIVE_WINDOW:
        return None
    try:
        return file.text_window(data, offset, limit, cap, budget, HEAD)
    except UnicodeDecodeError:
        return None


def _rendered(sha256: str, window: TextWindow, offset: int, data: bytes,
              text: str | None) -> _Facts:
    """The native window's facts (``data``: the file's bytes, ``sha256``
    their digest).  Its content carries its rows' text when
    it shows the whole file: ``data`` (when ASCII; else its text), which the
    renderer decodes or cuts only if it needs to, since the native window
    declines a file with a ``\r``, a byte order mark or a line to cut."""
    content, total, shown, has_newline, _, starts, plain = window  # (a look at each field)
    if offset == 1 and shown == total and content:
        # the rows' starts are offsets in the bytes: in the text too when it is ASCII
        content = (NumberedText.of_file(content, 1, data, starts, plain)
                   if text is None else NumberedText.of_file(content, 1, text))
    return _Facts.of_window(sha256, len(data), total, has_newline, (content, shown, []))


def _decoded(rel: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _undecodable(rel, len(data), data.count(b"\n", 0, exc.start) + 1,
                           exc.start) from None


def _split(data: bytes, text: str, offset: int, limit: int, cap: int, facts: _Facts) -> None:
    """The window of ``text`` (``data`` decoded) as lines, and the file's facts."""
    if data.startswith(_BOM8):
        facts.bom = True
        text = text[1:]
    if b"\r" not in data:  # the common case: one count less
        sep = "\n"
        crlf = 0
        facts.endings = "lf" if b"\n" in data else "none"
    else:
        newlines = data.count(b"\n")
        returns = data.count(b"\r")
        crlf = data.count(b"\r\n")
        facts.endings = _endings(newlines - crlf, crlf, returns - crlf)
        sep = "\r" if newlines == 0 else "\n"
    if not text:
        lines: list[str] = []
        terminated = True
    else:
        lines = text.split(sep)
        terminated = text.endswith(sep)
        if terminated:
            lines.pop()
    facts.total = len(lines)
    window = lines if offset == 1 and len(lines) <= limit else lines[offset - 1:offset - 1 + limit]
    facts.short_lines = _no_long_run(data, sep.encode(), cap)
    if crlf and sep == "\n":
        # drop the \r of \r\n; a lone \r ending an unterminated last line stays
        last_index = facts.total - offset  # window index of the file's last line
        window = [line[:-1] if line.endswith("\r") and (terminated or i != last_index) else line
                  for i, line in enumerate(window)]
    facts.lines = window


def _stream(rel: str, pread: _Reader, size: int, first: bytes, offset: int, limit: int,
            cap: int, budget: int, index: tuple[list[int], list[int]] | None) -> _Facts:
    """The streaming path: one pass that hashes, validates and counts the
    whole file and keeps only the window (a long line only as a head);
    ``index`` gets the first line starting in each chunk (number, offset)."""
    facts = _Facts()
    digest = hashlib.sha256()
    while len(first) < 4:  # byte order marks are up to 4 bytes
        more = pread(4 - len(first), len(first))
        if not more:
            break
        first += more
    _check_text_start(rel, first)
    if looks_binary(first[:HEAD]):
        raise _binary(rel, size)
    facts.bom = first.startswith(_BOM8)
    skip = len(_BOM8) if facts.bom else 0  # the BOM is not part of line 1
    window = _Window(b"\n", offset, limit, cap, budget)
    returns = _Returns()
    newlines = 0
    carry = b""  # an incomplete UTF-8 sequence at the end of the last chunk
    pos = 0
    chunk = first
    while chunk:
        digest.update(chunk)
        if _NUL in chunk:
            raise _binary(rel, max(size, pos + len(chunk)))
        if carry or not chunk.isascii():
            carry = _validate(rel, carry, chunk, pos, newlines, size)
        returns.feed(chunk)
        if index is not None:
            _index_chunk(index, chunk, newlines, pos)
        newlines += window.feed(chunk[skip:] if pos == 0 and skip else chunk)
        pos += len(chunk)
        chunk = pread(CHUNK, pos)
    if carry:
        raise _undecodable(rel, pos, newlines + 1, pos - len(carry))
    crlf = returns.crlf
    facts.size = pos
    facts.sha256 = digest.hexdigest()
    facts.endings = _endings(newlines - crlf, crlf, returns.count - crlf)
    if newlines == 0 and returns.count:
        # Lone \r endings only (rare): gather the window again, split at \r.
        # Nothing is trusted from this second read but the window itself.
        window = _Window(b"\r", offset, limit, cap, budget)
        at = skip
        while at < pos:
            chunk = pread(min(CHUNK, pos - at), at)
            if not chunk:
                break
            window.feed(chunk)
            at += len(chunk)
    window.finish(facts, strip_cr=bool(crlf) and window.sep == b"\n")
    facts.crlf, facts.index_sep = bool(crlf), window.sep
    return facts


class _Returns:
    """Counts ``\\r`` and ``\\r\\n`` over chunks fed in order (a pair may
    straddle two chunks)."""

    __slots__ = ("count", "crlf", "_pending")

    def __init__(self) -> None:
        self.count = self.crlf = 0
        self._pending = False  # the last chunk ended with \r

    def feed(self, chunk: bytes) -> None:
        r = chunk.count(b"\r")
        if r or self._pending:
            self.crlf += chunk.count(b"\r\n") + (1 if self._pending and chunk[:1] == b"\n" else 0)
            self._pending = chunk[-1:] == b"\r"
        self.count += r


def _index_chunk(index: tuple[list[int], list[int]], chunk: bytes, newlines: int,
                 pos: int) -> None:
    """Note the first line that starts in ``chunk`` (its number and offset)."""
    first_break = chunk.find(b"\n")
    if first_break >= 0:
        index[0].append(newlines + 2)
        index[1].append(pos + first_break + 1)


class _Window:
    """Gathers lines ``[offset, offset+limit)`` from chunks fed in order,
    keeping at most a head of each long line and stopping once well over the
    byte budget, while counting every line."""

    def __init__(self, sep: bytes, offset: int, limit: int, cap: int, budget: int) -> None:
        self.sep = sep
        self.offset = offset
        self.end = offset + limit  # exclusive line number
        self.cap = cap
        self.head_cap = cap * 4 + 4  # bytes: enough for ``cap`` characters of any width
        self.budget = budget
        self.lineno = 1  # the line the next byte belongs to
        self.tail = 0  # bytes after the last separator
        # per kept line: head, bytes, continuation bytes left out of the head, ended, last byte
        self.kept: list[tuple[bytes, int, int, bool, bytes]] = []
        self.cur = bytearray()
        self.cur_total = self.cur_cont = 0
        self.cur_last = b""
        self.raw = 0  # see _keep

    def feed(self, chunk: bytes) -> int:
        """Take the next chunk; return how many separators it held."""
        sep = self.sep
        n = chunk.count(sep)
        lineno = self.lineno
        self.tail = len(chunk) - chunk.rfind(sep) - 1 if n else self.tail + len(chunk)
        self.lineno = lineno + n
        if lineno + n < self.offset or lineno >= self.end:
            return n
        # split no further than the window's last line: the rest of a
        # chunk (a large file's window is a sliver of its megabyte) is one part
        end = self.end - lineno
        parts = chunk.split(sep, end if end < n else n)  # (a maxsplit C's size holds)
        head_cap = self.head_cap
        for i in range(max(0, self.offset - lineno), min(n + 1, self.end - lineno)):
            part = parts[i]
            room = head_cap - len(self.cur)
            if room > 0:
                self.cur += part[:room]
                if len(part) > room:
                    rest = part[room:]
                    self.cur_cont += len(rest) - len(rest.translate(None, _CONTINUATION))
            else:
                self.cur_cont += len(part) - len(part.translate(None, _CONTINUATION))
            self.cur_total += len(part)
            if part:
                self.cur_last = part[-1:]
            if i < n:  # the line ends in this chunk
                self._keep(True)
                if self.raw > self.budget:
                    self.end = lineno + i + 1  # enough gathered; the renderer trims exactly
                    break
        return n

    def _keep(self, ended: bool) -> None:
        self.kept.append((bytes(self.cur), self.cur_total, self.cur_cont, ended, self.cur_last))
        # a lower bound of what the line adds to the content (at least
        # min(bytes, cap) of text, a number and a tab, less a dropped \r),
        # so gathering stops only past where the renderer cuts exactly
        self.raw += min(self.cur_total, self.cap)
        self.cur = bytearray()
        self.cur_total = self.cur_cont = 0
        self.cur_last = b""

    def finish(self, facts: _Facts, strip_cr: bool) -> None:
        facts.total = self.lineno - 1 + (1 if self.tail else 0)
        if self.tail and self.offset <= self.lineno < self.end:
            self._keep(False)
        lines = facts.lines
        for index, (head, total, cont_cut, ended, last) in enumerate(self.kept):
            whole = total == len(head)
            # the file is valid UTF-8, so "ignore" only drops a character cut at the head's end
            text = head.decode("utf-8") if whole else head.decode("utf-8", "ignore")
            chars = total - cont_cut - (len(head) - len(head.translate(None, _CONTINUATION)))
            if strip_cr and ended and last == b"\r":
                chars -= 1
                if whole:
                    text = text[:-1]
            if not whole:
                facts.true_chars[index] = chars
            lines.append(text)


def _no_long_run(data: bytes, sep: bytes, cap: int) -> bool:
    """True if no line of ``data`` (lines end at ``sep``) can be longer than
    ``cap`` characters: a quick, conservative test (False means "look at
    each line").  If every aligned stretch of ``cap // 2`` bytes holds a
    ``sep``, no run without one reaches ``cap`` bytes, and a character is at
    least a byte."""
    width = cap // 2
    if width < 1:
        return False
    find = data.find
    for start in range(0, len(data), width):  # noqa: SIM110 - a loop is faster than all()
        if find(sep, start, start + width) < 0:
            return False
    return True


def _check_text_start(rel: str, head: bytes) -> None:
    for bom, name in _WIDE_BOMS:
        if head.startswith(bom):
            raise Refusal(Code.UNSUPPORTED, f"{_said(rel)} is {name.upper()} text, which read_file "
                                            f"does "
                          "not decode (it reads UTF-8)", "Do not read this file with read_file; "
                          "ask the user to convert it to UTF-8 if you need it.",
                          details={"path": rel, "encoding": name}, kind=Kind.ENCODING)


def _validate(rel: str, carry: bytes, chunk: bytes, pos: int, lines_before: int,
              size: int) -> bytes:
    """Check ``carry + chunk`` is UTF-8 up to a possibly incomplete last
    character, which is returned to be completed by the next chunk."""
    data = carry + chunk if carry else chunk
    tail = _incomplete_tail(data)
    try:
        (data[:len(data) - tail] if tail else data).decode("utf-8")
    except UnicodeDecodeError as exc:
        start = pos - len(carry) + exc.start
        line = lines_before + data.count(b"\n", 0, exc.start) + 1
        raise _undecodable(rel, max(size, pos + len(chunk)), line, start) from None
    return data[len(data) - tail:] if tail else b""


def _incomplete_tail(data: bytes) -> int:
    """How many bytes at the end of ``data`` start a character that is not complete."""
    n = len(data)
    for back in range(1, min(4, n) + 1):
        byte = data[n - back]
        if byte < 0x80:
            return 0
        if byte >= 0xC0:  # a lead byte
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return back if need > back else 0
    return 0


def _endings(lf: int, crlf: int, cr: int) -> str:
    kinds = [name for name, count in (("lf", lf), ("crlf", crlf), ("cr", cr)) if count]
    if not kinds:
        return "none"
    return kinds[0] if len(kinds) == 1 else "mixed"


def _binary(rel: str, size: int) -> Refusal:
    return binary_file(rel, size, "read_file", "Do not read binary files with read_file; look "
                       "for the text file you need with glob or grep.")


def _undecodable(rel: str, size: int, line: int, byte: int) -> Refusal:
    return Refusal(Code.UNSUPPORTED, f"{_said(rel)} is not valid UTF-8 text (the first bad byte is "
                                     f"on "
                   f"line {line})", "Do not read this file with read_file; ask the user to convert "
                   "it to UTF-8 if you need it.",
                   details={"path": rel, "encoding": "unknown", "size": size, "line": line,
                            "byteOffset": byte}, kind=Kind.ENCODING)


# -- rendering -----------------------------------------------------------------

def _numbered(start: int, count: int) -> list[str]:
    """``"\\nN\\t"`` for N in ``[start, start+count)``, from a shared cache when small."""
    stop = start + count
    if stop > _PREFIX_CACHE_MAX:
        return [f"\n{n}\t" for n in range(start, stop)]
    if len(_prefixes) < stop:
        _prefixes.extend(f"\n{n}\t" for n in range(len(_prefixes), stop + 512))
    return _prefixes[start:stop]


def _render(offset: int, facts: _Facts, cap: int, budget: int) -> tuple[str, int, list[int]]:
    """The numbered content, how many lines it shows, and which were cut."""
    lines = facts.lines
    if not lines:
        return "", 0, []
    cut: list[int] = []
    if facts.true_chars or (not facts.short_lines and max(map(len, lines)) > cap):
        lines = list(lines)
        for i, text in enumerate(lines):
            chars = facts.true_chars.get(i, len(text))
            if chars > cap:
                lines[i] = text[:cap] + _cut_marker(cap, chars)
                cut.append(offset + i)
    prefixes = _numbered(offset, len(lines))
    parts: list[str] = [""] * (2 * len(lines))
    parts[0::2] = prefixes
    parts[1::2] = lines
    parts[0] = prefixes[0][1:]  # the first line has no line break before it
    content = "".join(parts)
    if len(content) * 4 <= budget or len(content.encode("utf-8")) <= budget:
        return NumberedText.of(content, offset, "\n".join(lines)), len(lines), cut
    # Over the byte budget: keep the lines that fit (at least one, so a
    # caller always moves forward).
    used = 0
    count = 0
    for prefix, text in zip(prefixes, lines):
        used += len(prefix.encode()) + len(text.encode("utf-8"))
        if used - 1 > budget and count:
            break
        count += 1
    cut = [n for n in cut if n < offset + count]
    return (NumberedText.of("".join(parts[:2 * count]), offset, "\n".join(lines[:count])),
            count, cut)


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"},
    "content": {"type": "string", "description": "N<TAB>text per line"},
    "startLine": {"type": "integer"}, "endLine": {"type": "integer"},
    "totalLines": {"type": "integer"}, "truncated": {"type": "boolean"},
    "nextOffset": {"type": "integer"},
    "cutLines": {"type": "array", "items": {"type": "integer"}},
    "sha256": {"type": "string"}, "size": {"type": "integer"},
    "lineEndings": {"type": "string", "enum": ["lf", "crlf", "cr", "mixed", "none"]},
    "bom": {"type": "boolean"},
    "encoding": {"type": "string", "description": "a UTF-16 or UTF-32 file (with its byte order "
                                                  "mark), decoded; absent for UTF-8"},
}, ["path", "content", "startLine", "endLine", "totalLines", "truncated", "sha256", "size",
    "lineEndings", "bom"])

TOOL = ToolSpec(name="read_file", title="Read file", description=DESCRIPTION, schema=SCHEMA,
                output_schema=_media.with_image_output(OUTPUT_SCHEMA), run=run, request=ReadRequest,
                suggests=Suggests(retry_on=frozenset({"file"})), plain=run_plain)
