"""End-to-end helpers: ``corral serve`` as a subprocess, driven by the
official SDK clients (1.x and 2.x, each in its own venv), by MCP Inspector's
CLI, or line by line (:class:`RawClient`); ``corral`` commands run captured.

The conformance clients are made by ``scripts/setup_conformance.sh`` (run by
``scripts/test.sh``) under ``.conformance/`` or ``$CORRAL_CONFORMANCE_DIR``.
A test that needs one that is missing fails and says how to make it.
"""

from __future__ import annotations

import json
import os
import queue
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import pytest

from ..helpers import BACKEND_CONFIGS, BACKEND_IDS, backend_configs  # noqa: F401  (the e2e tests import them from here)
from corral.hosts import render
from corral.mcp import StdioServer
from corral.tools import Workspace

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
#: the programs these tests start in their own processes (servers, SDK clients)
PROGRAMS = HERE / "programs"
CONFORMANCE = Path(os.environ.get("CORRAL_CONFORMANCE_DIR") or REPO / ".conformance")
SERVE_TIMEOUT = 60  # seconds for one request; generous, CI machines are slow
SDKS = ("sdk2", "sdk1")
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SETUP_HINT = "run: bash scripts/setup_conformance.sh"


def serve_command(root: Path | str, *options: str) -> list[str]:
    return [sys.executable, "-m", "corral.cli", "serve", str(root), *options]


def serve_roots_command(roots: list[Path], *options: str) -> list[str]:
    return [sys.executable, "-m", "corral.cli", "serve", *map(str, roots), *options]


def backend_env(name: str | None = None, fast: bool | None = None) -> dict[str, str]:
    """The environment for a server: this one, with a backend forced when given."""
    env = dict(os.environ)
    if name is not None:
        env["CORRAL_BACKEND"] = name
    if fast is not None:
        env["CORRAL_OPENAT2"] = "1" if fast else "0"
    return env


def sdk_python(sdk: str) -> str:
    python = CONFORMANCE / sdk / "bin" / "python"
    if not python.exists():
        pytest.fail(f"the {sdk} conformance venv is missing ({python}); {SETUP_HINT}")
    return str(python)


def inspector_entry() -> list[str]:
    entry = CONFORMANCE / "node" / "node_modules" / "@modelcontextprotocol" / "inspector" \
        / "clients" / "launcher" / "build" / "index.js"
    if not entry.exists():
        pytest.fail(f"MCP Inspector is missing ({entry}); {SETUP_HINT}")
    return ["node", str(entry), "--cli"]


class _Lines:
    """Lines of a child's stdout, read by a thread, taken with a timeout."""

    def __init__(self, stream: Any) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: Any) -> None:
        try:
            for line in stream:
                self._queue.put(line)
        except (OSError, ValueError):  # the test closed the stream: the end of it
            pass
        self._queue.put(None)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def get(self, timeout: float) -> Any:
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no line within {timeout} s") from None


class McpSession:
    """``corral serve`` (``command``) driven by one SDK line through
    tests/e2e/programs/sdk_driver.py, with blocking methods."""

    def __init__(self, command: list[str], *, sdk: str = "sdk2", env: dict[str, str] | None = None,
                 cwd: str | None = None, protocol_version: str | None = None,
                 roots: list[str] | None = None, mode: str = "auto") -> None:
        self.sdk = sdk
        self.proc = subprocess.Popen([sdk_python(sdk), str(PROGRAMS / "sdk_driver.py")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     encoding="utf-8", bufsize=1)
        self._lines = _Lines(self.proc.stdout)
        info = self.request("connect", command=command, env=env, cwd=cwd,
                            protocol_version=protocol_version, roots=roots, mode=mode)
        self.protocol_version: str = info["protocol_version"]
        self.server_info: dict[str, Any] = info["server_info"]
        self.capabilities: dict[str, Any] = info["capabilities"]
        self.instructions: str | None = info["instructions"]

    def send(self, op: str, **fields: Any) -> dict[str, Any]:
        """One driver command; its answer, ``ok`` or not."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        line = self._lines.get(SERVE_TIMEOUT + 30)
        if line is None:
            raise RuntimeError(f"the {self.sdk} driver exited ({self.proc.poll()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """One driver command that must succeed."""
        answer = self.send(op, **fields)
        if not answer["ok"]:
            raise RuntimeError(f"{op} failed through {self.sdk}: {answer['error']}")
        return answer

    def list_tools(self) -> list[dict[str, Any]]:
        return self.request("list_tools")["tools"]  # type: ignore[no-any-return]

    def call(self, name: str, arguments: Any = None, **options: Any) -> dict[str, Any]:
        """The ``CallToolResult`` as JSON (``schema_errors`` checked: a
        success's structured content validates against its outputSchema)."""
        answer = self.request("call", name=name, arguments=arguments, **options)
        assert not answer["schema_errors"], (name, answer["schema_errors"])
        result: dict[str, Any] = answer["result"]
        result["_progress"] = answer["progress"]
        return result

    def envelope(self, name: str, arguments: Any = None) -> dict[str, Any]:
        """Call, check the result's shape, and return the envelope it carries
        as structured content (successes and refusals alike), its text being
        the compact rendering a model is shown; ``isError`` exactly when it
        is a refusal."""
        return envelope_of(self.call(name, arguments), name)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("close")
                self.proc.wait(timeout=20)
            except (OSError, TimeoutError, subprocess.TimeoutExpired, RuntimeError):
                self.proc.kill()
                self.proc.wait()


def envelope_of(result: dict[str, Any], tool: str | None = None) -> dict[str, Any]:
    """The envelope a ``CallToolResult`` (as JSON) carries, its shape checked:
    one text block (then one image block per image the envelope holds), the
    envelope as structured content, and, given the ``tool`` called, the text
    is :func:`corral.hosts.render` of it (what a model is shown)."""
    first, *images = result["content"]
    assert first["type"] == "text", result
    assert all(block["type"] == "image" for block in images), result
    envelope = result.get("structuredContent")
    assert isinstance(envelope, dict) and isinstance(envelope.get("ok"), bool), result
    assert result.get("isError", False) is (not envelope["ok"]), result
    if not envelope["ok"]:
        assert not images, result
    if tool is not None:
        assert first["text"] == render(tool, envelope), (first["text"], envelope)
    return envelope


class RawClient:
    """``corral serve`` with bytes on its stdin and JSON lines from its
    stdout (read by a thread as they come): for what no well-behaved client
    sends.  With ``reads=False`` nothing ever reads its stdout (a client
    that never reads: the pipe fills and the server's writes block), and
    nothing can be received."""

    def __init__(self, command: list[str], *, env: dict[str, str] | None = None,
                 reads: bool = True) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self._lines = _Lines(self.proc.stdout if reads else iter(()))
        self.stderr: list[bytes] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 0

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def receive(self, timeout: float = SERVE_TIMEOUT) -> dict[str, Any]:
        """The next message the server writes."""
        line = self._lines.get(timeout)
        if line is None:
            raise EOFError(f"the server closed its output ({self.proc.poll()})")
        message: dict[str, Any] = json.loads(line)
        return message

    def reply(self, timeout: float = SERVE_TIMEOUT) -> dict[str, Any]:
        """The next answer (a message with an id and no method); notifications
        meanwhile are kept in :attr:`notifications`."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if "id" in message and "method" not in message:
                return message
            self.notifications.append(message)

    def answer(self, request_id: Any, timeout: float = SERVE_TIMEOUT) -> dict[str, Any]:
        """The answer to ``request_id``; notifications meanwhile are kept in
        :attr:`notifications`, and any other answer fails the test."""
        message = self.reply(timeout)
        assert message["id"] == request_id, (request_id, message)
        return message

    def request(self, method: str, params: dict[str, Any] | None = None,
                timeout: float = SERVE_TIMEOUT) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.answer(self._next_id, timeout)

    def initialize(self, version: str = "2025-11-25",
                   capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = self.request("initialize", {"protocolVersion": version,
                                             "capabilities": capabilities or {},
                                             "clientInfo": {"name": "raw", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> int:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def run_cli(*args: str, input: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m corral.cli ARGS``, captured."""
    return subprocess.run([sys.executable, "-m", "corral.cli", *args], capture_output=True,
                          text=True, input=input, env=env, timeout=timeout)


class PipedServer:
    """A StdioServer on a thread (in this process), with a line client on
    the other ends of its pipes."""

    def __init__(self, workspace: Workspace, **options: Any) -> None:
        server_in, self._to_server = os.pipe()
        self._from_server, server_out = os.pipe()
        self.server = StdioServer(workspace, version="test", **options)
        self._infile = os.fdopen(server_in, "rb")
        self._server_out = server_out
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self._out = os.fdopen(self._from_server, "rb")
        self._hung_up = threading.Event()
        self._lines = _Lines(self._readable_lines())
        self.notes: list[dict[str, Any]] = []

    def _readable_lines(self) -> Iterator[bytes]:
        """The server's lines, polled, so :meth:`hang_up` can stop reading
        and really close the pipe (a read in progress keeps it open)."""
        pending = b""
        while not self._hung_up.is_set():
            ready, _, _ = select.select([self._from_server], [], [], 0.05)
            if not ready:
                continue
            chunk = os.read(self._from_server, 1 << 16)
            if not chunk:
                return
            *lines, pending = (pending + chunk).split(b"\n")
            yield from (line + b"\n" for line in lines)

    def hang_up(self) -> None:
        """Close the reading end: the server's next write fails (EPIPE)."""
        self._hung_up.set()
        self._lines.join(5)
        self._out.close()

    def _serve(self) -> None:
        try:
            self.server.serve(self._infile, self._server_out)
        finally:
            self._infile.close()
            os.close(self._server_out)

    def send(self, message: dict[str, Any]) -> None:
        os.write(self._to_server, json.dumps(message).encode() + b"\n")

    def receive(self, timeout: float = SERVE_TIMEOUT) -> dict[str, Any]:
        line = self._lines.get(timeout)
        if line is None:
            raise EOFError("the server closed its output")
        message: dict[str, Any] = json.loads(line)
        return message

    def answer(self, request_id: Any, timeout: float = SERVE_TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if message.get("id") == request_id and "method" not in message:
                return message
            self.notes.append(message)

    def request(self, request_id: Any, method: str, **params: Any) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return self.answer(request_id)

    def close(self) -> None:
        os.close(self._to_server)
        self.thread.join(30)
        self._hung_up.set()
        self._lines.join(5)
        if not self._out.closed:
            self._out.close()
