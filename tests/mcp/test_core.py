"""The MCP front end's I/O-free core: framing (``_wire``), the session state
machine (``_session``), call ordering (``_scheduler``), without pipes or
threads.  The same behaviour end to end is in tests/e2e/test_mcp_*.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.mcp import _wire
from corral.mcp._catalog import Catalog, call_result
from corral.mcp._scheduler import Job, Scheduler
from corral.mcp._server import file_uri_path
from corral.mcp._session import Cancel, RootsListed, Send, SendLine, Session, ToolCall
from corral.tools import Toolbox, Workspace


# -- _wire ---------------------------------------------------------------------------

def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def test_decode_kinds():
    assert _wire.decode(_line({"jsonrpc": "2.0", "id": 1, "method": "ping"})) == \
        _wire.Request(1, "ping", {})
    assert _wire.decode(_line({"jsonrpc": "2.0", "method": "n", "params": {"a": 1}})) == \
        _wire.Notification("n", {"a": 1})
    assert _wire.decode(_line({"jsonrpc": "2.0", "id": "r", "result": {"x": 1}})) == \
        _wire.Response("r", {"x": 1}, None)
    error = {"code": 1, "message": "m"}
    assert _wire.decode(_line({"jsonrpc": "2.0", "id": "r", "error": error})) == \
        _wire.Response("r", None, error)


@pytest.mark.parametrize("line,code,request_id", [
    (b"{", _wire.PARSE_ERROR, None),
    (b'{"a": NaN', _wire.PARSE_ERROR, None),
    (b"[" * 100000, _wire.PARSE_ERROR, None),  # too deep: RecursionError, not a crash
    (b"[]", _wire.INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', _wire.INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":3,"method":"ping","params":"x"}', _wire.INVALID_PARAMS, 3),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"\\udc80":1}}', _wire.INVALID_PARAMS, 4),
    (b'{"jsonrpc":"2.0","id":5,"method":"p","params":{"x":["a","\xc3"]}}', _wire.INVALID_PARAMS, 5),
])
def test_decode_errors(line, code, request_id):
    decoded = _wire.decode(line)
    assert isinstance(decoded, _wire.Invalid) and decoded.reply is not None
    assert decoded.reply["error"]["code"] == code
    assert decoded.reply["id"] == request_id


def test_a_broken_notification_or_response_is_not_answered():
    for line in (b'{"jsonrpc":"2.0","method":7}', b'{"jsonrpc":"2.0","id":1}',
                 b'{"jsonrpc":"2.0","id":1,"result":1,"error":{}}', b'{"method":"x"}'):
        decoded = _wire.decode(line)
        assert isinstance(decoded, _wire.Invalid) and decoded.reply is None, line


def test_the_surrogate_check_points_at_the_string():
    decoded = _wire.decode(b'{"jsonrpc":"2.0","id":1,"method":"m",'
                           b'"params":{"a":[1,{"b":"\\udfff"}]}}')
    assert decoded.reply["error"]["data"]["field"] == "params.a[1].b"
    # an escaped backslash before 'udcff' is no surrogate
    assert isinstance(_wire.decode(b'{"jsonrpc":"2.0","id":1,"method":"m","params":'
                                   b'{"a":"\\\\udcff"}}'), _wire.Request)


def test_encode_is_always_utf8_one_line():
    line = _wire.encode({"a": "caf\u00e9\nnext", "b": "bad\udcff"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line.decode("utf-8")) == {"a": "caf\u00e9\nnext", "b": "bad\\udcff"}


@pytest.mark.parametrize("head,tail,found", [
    (b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"x":"', b'"}}', 12),
    (b' { "id" : "abc" , "jsonrpc":"2.0"', b"}", "abc"),
    (b'{"method":"tools/call","params":{"x":"', b'"},"jsonrpc":"2.0","id":9}', 9),
    (b'{"method":"m","params":{"x":"', b'"},"id":"t","method":"m"}\r', "t"),
    (b'{"params":{"id":3,"x":"', b'"}}', None),  # an id inside params is not the request's
    (b'{"params":{"x":"', b'","o":{"id":9}}}', None),
    (b'{"params":{"x":"', b'\\"id\\":9}"}', None),  # inside a string
    (b'{"jsonrpc":"2.0","id":true', b"}", None),
])
def test_the_id_of_an_oversized_line(head, tail, found):
    assert _wire.id_of_oversized(head, tail.rstrip(b"\r")) == found


# -- _catalog ------------------------------------------------------------------------------

@pytest.mark.parametrize("request_id", [7, "abc", "\u00e9-id"])
def test_a_call_result_is_the_compact_json_of_its_message(tmp_path, request_id):
    """Each answer line, built as UTF-8 piece by piece, is byte for byte the
    compact JSON the json module writes of the message it holds (long text
    escaped by the fast path or not, listings, images, refusals)."""
    (tmp_path / "code.py").write_text("".join(
        f'def f{i}(x):\n\treturn "q\\\\" + x  # \u00e9 {i}\n' for i in range(300)))
    (tmp_path / "plain.txt").write_text("line\n" * 400)
    (tmp_path / "d").mkdir()
    (tmp_path / "i.png").write_bytes(bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63606060f80f0001040100b5a5a0a80000000049454e44ae426082"))
    calls = [("read_file", {"path": "code.py"}), ("read_file", {"path": "plain.txt"}),
             ("read_file", {"path": "i.png"}), ("read_file", {"path": "missing.txt"}),
             ("list_directory", {"path": "."}), ("glob", {"pattern": "**/*"}),
             ("read_files", {"paths": ["plain.txt", "i.png"]})]
    with Toolbox(tmp_path) as box:
        for tool, args in calls:
            envelope = box.call(tool, args)
            for version in ("2024-11-05", "2025-11-25"):
                line = call_result(request_id, envelope, version, tool)
                compact = json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":"))
                assert line == compact.encode("utf-8") + b"\n", (tool, version)


def test_call_result_per_version():
    def answer(request_id: Any, envelope: dict[str, Any], version: str) -> dict[str, Any]:
        line = call_result(request_id, envelope, version)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        message: dict[str, Any] = json.loads(line)
        assert message["jsonrpc"] == "2.0" and message["id"] == request_id
        return message["result"]  # type: ignore[no-any-return]

    ok = {"ok": True, "path": "a\u00e9\n\"quoted\""}
    assert answer(1, ok, "2025-06-18") == {
        "content": [{"type": "text", "text": json.dumps(ok, ensure_ascii=False,
                                                        separators=(",", ":"))}],
        "isError": False, "structuredContent": ok}
    assert "structuredContent" not in answer("s", ok, "2025-03-26")
    refused = {"ok": False, "code": "NOT_FOUND", "message": "a does not exist",
               "hint": "Check the name.", "suggestedTool": "glob",
               "suggestedArgs": {"pattern": "a*"}}
    assert answer(2, refused, "2025-11-25") == {
        "content": [{"type": "text", "text": 'NOT_FOUND: a does not exist\nCheck the name.\n'
                                             'Try: glob {"pattern":"a*"}'}],
        "isError": True, "structuredContent": refused}
    assert "structuredContent" not in answer(2, refused, "2025-03-26")
    png = {"ok": True, "path": "a.png", "mimeType": "image/png", "data": "iVBORw0K", "size": 6}
    shown = answer(4, png, "2025-11-25")
    assert shown["content"][1] == {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"}
    assert json.loads(shown["content"][0]["text"])["data"] == \
        "(the image content block 1 of this result)"
    assert shown["structuredContent"] == png
    batch = {"ok": True, "files": [{"ok": True, "path": "t.txt", "content": "1\tx"},
                                   {**png, "path": "b.png"}, {**png, "mimeType": "image/gif"}]}
    both = answer(5, batch, "2025-11-25")
    assert [c["type"] for c in both["content"]] == ["text", "image", "image"]
    assert both["content"][2]["mimeType"] == "image/gif"
    files = json.loads(both["content"][0]["text"])["files"]
    assert files[0] == batch["files"][0] and files[2]["data"].endswith("block 2 of this result)")
    assert both["structuredContent"] == batch
    odd = answer(3, {"ok": True, "name": "bad\udcff"}, "2025-11-25")
    assert json.loads(odd["content"][0]["text"]) == {"ok": True, "name": "bad\udcff"}
    assert odd["structuredContent"] == {"ok": True, "name": "bad\\udcff"}


@pytest.fixture
def workspace(tmp_path: Path):
    (tmp_path / "a.txt").write_text("a\n")
    with Toolbox(tmp_path) as box:
        yield Workspace({"root": box})


def test_catalog_drops_what_a_version_does_not_know(workspace):
    catalog = Catalog(workspace)
    newest = catalog.tools("2025-11-25")
    assert all({"title", "outputSchema", "annotations"} <= set(t) for t in newest)
    assert all("title" not in t and "outputSchema" not in t and "annotations" in t
               for t in catalog.tools("2025-03-26"))
    assert all(set(t) == {"name", "description", "inputSchema"}
               for t in catalog.tools("2024-11-05"))


# -- _session ---------------------------------------------------------------------------------

def _request(request_id: Any, method: str, **params: Any) -> _wire.Request:
    return _wire.Request(request_id, method, params)


def _initialized(session: Session, version: str = "2025-11-25", **capabilities: Any
                 ) -> list[Any]:
    session.receive(_request(0, "initialize", protocolVersion=version,
                             capabilities=capabilities))
    return session.receive(_wire.Notification("notifications/initialized", {}))


def test_every_request_is_answered_once_and_a_cancelled_call_never(workspace):
    session = Session(Catalog(workspace), version="t")
    _initialized(session)
    (call,) = session.receive(_request(1, "tools/call", name="read_file",
                                       arguments={"path": "a.txt"}))
    assert isinstance(call, ToolCall) and call.id == 1
    (dup,) = session.receive(_request(1, "ping"))
    assert dup.message["error"]["code"] == _wire.INVALID_REQUEST
    assert session.receive(_wire.Notification("notifications/cancelled",
                                              {"requestId": 1})) == [Cancel(1)]
    assert session.receive(_wire.Notification("notifications/cancelled",
                                              {"requestId": 1})) == []  # once
    assert session.call_result(call, {"ok": True}) is None
    (again,) = session.receive(_request(1, "ping"))  # the id is free again
    assert again.message == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_progress_is_monotonic_rate_limited_and_ends_with_the_call(workspace):
    session = Session(Catalog(workspace), version="t", progress_interval=1.0)
    _initialized(session)
    (call,) = session.receive(_wire.Request(2, "tools/call", {
        "name": "read_file", "arguments": {}, "_meta": {"progressToken": "tok"}}))
    first = session.progress(call, 1, 10, "one", now=100.0)
    assert first["params"] == {"progressToken": "tok", "progress": 1, "total": 10,
                               "message": "one"}
    assert session.progress(call, 2, 10, "", now=100.5) is None  # too soon
    assert session.progress(call, 1, 10, "", now=102.0) is None  # not more than before
    assert session.progress(call, 10, 10, "", now=102.1) is not None  # the last one goes
    session.call_result(call, {"ok": True})
    assert session.progress(call, 11, 20, "", now=200.0) is None


def test_roots_hold_calls_until_answered(workspace):
    session = Session(Catalog(workspace), version="t")
    (ask,) = _initialized(session, roots={"listChanged": True})
    assert isinstance(ask, Send) and ask.message["method"] == "roots/list"
    assert session.waiting_for_roots
    assert session.receive(_request(5, "tools/call", name="read_file", arguments={})) == []
    assert session.receive(_request(6, "ping"))[0].message["result"] == {}
    actions = session.receive(_wire.Response(ask.message["id"],
                                             {"roots": [{"uri": "file:///w"}, {"x": 1}]}, None))
    assert actions[0] == RootsListed(("file:///w",))
    assert isinstance(actions[1], ToolCall) and actions[1].id == 5
    # a change while a request is out is asked once more, after the answer
    (again,) = session.receive(_wire.Notification("notifications/roots/list_changed", {}))
    assert session.receive(_wire.Notification("notifications/roots/list_changed", {})) == []
    out = session.receive(_wire.Response(again.message["id"], None,
                                         {"code": -32601, "message": "no"}))
    assert out[0] == RootsListed(None) and out[1].message["method"] == "roots/list"


def test_roots_unanswered_releases_held_calls(workspace):
    session = Session(Catalog(workspace), version="t")
    _initialized(session, roots={})
    session.receive(_request(7, "tools/call", name="read_file", arguments={}))
    actions = session.roots_unanswered()
    assert actions[0] == RootsListed(None) and actions[1].id == 7
    assert session.roots_unanswered() == []


def test_calls_held_for_the_roots_are_bounded(workspace):
    """A client that declares roots and never answers roots/list (the server
    waits 10 s) cannot pile up calls: held calls are bounded in number and
    in what their arguments hold (a line of ``{}``s counted by its parse);
    past either a call is answered "server busy" at once, a cancelled one
    frees its room, and the held ones still run once the roots are known."""
    from corral.mcp import _session

    session = Session(Catalog(workspace), version="t")
    _initialized(session, roots={})
    for i in range(_session.HELD_CALLS):
        assert session.receive(_request(i, "tools/call", name="read_file", arguments={})) == []
    (busy,) = session.receive(_request("over", "tools/call", name="read_file", arguments={}))
    assert busy.message["error"]["code"] == _session.SERVER_BUSY
    session.receive(_wire.Notification("notifications/cancelled", {"requestId": 0}))
    assert session.receive(_request("room", "tools/call", name="read_file", arguments={})) == []

    other = Session(Catalog(workspace), version="t")
    _initialized(other, roots={})
    junk = {"junk": [{}] * (1 << 20)}  # a line of ~4 MiB, some 70 MiB parsed
    big = _wire.Request(1, "tools/call", {"name": "read_file", "arguments": junk}, 4 << 20)
    assert other.receive(big) == []  # one call alone is always held
    again = _wire.Request(2, "tools/call", {"name": "read_file", "arguments": junk}, 4 << 20)
    (refused,) = other.receive(again)
    assert refused.message["error"]["code"] == _session.SERVER_BUSY
    released = other.roots_unanswered()
    assert [a.id for a in released if isinstance(a, ToolCall)] == [1]
    assert other.receive(again)[0].id == 2  # roots known: no longer held


def test_log_levels(workspace):
    session = Session(Catalog(workspace), version="t")
    assert session.log("info", "corral", "x") is None  # warning until told otherwise
    assert session.log("error", "corral", "x")["params"]["level"] == "error"
    session.receive(_request(1, "logging/setLevel", level="debug"))
    assert session.log("debug", "corral", "x") is not None


# -- _scheduler ------------------------------------------------------------------------------

def _job(request_id: int, writes: bool) -> Job:
    return Job(ToolCall(request_id, "t", {}, None), writes=writes)


def test_readers_share_writers_wait_and_nothing_passes_a_writer():
    scheduler = Scheduler()
    r1, r2, w3, r4 = _job(1, False), _job(2, False), _job(3, True), _job(4, False)
    for job in (r1, r2, w3, r4):
        assert scheduler.add(job)
    assert scheduler.take() is r1 and scheduler.take() is r2
    assert scheduler.take() is None  # the writer waits for both readers; r4 for the writer
    scheduler.finish(r1)
    assert scheduler.take() is None
    scheduler.finish(r2)
    assert scheduler.take() is w3 and scheduler.take() is None
    scheduler.finish(w3)
    assert scheduler.take() is r4


def test_the_queue_is_bounded_and_waiting_jobs_can_be_removed():
    scheduler = Scheduler(limit=2)
    assert scheduler.add(_job(1, True)) and scheduler.add(_job(2, False))
    assert not scheduler.add(_job(3, False))
    assert scheduler.take().call.id == 1
    assert scheduler.remove(2).call.id == 2 and scheduler.remove(1) is None
    assert scheduler.running(1) is not None and len(scheduler) == 1


def test_waiting_calls_are_bounded_in_bytes():
    """Calls queued behind a client that does not read are bounded in bytes,
    not only in number: each holds its parsed arguments (up to 16 MiB), so 64
    of them could hold ~1 GiB."""
    def sized(request_id: int, size: int) -> Job:
        return Job(ToolCall(request_id, "t", {}, None, size), writes=True)

    scheduler = Scheduler(byte_limit=100)
    assert scheduler.add(sized(1, 150))  # one call alone may always wait
    assert not scheduler.add(sized(2, 1)) and scheduler.waiting_bytes == 150
    assert scheduler.take().call.id == 1 and scheduler.waiting_bytes == 0  # running: not waiting
    assert scheduler.add(sized(3, 60)) and scheduler.add(sized(4, 40))
    assert not scheduler.add(sized(5, 1))
    assert scheduler.remove(3).call.id == 3 and scheduler.waiting_bytes == 40
    assert scheduler.add(sized(6, 60)) and scheduler.waiting_bytes == 100


# -- roots URIs ------------------------------------------------------------------------------

@pytest.mark.parametrize("uri,path", [
    ("file:///home/u/my%20dir", "/home/u/my dir"), ("file://localhost/srv/x/", "/srv/x"),
    ("file:///a/../b", "/b"), ("file://host/x", None), ("http://x/y", None),
    ("file:relative", None), ("file:///nul%00here", None), ("::not a uri", None),
])
def test_file_uri_path(uri, path):
    assert file_uri_path(uri) == path


# -- batches (protocol 2025-03-26) ------------------------------------------------------------

def _batch(*members: Any) -> _wire.Incoming:
    return _wire.decode(json.dumps(list(members)).encode())


def _call(request_id: Any, path: str = "a.txt") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": path}}}


def _answers(line: bytes) -> dict[Any, dict[str, Any]]:
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    array = json.loads(line)
    assert isinstance(array, list)
    by_id = {item["id"]: item for item in array}
    assert len(by_id) == len(array), array  # one answer per request
    return by_id


def test_decode_a_batch():
    batch = _batch({"jsonrpc": "2.0", "id": 1, "method": "ping"}, 42, [],
                   {"jsonrpc": "2.0", "method": "notifications/x"})
    assert isinstance(batch, _wire.Batch)
    kinds = [type(member) for member in batch.members]
    assert kinds == [_wire.Request, _wire.Invalid, _wire.Invalid, _wire.Notification]
    assert batch.members[2].reply["error"]["code"] == _wire.INVALID_REQUEST  # no batch in one
    empty = _wire.decode(b"[]")
    assert isinstance(empty, _wire.Invalid) and empty.reply["id"] is None


@pytest.mark.parametrize("version", [None, "2024-11-05", "2025-06-18", "2025-11-25"])
def test_a_batch_is_one_error_where_the_version_has_none(workspace, version):
    session = Session(Catalog(workspace), version="t")
    if version is not None:
        _initialized(session, version)
    (refused,) = session.receive(_batch({"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                        _call(2)))
    assert refused.message["id"] is None
    assert refused.message["error"]["code"] == _wire.INVALID_REQUEST
    assert "2025-03-26" in refused.message["error"]["message"]
    (pong,) = session.receive(_request(1, "ping"))  # nothing of it was taken
    assert pong.message["result"] == {}


def test_a_batch_is_answered_as_one_array_when_its_last_call_is_done(workspace):
    session = Session(Catalog(workspace), version="t")
    _initialized(session, "2025-03-26")
    actions = session.receive(_batch(_call("a"), {"jsonrpc": "2.0", "id": "p", "method": "ping"},
                                     _call("b"), {"jsonrpc": "2.0", "method": "notifications/x"},
                                     {"jsonrpc": "2.0", "id": "m", "method": "nope"}, 17))
    calls = [a for a in actions if isinstance(a, ToolCall)]
    assert [c.id for c in calls] == ["a", "b"]
    assert not [a for a in actions if isinstance(a, (Send, SendLine))]  # all held
    assert session.call_result(calls[1], {"ok": True, "n": 2}) is None  # "a" still runs
    line = session.call_result(calls[0], {"ok": True, "n": 1})
    assert line is not None
    answers = _answers(line)
    assert set(answers) == {"a", "b", "p", "m", None}
    assert json.loads(answers["a"]["result"]["content"][0]["text"]) == {"ok": True, "n": 1}
    assert answers["p"]["result"] == {}
    assert answers["m"]["error"]["code"] == _wire.METHOD_NOT_FOUND
    assert answers[None]["error"]["code"] == _wire.INVALID_REQUEST
    # without calls, the array is at once; with notifications only, nothing
    (now,) = session.receive(_batch({"jsonrpc": "2.0", "id": 9, "method": "ping"}))
    assert isinstance(now, SendLine) and set(_answers(now.line)) == {9}
    assert session.receive(_batch({"jsonrpc": "2.0", "method": "notifications/x"})) == []


def test_cancelled_dropped_and_refused_members_of_a_batch(workspace):
    """A cancelled member is left out of the array; one the server refuses
    (its queue full) or fails is answered in it; the array goes when the
    last member is settled, whichever way."""
    session = Session(Catalog(workspace), version="t")
    _initialized(session, "2025-03-26")
    a, b, c, d = session.receive(_batch(_call("a"), _call("b"), _call("c"), _call("d")))
    assert session.receive(_wire.Notification("notifications/cancelled",
                                              {"requestId": "a"})) == [Cancel("a")]
    assert session.call_result(a, {"ok": True}) is None  # cancelled while it ran
    assert session.dropped("b") is None  # cancelled while queued
    assert session.refused("c", -32000, "Server busy") is None
    line = session.abandon("d")
    assert line is not None
    answers = _answers(line)
    assert set(answers) == {"c", "d"}
    assert answers["c"]["error"]["code"] == -32000
    assert answers["d"]["error"]["code"] == _wire.INTERNAL_ERROR
    assert session.dropped("d") is None  # settled once: nothing more goes out


def test_a_batch_member_held_for_the_roots_is_answered_in_the_array(workspace):
    session = Session(Catalog(workspace), version="t")
    (ask,) = _initialized(session, "2025-03-26", roots={})
    assert session.receive(_batch(_call("h"), {"jsonrpc": "2.0", "id": "p",
                                               "method": "ping"})) == []
    released = session.receive(_wire.Response(ask.message["id"], {"roots": []}, None))
    (call,) = [a for a in released if isinstance(a, ToolCall)]
    assert set(_answers(session.call_result(call, {"ok": True}))) == {"h", "p"}
    # a held member cancelled settles its batch too
    session2 = Session(Catalog(workspace), version="t")
    _initialized(session2, "2025-03-26", roots={})
    assert session2.receive(_batch(_call("h"), {"jsonrpc": "2.0", "id": "p",
                                                "method": "ping"})) == []
    (done,) = session2.receive(_wire.Notification("notifications/cancelled",
                                                  {"requestId": "h"}))
    assert isinstance(done, SendLine) and set(_answers(done.line)) == {"p"}


def test_a_roots_answer_in_a_batch_releases_calls_that_are_not_the_batchs(workspace):
    """Calls held for the roots, sent on lines of their own, are answered
    on lines of their own when the client's roots answer comes in a batch."""
    session = Session(Catalog(workspace), version="t")
    (ask,) = _initialized(session, "2025-03-26", roots={})
    assert session.receive(_wire.decode(json.dumps(_call("alone")).encode())) == []
    answer = {"jsonrpc": "2.0", "id": ask.message["id"], "result": {"roots": []}}
    actions = session.receive(_batch(answer, _call("mine")))
    calls = {a.id: a for a in actions if isinstance(a, ToolCall)}
    assert set(calls) == {"alone", "mine"}
    line = session.call_result(calls["alone"], {"ok": True, "n": 1})
    assert json.loads(line)["id"] == "alone"  # its own line, not the batch's
    assert set(_answers(session.call_result(calls["mine"], {"ok": True}))) == {"mine"}


def test_a_batch_holds_at_most_its_byte_budget_of_answers(workspace, monkeypatch):
    from corral.mcp import _session

    monkeypatch.setattr(_session, "BATCH_BYTES", 4096)
    session = Session(Catalog(workspace), version="t")
    _initialized(session, "2025-03-26")
    a, b = session.receive(_batch(_call("a"), _call("b")))
    assert session.call_result(a, {"ok": True, "text": "x" * 3000}) is None
    answers = _answers(session.call_result(b, {"ok": True, "text": "y" * 3000}))
    assert "x" * 3000 in answers["a"]["result"]["content"][0]["text"]
    assert answers["b"]["error"]["code"] == _session.SERVER_BUSY  # over the budget
    assert "line of its own" in answers["b"]["error"]["message"]


def test_a_batch_carries_at_most_so_many_messages(workspace):
    from corral.mcp import _session

    session = Session(Catalog(workspace), version="t")
    _initialized(session, "2025-03-26")
    ping = {"jsonrpc": "2.0", "method": "ping"}
    most = [{**ping, "id": i} for i in range(_session.BATCH_MEMBERS)]
    (whole,) = session.receive(_batch(*most))
    assert len(_answers(whole.line)) == _session.BATCH_MEMBERS
    (refused,) = session.receive(_batch(*most, {**ping, "id": "one more"}))
    assert refused.message["id"] is None
    assert refused.message["error"]["code"] == _wire.INVALID_REQUEST
    assert str(_session.BATCH_MEMBERS) in refused.message["error"]["message"]


def test_a_member_held_for_the_roots_and_cancelled_in_its_own_batch(workspace):
    """The cancel settles the member at once; the batch goes out once, whole,
    when its last member is read; the id is free again afterwards."""
    session = Session(Catalog(workspace), version="t")
    _initialized(session, "2025-03-26", roots={})
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "X"}}
    ping = {"jsonrpc": "2.0", "method": "ping"}
    (out,) = session.receive(_batch({**ping, "id": "P"}, _call("X"), cancel, {**ping, "id": "Q"}))
    assert isinstance(out, SendLine) and set(_answers(out.line)) == {"P", "Q"}
    assert session.receive(_wire.decode(json.dumps(_call("X")).encode())) == []  # held, alone
    released = session.roots_unanswered()
    (call,) = [a for a in released if isinstance(a, ToolCall)]
    assert json.loads(session.call_result(call, {"ok": True}))["id"] == "X"  # its own line


def test_a_late_roots_answer_still_narrows(workspace):
    session = Session(Catalog(workspace), version="t")
    (ask,) = _initialized(session, roots={})
    assert session.roots_unanswered()[0] == RootsListed(None)  # the timeout
    late = session.receive(_wire.Response(ask.message["id"], {"roots": [{"uri": "file:///w"}]},
                                          None))
    assert late == [RootsListed(("file:///w",))]
    assert session.receive(_wire.Response(ask.message["id"], {"roots": []}, None)) == []  # once
    # after a timeout, a change is asked for again (the old request may never be answered)
    other = Session(Catalog(workspace), version="t")
    (first,) = _initialized(other, roots={"listChanged": True})
    other.roots_unanswered()
    (again,) = other.receive(_wire.Notification("notifications/roots/list_changed", {}))
    assert again.message["method"] == "roots/list" and again.message["id"] != first.message["id"]
    assert other.receive(_wire.Response(first.message["id"], {"roots": []}, None)) == []
    # a later request that times out too (the roots were known by then) is asked anew
    assert other.roots_unanswered() == []
    (third,) = other.receive(_wire.Notification("notifications/roots/list_changed", {}))
    assert third.message["id"] not in (first.message["id"], again.message["id"])


def test_roots_are_asked_for_only_after_initialized(workspace):
    session = Session(Catalog(workspace), version="t")
    session.receive(_request(0, "initialize", protocolVersion="2025-11-25",
                             capabilities={"roots": {"listChanged": True}}))
    assert session.receive(_wire.Notification("notifications/roots/list_changed", {})) == []
    (ask,) = session.receive(_wire.Notification("notifications/initialized", {}))
    assert ask.message["method"] == "roots/list" and ask.message["id"].endswith("-1")


@pytest.mark.parametrize("line", [b"{}", b'{"jsonrpc":"2.0"}', b'{"params":{}}'])
def test_an_object_that_is_neither_request_nor_answer_is_invalid(line, workspace):
    """No method and no id: not a request, and no answer either (an answer
    carries its request's id), so -32600 with a null id.  With an id it may
    be a broken answer, which is never answered (above)."""
    message = _wire.decode(line)
    assert isinstance(message, _wire.Invalid)
    assert message.reply["id"] is None
    assert message.reply["error"]["code"] == _wire.INVALID_REQUEST
    session = Session(Catalog(workspace), version="t")
    (sent,) = session.receive(message)
    assert sent.message == message.reply
    # the same, with an id of this server's own request: a broken answer, not answered
    broken = _wire.decode(b'{"jsonrpc":"2.0","id":"corral-roots-1"}')
    assert session.receive(broken) == []
