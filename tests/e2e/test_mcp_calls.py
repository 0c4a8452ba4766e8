"""The worker model through the official SDK clients (both lines) and on the
wire: calls run off the reading loop, so a ping is answered while a long
call runs; ``notifications/cancelled`` stops the call at its next checkpoint
(and it is not answered); progress reaches clients that ask for it; a call
that may change files waits for the calls before it.

The long call is ``wait`` (tests/e2e/programs/wait_tool.py), served with the real
tools by tests/e2e/programs/wait_serve.py: a tool that checkpoints like a search, of a
length the test chooses.  Times are order-of-magnitude hang detectors (5 s
for something that takes milliseconds), never speed tests.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from .helpers import PROGRAMS, SDKS, envelope_of

BOUND = 5.0  # seconds: "answered at once", generously, on a loaded CI machine


def wait_command(root: Path, *options: str) -> list[str]:
    return [sys.executable, str(PROGRAMS / "wait_serve.py"), str(root), *options]


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("calls")
    (root / "notes.txt").write_text("hello\n")
    return root


@pytest.fixture(scope="module", params=SDKS)
def session(request, tree, make_session):
    return make_session(wait_command(tree), sdk=request.param)


def test_a_ping_is_answered_first_during_a_long_call(session):
    answer = session.request("ping_during", name="wait", arguments={"seconds": 3}, after=0.5)
    assert answer["order"] == ["ping", "call"], answer
    assert answer["ping_seconds"] < BOUND
    assert answer["call_seconds"] >= 2.5  # the call really was running meanwhile
    assert envelope_of(answer["call"]["result"]) == {"ok": True, "steps": 150}


def test_cancel_stops_the_call_and_the_next_calls_work(session, tree):
    answer = session.request("cancel_during", name="wait", arguments={"seconds": 60}, after=0.5)
    assert answer["cancelled"] is True and answer["returned"] is False
    started = time.monotonic()
    # a write waits for every call before it (the cancelled one included):
    # it is answered quickly only if the cancelled call really stopped
    written = session.envelope("write_file", {"path": f"after-{session.sdk}.txt",
                                              "content": "x"})
    assert written["ok"] is True, written
    assert time.monotonic() - started < BOUND
    assert (tree / f"after-{session.sdk}.txt").read_text() == "x"
    assert session.envelope("read_file", {"path": "notes.txt"})["ok"] is True


def test_progress_reaches_a_client_that_asks(session):
    result = session.call("wait", {"seconds": 1}, progress=True)
    assert envelope_of(result) == {"ok": True, "steps": 50}
    reports = result["_progress"]
    assert reports, "no progress notification"
    done = [report["progress"] for report in reports]
    assert done == sorted(set(done)), done  # strictly increasing
    assert all(report["total"] == 50 for report in reports)
    assert done[-1] == 50


def test_no_progress_without_a_token(session):
    assert session.call("wait", {"seconds": 0.3})["_progress"] == []


# -- on the wire ---------------------------------------------------------------------

@pytest.fixture
def raw(tree, make_raw):
    client = make_raw(wait_command(tree, "--workers", "2"))
    client.initialize()
    return client


def _call(raw, request_id, name, arguments, meta=None):
    params = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    raw.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def test_a_cancelled_call_is_not_answered(raw):
    _call(raw, "long", "wait", {"seconds": 60})
    time.sleep(0.3)
    raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": "long", "reason": "the user changed their mind"}})
    started = time.monotonic()
    _call(raw, "write", "write_file", {"path": "w.txt", "content": "w", "overwrite": True})
    answer = raw.reply(BOUND * 2)
    assert answer["id"] == "write"  # never "long": a cancelled request gets no answer
    assert time.monotonic() - started < BOUND
    assert raw.request("ping")["result"] == {}


def test_a_queued_call_can_be_cancelled_before_it_starts(raw):
    _call(raw, "w1", "wait", {"seconds": 1.5})
    _call(raw, "w2", "write_file", {"path": "q.txt", "content": "q", "overwrite": True})
    raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "w2"}})
    answer = raw.reply(BOUND * 2)
    assert answer["id"] == "w1" and "result" in answer
    assert raw.request("ping")["result"] == {}


def test_calls_that_write_wait_for_the_calls_before_them(raw, tree):
    # two workers: the read would run beside the wait, the write may not
    _call(raw, "slow", "wait", {"seconds": 1})
    _call(raw, "write", "write_file", {"path": "order.txt", "content": "1", "overwrite": True})
    first, second = raw.reply(BOUND * 3), raw.reply(BOUND * 3)
    assert [first["id"], second["id"]] == ["slow", "write"]


def test_reads_run_beside_a_long_read(raw):
    _call(raw, "slow", "wait", {"seconds": 2})
    _call(raw, "quick", "read_file", {"path": "notes.txt"})
    first = raw.reply(BOUND)
    assert first["id"] == "quick"
    assert first["result"]["isError"] is False
    assert first["result"]["content"][0]["text"].startswith("hello\n[")  # one line: no number
    assert raw.reply(BOUND * 2)["id"] == "slow"


def test_an_id_in_use_is_refused_while_its_call_runs(raw):
    _call(raw, "same", "wait", {"seconds": 1})
    _call(raw, "same", "read_file", {"path": "notes.txt"})
    refused = raw.reply(BOUND)
    assert refused["id"] == "same" and refused["error"]["code"] == -32600
    done = raw.reply(BOUND * 2)
    assert done["id"] == "same" and done["result"]["isError"] is False


def test_progress_stops_with_the_answer(raw):
    _call(raw, "p", "wait", {"seconds": 0.6}, meta={"progressToken": 7})
    answer = raw.answer("p", BOUND * 2)
    assert "result" in answer
    progress = [n for n in raw.notifications if n.get("method") == "notifications/progress"]
    assert progress and all(n["params"]["progressToken"] == 7 for n in progress)
    raw.notifications.clear()
    assert raw.request("ping")["result"] == {}
    assert not [n for n in raw.notifications if n.get("method") == "notifications/progress"]


# -- batches: protocol 2025-03-26, the one version that has them ----------------------

@pytest.fixture
def raw_batches(tree, make_raw):
    client = make_raw(wait_command(tree, "--workers", "2"))
    assert client.initialize("2025-03-26")["result"]["protocolVersion"] == "2025-03-26"
    return client


def _batch(raw, *members) -> None:
    raw.send_bytes(json.dumps(list(members)).encode() + b"\n")


def _tool(request_id, name, arguments, meta=None):
    params = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _text(answer: dict) -> dict:
    """The envelope of a tool the renderer does not know, from its text (its
    JSON; 2025-03-26 has no structured content)."""
    assert "structuredContent" not in answer["result"]
    envelope: dict = json.loads(answer["result"]["content"][0]["text"])
    return envelope


def _array(raw, timeout: float) -> dict:
    """The next line, which must be a batch's answers (one per id)."""
    answers = raw.receive(timeout)
    assert isinstance(answers, list), answers
    by_id = {item["id"]: item for item in answers}
    assert len(by_id) == len(answers), answers
    return by_id


def test_a_batch_is_answered_as_one_array_after_its_long_call(raw_batches):
    raw = raw_batches
    started = time.monotonic()
    _batch(raw, _tool("slow", "wait", {"seconds": 0.8}),
           {"jsonrpc": "2.0", "id": "p", "method": "ping"},
           _tool("r", "read_file", {"path": "notes.txt"}),
           {"jsonrpc": "2.0", "method": "notifications/whatever"}, 42)
    answers = _array(raw, BOUND * 2)  # the first line out: nothing was answered alone
    assert time.monotonic() - started >= 0.7  # it waited for the long call
    assert set(answers) == {"slow", "p", "r", None}
    assert _text(answers["slow"]) == {"ok": True, "steps": 40}
    assert answers["p"]["result"] == {}
    assert answers["r"]["result"]["isError"] is False  # read_file's text: the lines, a footer
    assert answers["r"]["result"]["content"][0]["text"].startswith("hello\n[")
    assert answers[None]["error"]["code"] == -32600
    assert raw.request("ping")["result"] == {}  # and single lines go on as before


def test_a_cancelled_batch_member_is_left_out_of_its_array(raw_batches):
    raw = raw_batches
    _batch(raw, _tool("long", "wait", {"seconds": 60}),
           {"jsonrpc": "2.0", "id": "p", "method": "ping"})
    time.sleep(0.3)
    raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": "long"}})
    assert set(_array(raw, BOUND)) == {"p"}
    assert raw.request("ping")["result"] == {}


def test_a_batch_of_notifications_is_not_answered(raw_batches):
    raw = raw_batches
    _batch(raw, {"jsonrpc": "2.0", "method": "notifications/whatever"},
           {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
    assert raw.request("ping")["result"] == {}  # the next line out is the ping's answer


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_a_batch_is_refused_in_the_versions_without_them(version, tree, make_raw):
    raw = make_raw(wait_command(tree))
    raw.initialize(version)
    _batch(raw, {"jsonrpc": "2.0", "id": "p", "method": "ping"},
           _tool("r", "read_file", {"path": "notes.txt"}))
    refused = raw.reply(BOUND)
    assert refused["id"] is None and refused["error"]["code"] == -32600
    assert "2025-03-26" in refused["error"]["message"]
    assert raw.request("ping")["result"] == {}  # nothing of the batch ran or was answered


@pytest.mark.parametrize("workers", ["1", "4"])
def test_a_batch_of_long_calls_keeps_the_reader_reading_and_the_worker_bound(
        workers, tree, make_raw):
    """Several calls ready at once (a batch; calls the roots release): one
    thread reads on while they run, and no more than --workers run."""
    raw = make_raw(wait_command(tree, "--workers", workers))
    raw.initialize("2025-03-26")
    _batch(raw, *(_tool(name, "wait", {"seconds": 30}, meta={"progressToken": name})
                  for name in ("a", "b")))
    time.sleep(0.5)
    started = time.monotonic()
    assert raw.request("ping")["result"] == {}  # not after a 30 s call
    assert time.monotonic() - started < BOUND
    time.sleep(0.5)
    running = {n["params"]["progressToken"] for n in raw.notifications
               if n.get("method") == "notifications/progress"}
    assert running == ({"a"} if workers == "1" else {"a", "b"}), running
    for name in ("a", "b"):
        raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": name}})
    assert raw.request("ping")["result"] == {}  # both cancelled: the batch has no answer
