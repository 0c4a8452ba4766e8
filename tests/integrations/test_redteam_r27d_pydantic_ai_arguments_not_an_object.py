"""An independent red-team pass (round twenty-seven, fourth team): the
pydantic-ai toolset given a tool call whose arguments, as the model wrote
them, are JSON but not an object (``[1]``, ``"notes.txt"``, ``null``, ``7``).
pydantic-ai hands them on unvalidated (a toolset made from a schema), and
the run ended: ``TypeError: run() argument after ** must be a mapping`` or
pydantic-ai's own ``AssertionError``.  Each is corral's refusal as the tool's
result, as every refusal is, and the run goes on to the model's answer."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from corral.integrations import pydantic_ai_toolset


@pytest.mark.parametrize("written", ["[1]", '"notes.txt"', "null", "7", '["notes.txt"]'])
def test_arguments_not_an_object_are_a_refusal_the_run_reads(toolbox: Any,
                                                             written: str) -> None:
    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("read_file", written, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("read")])

    agent = Agent(FunctionModel(model), toolsets=[pydantic_ai_toolset(toolbox)])
    result = agent.run_sync("read notes.txt")
    assert result.output == "read"
    [returned] = [part for message in result.all_messages() for part in message.parts
                  if isinstance(part, ToolReturnPart)]
    assert returned.content["ok"] is False and returned.content["code"] == "INVALID_ARGUMENT"
    assert returned.content["message"].startswith("read_file: ") and returned.content["hint"]
