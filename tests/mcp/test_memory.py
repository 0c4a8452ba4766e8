"""Large calls must not flood the server's memory, copy by copy: what one large
call costs in memory while it is read, decoded and refused (tracemalloc's
peak of what is allocated on top of the call's own data), and that nothing
of it outlives the call.  The flood end to end (RSS of ``corral serve``) is
in tests/e2e/test_serve_hostile_clients.py."""

from __future__ import annotations

import gc
import json
import tracemalloc
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from corral.mcp import StdioServer, _wire
from corral.tools import Refusal, Toolbox, Workspace

MIB = 1 << 20


@pytest.fixture
def box(tmp_path) -> Iterator[Toolbox]:
    (tmp_path / "a.txt").write_text("hello\n")
    with Toolbox(tmp_path) as toolbox:
        yield toolbox


def _peak(action: Callable[[], Any]) -> tuple[Any, int]:
    """What ``action`` returns, and the peak of what it allocated beyond
    what was allocated before it (bytes)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = action()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("tool,args", [
    ("write_file", {"path": "w.txt", "content": "a" * (9 * MIB)}),  # TOO_LARGE
    ("read_file", {"path": "missing.txt"}),  # an OSError classified into NOT_FOUND
    ("edit_file", {"path": "a.txt", "oldString": "absent" * MIB, "newString": "b"}),
], ids=["too-large", "os-error", "no-match"])
def test_a_refusal_leaves_no_garbage_cycle(box, tool, args):
    """A refusal was returned with its traceback, whose frames (the tool's
    locals: a refused write_file's 9 MiB content and its encoding) held the
    refusal back through the caller's frame: a cycle that only a gc pass
    frees.  Nothing of a refused call may be left for the collector."""
    assert box.call(tool, args)["ok"] is False  # a first call imports what it needs
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)  # what a pass finds is kept in gc.garbage, to look at
        envelope = box.call(tool, args)
        assert envelope["ok"] is False, envelope
        del envelope
        gc.collect()
        # (another thread of the test runner may leave garbage of its own meanwhile)
        ours = [o for o in gc.garbage if isinstance(o, Refusal) or (
            isinstance(o, types.FrameType) and "corral" in o.f_code.co_filename)]
        assert not ours, ours
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


def test_an_oversized_write_is_refused_without_encoding_it(box):
    """write_file measured the content by encoding it (a 12 MiB copy for a
    12 MiB text) before refusing it TOO_LARGE.  (Other text is measured a
    slice at a time; the argument check's own test for lone surrogates
    still encodes a text that is not ASCII.)"""
    content = "a" * (12 * MIB)
    envelope, peak = _peak(lambda: box.call("write_file", {"path": "w.txt", "content": content}))
    assert envelope["code"] == "TOO_LARGE", envelope
    assert envelope["details"]["bytes"] == len(content)
    assert peak < MIB, peak
    wide = "\u00e9" * (6 * MIB)
    envelope = box.call("write_file", {"path": "w.txt", "content": wide})
    assert envelope["code"] == "TOO_LARGE" and envelope["details"]["bytes"] == 12 * MIB
    assert not box.root.exists("w.txt")


def test_a_content_at_the_limit_is_still_written(box):
    """Measuring in place counts UTF-8 bytes as the encoding would."""
    limit = box.limits.max_write_bytes
    content = "\u00e9" * (limit // 2)  # two bytes each: exactly the limit
    assert box.call("write_file", {"path": "w.txt", "content": content})["ok"] is True
    refused = box.call("write_file", {"path": "v.txt", "content": content + "x"})
    assert refused["code"] == "TOO_LARGE" and refused["details"]["bytes"] == limit + 1


def _server(box: Toolbox) -> StdioServer:
    return StdioServer(Workspace({"root": box}), version="test")


def test_a_large_line_is_read_in_place(box, tmp_path):
    """readline joined a large line from 64 KiB chunks (the chunks and the
    join: twice the line) and then copied it to drop the newline (three
    times).  It grows one buffer now: the peak is the line and little more;
    its carriage return and newline are cut off, the next line follows."""
    body = b'{"x":"' + b"a" * (12 * MIB) + b'"}'
    path = tmp_path / "lines"
    path.write_bytes(body + b"\r\n" + b'{"next":1}\n' + body)
    server = _server(box)
    with open(path, "rb", buffering=1 << 16) as infile:
        line, peak = _peak(lambda: server._read_line(infile))
        assert isinstance(line, bytearray) and line == body
        assert peak < len(body) * 1.2 + 2 * MIB, peak / MIB
        assert server._read_line(infile) == b'{"next":1}'
        assert server._read_line(infile) == body  # the last line, without a newline
        assert server._read_line(infile) is None


def test_a_large_line_over_the_limit_is_not_held(box, tmp_path):
    body = b'{"jsonrpc":"2.0","id":7,"params":{"x":"' + b"a" * (3 * MIB) + b'"}}'
    path = tmp_path / "lines"
    path.write_bytes(body + b"\n" + b'{"next":1}\n')
    server = StdioServer(Workspace({"root": box}), version="test", max_line_bytes=2 * MIB)
    with open(path, "rb", buffering=1 << 16) as infile:
        over, peak = _peak(lambda: server._read_line(infile))
        assert over.size == len(body) and _wire.id_of_oversized(over.head, over.tail) == 7
        assert peak < 1.2 * 2 * MIB + 2 * MIB, peak / MIB  # the limit and a chunk, not the line
        assert server._read_line(infile) == b'{"next":1}'


def test_a_large_line_is_not_held_while_it_is_parsed():
    """decode held the line's bytes, its text and what it parsed into at
    once; a bytearray (how the server holds a large line) is emptied once
    it is text, so the peak is the text and what it parses into."""
    content = "a" * (12 * MIB)
    tracemalloc.start()
    try:
        line = bytearray(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                     "params": {"arguments": {"content": content}}}).encode())
        size = len(line)
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        message = _wire.decode(line)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert isinstance(message, _wire.Request) and message.size == size
    assert message.params["arguments"]["content"] == content
    assert len(line) == 0
    assert peak < 1.2 * size, peak / MIB  # the text, then the string in place of the line
