"""An independent red-team pass (round twenty-seven, fourth team): the
LangChain adapter given a tool call whose arguments hold a name LangChain
takes for its own when it runs a ``StructuredTool`` (``self``, ``config``,
``run_manager``).  ``self`` raised ``TypeError: StructuredTool._run() got
multiple values for argument 'self'`` into the chain; ``config`` and
``run_manager`` were dropped without a word and the call ran (a
``write_file`` wrote).  Each is corral's refusal of an argument the tool
does not have, as for any other name (``callbacks``, ``surplus``), as an
error ``ToolMessage``, sync and async, and nothing is written.  And arguments
that are not an object (``None``, text, a list) raised LangChain's own
``AttributeError`` or ``TypeError``: each is corral's refusal too."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from corral.integrations import langchain_tools

NAMES = ["self", "config", "run_manager", "callbacks", "surplus"]


@pytest.mark.parametrize("name", NAMES)
def test_langchains_own_names_are_arguments_refused(toolbox: Any, project: Path,
                                                    name: str) -> None:
    tools = {tool.name: tool for tool in langchain_tools(toolbox)}
    for tool, args in (("read_file", {"path": "notes.txt"}),
                       ("write_file", {"path": "new.txt", "content": "x"})):
        call = {"name": tool, "args": {**args, name: {}}, "id": "c1", "type": "tool_call"}
        for answer in (tools[tool].invoke(call), asyncio.run(tools[tool].ainvoke(call))):
            assert isinstance(answer, ToolMessage) and answer.status == "error", answer
            assert answer.content.startswith(
                f"INVALID_ARGUMENT: {tool}: argument '{name}' is not an argument of this "
                "tool\n"), answer.content
    assert not (project / "new.txt").exists()


@pytest.mark.parametrize("args", [None, "notes.txt", ["notes.txt"]], ids=["none", "text", "list"])
def test_arguments_not_an_object_are_refused(toolbox: Any, args: Any) -> None:
    # LangChain's own parsers hand over what a model's JSON held ("[...]" too);
    # LangChain raised AttributeError or TypeError on it
    tool = next(tool for tool in langchain_tools(toolbox) if tool.name == "read_file")
    call = {"name": "read_file", "args": args, "id": "c1", "type": "tool_call"}
    for answer in (tool.invoke(call), asyncio.run(tool.ainvoke(call))):
        assert isinstance(answer, ToolMessage) and answer.status == "error", answer
        assert answer.content.startswith("INVALID_ARGUMENT: read_file: "), answer.content
        assert len(answer.content.splitlines()) >= 2, answer.content  # the next step
