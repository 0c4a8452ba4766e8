"""Red-team findings against ``corral serve`` (issue 12: the server always
answers, memory bounded; issue 16: several roots).  Raw lines on the wire
(:class:`RawClient`), one server per test."""

from __future__ import annotations

import contextlib
import json
import time

import pytest

from e2e_support import RawClient, serve_command, serve_roots_command


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
    """Regression: the ids that do not crash it today."""
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


# Finding 22 is open: how much the server holds depends on timing (measured
# here: 24 calls 330-360 MiB steady, 40 calls 59 MiB alone and 661 MiB beside
# the other e2e tests; ~600-1000 before the byte budget); non-strict, since a
# quiet machine passes it now and then.  Kept running so the figure shows.
@pytest.mark.xfail(strict=False, reason="finding 22 open: memory held by a server whose client "
                   "never reads depends on timing (freed memory the allocator keeps); the byte "
                   "budget, writer thread and malloc_trim cut it, not to the bound")
def test_a_client_that_never_reads_cannot_grow_memory_by_a_gigabyte(root):
    """The client sends calls and never reads its answers: once the pipe is
    full the workers block writing, and every later call waits in the
    queue (64 deep) with its arguments parsed: 64 x 16 MiB lines is about
    1 GiB held by the server (measured: +700 MiB after 40).  A budget in
    bytes for queued calls (answered -32000 beyond it) keeps this small."""
    (root / "big.txt").write_text(("x" * 100 + "\n") * 2500)  # answers larger than a pipe
    with _server(serve_command(root)) as client:
        client.initialize()
        start = _rss_mib(client.proc.pid)
        for i in range(8):  # fill the pipe: these answers are never read
            client.send({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
                         "params": {"name": "read_file", "arguments": {"path": "big.txt"}}})
        time.sleep(1.0)
        content = "a" * (15 * 1024 * 1024)
        line = None
        sent = 0
        deadline = time.monotonic() + 60
        while sent < 24 and time.monotonic() < deadline:
            line = json.dumps({"jsonrpc": "2.0", "id": sent, "method": "tools/call",
                               "params": {"name": "write_file",
                                          "arguments": {"path": f"w{sent}", "content": content}}})
            client.send_bytes(line.encode() + b"\n")  # blocks once the server stops reading
            sent += 1
        time.sleep(1.0)
        grown = _rss_mib(client.proc.pid) - start
        assert grown < 192, f"the server holds {grown:.0f} MiB more after {sent} queued calls"


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
