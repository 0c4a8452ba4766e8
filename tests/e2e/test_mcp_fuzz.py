"""No client input may stop ``corral serve`` from answering (an unhashable
``requestId`` in a cancel, for one, must not kill the reader thread).

Odd JSON values (every JSON type, unhashable ones, huge and fractional
numbers, lone surrogates, deep nesting, NaN) go into every field the server
reads: the envelope of a message, each method's params, the tool arguments
the several-roots router reads, and the client's answers to ``roots/list``.
Afterwards every request that had a usable id has been answered exactly
once, and ``ping`` still answers.  ``initialize`` fields are read once per
session, so those go to a fresh in-process server each.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox, Workspace
from .helpers import PipedServer, RawClient, serve_roots_command


def _deep(depth: int, leaf: Any, wrap: str) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if wrap == "list" else {"a": value}
    return value


ODD: list[Any] = [
    None, True, False, 0, -1, 2**63, 10**30, -(10**30), 1.5, -0.0, float("nan"),
    float("inf"), "", "x", "\udcff", "\x00", "a" * 10_000, "../..", "/", "file:///",
    [], [1], [None, {}], {}, {"x": 1}, {"requestId": 1}, {"uri": "file:///"},
    _deep(300, 1, "list"), _deep(300, "x", "dict"),
]

Path_ = tuple[str | int, ...]

# Each template is a valid message; each path names a field the server reads.
TEMPLATES: list[tuple[dict[str, Any], list[Path_]]] = [
    ({"jsonrpc": "2.0", "id": "ID", "method": "ping"},
     [("id",), ("jsonrpc",), ("method",), ("params",)]),
    ({"jsonrpc": "2.0", "method": "notifications/initialized"},
     [("jsonrpc",), ("method",), ("params",)]),
    ({"jsonrpc": "2.0", "id": "ID", "method": "tools/list", "params": {"cursor": None}},
     [("params", "cursor")]),
    ({"jsonrpc": "2.0", "id": "ID", "method": "initialize",
      "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
     [("params", "protocolVersion"), ("params", "capabilities")]),
    ({"jsonrpc": "2.0", "id": "ID", "method": "logging/setLevel", "params": {"level": "info"}},
     [("params", "level")]),
    ({"jsonrpc": "2.0", "method": "notifications/cancelled",
      "params": {"requestId": "nothing", "reason": "r"}},
     [("params",), ("params", "requestId"), ("params", "reason")]),
    ({"jsonrpc": "2.0", "id": "ID", "method": "tools/call",
      "params": {"name": "read_file", "arguments": {"path": "one/a.txt"},
                 "_meta": {"progressToken": "t"}}},
     [("params",), ("params", "name"), ("params", "arguments"), ("params", "_meta"),
      ("params", "_meta", "progressToken"), ("params", "arguments", "path")]),
    ({"jsonrpc": "2.0", "id": "ID", "method": "tools/call",
      "params": {"name": "read_files", "arguments": {"paths": ["one/a.txt"]}}},
     [("params", "arguments", "paths"), ("params", "arguments", "paths", 0)]),
    ({"jsonrpc": "2.0", "id": "ID", "method": "tools/call",
      "params": {"name": "move_file",
                 "arguments": {"source": "one/a.txt", "destination": "one/nowhere/b.txt",
                               "dryRun": True}}},
     [("params", "arguments", "source"), ("params", "arguments", "destination")]),
]

# The client's answer to the server's roots/list, field by field.
ROOTS_ANSWER: tuple[dict[str, Any], list[Path_]] = (
    {"jsonrpc": "2.0", "id": "ID", "result": {"roots": [{"uri": "URI", "name": "n"}]}},
    [("id",), ("jsonrpc",), ("result",), ("result", "roots"), ("result", "roots", 0),
     ("result", "roots", 0, "uri"), ("error",)],
)


def _with(template: dict[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    message = copy.deepcopy(template)
    holder: Any = message
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return message


def _cases(templates: list[tuple[dict[str, Any], list[Path_]]]
           ) -> Iterator[tuple[dict[str, Any], Path_, Any]]:
    for template, paths in templates:
        for path in paths:
            for value in ODD:
                yield template, path, value


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode("utf-8", "surrogatepass") + b"\n"


def _usable_id(value: Any) -> bool:
    """A JSON-RPC id the server answers with (MCP: a string or an integer)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    return isinstance(value, int) and not isinstance(value, bool)


@pytest.fixture
def two_roots(tmp_path: Path) -> list[Path]:
    roots = [tmp_path / "one", tmp_path / "two"]
    for root in roots:
        root.mkdir()
        (root / "a.txt").write_text(f"in {root.name}\n")
    return roots


def _answer_roots(client: RawClient, roots: list[Path]) -> None:
    """Wait for the server's roots/list; answer it odd, field by field,
    each followed by a valid answer (ignored when the odd one counted) and
    a roots/list_changed that makes the server ask again."""
    request = _next_request(client, "roots/list")
    uri = roots[0].parent.as_uri()  # holds both roots: nothing narrows
    template, paths = ROOTS_ANSWER
    valid = _with(_with(template, ("id",), request["id"]), ("result", "roots", 0, "uri"), uri)
    for _, path, value in _cases([(valid, paths)]):
        client.send_bytes(_line(_with(valid, path, value)))
        client.send(_with(valid, ("id",), request["id"]))
        client.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        request = _next_request(client, "roots/list")
        valid = _with(valid, ("id",), request["id"])
    client.send(valid)


def _next_request(client: RawClient, method: str) -> dict[str, Any]:
    while True:
        message = client.receive()
        if message.get("method") == method and "id" in message:
            return message
        assert message.get("method") is not None, f"an answer to nothing: {message}"


def test_odd_values_in_every_field_never_stop_the_server(two_roots):
    client = RawClient(serve_roots_command(two_roots))
    try:
        client.initialize(capabilities={"roots": {"listChanged": True}})
        _answer_roots(client, two_roots)
        expected: dict[Any, int] = {}
        lines = []
        for n, (template, path, value) in enumerate(_cases(TEMPLATES)):
            message = _with(template, ("id",), f"f-{n}") if "id" in template else template
            message = _with(message, path, value)
            if "method" in message and "id" in message and _usable_id(message["id"]):
                expected[message["id"]] = expected.get(message["id"], 0) + 1
            lines.append(_line(message))
        # sent from a thread while answers are read: neither pipe fills up
        threading.Thread(target=client.send_bytes, args=(b"".join(lines),), daemon=True).start()
        answered = _collect(client, expected)
        assert answered == expected, "requests answered other than exactly once"
        ping = client.request("ping", timeout=10)
        assert ping.get("result") == {}, ping
        after = client.request("tools/call", {"name": "read_file",
                                              "arguments": {"path": "two/a.txt"}})
        assert "in two" in json.dumps(after["result"]), after
    finally:
        client.proc.kill()
        client.proc.wait()
    assert client.proc.returncode is not None


def _collect(client: RawClient, expected: dict[Any, int]) -> dict[Any, int]:
    """Answers by id until every expected id is answered."""
    answered: dict[Any, int] = {}
    while any(answered.get(key, 0) < count for key, count in expected.items()):
        message = client.receive(20)  # a wedged server fails here
        if "method" in message:  # a notification (or a request; left unanswered)
            continue
        if message.get("id") is not None:
            answered[message["id"]] = answered.get(message["id"], 0) + 1
    return answered


RAW_LINES = [
    b"\xff\xfe{}", b"[" * 100_000, b"{" * 100_000, b"1" * 5000, b'{"jsonrpc":"2.0","id":1e999}',
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', b"\x00", b"\r", b'"\\u0000"',
    b'{"jsonrpc":"2.0","method":"ping","id":' + b"9" * 5000 + b"}", b"[]", b"[[]]", b"null",
    b'{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"read_file",'
    b'"arguments":' + b"[" * 5000 + b"]" * 5000 + b"}}",
]


def test_odd_lines_never_stop_the_server(two_roots):
    client = RawClient(serve_roots_command(two_roots))
    try:
        client.initialize()
        for line in RAW_LINES:
            client.send_bytes(line + b"\n")
        client.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
        while (answer := client.reply(20))["id"] != "after":
            assert "error" in answer, answer  # each odd line is refused, or ignored
        assert answer.get("result") == {}, answer
    finally:
        client.proc.kill()
        client.proc.wait()


INITIALIZE_FIELDS: list[Path_] = [("params",), ("params", "protocolVersion"),
                                  ("params", "capabilities"), ("params", "capabilities", "roots"),
                                  ("params", "clientInfo")]


@pytest.mark.parametrize("field", INITIALIZE_FIELDS, ids=lambda path: ".".join(map(str, path)))
def test_odd_initialize_fields_never_stop_the_server(tmp_path, field):
    """initialize is read once per session: a fresh server (in this
    process, over pipes) for each odd value."""
    template = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25",
                           "capabilities": {"roots": {"listChanged": True}},
                           "clientInfo": {"name": "fuzz", "version": "0"}}}
    with Toolbox(tmp_path) as box:
        for value in ODD:
            piped = PipedServer(Workspace({"root": box}), roots_timeout=0.2)
            try:
                piped.send(_with(template, field, value))
                first = piped.answer(0)
                assert ("result" in first) != ("error" in first), first
                piped.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                assert piped.request(1, "ping")["result"] == {}
            finally:
                piped.close()


@pytest.mark.parametrize("line", [
    b'{"jsonrpc":"2.0","id":7,"method":"ping"}\r{"jsonrpc":"2.0","id":8,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":7,"method":"ping"}\x00',
    b'  {"jsonrpc":"2.0","id":7,"method":"ping"} trailing',
], ids=["cr-between", "nul-after", "text-after"])
def test_a_parse_error_names_the_id_of_the_object_it_begins_with(two_roots, line):
    """The id is readable, so the -32700 names it (not null), and the client
    can tell which request failed; the line is still refused (nothing of it
    runs)."""
    client = RawClient(serve_roots_command(two_roots))
    try:
        client.initialize()
        client.send_bytes(line + b"\n")
        answer = client.reply(20)
        assert answer["id"] == 7 and answer["error"]["code"] == -32700, answer
        assert client.request("ping", timeout=20).get("result") == {}
    finally:
        client.proc.kill()
        client.proc.wait()


def test_a_byte_order_mark_before_the_first_line_is_accepted(two_roots):
    client = RawClient(serve_roots_command(two_roots))
    try:
        client.send_bytes(b"\xef\xbb\xbf" + _line({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}))
        answer = client.reply(20)
        assert answer["id"] == 1 and answer["result"]["protocolVersion"] == "2025-11-25", answer
    finally:
        client.proc.kill()
        client.proc.wait()
