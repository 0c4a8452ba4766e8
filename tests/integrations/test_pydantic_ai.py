"""pydantic-ai: the toolset under the framework's FunctionModel and TestModel.
Refusals come back as tool results, so a run survives more refusals from one
tool than pydantic-ai's retry budget (one retry by default: a ModelRetry-based
adapter would end the run on the second refusal)."""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from corral.integrations import pydantic_ai_toolset

REFUSALS = 4  # more than pydantic-ai's default retries (1) allow


def _returns(messages) -> list[ToolReturnPart]:
    return [part for message in messages for part in message.parts
            if isinstance(part, ToolReturnPart)]


def test_refusals_are_results_and_the_run_goes_on(toolbox):
    def model(messages, info: AgentInfo) -> ModelResponse:
        turn = len(_returns(messages))
        if turn < REFUSALS:  # the same mistake, again and again
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "src/utl.py"},
                                                     tool_call_id=f"c{turn}")])
        if turn == REFUSALS:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "src/util.py"},
                                                     tool_call_id="ok")])
        return ModelResponse(parts=[TextPart("util returns 1")])

    agent = Agent(FunctionModel(model), toolsets=[pydantic_ai_toolset(toolbox)])
    result = agent.run_sync("What does util return?")
    assert result.output == "util returns 1"
    returns = _returns(result.all_messages())
    assert len(returns) == REFUSALS + 1
    for part in returns[:REFUSALS]:
        assert part.content["ok"] is False and part.content["code"] == "NOT_FOUND"
        assert part.content["hint"]
    assert returns[-1].content["ok"] is True and "return 1" in returns[-1].content["content"]


def test_test_model_calls_every_tool_and_the_run_completes(toolbox, project):
    toolset = pydantic_ai_toolset(toolbox)
    agent = Agent(TestModel(call_tools="all"), toolsets=[toolset])
    result = agent.run_sync("use every tool")
    called = {part.tool_name for part in _returns(result.all_messages())}
    assert called == set(toolbox.names)
    for part in _returns(result.all_messages()):
        assert isinstance(part.content, dict) and isinstance(part.content["ok"], bool)
    assert (project / "notes.txt").read_text() == "hello\nworld\n"  # TestModel's paths are noise


def test_the_toolset_offers_the_toolbox_tools_with_corral_schemas(toolbox):
    agent = Agent(TestModel(call_tools=[]), toolsets=[pydantic_ai_toolset(toolbox)])
    result = agent.run_sync("list")
    assert result.output  # TestModel answers without calling anything
    names = [tool.name for tool in pydantic_ai_toolset(toolbox).tools.values()]
    assert names == toolbox.names
