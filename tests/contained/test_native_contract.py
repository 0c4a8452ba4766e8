"""The native module checks its own contract: every exported function of
``corral._native`` called with lengths, positions, budgets, flags and modes
at and past their edges (a seeded loop), straight through cffi.

Each call must return what its declaration (``native/*.cdef``) says: the
documented error code with ``EINVAL`` for arguments outside the contract,
and for the rest the same answer as a model written here in Python.  What
C cannot check (that a buffer really holds the bytes its length says) is
kept true by the test: every length given is at most the buffer's.

The sanitizer lane (``scripts/sanitize.py``) runs this file against an
AddressSanitizer + UndefinedBehaviorSanitizer build of the module, where an
out-of-bounds access or a signed overflow in any of these calls aborts.
``CORRAL_NATIVE_FUZZ_ITERATIONS`` sets the calls per function (default
300; a soak: 100000); with ``CORRAL_NATIVE_CALL_COUNTS`` set to a file
name, the calls each function received are written there as JSON (under
pytest-xdist, one file per worker: that name with ``.gw0``, ``.gw1``, ...).
"""

from __future__ import annotations

import errno
import json
import os
import random
from collections import Counter

import pytest

from ..helpers import fds_opened_since, open_fds

try:
    from corral._native import ffi
    from corral._native import lib as _lib
except ImportError:  # the module was not built: nothing of it to check
    ffi = _lib = None


class _Counted:
    """The module's functions, each call counted (its constants as they are)."""

    def __init__(self, lib) -> None:
        self._lib = lib
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str):
        value = getattr(self._lib, name)
        if not callable(value):
            return value

        def call(*args):
            self.calls[name] += 1
            return value(*args)
        return call


lib = None if _lib is None else _Counted(_lib)

ITERATIONS = int(os.environ.get("CORRAL_NATIVE_FUZZ_ITERATIONS", "300"))
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
INT_MAX = 2**31 - 1
INT_MIN = -(2**31)
EDGES64 = [INT64_MIN, INT64_MIN + 1, -(2**32), -2, -1, 0, 1, 2, 7, 8, 9, 63, 64, 65,
           INT_MAX, 2**31, 2**32, 2**62, INT64_MAX - 2, INT64_MAX - 1, INT64_MAX]
O_PATH = getattr(os, "O_PATH", 0)
KNOWN_FLAGS = [os.O_RDONLY, os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_EXCL, os.O_TRUNC,
               os.O_APPEND, os.O_NONBLOCK, os.O_DIRECTORY, os.O_NOFOLLOW, os.O_CLOEXEC,
               os.O_NOCTTY, O_PATH]
RESOLVE_BITS = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 1 << 40]
BOM = b"\xef\xbb\xbf"

NATIVE = [] if lib is None else ["native"]  # parametrize: no test where there is no module
pytestmark = [pytest.mark.parametrize("native", NATIVE),
              pytest.mark.own_backend]  # the module itself, straight through cffi


def _edge(rng: random.Random, *near: int) -> int:
    """An int64 at or past an edge: a fixed edge, or one of ``near`` +-1."""
    if near and rng.random() < 0.5:
        return max(INT64_MIN, min(INT64_MAX, rng.choice(near) + rng.choice((-1, 0, 0, 1))))
    return rng.choice(EDGES64)


def _int(rng: random.Random, *near: int) -> int:
    """A C int: an edge, or a value near one of ``near``."""
    value = _edge(rng, *near)
    return value if INT_MIN <= value <= INT_MAX else rng.choice((INT_MIN, -1, INT_MAX))


def _flags(rng: random.Random) -> int:
    flags = 0
    for _ in range(rng.randint(0, 4)):
        flags |= rng.choice(KNOWN_FLAGS) if rng.random() < 0.8 else 1 << rng.randint(0, 30)
    if rng.random() < 0.05:
        flags = rng.choice((-1, INT_MIN, INT_MAX))
    return flags


def _blob(rng: random.Random, alphabet: bytes, most: int) -> bytes:
    data = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, most)))
    if rng.random() < 0.1:
        data = BOM + data
    return data


def _errno_is_einval() -> bool:
    return ffi.errno == errno.EINVAL


@pytest.fixture
def tree(tmp_path):
    """A directory fd holding a file, a subdirectory, a symlink, a FIFO and a
    hard-linked file; closed after, and no fd may be left open by a call."""
    (tmp_path / "file").write_bytes(b"needle in a file\n" * 3)
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "binary").write_bytes(b"\0needle")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner").write_bytes(b"x")
    os.symlink("file", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    os.link(tmp_path / "file", tmp_path / "hard")
    before = open_fds()
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    yield fd, tmp_path
    os.close(fd)
    assert not fds_opened_since(before), "a native call left an fd open"


@pytest.fixture(scope="module", autouse=True)
def call_counts():
    """Write the calls each function received (for scripts/sanitize.py)."""
    yield
    target = os.environ.get("CORRAL_NATIVE_CALL_COUNTS")
    if target and lib is not None:
        # one file a process: under pytest-xdist each worker ran some of the loops
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        with open(f"{target}.{worker}" if worker else target, "w", encoding="utf-8") as out:
            json.dump(dict(lib.calls), out)


def _close_if_fd(fd: int) -> None:
    if fd >= 0:
        os.close(fd)


# -- corral_text_window ---------------------------------------------------------

def _window_model(data: bytes, offset: int, limit: int, cap: int, budget: int, out_size: int
                  ) -> tuple[int, bytes, list[int]] | None:
    """What corral_text_window answers for valid arguments (native/read.cdef):
    (bytes written, those bytes, facts), or None where it declines (-1)."""
    if data.startswith(BOM) or b"\r" in data:
        return None
    lines = data.split(b"\n")
    if data.endswith(b"\n") or not data:
        lines.pop()
    out = b""
    shown = 0
    end = min(len(lines), offset - 1 + limit)
    for index in range(offset - 1, end):
        text = lines[index]
        if len(text) > cap:
            return None
        piece = (b"\n" if shown else b"") + str(index + 1).encode() + b"\t" + text
        if len(out) + len(piece) > budget and shown > 0:
            break
        if len(out) + len(piece) > out_size:
            return None
        out += piece
        shown += 1
    return len(out), out, [len(lines), shown, int(b"\n" in data)]


def test_text_window_at_and_past_every_edge(native):
    rng = random.Random(1)
    for _ in range(ITERATIONS * 4):
        data = _blob(rng, b"ab\n\n\r", 60)
        length = rng.choice((len(data), len(data), rng.randint(0, len(data)), -1, INT64_MIN))
        lines = data.count(b"\n") + 1
        offset = _edge(rng, 1, lines) if rng.random() < 0.7 else rng.randint(1, lines + 1)
        limit = _edge(rng, 0, lines) if rng.random() < 0.5 else rng.randint(0, lines + 1)
        cap = _edge(rng, 0, 5) if rng.random() < 0.5 else rng.randint(0, 20)
        budget = _edge(rng, 0, 20) if rng.random() < 0.5 else rng.randint(0, 200)
        room = rng.randint(0, 300)
        out = ffi.new("char[]", max(room, 1))
        out_size = rng.choice((room, room, rng.randint(0, room), -1, INT64_MIN))
        facts = ffi.new("int64_t[3]")
        written = lib.corral_text_window(data, length, offset, limit, cap, budget, out,
                                         out_size, facts)
        invalid = (length < 0 or offset < 1 or limit < 0 or cap < 0 or budget < 0
                   or out_size < 0)
        if invalid:
            assert written == -2 and _errno_is_einval(), (length, offset, limit, cap, budget)
            continue
        expected = _window_model(data[:length], offset, limit, cap, budget, out_size)
        if expected is None:
            assert written == -1
            continue
        assert written == expected[0], (data[:length], offset, limit, cap, budget, out_size)
        assert ffi.buffer(out, written)[:] == expected[1]
        assert list(facts) == expected[2]


def test_text_window_head_counts_the_controls_text_does_not_hold(native):
    """corral_text_window_head: the window of corral_text_window, and
    facts[3] the control bytes among the first head bytes (C0 but 8 to 13
    and 27, and 127); a negative head is EINVAL."""
    rng = random.Random(2)
    odd = bytes(b for b in range(32) if b not in range(8, 14) and b != 27) + b"\x7f"
    for _ in range(ITERATIONS * 4):
        data = _blob(rng, b"ab\n\t\x1b\x0b\x08\x0c" + odd + bytes(range(0x80, 0x84)), 300)
        data = data.replace(b"\r", b"")
        while data.startswith(BOM):  # both decline the window
            data = data[len(BOM):]
        head = rng.choice((0, 1, len(data), len(data) + 5, rng.randint(0, len(data) + 1),
                           INT64_MAX))
        out = ffi.new("char[]", 4096)
        facts = ffi.new("int64_t[4]")
        written = lib.corral_text_window_head(data, len(data), 1, 1000, 1000, 4096, head, out,
                                              4096, facts)
        assert written >= 0, data
        plain = ffi.new("int64_t[3]")
        assert lib.corral_text_window(data, len(data), 1, 1000, 1000, 4096, out, 4096,
                                      plain) == written
        assert list(facts)[:3] == list(plain)
        assert facts[3] == sum(1 for b in data[:head] if b in odd), (data, head)
    facts = ffi.new("int64_t[4]")
    assert lib.corral_text_window_head(b"a\n", 2, 1, 1, 9, 9, -1, ffi.new("char[]", 9), 9,
                                       facts) == -2
    assert _errno_is_einval()


def test_text_window_starts_notes_where_each_line_shown_begins(native):
    """corral_text_window_starts: the window of corral_text_window_head, and
    starts[i] the offset in buf of the i-th line written; -1 (the caller
    renders) when they would be more than starts_size; starts_size negative,
    or a NULL starts with room said, is EINVAL."""
    rng = random.Random(3)
    for _ in range(ITERATIONS * 4):
        data = _blob(rng, b"ab\n\n", 80)
        lines = data.count(b"\n") + 1
        offset = rng.randint(1, lines + 1)
        limit = _edge(rng, 0, lines) if rng.random() < 0.3 else rng.randint(0, lines + 1)
        budget = rng.choice((4096, rng.randint(0, 60)))
        room = rng.choice((0, 1, lines, lines + 1, rng.randint(0, lines)))
        starts = ffi.new("int64_t[]", max(room, 1))
        out = ffi.new("char[]", 4096)
        facts = ffi.new("int64_t[4]")
        written = lib.corral_text_window_starts(data, len(data), offset, limit, 100, budget, 0,
                                                out, 4096, facts, starts, room)
        if limit < 0:
            assert written == -2 and _errno_is_einval()
            continue
        expected = _window_model(data, offset, limit, 100, budget, 4096)
        if expected is None:
            assert written == -1
            continue
        if expected[2][1] > room:  # more lines shown than starts can hold
            assert written == -1, (data, offset, limit, budget, room)
            continue
        assert written == expected[0], (data, offset, limit, budget, room)
        assert ffi.buffer(out, written)[:] == expected[1]
        assert list(facts)[:3] == expected[2]
        begins = [0] + [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
        shown = expected[2][1]
        assert list(starts)[:shown] == begins[offset - 1:offset - 1 + shown]
        # a NULL starts notes nothing and renders the same window
        assert lib.corral_text_window_starts(data, len(data), offset, limit, 100, budget, 0,
                                             out, 4096, facts, ffi.NULL, 0) == written
    facts = ffi.new("int64_t[4]")
    out = ffi.new("char[]", 9)
    for starts, size in ((ffi.new("int64_t[]", 1), -1), (ffi.NULL, 1), (ffi.NULL, INT64_MIN)):
        assert lib.corral_text_window_starts(b"a\n", 2, 1, 1, 9, 9, 0, out, 9, facts, starts,
                                             size) == -2
        assert _errno_is_einval()


def test_text_window_rows_counts_the_bytes_json_escapes_unusually(native):
    """corral_text_window_rows: the window, controls and starts of
    corral_text_window_starts, and facts[4] the bytes of the lines written
    (the line feeds between them included) that are neither printable ASCII
    nor a tab or line feed; the controls counted as before whatever part of
    the head the window covers (long texts: the 16-byte blocks and the
    bytes after them)."""
    rng = random.Random(4)
    odd = bytes(b for b in range(32) if b not in range(8, 14) and b != 27) + b"\x7f"
    unusual = bytes(b for b in range(256) if not (32 <= b <= 126 or b in (9, 10)))
    alphabet = b"ab\"\\ \t\n\n\x1b\x0b\x08\x0c\x7f\x00\x01\x80\xc3\xff~"
    for _ in range(ITERATIONS * 4):
        if rng.random() < 0.5:  # mostly plain text, a rare odd byte somewhere
            data = bytearray(rng.choice(b"abc  \t\n\n") for _ in range(rng.randint(0, 700)))
            for _ in range(rng.choice((0, 0, 1, 2))):
                if data:
                    data[rng.randrange(len(data))] = rng.choice(alphabet)
            data = bytes(data)
        else:
            data = _blob(rng, alphabet, 300)
        data = data.replace(b"\r", b"")
        while data.startswith(BOM):
            data = data[len(BOM):]
        lines = data.count(b"\n") + 1
        offset = rng.choice((1, 1, rng.randint(1, lines + 1)))
        limit = rng.choice((2000, rng.randint(0, lines + 1)))
        budget = rng.choice((8192, rng.randint(0, 400)))
        head = rng.choice((0, 1, 16, 17, len(data), len(data) + 5, rng.randint(0, len(data) + 1),
                           INT64_MAX))
        out = ffi.new("char[]", 8192)
        facts = ffi.new("int64_t[5]")
        starts = ffi.new("int64_t[]", lines + 1)
        written = lib.corral_text_window_rows(data, len(data), offset, limit, 1000, budget, head,
                                              out, 8192, facts, starts, lines + 1)
        four = ffi.new("int64_t[4]")
        before = ffi.new("int64_t[]", lines + 1)
        assert lib.corral_text_window_starts(data, len(data), offset, limit, 1000, budget, head,
                                             out, 8192, four, before, lines + 1) == written
        if written < 0:
            continue
        assert list(facts)[:4] == list(four)
        assert facts[3] == sum(1 for b in data[:head] if b in odd), (data, offset, head)
        shown = facts[1]
        assert list(starts)[:shown] == list(before)[:shown]
        if not shown:
            assert facts[4] == 0
            continue
        begin = starts[0]
        last = data.find(b"\n", starts[shown - 1])
        rows = data[begin:len(data) if last < 0 else last]
        assert facts[4] == sum(1 for b in rows if b in unusual), (data, offset, limit, budget)
    facts = ffi.new("int64_t[5]")
    out = ffi.new("char[]", 9)
    assert lib.corral_text_window_rows(b"a\n", 2, 1, 1, 9, 9, 0, out, 9, ffi.NULL,
                                       ffi.NULL, 0) == -2
    assert _errno_is_einval()
    assert lib.corral_text_window_rows(b"a\n", 2, 1, 1, 9, 9, -1, out, 9, facts,
                                       ffi.NULL, 0) == -2
    assert _errno_is_einval()


def test_text_window_far_offsets_do_not_overflow(native):
    """offset + limit past INT64_MAX: the window is clamped, not wrapped."""
    facts = ffi.new("int64_t[3]")
    out = ffi.new("char[]", 64)
    for offset, limit in ((INT64_MAX - 1, INT64_MAX), (INT64_MAX, INT64_MAX), (1, INT64_MAX),
                          (2, INT64_MAX - 1), (INT64_MAX, 0)):
        written = lib.corral_text_window(b"a\nb\n", 4, offset, limit, 100, 100, out, 64, facts)
        if offset <= 2 and limit > 0:
            assert written > 0 and facts[0] == 2
        else:
            assert written == 0 and list(facts) == [2, 0, 1]


# -- corral_scan_lines / corral_count_newlines ---------------------------------------

def _lines_model(needle: bytes, buf: bytes, pos: int, line: int) -> list[tuple[int, int, int, int]]:
    hits = []
    while pos < len(buf):
        at = buf.find(needle, pos)
        if at < 0 or not needle:
            break
        start = buf.rfind(b"\n", pos, at) + 1 or pos
        end = buf.find(b"\n", at)
        end = len(buf) if end < 0 else end
        line += buf.count(b"\n", pos, start)
        hits.append((start, end, at, line))
        pos, line = end + 1, line + 1
    return hits


def test_scan_lines_at_and_past_every_edge(native):
    rng = random.Random(2)
    for _ in range(ITERATIONS * 4):
        buf = _blob(rng, b"ab\n", 50)
        length = rng.choice((len(buf), len(buf), rng.randint(0, len(buf)), -1, INT64_MIN))
        starts = [0] + [i + 1 for i, byte in enumerate(buf[:max(length, 0)]) if byte == 10]
        pos = rng.choice(starts) if rng.random() < 0.6 else _edge(rng, 0, length)
        line = rng.randint(1, 5) if rng.random() < 0.7 else _edge(rng, 1, INT64_MAX - length)
        needle = _blob(rng, b"ab\n", 3).removeprefix(BOM)
        nlen = rng.choice((len(needle), len(needle), rng.randint(0, len(needle)), -1, INT64_MIN))
        room = rng.randint(0, 6)
        max_hits = rng.choice((room, room, 0, -1, INT64_MIN, INT64_MAX, INT64_MAX // 4 + 1))
        out = ffi.new("int64_t[]", 4 * room + 1)
        state = ffi.new("int64_t[2]")
        hits = lib.corral_scan_lines(buf, length, pos, line, needle, nlen, out, max_hits, state)
        invalid = (length < 0 or pos < 0 or pos > length or nlen < 0 or max_hits < 0
                   or max_hits > INT64_MAX // 4 or line < 0 or line > INT64_MAX - length - 1)
        if invalid:
            assert hits == -1 and _errno_is_einval()
            continue
        if max_hits > room:  # a count the out buffer cannot hold is outside the contract
            continue
        assert 0 <= hits <= max_hits
        rows = [tuple(out[4 * i:4 * i + 4]) for i in range(hits)]
        for start, end, at, _number in rows:
            assert pos <= start <= at < end + 1 and end <= length
        if pos in starts:
            model = _lines_model(needle[:nlen], buf[:length], pos, line)
            assert rows == model[:max_hits], (buf[:length], needle[:nlen], pos, line)


def test_scan_lines_rejects_what_would_overflow(native):
    """A line number so large that counting on would overflow is refused."""
    out = ffi.new("int64_t[8]")
    state = ffi.new("int64_t[2]")
    assert lib.corral_scan_lines(b"a\na\n", 4, 0, INT64_MAX, b"a", 1, out, 2, state) == -1
    assert lib.corral_scan_lines(b"a\na\n", 4, 0, INT64_MAX - 5, b"a", 1, out, 2, state) == 2
    assert list(out)[:8] == [0, 1, 0, INT64_MAX - 5, 2, 3, 2, INT64_MAX - 4]


def test_count_newlines_at_and_past_every_edge(native):
    rng = random.Random(3)
    for _ in range(ITERATIONS * 4):
        buf = _blob(rng, b"a\n", 40)
        length = rng.choice((len(buf), rng.randint(0, len(buf)), -1, INT64_MIN))
        start = _edge(rng, 0, length) if rng.random() < 0.5 else rng.randint(0, len(buf))
        end = _edge(rng, 0, length) if rng.random() < 0.5 else rng.randint(0, len(buf))
        count = lib.corral_count_newlines(buf, length, start, end)
        if length < 0 or start < 0 or end < 0 or start > length or end > length:
            assert count == -1 and _errno_is_einval()
        else:
            assert count == buf[:length].count(b"\n", start, end)


def test_find_from_at_and_past_every_edge(native):
    """corral_find_from (read.cdef) against bytes.find: lengths and starts
    at and past their edges, empty needles, needles longer than what is
    left; NULL pointers and negative numbers are -2 with EINVAL."""
    rng = random.Random(34)
    for _ in range(ITERATIONS * 4):
        buf = _blob(rng, b"ab\n", 40)
        needle = _blob(rng, b"ab\n", 4)
        length = rng.choice((len(buf), rng.randint(0, len(buf)), -1, INT64_MIN))
        nlen = rng.choice((len(needle), rng.randint(0, len(needle)), -1, INT64_MIN))
        start = _edge(rng, 0, max(length, 0)) if rng.random() < 0.5 else rng.randint(0, len(buf))
        found = lib.corral_find_from(buf, length, needle, nlen, start)
        if length < 0 or nlen < 0 or start < 0:
            assert found == -2 and _errno_is_einval()
        elif start > length:
            assert found == -1
        else:
            assert found == buf[:length].find(needle[:nlen], start)
    for buf, needle in ((ffi.NULL, b"a"), (b"a", ffi.NULL)):
        assert lib.corral_find_from(buf, 1, needle, 1, 0) == -2 and _errno_is_einval()


# -- corral_names_clear (list.cdef) ----------------------------------------------------------

def _names_clear_model(tests: bytes, run: bytes) -> int:
    """list.cdef's answer for ``tests`` and ``run`` (what their sizes take
    of the buffers), in the order C reads them: the tests' entries first
    (a malformed one -1; an empty suffix or prefix 0 at once, every name
    meets it), then each name of the run."""
    at, exact_empty = 0, False
    entries: list[tuple[bytes, bytes]] = []
    while at < len(tests):
        if len(tests) - at < 3:
            return -1
        kind, length = tests[at:at + 1], int.from_bytes(tests[at + 1:at + 3], "big")
        if kind not in (b"n", b"s", b"p") or length > len(tests) - at - 3:
            return -1
        test = tests[at + 3:at + 3 + length]
        if not test:
            if kind != b"n":
                return 0
            exact_empty = True
        entries.append((kind, test))
        at += 3 + length
    if b"~1" in run:
        return 0
    for name in run.split(b"\0"):
        if not name:
            if exact_empty:
                return 0
            continue
        lowered = name.lower()  # ASCII A-Z only, as C folds
        if lowered[-1:] in (b".", b" "):
            return 0
        for kind, test in entries:
            if not test or len(test) > len(lowered):
                continue
            if (kind == b"n" and lowered == test) or (kind == b"s" and lowered.endswith(test)) \
                    or (kind == b"p" and lowered.startswith(test)):
                return 0
    return 1


def _names_tests(rng: random.Random) -> bytes:
    """A test list: entries of the kinds C knows over a small alphabet (so
    names meet them), now and then one malformed (an unknown kind, a length
    past the buffer, an entry cut short)."""
    out = b""
    for _ in range(rng.randint(0, 5)):
        kind = rng.choice(b"nnsspp" + (b"q" if rng.random() < 0.05 else b""))
        test = _blob(rng, b"ab.~1 A\xc3\xa9", 4) if rng.random() < 0.9 else b""
        length = len(test)
        if rng.random() < 0.03:
            length = rng.choice((length + 1, 0xFFFF))
        out += bytes([kind]) + length.to_bytes(2, "big") + test
    if rng.random() < 0.05:
        out += rng.choice((b"n", b"s\x00"))
    return out


def test_names_clear_at_and_past_every_edge(native):
    """corral_names_clear against the model above: test lists well formed
    and not, names of every kind (empty, '~1', a final '.' or ' ', upper
    case, bytes past ASCII), sizes short of the buffers, negative sizes
    and NULL pointers (-1, EINVAL; NULL with size 0 is no bytes)."""
    rng = random.Random(35)
    for _ in range(ITERATIONS * 4):
        tests = _names_tests(rng)
        run = b"\0".join(_blob(rng, b"aAb.~1 \xc3\xa9", 5) for _ in range(rng.randint(1, 5)))
        tests_size = rng.choice((len(tests), len(tests), rng.randint(0, len(tests)), -1,
                                 INT64_MIN))
        run_size = rng.choice((len(run), len(run), rng.randint(0, len(run)), -1, INT64_MIN))
        answer = lib.corral_names_clear(tests, tests_size, run, run_size)
        if tests_size < 0 or run_size < 0:
            assert answer == -1 and _errno_is_einval()
            continue
        expected = _names_clear_model(tests[:tests_size], run[:run_size])
        assert answer == expected, (tests[:tests_size], run[:run_size])
        if expected == -1:
            assert _errno_is_einval()
    for tests, tests_size, run, run_size in ((ffi.NULL, 3, b"a", 1), (b"n\x00\x01a", 4,
                                                                      ffi.NULL, 1)):
        assert lib.corral_names_clear(tests, tests_size, run, run_size) == -1
        assert _errno_is_einval()
    # NULL with a size of 0: no tests, no names (one empty name, met by an empty exact name)
    assert lib.corral_names_clear(ffi.NULL, 0, b"a", 1) == 1
    assert lib.corral_names_clear(b"n\x00\x00", 3, ffi.NULL, 0) == 0
    assert lib.corral_names_clear(b"n\x00\x01a", 4, ffi.NULL, 0) == 1


# -- corral_walk_open (walk.cdef) -------------------------------------------------------------

WALK_FLAGS = (os.O_ACCMODE | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
              | os.O_DIRECTORY | getattr(os, "O_NOATIME", 0) | getattr(os, "O_LARGEFILE", 0))
WALK_PATHS = [b"file", b"sub", b"sub/inner", b"sub/missing", b"link", b"link/x", b"fifo",
              b"hard", b"empty", b"missing", b"missing/x", b"file/x", b"sub//inner",
              b"sub/./inner", b"sub/../file", b"./file", b"sub/", b"/etc", b".", b"..", b"",
              b"sub/inner/", b"a" * 300, b"sub/" + b"b" * 256, b"x/" * 2100]


def _walk_model(root_fd: int, path: bytes, flags: int, root_error: int = 0
                ) -> tuple[int, int] | int:
    """Root.open's walk of a plain path, as walk.cdef says, with the os
    module: each directory ``O_PATH|O_DIRECTORY|O_NOFOLLOW`` in the one
    before, the final name with ``flags`` and the walk's own bits, a
    regular file or a live directory only; the result's identity or an
    errno.  (The check of the result, beneath the root, holds here: no
    directory moves.)  ``root_error``: what the first open answers, for a
    root fd that is no directory's."""
    if (flags & ~WALK_FLAGS) or (flags & os.O_ACCMODE) == os.O_ACCMODE or not path \
            or len(path) >= 4096 or b"\0" in path:
        return errno.EINVAL
    names = path.split(b"/")
    top, opened = root_fd, []
    try:
        for name in names:
            if name in (b"", b".", b".."):
                return errno.EINVAL
            last = len(opened) == len(names) - 1
            if root_error and not opened:
                return root_error
            try:
                fd = os.open(name, (flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY) if last
                             else O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
            except OSError as exc:
                return exc.errno
            opened.append(fd)
            top = fd
        info = os.fstat(top)
        kind = info.st_mode & 0o170000
        if not (kind == 0o100000 or (kind == 0o040000 and info.st_nlink > 0)):
            return errno.EINVAL
        return info.st_dev, info.st_ino
    finally:
        for fd in opened:
            os.close(fd)


@pytest.mark.skipif(not O_PATH or not os.path.isdir("/proc/self/fd"),
                    reason="the walk in one call is Linux's (O_PATH, /proc/self/fd)")
def test_walk_open_at_and_past_every_edge(native, tree):
    """corral_walk_open against the os module's walk: paths plain and not
    (empty names, '.', '..', a leading or trailing '/', too long), through
    links, files and FIFOs, lengths short of and past the path (C reads to
    its NUL), flags the walk takes and others, the root's kernel name and
    identity right, wrong (the check falls back on two names: the same
    answer) or NULL, negative and closed fds (EINVAL for what is outside
    the contract)."""
    fd, path = tree
    proc = os.open("/proc/self/fd", O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        name = os.readlink(b"%d" % fd, dir_fd=proc)
        file_fd = os.open(path / "file", os.O_RDONLY | os.O_CLOEXEC)
        rng = random.Random(36)
        try:
            for _ in range(ITERATIONS * 2):
                walked = rng.choice(WALK_PATHS)
                length = rng.choice((len(walked),) * 4 + (max(len(walked) - 1, 0), len(walked) + 1,
                                     0, 4095, 4096, 2**63))
                flags = rng.choice((os.O_RDONLY, os.O_RDONLY | os.O_DIRECTORY, os.O_WRONLY,
                                    os.O_RDWR, os.O_RDONLY | getattr(os, "O_NOATIME", 0)))
                if rng.random() < 0.3:
                    flags = _flags(rng)
                root_fd = rng.choice((fd,) * 6 + (-1, INT_MIN, 10_000, file_fd))
                proc_fd = rng.choice((proc,) * 6 + (-1, INT_MIN))
                root = rng.choice(((name, info.st_dev, info.st_ino),) * 4 + (
                    (b"/nowhere", info.st_dev, info.st_ino), (name, 0, 0), (ffi.NULL, 0, 0)))
                got = lib.corral_walk_open(root_fd, walked, length, flags, proc_fd, *root)
                if proc_fd < 0 or root[0] == ffi.NULL or length != len(walked):
                    expected: tuple[int, int] | int = errno.EINVAL
                else:
                    expected = _walk_model(fd, walked, flags, 0 if root_fd == fd else
                                           errno.ENOTDIR if root_fd == file_fd else errno.EBADF)
                if isinstance(expected, int):
                    assert got == -1 and ffi.errno == expected, (walked, length, flags, root_fd,
                                                                 proc_fd, root, ffi.errno)
                else:
                    assert got >= 0, (walked, flags, ffi.errno)
                    there = os.fstat(got)
                    os.close(got)
                    assert (there.st_dev, there.st_ino) == expected, walked
        finally:
            os.close(file_fd)
    finally:
        os.close(proc)


# -- listings ------------------------------------------------------------------------------

NAMES = [b"file", b"sub", b"link", b"fifo", b"hard", b"empty", b"binary", b"missing", b"",
         b".", b"..", b"sub/inner", b"/etc", b"sub/", b"a" * 300]


def test_list_dir_and_list_at_at_every_edge(native, tree):
    fd, _path = tree
    rng = random.Random(4)
    for _ in range(ITERATIONS):
        room = rng.randint(0, 200)
        buf = ffi.new("char[]", max(room, 1))
        size = rng.choice((room, room, rng.randint(0, room), -1, INT64_MIN))
        counts = ffi.new("int64_t[3]")
        target = rng.choice((fd, fd, -1, 10_000))
        low = lib.corral_list_dir(target, buf, size, counts)
        if size < 0:
            assert low == -1 and _errno_is_einval()
        elif low >= 0:
            assert 0 <= low <= counts[1] <= size
        else:
            assert low in (-1, -2)
        name = rng.choice(NAMES)
        flags = _flags(rng)
        counts[2] = 12345
        low = lib.corral_list_at(fd, name, flags, buf, size, counts)
        opened = counts[2]
        assert opened != 12345
        if low == -1:
            assert opened == -1
        else:
            assert low == -2 or 0 <= low <= size
            assert name in (b"sub",), name  # only a directory that is one name is listed
            os.close(opened)


def test_list_at_refuses_what_is_not_one_name_or_a_listing_flag(native, tree):
    fd, _path = tree
    buf = ffi.new("char[]", 4096)
    counts = ffi.new("int64_t[3]")
    for name in (b"", b".", b"..", b"sub/", b"sub/inner", b"/etc"):
        assert lib.corral_list_at(fd, name, os.O_RDONLY, buf, 4096, counts) == -1
        assert _errno_is_einval() and counts[2] == -1
    for flags in (os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_TRUNC, -1):
        assert lib.corral_list_at(fd, b"sub", flags, buf, 4096, counts) == -1
        assert _errno_is_einval() and counts[2] == -1
    # O_NOFOLLOW and O_DIRECTORY are added: a symlink to a directory is not listed
    os.symlink("sub", os.path.join(_path, "dirlink"))
    assert lib.corral_list_at(fd, b"dirlink", os.O_RDONLY, buf, 4096, counts) == -1
    assert ffi.errno in (errno.ELOOP, errno.ENOTDIR)
    assert lib.corral_list_at(fd, b"file", os.O_RDONLY, buf, 4096, counts) == -1
    assert ffi.errno == errno.ENOTDIR


def test_list_below_at_and_past_every_edge(native, tree):
    """corral_list_below (search.cdef): a left directory's check, then one
    openat2 and a listing.  Only a directory beneath the root, reached
    without a symlink, is listed; a left directory not shown beneath stops
    the call before any open; nothing stays open but a listed fd."""
    fd, path = tree
    rng = random.Random(8)
    proc = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY) \
        if os.path.isdir("/proc/self/fd") else -1
    sub = os.open(path / "sub", os.O_RDONLY | os.O_DIRECTORY)
    info = os.stat(path)
    names = [os.fsencode(os.path.realpath(path)), b"/nowhere", None]
    beneath = {(info.st_dev, info.st_ino),
               (os.stat(path / "sub").st_dev, os.stat(path / "sub").st_ino)}
    try:
        for _ in range(ITERATIONS):
            room = rng.randint(0, 200)
            buf = ffi.new("char[]", max(room, 1))
            size = rng.choice((room, room, rng.randint(0, room), -1, INT64_MIN))
            counts = ffi.new("int64_t[4]")
            name = rng.choice(NAMES + [b"sub/../sub", b"../" + path.name.encode() + b"/sub"])
            length = rng.choice((len(name), len(name), rng.randint(0, len(name) + 2), -1,
                                 INT64_MIN))
            resolve = rng.choice((0x08 | 0x04 | 0x02, 0x08, 0, rng.choice(RESOLVE_BITS)))
            left = rng.choice((-1, -1, sub, fd, 10_000))
            left_path = rng.choice((b"sub", b"file", b""))
            left_len = rng.choice((len(left_path), len(left_path), -1, len(left_path) + 1))
            root_name = rng.choice(names)
            # corral_dir_above_is (search.cdef): only the root one level above sub
            held, depth = rng.choice((sub, fd, -1, 10_000)), _edge(rng, 1, 128)
            ids = rng.choice(((info.st_dev, info.st_ino), (info.st_dev, info.st_ino + 1)))
            assert lib.corral_dir_above_is(held, depth, *ids) == \
                int(held == sub and depth == 1 and ids[1] == info.st_ino)
            low = lib.corral_list_below(fd, name, length, _flags(rng), resolve, left,
                                        left_path, left_len, proc,
                                        ffi.NULL if root_name is None else root_name,
                                        info.st_dev, info.st_ino, buf, size, counts)
            opened = counts[2]
            left_bad = left >= 0 and (left_len <= 0 or left_len != len(left_path))
            if size < 0 or length <= 0 or length != len(name) or left_bad or \
                    not resolve & 0x08:  # never without RESOLVE_BENEATH
                assert (low, opened) == (-1, -1) and _errno_is_einval()
                continue
            if low == -4:  # the left directory not shown: nothing opened
                assert left >= 0 and counts[3] != 1 and opened == -1
            elif low in (-1, -3):
                assert opened == -1
            else:
                assert low == -2 or 0 <= low <= counts[1] <= size
                there = os.fstat(opened)
                os.close(opened)
                # the root or its one directory: nothing else is beneath
                assert (there.st_dev, there.st_ino) in beneath, name
                assert left < 0 or counts[3] == 1
    finally:
        os.close(sub)
        if proc >= 0:
            os.close(proc)


def test_list_sized_at_every_edge(native, tree):
    fd, _path = tree
    rng = random.Random(5)
    for _ in range(ITERATIONS):
        room, slots = rng.randint(0, 200), rng.randint(0, 12)
        names = ffi.new("char[]", max(room, 1))
        codes = ffi.new("int64_t[]", max(slots, 1))
        names_size = rng.choice((room, rng.randint(0, room), -1, INT64_MIN))
        codes_size = rng.choice((slots, rng.randint(0, slots), -1, INT64_MIN))
        count = ffi.new("int64_t[1]")
        used = lib.corral_list_sized(rng.choice((fd, fd, -1)), names, names_size, codes,
                                     codes_size, count)
        if names_size < 0 or codes_size < 0:
            assert used == -1 and _errno_is_einval()
        elif used >= 0:
            assert used <= names_size and 0 <= count[0] <= codes_size
        else:
            assert used in (-1, -2)


# -- corral_scan_files -----------------------------------------------------------------------

def test_scan_files_at_and_past_every_edge(native, tree):
    fd, _path = tree
    rng = random.Random(6)
    statuses = {lib.CORRAL_SCAN_ABSENT, lib.CORRAL_SCAN_OPEN, lib.CORRAL_SCAN_BINARY,
                lib.CORRAL_SCAN_SPECIAL, lib.CORRAL_SCAN_HARDLINK, lib.CORRAL_SCAN_OPEN_ERROR,
                lib.CORRAL_SCAN_READ_ERROR}
    for _ in range(ITERATIONS):
        chosen = [rng.choice(NAMES) for _ in range(rng.randint(0, 5))]
        blob = b"".join(name + b"\0" for name in chosen) + (b"tail" if rng.random() < 0.2 else b"")
        names = ffi.new("char[]", blob) if blob else ffi.new("char[]", 1)
        names_size = rng.choice((len(blob), len(blob), rng.randint(0, len(blob)), -1))
        rows = max(len(chosen), 1)
        count = rng.choice((len(chosen), rng.randint(0, rows), -1, INT64_MIN))
        needle = rng.choice((b"needle", b"n", b"", b"absent!"))
        nlen = rng.choice((len(needle), rng.randint(0, len(needle)), -1, INT64_MIN))
        sniff = rng.choice((0, 1, 8, 4096, -1, INT64_MAX))
        room = rng.choice((1, 2, 7, 64, 4096))
        buf = ffi.new("char[]", room)
        bufsize = rng.choice((room, rng.randint(0, room), -1))
        budget = rng.choice((0, 1, 10, 1 << 20, -1, INT64_MAX))
        out = ffi.new("int64_t[]", 4 * rows)
        consumed = ffi.new("int64_t[1]")
        done = lib.corral_scan_files(fd, names, names_size, count, needle, nlen, sniff,
                                     rng.randint(0, 1), buf, bufsize, budget, out, consumed)
        invalid = (names_size < 0 or count < 0 or nlen < 0 or sniff < 0 or bufsize < 1
                   or budget < 0)
        if invalid:
            assert done == -1 and _errno_is_einval()
            continue
        if done == -1:  # names held no whole name
            assert count > 0 and b"\0" not in blob[:names_size] and _errno_is_einval()
            continue
        assert 0 <= done <= count and 0 <= consumed[0] <= names_size
        assert consumed[0] == sum(len(name) + 1 for name in chosen[:done])
        for i in range(done):
            status, value = out[4 * i], out[4 * i + 1]
            assert status in statuses
            if status == lib.CORRAL_SCAN_OPEN:
                os.close(value)
            name = chosen[i]
            if name in (b"", b".", b"..") or b"/" in name:
                assert (status, value) == (lib.CORRAL_SCAN_OPEN_ERROR, errno.EINVAL), name


# -- the calls that take open flags and modes -------------------------------------------------

PATHS = [b"file", b"new", b"sub", b"sub/new", b"link", b"fifo", b"missing/x", b"", b"."]


def test_open_calls_allow_listed_flags_and_modes_only(native, tree):
    fd, path = tree
    rng = random.Random(7)
    allowed = 0
    for flag in ("O_ACCMODE", "O_CREAT", "O_EXCL", "O_NOCTTY", "O_TRUNC", "O_APPEND",
                 "O_NONBLOCK", "O_DIRECTORY", "O_NOFOLLOW", "O_CLOEXEC", "O_SYNC", "O_DSYNC",
                 "O_PATH", "O_TMPFILE", "O_NOATIME", "O_DIRECT", "O_LARGEFILE"):
        allowed |= getattr(os, flag, 3 if flag == "O_ACCMODE" else 0)
    for _ in range(ITERATIONS):
        name = rng.choice(PATHS)
        # O_NONBLOCK always: these thin wrappers would wait on the FIFO
        flags = _flags(rng) | os.O_NONBLOCK
        mode = rng.choice((0, 0o600, 0o777, 0o7777, 0o10000, -1, INT_MAX))
        outside = (flags & ~allowed) != 0 or mode < 0 or mode > 0o7777
        opened = lib.corral_openat(fd, name, flags, mode)
        _close_if_fd(opened)
        if outside:
            assert opened == -1 and _errno_is_einval(), (hex(flags), mode)
        resolve = 0
        for _ in range(rng.randint(0, 3)):
            resolve |= rng.choice(RESOLVE_BITS)
        opened = lib.corral_openat2(fd, name, flags & 0xFFFFFFFF, max(mode, 0), resolve)
        _close_if_fd(opened)
        if (flags & 0xFFFFFFFF) & ~allowed or mode > 0o7777 or resolve & ~0x0F:
            assert opened == -1 and _errno_is_einval()
        length = rng.choice((len(name), len(name) + 1, max(len(name) - 1, 0), 4095, 4096,
                             2**64 - 1))
        opened = lib.corral_open_beneath(fd, name, length, flags, mode, 0x08 | 0x02)
        _close_if_fd(opened)
        if outside or length != len(name) or mode & ~0o777:
            assert opened == -1
        step = ffi.new("int *", 7)
        dir_name = rng.choice((b"made", b"", b".", b"..", b"sub/made", b"file"))
        open_flags = rng.choice((O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                 os.O_RDONLY, os.O_WRONLY, os.O_CREAT, _flags(rng)))
        made = lib.corral_create_directory_at(fd, dir_name, mode, open_flags, step)
        _close_if_fd(made)
        dir_allowed = O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | \
            os.O_NOCTTY | getattr(os, "O_NOATIME", 0) | getattr(os, "O_LARGEFILE", 0)
        if (dir_name in (b"", b".", b"..") or b"/" in dir_name or mode < 0 or mode > 0o7777
                or open_flags & ~dir_allowed):
            assert made == -1 and step[0] == 7 and _errno_is_einval(), (dir_name, mode)
        if made >= 0:
            os.rmdir(path / dir_name.decode())
        for leftover in ("new", "sub/new"):
            if os.path.isfile(path / leftover):
                os.unlink(path / leftover)
        rename_flags = rng.choice((0, 1, 2, 3, 4, 0x80, 2**32 - 1))
        renamed = lib.corral_renameat(fd, b"empty", fd, b"empty", rename_flags)
        if rename_flags & ~3:
            assert renamed == -1 and _errno_is_einval()


def test_create_directory_hook_of_a_test_build(native, tree, native_test_module):
    """The hook exists in a test build only; set and cleared, it runs
    between the two steps and nowhere else."""
    fd, path = tree
    variant = native_test_module
    seen = []
    callback = variant.ffi.callback("void(int, const char *)",
                                    lambda dirfd, name: seen.append(variant.ffi.string(name)))
    step = variant.ffi.new("int *")
    variant.lib.corral_set_create_directory_hook(callback)
    try:
        made = variant.lib.corral_create_directory_at(fd, b"hooked", 0o700,
                                                      os.O_DIRECTORY | os.O_NOFOLLOW, step)
        assert made >= 0 and seen == [b"hooked"]
        os.close(made)
        assert variant.lib.corral_create_directory_at(fd, b"..", 0o700, 0, step) == -1
        assert seen == [b"hooked"]  # refused before mkdirat: the hook never ran
    finally:
        variant.lib.corral_set_create_directory_hook(variant.ffi.NULL)
    os.rmdir(path / "hooked")


def test_replace_file_contract(native, tmp_path):
    """corral_replace_file at and past its edges: names that are not one
    component, flags that are not a create of its own or not in the
    allow-list, modes past 07777, a NULL buffer with a length: EINVAL with
    nothing made; the rest as its declaration says (0, 1, 2 or -1)."""
    rng = random.Random(0x5EED34)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    create = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    owner = (os.geteuid(), os.getegid())
    try:
        for i in range(ITERATIONS):
            (tmp_path / "f").write_bytes(b"old")
            info = os.lstat(tmp_path / "f")
            tmp = rng.choice((b"t", b"a/b", b"..", b".", b"", b"t" * 300))
            flags = create if rng.random() < 0.5 else _flags(rng)
            mode = rng.choice((0o600, 0o644, 0o7777, 0o10000, -1, 2**31 - 1))
            data = _blob(rng, b"ab\n", 64)
            size = len(data) if rng.random() < 0.8 else rng.choice((0, len(data) // 2))
            answer = lib.corral_replace_file(fd, tmp, b"f", data, size, flags, mode,
                                             owner[0], owner[1], info.st_dev, info.st_ino)
            one_name = tmp not in (b"a/b", b"..", b".", b"")
            fits = (flags & (os.O_ACCMODE | os.O_CREAT | os.O_EXCL)) == \
                (os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            if not one_name or not fits or not 0 <= mode <= 0o7777:
                assert answer == -1 and _errno_is_einval(), (tmp, flags, mode)
            assert answer in (-1, 0, 1, 2)
            if answer == 0:
                assert (tmp_path / "f").read_bytes() == data[:size]
            else:
                assert (tmp_path / "f").read_bytes() == b"old"
            assert sorted(os.listdir(tmp_path)) == ["f"], (i, tmp, flags, mode, answer)
        assert lib.corral_replace_file(fd, b"t", b"f", ffi.NULL, 1, create, 0o600, owner[0],
                                       owner[1], 0, 0) == -1 and _errno_is_einval()
    finally:
        os.close(fd)


def test_replace_hook_of_a_test_build(native, tmp_path, native_test_module):
    """A file swapped between the temporary file's close and the look at the
    name (the test build's hook, in that window): 2, the swapped-in file
    kept, no temporary file left."""
    variant = native_test_module
    f = tmp_path / "f"
    f.write_bytes(b"old")
    os.chmod(f, 0o600)
    info = os.lstat(f)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)

    def swap(dirfd, name):
        other = tmp_path / "other"
        other.write_bytes(b"someone else's")
        os.rename(other, tmp_path / variant.ffi.string(name).decode())

    callback = variant.ffi.callback("void(int, const char *)", swap)
    variant.lib.corral_set_replace_hook(callback)
    try:
        answer = variant.lib.corral_replace_file(
            fd, b".f.x.corral-tmp", b"f", b"mine", 4,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
            os.geteuid(), os.getegid(), info.st_dev, info.st_ino)
    finally:
        variant.lib.corral_set_replace_hook(variant.ffi.NULL)
        os.close(fd)
    assert answer == 2
    assert f.read_bytes() == b"someone else's" and sorted(os.listdir(tmp_path)) == ["f"]
