"""The MCP server in-process over a pair of pipes: what the subprocess tests
cannot arrange, such as a workspace that raises, or a client that goes away
in the middle of a call."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Refusal, Toolbox, Workspace, tool_definitions
from .helpers import PipedServer


class _Raising(Workspace):
    def call(self, name: Any, args: Any = None, **options: Any) -> dict[str, Any]:
        raise OSError(2, "No such file or directory", "/host/secret/path")


@pytest.fixture
def box(tmp_path: Path):
    (tmp_path / "a.txt").write_text("a\n")
    with Toolbox(tmp_path) as toolbox:
        yield toolbox


def test_a_workspace_that_raises_gives_internal_and_no_detail(box):
    piped = PipedServer(_Raising({"root": box}))
    try:
        piped.request(0, "initialize", protocolVersion="2025-11-25", capabilities={})
        answer = piped.request(1, "tools/call", name="read_file", arguments={"path": "a.txt"})
    finally:
        piped.close()
    result = answer["result"]
    assert result["isError"] is True
    assert result["structuredContent"] == Refusal.internal().envelope()
    assert result["content"][0]["text"].startswith("INTERNAL: ")
    wire = json.dumps([answer, *piped.notes])
    assert "/host/secret" not in wire and "No such file" not in wire
    logged = [n for n in piped.notes if n.get("method") == "notifications/message"]
    assert logged and logged[0]["params"]["level"] == "error"  # said, without the detail


def test_the_listing_is_what_corral_tools_prints(box):
    piped = PipedServer(Workspace({"root": box}))
    try:
        piped.request(0, "initialize", protocolVersion="2025-11-25", capabilities={})
        listed = piped.request(1, "tools/list")["result"]["tools"]
    finally:
        piped.close()
    assert listed == tool_definitions(box, "mcp")


class _Slow(Workspace):
    """Every call waits for its cancel token (at most 20 s)."""

    stopped = threading.Event()

    def call(self, name: Any, args: Any = None, **options: Any) -> dict[str, Any]:
        token = options["cancel"]
        deadline = time.monotonic() + 20
        while not token.cancelled and time.monotonic() < deadline:
            time.sleep(0.01)
        self.stopped.set()
        return {"ok": False, "code": "DENIED"}


def test_a_client_that_goes_away_cancels_the_running_calls(box):
    workspace = _Slow({"root": box})
    piped = PipedServer(workspace)
    piped.request(0, "initialize", protocolVersion="2025-11-25", capabilities={})
    piped.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "a.txt"}}})
    time.sleep(0.2)
    piped.hang_up()  # nobody reads the answers any more
    piped.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})  # its answer cannot be written
    assert workspace.stopped.wait(10), "the running call was not cancelled"
    os.close(piped._to_server)
    piped.thread.join(10)
    assert not piped.thread.is_alive()


@pytest.mark.parametrize("batch", [False, True])
def test_calls_the_roots_timeout_releases_run_without_another_line(box, batch):
    """The client declares roots and never answers roots/list: at the
    timeout the held calls run, with nothing more read from the client (the
    reader is blocked in its read, and the timer thread is no worker)."""
    piped = PipedServer(Workspace({"root": box}), roots_timeout=0.3)
    try:
        version = "2025-03-26" if batch else "2025-11-25"
        piped.request(0, "initialize", protocolVersion=version, capabilities={"roots": {}})
        piped.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"jsonrpc": "2.0", "id": "held", "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "a.txt"}}}
        if batch:
            os.write(piped._to_server, json.dumps([call]).encode() + b"\n")
        else:
            piped.send(call)
        started = time.monotonic()
        while True:  # the roots/list request and the timeout's log line come first
            message = piped.receive(10)
            if "method" not in message:
                break
        assert time.monotonic() - started < 10  # an order of magnitude over the 0.3 s
        answer = message[0] if batch else message
        assert answer["id"] == "held"
        assert answer["result"]["isError"] is False  # 2025-03-26: no structured content
    finally:
        piped.close()
