"""``corral serve`` on the wire: what no SDK sends, line by line.

Every request with an id gets exactly one answer, whatever the line holds:
JSON-RPC errors for bad input (-32700 parse, -32600 invalid request, -32601
unknown method, -32602 invalid params), lone surrogates and bytes that are
not UTF-8 included; notifications are never answered; a line over the limit
is refused without being held in memory, and the server goes on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers import PROTOCOL_VERSIONS, serve_command

LIMIT = 1024 * 1024  # the line limit these servers get (--max-line-bytes)


@pytest.fixture
def raw(notes_root, make_raw):
    client = make_raw(serve_command(notes_root, "--max-line-bytes", str(LIMIT)))
    client.initialize()
    return client


def _error(answer: dict, code: int, request_id) -> dict:
    assert answer["id"] == request_id, answer
    assert "result" not in answer, answer
    assert answer["error"]["code"] == code, answer
    assert isinstance(answer["error"]["message"], str) and answer["error"]["message"]
    return answer["error"]


def _still_serving(raw) -> None:
    assert raw.request("ping")["result"] == {}
    answer = raw.request("tools/call", {"name": "read_file", "arguments": {"path": "notes.txt"}})
    assert answer["result"]["structuredContent"]["ok"] is True


@pytest.mark.parametrize("version", PROTOCOL_VERSIONS)
def test_each_version_is_answered_with_itself(version, notes_root, make_raw):
    raw = make_raw(serve_command(notes_root))
    answer = raw.initialize(version)["result"]
    assert answer["protocolVersion"] == version
    assert answer["serverInfo"]["name"] == "corral"
    assert set(answer["capabilities"]) == {"tools", "logging"}
    assert "root" in answer["instructions"]
    tools = raw.request("tools/list")["result"]["tools"]
    assert {tool["name"] for tool in tools} >= {"read_file", "write_file", "grep"}


@pytest.mark.parametrize("offered", ["1999-01-01", "2026-07-28", "latest"])
def test_an_unknown_version_gets_the_newest(offered, notes_root, make_raw):
    raw = make_raw(serve_command(notes_root))
    assert raw.initialize(offered)["result"]["protocolVersion"] == PROTOCOL_VERSIONS[-1]


def test_initialize_needs_a_version_string_and_comes_once(notes_root, make_raw):
    raw = make_raw(serve_command(notes_root))
    _error(raw.request("initialize", {"protocolVersion": 20250618, "capabilities": {}}),
           -32602, 1)
    raw.initialize()
    _error(raw.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}),
           -32600, 3)


def test_a_line_that_is_not_json_is_a_parse_error(raw):
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 7, "method": "ping"\n')  # no closing brace
    _error(raw.reply(), -32700, None)
    raw.send_bytes(b"\x00\x01 garbage\n")
    _error(raw.reply(), -32700, None)
    _still_serving(raw)


def test_a_lone_surrogate_in_params_is_invalid_params_with_the_id(raw):
    raw.send_bytes(b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"read_file",'
                   b'"arguments":{"path":"x\\udcff.txt"}}}\n')
    error = _error(raw.reply(), -32602, 41)
    assert error["data"]["field"] == "params.arguments.path"
    raw.send_bytes(b'{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"read_file",'
                   b'"arguments":{"\\ud800":"x"}}}\n')
    _error(raw.reply(), -32602, 42)
    _still_serving(raw)


def test_a_surrogate_pair_is_one_character_and_fine(raw):
    raw.send_bytes(b'{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"read_file",'
                   b'"arguments":{"path":"\\ud83d\\ude00.txt"}}}\n')
    answer = raw.answer(43)
    envelope = answer["result"]["structuredContent"]
    assert envelope["code"] == "NOT_FOUND" and envelope["details"]["path"] == "\U0001f600.txt"


def test_bytes_that_are_not_utf8_are_invalid_params_with_the_id(raw):
    raw.send_bytes(b'{"jsonrpc":"2.0","id":44,"method":"tools/call","params":{"name":"read_file",'
                   b'"arguments":{"path":"bad\xff.txt"}}}\n')
    _error(raw.reply(), -32602, 44)
    raw.send_bytes(b'{"jsonrpc":"2.0","id":45,"method":"pi\xffng"}\n')
    _error(raw.reply(), -32600, 45)
    _still_serving(raw)


@pytest.mark.parametrize("line,request_id", [
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', None),  # a batch
    (b"[]", None),
    (b"42", None),
    (b'"ping"', None),
    (b'{"id":5,"method":"ping"}', 5),  # no jsonrpc member
    (b'{"jsonrpc":"1.0","id":6,"method":"ping"}', 6),
    (b'{"jsonrpc":"2.0","id":7,"method":17}', 7),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":"\\udcff","method":"ping"}', None),
])
def test_invalid_requests(line, request_id, raw):
    raw.send_bytes(line + b"\n")
    _error(raw.reply(), -32600, request_id)
    _still_serving(raw)


@pytest.mark.parametrize("method,params", [
    ("tools/call", {}),
    ("tools/call", {"name": 5}),
    ("tools/list", {"cursor": "page-2"}),
    ("logging/setLevel", {"level": "loud"}),
    ("ping", [1, 2]),
])
def test_invalid_params(method, params, raw):
    raw.send({"jsonrpc": "2.0", "id": "p", "method": method, "params": params})
    _error(raw.reply(), -32602, "p")


def test_unknown_methods_and_notifications(raw):
    for method in ("resources/list", "prompts/list", "server/discover", "notifications/x"):
        raw.send({"jsonrpc": "2.0", "id": method, "method": method})
        _error(raw.reply(), -32601, method)
    # notifications are never answered, known or not, valid or not
    for note in ({"jsonrpc": "2.0", "method": "notifications/whatever"},
                 {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
                 {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 999}},
                 {"jsonrpc": "2.0", "method": "notifications/progress", "params": "no"},
                 {"jsonrpc": "1.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 77, "result": {}},  # a response to nothing
                 {"jsonrpc": "2.0", "id": 78, "error": "not an object"}):
        raw.send(note)
    answer = raw.request("ping")  # the next answer written is this one
    assert answer["result"] == {}


def test_an_oversized_line_is_refused_with_its_id_and_the_server_goes_on(raw):
    padding = "x" * (3 * LIMIT)
    raw.send({"jsonrpc": "2.0", "id": 501, "method": "tools/call",
              "params": {"name": "write_file", "arguments": {"path": "big.txt",
                                                               "content": padding}}})
    error = _error(raw.reply(), -32600, 501)
    assert error["data"]["limit"] == LIMIT and error["data"]["size"] > 3 * LIMIT
    # the id last, as some clients order members: found at the end of the line
    line = ('{"method":"tools/call","params":{"name":"write_file","arguments":{"path":"b.txt",'
            f'"content":"{padding}"}}}},"jsonrpc":"2.0","id":"tail-id"}}\n')
    raw.send_bytes(line.encode())
    _error(raw.reply(), -32600, "tail-id")
    # an id that may belong to a nested object is not guessed
    raw.send_bytes(('{"jsonrpc":"2.0","method":"tools/call","params":{"x":"' + padding
                    + '","o":{"id":9}}}\n').encode())
    _error(raw.reply(), -32600, None)
    _still_serving(raw)


def test_an_oversized_line_was_never_written(notes_root, make_raw):
    raw = make_raw(serve_command(notes_root, "--max-line-bytes", str(LIMIT)))
    raw.initialize()
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "write_file", "arguments": {"path": "big.txt",
                                                               "content": "y" * (2 * LIMIT)}}})
    _error(raw.reply(), -32600, 1)
    assert not (notes_root / "big.txt").exists()


def _peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)")
def test_memory_stays_bounded_for_a_50_mb_line(raw):
    _still_serving(raw)
    before = _peak_rss_kib(raw.proc.pid)
    chunk = b"z" * (1 << 20)
    raw.send_bytes(b'{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":'
                   b'"write_file","arguments":{"path":"h.txt","content":"')
    for _ in range(50):
        raw.send_bytes(chunk)
    raw.send_bytes(b'"}}}\n')
    _error(raw.reply(), -32600, "huge")
    grown_mib = (_peak_rss_kib(raw.proc.pid) - before) / 1024
    assert grown_mib < 4 * LIMIT / (1 << 20) + 8, f"peak RSS grew {grown_mib:.0f} MiB"
    _still_serving(raw)


def test_blank_lines_and_crlf_are_accepted(raw):
    raw.send_bytes(b"\n\r\n   \n")
    raw.send_bytes(b'{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n')
    assert raw.answer("crlf")["result"] == {}


def test_an_id_in_use_is_refused_while_its_request_is_in_progress(raw):
    # a request still queued or running keeps its id: two calls with one id
    # sent back to back are answered once each, never confused
    call = {"jsonrpc": "2.0", "id": "same", "method": "tools/call",
            "params": {"name": "grep", "arguments": {"pattern": "hello"}}}
    raw.send_bytes((json.dumps(call).encode() + b"\n") * 2)
    answers = [raw.reply(), raw.reply()]
    assert [a["id"] for a in answers] == ["same", "same"]
    kinds = sorted("error" if "error" in a else "result" for a in answers)
    # either the first finished before the second arrived (two results) or
    # the second was refused as a duplicate while the first ran
    assert kinds in (["result", "result"], ["error", "result"])
    for answer in answers:
        if "error" in answer:
            assert answer["error"]["code"] == -32600


def test_logging_set_level_and_messages(raw):
    assert raw.request("logging/setLevel", {"level": "info"})["result"] == {}
    raw.send_bytes(b"not json\n")  # logged at info (a log notification), and answered
    _error(raw.reply(), -32700, None)
    logs = [m for m in raw.notifications if m.get("method") == "notifications/message"]
    assert logs and logs[0]["params"]["level"] == "info"
    assert logs[0]["params"]["logger"].startswith("corral")
    assert isinstance(logs[0]["params"]["data"], str)
    # back to errors only: the same mistake logs nothing
    assert raw.request("logging/setLevel", {"level": "error"})["result"] == {}
    raw.notifications.clear()
    raw.send_bytes(b"not json either\n")
    _error(raw.reply(), -32700, None)
    assert raw.request("ping")["result"] == {} and not [
        n for n in raw.notifications if n.get("method") == "notifications/message"]


def test_requests_sent_at_once_are_all_answered_then_stdin_closes(notes_root, make_raw):
    """Twenty writes sent in one go are all answered (and made) before the
    client hangs up; closing stdin then ends the server with status 0.
    (Calls still running when stdin closes are cancelled and never
    answered: tests/e2e/test_serve_lifecycle.py.)"""
    raw = make_raw(serve_command(notes_root))
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
               "params": {"name": "write_file",
                          "arguments": {"path": f"n{i}.txt", "content": str(i)}}}
              for i in range(20)]
    raw.send_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    answers = {}
    while len(answers) < 21:
        message = raw.receive(30)
        answers[message["id"]] = message
    raw.proc.stdin.close()
    with pytest.raises(EOFError):
        raw.receive(30)
    assert sorted(answers) == [1, *range(10, 30)]
    assert all("result" in a for a in answers.values())
    assert raw.proc.wait(30) == 0
    made = sorted(p.name for p in notes_root.glob("n[0-9]*.txt"))
    assert made == sorted(f"n{i}.txt" for i in range(20))


def test_stdout_carries_protocol_only(raw):
    # every line the server wrote so far parsed as JSON (RawClient.receive);
    # the banner and logs go to stderr
    _still_serving(raw)
    raw.close()
    banner = b"".join(raw.stderr)
    assert b"corral serve" in banner and b"root:" in banner
