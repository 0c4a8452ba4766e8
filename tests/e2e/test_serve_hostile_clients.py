"""Hostile clients against ``corral serve``: the server always answers, its
memory stays bounded, several roots are routed right.  Raw lines on the wire
(:class:`RawClient`), one server per test."""

from __future__ import annotations

import contextlib
import json
import threading
import time

import pytest

from corral.tools import Toolbox, Workspace
from .helpers import PipedServer, RawClient, serve_command, serve_roots_command


@pytest.fixture
def root(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    return tmp_path


def _still_answers(client: RawClient) -> None:
    answer = client.request("ping", timeout=5)
    assert answer.get("result") == {}, answer


@contextlib.contextmanager
def _server(command: list[str]):
    """A RawClient whose server is killed at the end (a wedged one never
    exits on end of input)."""
    client = RawClient(command)
    try:
        yield client
    finally:
        client.proc.kill()
        client.proc.wait()


@pytest.mark.parametrize("request_id", [{"x": 1}, [1]], ids=["object", "array"])
def test_a_cancel_naming_an_unhashable_id_is_ignored(root, request_id):
    """notifications/cancelled with requestId an object or an array: the
    reader thread dies on a TypeError (dict lookup) and the server never
    answers again, though the process lives on."""
    with _server(serve_command(root)) as client:
        client.initialize()
        client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": request_id, "reason": "redteam"}})
        _still_answers(client)


def test_cancels_with_other_odd_ids_are_ignored(root):
    """Other odd ids are ignored too, and the server keeps answering."""
    with _server(serve_command(root)) as client:
        client.initialize()
        for odd in (None, 1.5, True, "never-sent", 10**30):
            client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": odd}})
        client.send({"jsonrpc": "2.0", "method": "notifications/cancelled"})
        _still_answers(client)


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _flood(client: RawClient, calls: int, content: str, quiet: float) -> tuple[int, float]:
    """Send ``calls`` write_file calls of ``content`` from a thread (a send
    blocks once the server stops reading), sampling the server's RSS every
    20 ms until they are all sent and ``quiet`` seconds more, or until no
    send has gone through for 3 s; (calls sent, RSS growth's peak in MiB)."""
    start = _rss_mib(client.proc.pid)
    sent = [0]

    def send() -> None:
        for i in range(calls):
            line = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "write_file",
                                          "arguments": {"path": f"w{i}", "content": content}}})
            try:
                client.send_bytes(line.encode() + b"\n")
            except OSError:  # the test is over: the server was killed
                return
            sent[0] += 1

    threading.Thread(target=send, daemon=True).start()
    peak, progress, last = 0.0, time.monotonic(), 0
    done_at: float | None = None
    while True:
        now = time.monotonic()
        peak = max(peak, _rss_mib(client.proc.pid) - start)
        if sent[0] != last:
            progress, last = now, sent[0]
        if done_at is None and last == calls:
            done_at = now
        if (done_at is not None and now - done_at >= quiet) or now - progress >= 3.0:
            return last, peak
        time.sleep(0.02)


_BIG = "a" * (15 * 1024 * 1024)  # 15 MiB: a line under the 16 MiB limit, over write_file's 8


@pytest.mark.parametrize("reads", [True, False], ids=["client-reads", "client-never-reads"])
def test_a_flood_of_large_calls_cannot_grow_memory_by_a_gigabyte(root, reads):
    """24 write_file calls of 15 MiB each (every one refused TOO_LARGE, quickly),
    behind 8 read_file calls whose answers are larger than a pipe.  Each call's
    line is read, decoded and parsed; its copies must be gone once it is
    refused, and no more than the server's budget of large arguments may be
    alive at once, or 24 x 15 MiB (and several copies of each) is held: +600 MiB
    and more with a client that reads if a refusal's traceback holds its
    frames, the content and its encoding, in a cycle until a gc pass; +80 with
    one that never reads.  The peak of the server's RSS growth while the calls
    come in must stay under 192 MiB either way.  The client that reads gets
    every answer; the one that never reads fills the pipe, so the server's
    writes block and then its reading (the client's sends block too)."""
    (root / "big.txt").write_text(("x" * 100 + "\n") * 2500)  # answers larger than a pipe
    client = RawClient(serve_command(root), reads=reads)
    try:
        client.send({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                     "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "raw", "version": "0"}}})
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if reads:
            assert "result" in client.answer("init")
        for i in range(8):
            client.send({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
                         "params": {"name": "read_file", "arguments": {"path": "big.txt"}}})
        time.sleep(0.5)
        sent, grown = _flood(client, 24, _BIG, quiet=1.0)
        assert grown < 192, f"the server held {grown:.0f} MiB more, {sent} large calls sent"
        if reads:
            assert sent == 24
            answers = {}
            while len(answers) < 32:
                message = client.reply()
                answers[message["id"]] = message
            for i in range(24):
                refusal = answers[i]["result"]["structuredContent"]
                assert refusal["code"] == "TOO_LARGE", refusal
    finally:
        client.proc.kill()
        client.proc.wait()


def test_a_doubled_slash_after_the_root_name_is_that_root(tmp_path):
    """With several roots, ``ws//a.txt`` is refused OUTSIDE_ROOT ("an absolute
    path outside the root"): the root name is stripped and '/a.txt' is left.
    One root answers the same spelling fine, so does ``ws/./a.txt``."""
    first, second = tmp_path / "one" / "ws", tmp_path / "two" / "lib"
    for where in (first, second):
        where.mkdir(parents=True)
        (where / "a.txt").write_text(f"in {where.parent.name}\n")
    with _server(serve_roots_command([first, second])) as client:
        client.initialize()
        answer = client.request("tools/call", {"name": "read_file",
                                               "arguments": {"path": "ws//a.txt"}})
        assert answer["result"].get("isError") is not True, answer
        assert "in one" in json.dumps(answer)


def test_the_reader_parses_no_large_call_past_its_budget(tmp_path):
    """The bound on large calls held, in process: while the large calls already queued
    or running hold ``held_limit`` bytes (here the first waits for the
    host, so every later write waits behind it), the reader parses no new
    large line; the client's sends wait instead.  Once the host answers,
    every call runs and is answered."""
    mib = 1 << 20
    gate = threading.Event()
    with Toolbox(tmp_path, authorize=lambda request: gate.wait(60)) as box:
        piped = PipedServer(Workspace({"root": box}), held_limit=4 * mib)
        try:
            piped.request("init", "initialize", protocolVersion="2025-11-25", capabilities={},
                          clientInfo={"name": "raw", "version": "0"})
            piped.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            content = "a" * (2 * mib)

            def send() -> None:
                for i in range(6):
                    piped.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                "params": {"name": "write_file",
                                           "arguments": {"path": f"w{i}", "content": content}}})
            sender = threading.Thread(target=send, daemon=True)
            sender.start()
            time.sleep(1.0)
            server = piped.server
            assert 0 < server.held_bytes <= 4 * mib + len(content) + 4096, server.held_bytes
            assert sender.is_alive() and len(server._scheduler) <= 2
            gate.set()
            answers = [piped.answer(i) for i in range(6)]
            assert all(a["result"].get("isError") is not True for a in answers), answers
            sender.join(10)
            assert server.held_bytes == 0
        finally:
            gate.set()
            piped.close()



def test_queued_calls_are_counted_by_what_they_parse_into(tmp_path):
    """A call line of 400 KiB of ``{}`` parses into some 20 times its
    length.  Counted by their lines, 40 such calls waiting behind a call the
    host holds all fitted the queue's 64 MiB budget (about 300 MiB parsed);
    counted by what they hold, the queue stops at the budget and the rest
    are answered "server busy" at once."""
    gate = threading.Event()
    (tmp_path / "a.txt").write_text("a\n")
    with Toolbox(tmp_path, authorize=lambda request: gate.wait(60)) as box:
        piped = PipedServer(Workspace({"root": box}))
        try:
            piped.request("init", "initialize", protocolVersion="2025-11-25", capabilities={},
                          clientInfo={"name": "raw", "version": "0"})
            piped.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            piped.send({"jsonrpc": "2.0", "id": "held", "method": "tools/call",
                        "params": {"name": "write_file",
                                   "arguments": {"path": "w", "content": "x"}}})
            junk = [{}] * (100 * 1024)  # "{}, " each: a 400 KiB line
            for i in range(40):
                piped.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                            "params": {"name": "read_file",
                                       "arguments": {"path": "a.txt", "junk": junk}}})
            piped.request("last", "ping")  # answered once every line before it was taken
            busy = {m["id"] for m in piped.notes if m.get("error", {}).get("code") == -32000}
            scheduler = piped.server._scheduler
            queued = len(scheduler) - 1  # the held write runs; the others wait behind it
            assert scheduler.waiting_bytes <= scheduler.byte_limit
            assert 0 < queued < 40 and len(busy) == 40 - queued, (queued, len(busy))
            gate.set()
            ran = [piped.answer(i) for i in range(40) if i not in busy]
            assert all(a["result"]["isError"] for a in ran)  # "junk" is no argument
        finally:
            gate.set()
            piped.close()
