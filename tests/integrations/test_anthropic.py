"""Anthropic: run_anthropic against the real SDK client over a mocked HTTP
transport (no network): the tool definitions go out, a refusal goes back as
a tool_result with is_error true, and the conversation ends when the model
stops asking for tools."""

from __future__ import annotations

import json

import anthropic
import httpx2

from corral.integrations import anthropic_tool_results, anthropic_tools, run_anthropic


def _reply(content, stop_reason):
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}


def _tool_use(call_id, name, args):
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def test_run_anthropic_over_a_mocked_transport(toolbox):
    replies = [
        _reply([_tool_use("t1", "read_file", {"path": "src/utl.py"})], "tool_use"),
        _reply([_tool_use("t2", "read_file", {"path": "src/util.py"}),
                _tool_use("t3", "grep", {"pattern": "hello"})], "tool_use"),
        _reply([{"type": "text", "text": "util returns 1"}], "end_turn"),
    ]
    requests = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        requests.append(json.loads(request.content))
        return httpx2.Response(200, json=replies[len(requests) - 1])

    client = anthropic.Anthropic(api_key="test", http_client=httpx2.Client(
        transport=httpx2.MockTransport(handler)), max_retries=0)
    messages = [{"role": "user", "content": "What does util return?"}]
    final = run_anthropic(toolbox, messages, model="claude-test", client=client)

    assert final.content[0].text == "util returns 1" and len(requests) == 3
    assert requests[0]["tools"] == anthropic_tools(toolbox)
    first = requests[1]["messages"][-1]["content"]
    assert [block["tool_use_id"] for block in first] == ["t1"]
    assert first[0]["is_error"] is True
    assert first[0]["content"].startswith("NOT_FOUND: ")  # the rendering a model reads
    second = requests[2]["messages"][-1]["content"]
    assert [(block["tool_use_id"], block["is_error"]) for block in second] == [
        ("t2", False), ("t3", False)]
    assert "def util():\n    return 1\n[" in second[0]["content"]  # the lines themselves
    assert len(messages) == 6  # user, then assistant/user pairs, then the final assistant


def test_tool_results_from_stored_dicts(toolbox):
    content = [{"type": "text", "text": "let me look"},
               _tool_use("a", "list_directory", {"path": "."}),
               _tool_use("b", "no_such_tool", {})]
    results = anthropic_tool_results(toolbox, content)
    assert [(r["tool_use_id"], r["is_error"]) for r in results] == [("a", False), ("b", True)]
    assert results[1]["content"].startswith("INVALID_ARGUMENT: ")


def test_definitions_are_the_anthropic_shape(toolbox):
    tools = anthropic_tools(toolbox)
    assert [t["name"] for t in tools] == toolbox.names
    assert all(set(t) == {"name", "description", "input_schema"} for t in tools)
