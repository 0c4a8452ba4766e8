"""``corral serve``'s lifecycle, as a process supervisor and the official
clients drive it.

* SIGTERM and SIGINT stop it at once whatever its stdin does (open and
  idle, open with a call running), with the exit status 128 + the signal's
  number; the call in flight is cancelled at its next checkpoint and never
  answered, and nothing at all is written after the signal.
* Closing its stdin is the client hanging up: calls still running are
  cancelled, nothing more is written, and it exits.
* Writes caught by a signal are whole or absent.
* The official clients (Python SDK 1.x and 2.x, TypeScript SDK) close
  cleanly, and quickly, with a call in flight.

Time bounds are hang detectors: the target is "within a second" (measured
0.2 to 0.6 s on a loaded 2-core machine); the tests allow BOUND.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import CONFORMANCE, PROGRAMS, SETUP_HINT, RawClient, sdk_python, serve_command

pytestmark = pytest.mark.usefixtures("signals_as_a_terminal_leaves_them")

BOUND = 3.0  # seconds from the signal (or the hang-up) to the exit, at most
SIGNALS = [signal.SIGTERM, signal.SIGINT]


def wait_command(root: Path) -> list[str]:
    return [sys.executable, str(PROGRAMS / "wait_serve.py"), str(root)]


def _started(command: list[str]) -> RawClient:
    raw = RawClient(command)
    assert raw.initialize()["result"]["serverInfo"]["name"] == "corral"
    return raw


def _call(raw: RawClient, request_id: int, name: str, arguments: dict, **meta: object) -> None:
    params: dict = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    raw.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def _exit_after(raw: RawClient, signum: int) -> tuple[int, float]:
    """Send ``signum``; the exit status and the seconds it took."""
    started = time.monotonic()
    raw.proc.send_signal(signum)
    try:
        status = raw.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        raw.proc.kill()
        raw.proc.wait()
        pytest.fail(f"still running 30 s after signal {signum}")
    return status, time.monotonic() - started


def _nothing_more(raw: RawClient) -> None:
    """Nothing was written that the test has not read yet."""
    with pytest.raises(EOFError):
        extra = raw.receive(5)
        pytest.fail(f"written after the signal or hang-up: {extra}")


def _traceback_free(raw: RawClient) -> None:
    stderr = b"".join(raw.stderr).decode(errors="replace")
    assert "Traceback" not in stderr, stderr


@pytest.mark.parametrize("idle_for", [0.2, 2.0])
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_stops_an_idle_server_with_stdin_open(notes_root, signum, idle_for):
    raw = _started(serve_command(notes_root))
    time.sleep(idle_for)
    status, seconds = _exit_after(raw, signum)
    assert status == 128 + signum, b"".join(raw.stderr)
    assert seconds < BOUND, seconds
    _nothing_more(raw)
    _traceback_free(raw)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_stops_a_call_at_its_next_checkpoint_and_answers_nothing(notes_root, signum):
    raw = _started(wait_command(notes_root))
    _call(raw, 7, "wait", {"seconds": 60}, progressToken="p")
    first = raw.receive()  # the call is running: it reported progress
    assert first["method"] == "notifications/progress", first
    status, seconds = _exit_after(raw, signum)
    assert status == 128 + signum
    assert seconds < BOUND, seconds
    # progress written before the signal may still be in the pipe; no answer
    # and nothing else follows
    while True:
        try:
            message = raw.receive(5)
        except EOFError:
            break
        assert message.get("method") == "notifications/progress", message
    _traceback_free(raw)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_stops_a_real_search_in_flight(tmp_path, signum):
    """The real tools' checkpoints: a grep over a large tree is stopped."""
    for d in range(40):
        sub = tmp_path / f"d{d}"
        sub.mkdir()
        for f in range(50):
            (sub / f"f{f}.txt").write_text("no match here\n" * 400)
    raw = _started(serve_command(tmp_path))
    _call(raw, 8, "grep", {"pattern": "(x|y)+needle", "path": "."}, progressToken="g")
    first = raw.receive()
    assert first.get("method") == "notifications/progress", first
    status, seconds = _exit_after(raw, signum)
    assert status == 128 + signum
    assert seconds < BOUND, seconds
    while True:
        try:
            message = raw.receive(5)
        except EOFError:
            break
        assert message.get("method") == "notifications/progress", message


def test_writes_caught_by_a_signal_are_whole_or_absent(notes_root):
    content = "".join(f"line {i:06d}\n" for i in range(20_000))  # 240 KB each
    raw = _started(serve_command(notes_root, "--workers", "4"))
    for i in range(40):
        _call(raw, 100 + i, "write_file", {"path": f"out/w{i}.txt", "content": content})
    raw.reply()  # one has landed; the rest are in flight or waiting
    status, seconds = _exit_after(raw, signal.SIGTERM)
    assert status == 128 + signal.SIGTERM and seconds < BOUND
    out = notes_root / "out"
    for path in out.iterdir():
        assert path.name.startswith("w") and path.suffix == ".txt", path.name  # no temp file left
        assert path.read_text() == content, path.name


def test_nothing_is_written_after_stdin_closes(notes_root):
    raw = _started(wait_command(notes_root))
    _call(raw, 9, "wait", {"seconds": 60})  # no progress token: it writes nothing while it runs
    time.sleep(0.5)
    started = time.monotonic()
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    status = raw.proc.wait(timeout=30)
    assert time.monotonic() - started < BOUND
    assert status == 0
    _nothing_more(raw)  # the cancelled call is not answered
    _traceback_free(raw)


def test_quick_calls_asked_before_stdin_closes_are_answered(notes_root):
    """A client that writes its calls and closes stdin at once (a shell
    pipe) reads their answers: each call here runs 20 ms, a twenty-fifth of
    the grace the server gives them, however late it sees the end of its
    input (the reader running the first call itself sees it 20 ms on)."""
    raw = _started(wait_command(notes_root))
    for i in range(3):
        _call(raw, 20 + i, "wait", {"seconds": 0.02})
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    answered = []
    while True:
        try:
            answered.append(raw.receive(10))
        except EOFError:
            break
    assert sorted(m["id"] for m in answered if "id" in m) == [20, 21, 22], answered
    assert all(m["result"]["structuredContent"] == {"ok": True, "steps": 1}
               for m in answered if "id" in m), answered
    assert raw.proc.wait(30) == 0


def test_answers_given_before_stdin_closes_are_all_delivered(notes_root):
    """What the server answered before it saw the end of its input is
    flushed, in full, before it exits."""
    raw = _started(serve_command(notes_root))
    for i in range(50):
        raw.send({"jsonrpc": "2.0", "id": 1000 + i, "method": "ping"})
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    answered = []
    while True:
        try:
            answered.append(raw.receive(10)["id"])
        except EOFError:
            break
    assert answered == list(range(1000, 1050))
    assert raw.proc.wait(30) == 0


@pytest.mark.parametrize("sdk", ["sdk1", "sdk2"])
def test_python_sdk_clients_close_cleanly_with_a_call_in_flight(notes_root, sdk):
    done = subprocess.run([sdk_python(sdk), str(PROGRAMS / "sdk_close.py"), "60",
                           *wait_command(notes_root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Error" not in done.stderr, done.stderr
    closed_in = json.loads(done.stdout)["closed_in"]
    # the SDK waits 2 s for the server to leave after closing its stdin, then
    # signals it: a close under that means corral left on its own
    assert closed_in < 2.0, closed_in


def test_typescript_sdk_client_closes_cleanly_with_a_call_in_flight(notes_root):
    modules = CONFORMANCE / "node" / "node_modules"
    if not (modules / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail(f"the TypeScript SDK is missing under {modules}; {SETUP_HINT}")
    done = subprocess.run(["node", str(PROGRAMS / "ts_close.mjs"), str(modules), "60",
                           *wait_command(notes_root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["closed_in"] < 2.0, outcome  # the SDK's own wait before it signals is 2 s
    assert outcome["call"] != "answered", outcome  # the hung-up call was not answered


def test_sighup_stops_it_unless_the_parent_ignores_it(notes_root):
    raw = _started(serve_command(notes_root))
    status, seconds = _exit_after(raw, signal.SIGHUP)
    assert status == 128 + signal.SIGHUP and seconds < BOUND
    # started under nohup (SIGHUP ignored), a hang-up changes nothing
    ignoring = subprocess.Popen(serve_command(notes_root), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    try:
        assert ignoring.stderr is not None
        assert b"corral serve" in ignoring.stderr.readline()  # it is up
        ignoring.send_signal(signal.SIGHUP)
        with pytest.raises(subprocess.TimeoutExpired):
            ignoring.wait(timeout=1.5)
        ignoring.send_signal(signal.SIGTERM)
        assert ignoring.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if ignoring.poll() is None:
            ignoring.kill()
            ignoring.wait()
