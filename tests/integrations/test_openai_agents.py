"""OpenAI Agents SDK: the strict export as FunctionTool(strict_json_schema=True),
every tool called through it with strict-mode arguments (null for each
optional one), and a whole Runner.run with the SDK's ScriptedModel in which
a refusal reaches the model and it recovers."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest
from agents import Agent, FunctionTool, Runner, set_tracing_disabled
from agents.strict_schema import ensure_strict_json_schema
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext

from corral.integrations import openai_agents_tools
from corral.tools import Code, strict_schema, tool_definitions
from .helpers import SUCCEEDING, in_order, strict_arguments

set_tracing_disabled(True)  # offline: no trace export

# a refusal as a model is shown it begins with its code
REFUSED = tuple(f"{code.value}: " for code in Code)


def test_every_tool_has_a_case(toolbox):
    assert set(toolbox.names) <= set(SUCCEEDING), "add the new tool to helpers.SUCCEEDING"


def test_strict_export_is_what_the_sdk_and_strict_mode_require(toolbox):
    for item in tool_definitions(toolbox, "openai", strict=True):
        function = item["function"]
        assert function["strict"] is True
        schema = function["parameters"]
        # the SDK's own strict conversion (open objects rejected) changes nothing:
        # the export already is strict-mode JSON Schema
        assert ensure_strict_json_schema(copy.deepcopy(schema), _reject_open_objects=True) \
            == schema, function["name"]
        _assert_strict(schema, function["name"])


def _assert_strict(schema, where):
    assert "default" not in schema, where
    if schema.get("type") == "object" or "properties" in schema:
        assert schema["additionalProperties"] is False, where
        assert schema["required"] == list(schema["properties"]), where
        for name, sub in schema["properties"].items():
            _assert_strict(sub, f"{where}.{name}")
    if "items" in schema:
        _assert_strict(schema["items"], f"{where}[]")


def test_strict_schema_makes_optional_arguments_nullable():
    schema = {"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "default": 2000},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "edits": {"type": "array", "items": {"type": "object", "required": ["old"], "properties": {
            "old": {"type": "string"}, "all": {"type": "boolean", "x-note": "ours"}}}}}}
    out = strict_schema(schema)
    assert out["required"] == ["path", "limit", "mode", "edits"]
    assert out["additionalProperties"] is False
    assert out["properties"]["path"] == {"type": "string"}  # minLength: not in strict mode
    assert out["properties"]["limit"] == {"type": ["integer", "null"], "minimum": 1,
                                          "description": "Default: 2000."}
    assert out["properties"]["mode"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    inner = out["properties"]["edits"]["items"]
    assert inner["required"] == ["old", "all"] and inner["additionalProperties"] is False
    assert inner["properties"]["all"] == {"type": ["boolean", "null"]}
    assert schema["properties"]["edits"]["items"]["properties"]["all"]["x-note"] == "ours"


def _context(name: str, arguments: str) -> ToolContext:
    return ToolContext(context=None, tool_name=name, tool_call_id=f"call-{name}",
                       tool_arguments=arguments)


def test_every_tool_called_through_a_strict_function_tool(toolbox, project):
    tools = {tool.name: tool for tool in openai_agents_tools(toolbox)}
    assert list(tools) == toolbox.names
    for name in in_order(list(tools)):
        tool = tools[name]
        assert isinstance(tool, FunctionTool) and tool.strict_json_schema is True
        arguments = json.dumps(strict_arguments(toolbox.spec(name)))
        answer = asyncio.run(tool.on_invoke_tool(_context(name, arguments), arguments))
        assert not answer.startswith(REFUSED), (name, answer)  # a refusal starts "CODE: "
    assert (project / "made" / "new.txt").read_text() == "new\n"
    assert (project / "moved.txt").read_text() == "hello\nworld\n"
    assert not (project / "src" / "util.py").exists()


def test_a_refusal_is_a_result_the_agent_recovers_from(toolbox):
    model = ScriptedModel([
        [function_call("read_file", {"path": "src/utl.py", "offset": None, "limit": None},
                       call_id="c1")],
        [function_call("read_file", {"path": "src/util.py", "offset": None, "limit": None},
                       call_id="c2")],
        [assistant_message("util returns 1")],
    ])
    agent = Agent(name="coder", instructions="Read files.", model=model,
                  tools=openai_agents_tools(toolbox))
    result = asyncio.run(Runner.run(agent, "What does util return?"))
    assert result.final_output == "util returns 1"
    outputs = [item.output for item in result.new_items if item.type == "tool_call_output_item"]
    refused, read = outputs  # what a model is shown of each envelope
    assert refused.startswith("NOT_FOUND: src/utl.py does not exist\n")
    assert "src/util.py" in refused  # the did-you-mean the model acted on
    assert not read.startswith(REFUSED) and "def util():\n    return 1\n[" in read
    # what the model saw on its second turn includes the refusal's hint
    hint = refused.split("\n")[1]
    assert hint == "Check the name; src/util.py exists."
    second_input = json.dumps(model.calls[1].input, default=str)
    assert hint in json.loads(json.dumps(second_input))


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]"])
def test_arguments_that_are_not_an_object_are_refused_not_raised(toolbox, arguments):
    tool = openai_agents_tools(toolbox)[0]
    answer = asyncio.run(tool.on_invoke_tool(_context(tool.name, arguments), arguments))
    assert answer.startswith("INVALID_ARGUMENT: ")  # the refusal as a model reads it
