"""Every adapter given what a model may send in the worst case: arguments
nested 3,000 deep (as text and as parsed values), numbers far past any
count (1e308, 10**40), mistyped and oversized values.  Each answers with a
typed refusal the model reads (``INVALID_ARGUMENT``), never an exception
that escapes into the framework and ends the run.  (The Anthropic adapter,
which needs no framework, is in tests/e2e/test_no_traceback.py.)"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents.tool_context import ToolContext
from langchain_core.messages import ToolMessage

from corral.integrations import langchain_tools, openai_agents_tools, pydantic_ai_toolset

DEEP_ARRAY = "[" * 3000 + "]" * 3000
DEEP_OBJECT = '{"a":' * 3000 + "1" + "}" * 3000


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


BAD_TEXT = [
    DEEP_ARRAY,
    DEEP_OBJECT,
    '{"path": ' + DEEP_ARRAY + "}",
    '{"path": "notes.txt", "offset": 1e308}',
    '{"path": "notes.txt", "limit": 1' + "0" * 40 + "}",
    '{"path": "notes.txt", "offset": -1e308}',
    '{"path": "notes.txt", "limit": 1e999}',
    '"notes.txt"',
    '{"path": "' + "x" * 1_000_000 + '"}',
    '{"path": 5}',
]

BAD_VALUES: list[dict[str, Any]] = [
    {"path": _deep(3000)},
    {"path": "notes.txt", "offset": 1e308},
    {"path": "notes.txt", "limit": 10**40},
    {"path": "notes.txt", "offset": -(10**60)},
    {"path": ["notes.txt"]},
    {"path": "x" * 1_000_000},
    {"path": "notes.txt", "surplus": _deep(3000)},
]


def _refused(envelope: dict[str, Any]) -> None:
    assert envelope["ok"] is False and envelope["code"] == "INVALID_ARGUMENT", envelope
    assert envelope["hint"]


def _refused_text(text: str) -> None:
    """A refusal as the model reads it: the code, the sentence, the hint."""
    assert text.startswith("INVALID_ARGUMENT: "), text
    assert len(text.splitlines()) >= 2, text  # the hint follows the sentence


@pytest.mark.parametrize("text", BAD_TEXT, ids=[
    "deep-array", "deep-object", "deep-path", "offset-1e308", "limit-10**40", "offset--1e308",
    "limit-1e999", "a-string", "path-1MB", "path-number"])
def test_openai_agents_refuses_what_the_model_wrote(toolbox, text):
    tool = next(t for t in openai_agents_tools(toolbox) if t.name == "read_file")
    context = ToolContext(context=None, tool_name="read_file", tool_call_id="c1",
                          tool_arguments=text)
    _refused_text(asyncio.run(tool.on_invoke_tool(context, text)))


VALUE_IDS = ["deep-path", "offset-1e308", "limit-10**40", "offset--10**60", "path-list",
             "path-1MB", "deep-surplus"]


@pytest.mark.parametrize("arguments", BAD_VALUES, ids=VALUE_IDS)
def test_langchain_refuses_as_an_error_message(toolbox, arguments):
    tool = next(t for t in langchain_tools(toolbox) if t.name == "read_file")
    call = {"name": "read_file", "args": arguments, "id": "c1", "type": "tool_call"}
    for answer in (tool.invoke(call), asyncio.run(tool.ainvoke(call))):
        assert isinstance(answer, ToolMessage) and answer.status == "error"
        _refused_text(answer.content)


@pytest.mark.parametrize("arguments", BAD_VALUES, ids=VALUE_IDS)
def test_pydantic_ai_refuses_as_a_result(toolbox, arguments):
    toolset = pydantic_ai_toolset(toolbox)
    run = toolset.tools["read_file"].function
    _refused(asyncio.run(run(**arguments)))
