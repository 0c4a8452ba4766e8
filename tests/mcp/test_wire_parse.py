"""The wire's JSON parse is json.loads's: the same value, or the same error
(its text reaches the client as a parse error's reason)."""

from __future__ import annotations

import json

import pytest

from corral.mcp import _wire

LINES = [
    "{}", " {}", "{} ", '{"a":1}', '{"a":1}x}', '{"a":', "[1]", '"x"', '{"a":NaN}',
    '{"a":1}{"b":}', '{"a":"\\ud800"}', '{"a"}', "x}", "}", "", '{"a":1,}',
    '{"a": [1, 2.5e3, true, null, {"b": "\\u00e9"}]}', '{"a":1}\r}', "{" * 5000 + "}" * 5000,
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{}}}',
]


def _outcome(parse: object, line: str) -> tuple[object, object]:
    assert callable(parse)
    try:
        return "value", parse(line)
    except (ValueError, RecursionError) as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize("line", LINES)
def test_parse_is_json_loads(line: str) -> None:
    assert _outcome(_wire._parse, line) == _outcome(json.loads, line)


@pytest.mark.parametrize("line", ['{"a":1} }', '{"a":1}x}', '{"a":'])
def test_a_broken_line_is_answered_with_json_loads_reason(line: str) -> None:
    decoded = _wire.decode(line.encode())
    assert isinstance(decoded, _wire.Invalid) and decoded.reply is not None
    try:
        json.loads(line)
    except ValueError as exc:
        assert decoded.reply["error"]["data"] == {"reason": str(exc)[:200]}
