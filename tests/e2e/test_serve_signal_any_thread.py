"""A signal sent to ``corral serve`` stops it whichever of its threads the
kernel hands it to.

A signal sent to a process is taken by any one of its threads that does
not block it; Python runs the handler in the main thread only, at its next
bytecode.  The main thread of a server waits, so the wait must end when
another thread took the signal: otherwise the server runs on, the signal
spent.  Here the server's own threads take the signal, deterministically
(``pthread_kill`` of their own thread, tests/e2e/programs/signal_serve.py): the
reader while it imports the tools (after the ``initialize`` answer, or
before a first message that is not ``initialize``) and a worker running a
call.  Real signals to the process at points of the start, and the input
closed while the tools are imported, complete the paths.

Time bounds are hang detectors (see test_serve_lifecycle.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import PROGRAMS, RawClient, serve_command

pytestmark = pytest.mark.usefixtures("signals_as_a_terminal_leaves_them")

BOUND = 3.0  # seconds from the signal (or the hang-up) to the exit, at most
SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
_ids = {"ids": lambda s: signal.Signals(s).name}


def signal_command(root: Path, in_warm: signal.Signals | None = None) -> list[str]:
    named = [in_warm.name] if in_warm is not None else []
    return [sys.executable, str(PROGRAMS / "signal_serve.py"), str(root), *named]


def _exit_status(raw: RawClient, since: float) -> tuple[int, float]:
    try:
        status = raw.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        raw.proc.kill()
        raw.proc.wait()
        pytest.fail(f"still running 30 s on: {b''.join(raw.stderr).decode(errors='replace')}")
    return status, time.monotonic() - since


def _up(raw: RawClient) -> None:
    """signal_serve.py has made its Toolbox and is about to serve."""
    deadline = time.monotonic() + 60
    while b"corral serve: up\n" not in raw.stderr:
        assert time.monotonic() < deadline and raw.proc.poll() is None, raw.stderr
        time.sleep(0.01)


def _initialize(raw: RawClient) -> None:
    assert raw.initialize()["result"]["serverInfo"]["name"] == "corral"


def _no_answer(raw: RawClient) -> None:
    """Nothing follows but progress (written before the signal, maybe)."""
    while True:
        try:
            message = raw.receive(5)
        except EOFError:
            return
        assert message.get("method") == "notifications/progress", message


def _traceback_free(raw: RawClient) -> None:
    stderr = b"".join(raw.stderr).decode(errors="replace")
    assert "Traceback" not in stderr, stderr


@pytest.mark.parametrize("signum", SIGNALS, **_ids)
def test_a_signal_the_reader_takes_while_it_imports_the_tools_stops_it(notes_root, signum):
    raw = RawClient(signal_command(notes_root, signal.Signals(signum)))
    _initialize(raw)  # answered first; then the reader imports the tools, and takes the signal
    started = time.monotonic()
    status, seconds = _exit_status(raw, started)
    assert status == 128 + signum, b"".join(raw.stderr)
    assert seconds < BOUND, seconds
    _no_answer(raw)
    _traceback_free(raw)


@pytest.mark.parametrize("signum", SIGNALS, **_ids)
def test_a_signal_the_reader_takes_before_initialize_stops_it(notes_root, signum):
    """A first message that is not initialize: the tools are imported
    before it is handled, and the signal comes then."""
    raw = RawClient(signal_command(notes_root, signal.Signals(signum)))
    _up(raw)
    started = time.monotonic()
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    status, seconds = _exit_status(raw, started)
    assert status == 128 + signum, b"".join(raw.stderr)
    assert seconds < BOUND, seconds
    _traceback_free(raw)


@pytest.mark.parametrize("signum", SIGNALS, **_ids)
def test_a_signal_a_worker_takes_during_a_call_stops_it(notes_root, signum):
    raw = RawClient(signal_command(notes_root))
    _initialize(raw)
    raw.request("ping")  # answered once the tools are imported
    started = time.monotonic()
    raw.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
              "params": {"name": "signal_me", "arguments": {"signal": signal.Signals(signum).name}}})
    status, seconds = _exit_status(raw, started)
    assert status == 128 + signum, b"".join(raw.stderr)
    assert seconds < BOUND, seconds
    _no_answer(raw)  # the call is cancelled, never answered
    _traceback_free(raw)


@pytest.mark.parametrize("point", ["initialize answered", "first call sent"])
@pytest.mark.parametrize("signum", SIGNALS, **_ids)
def test_a_signal_to_the_process_at_each_point_of_the_start_stops_it(notes_root, signum, point):
    """The real command, signalled as a supervisor does, right after the
    initialize answer (it imports the tools then) or right after its first
    call is sent; a few times, since which thread takes it varies."""
    for _ in range(3):
        raw = RawClient(serve_command(notes_root))
        _initialize(raw)
        if point == "first call sent":
            raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "read_file", "arguments": {"path": "notes.txt"}}})
        started = time.monotonic()
        raw.proc.send_signal(signum)
        status, seconds = _exit_status(raw, started)
        assert status == 128 + signum, b"".join(raw.stderr)
        assert seconds < BOUND, seconds
        _traceback_free(raw)


def test_stdin_closing_while_it_imports_the_tools_stops_it(notes_root):
    raw = RawClient(serve_command(notes_root))
    _initialize(raw)
    started = time.monotonic()
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()  # the reader still imports the tools, most likely
    status, seconds = _exit_status(raw, started)
    assert status == 0, b"".join(raw.stderr)
    assert seconds < BOUND, seconds
    _traceback_free(raw)
