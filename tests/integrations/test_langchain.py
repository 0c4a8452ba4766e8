"""LangChain: StructuredTools driven by the framework's GenericFakeChatModel
in a tool-calling loop; refusals are ToolMessages with status="error" whose
content is the refusal envelope, and the loop goes on."""

from __future__ import annotations

import asyncio

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool

from corral.integrations import langchain_tools
from corral.tools import Code
from corral.hosts import published_schema
from .helpers import SUCCEEDING, in_order

# a refusal as a model is shown it begins with its code
REFUSED = tuple(f"{code.value}: " for code in Code)


def _call(name, args, call_id):
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def test_a_tool_calling_loop_recovers_from_a_refusal(toolbox):
    tools = {tool.name: tool for tool in langchain_tools(toolbox)}
    model = GenericFakeChatModel(messages=iter([
        AIMessage("", tool_calls=[_call("read_file", {"path": "src/utl.py"}, "c1")]),
        AIMessage("", tool_calls=[_call("read_file", {"path": "src/util.py"}, "c2")]),
        AIMessage("util returns 1"),
    ]))
    messages = [HumanMessage("What does util return?")]
    while True:
        reply = model.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            break
        messages += [tools[call["name"]].invoke(call) for call in reply.tool_calls]
    assert messages[-1].content == "util returns 1"
    refused, read = (m for m in messages if isinstance(m, ToolMessage))
    assert refused.status == "error" and refused.tool_call_id == "c1"
    # what a model is shown: the refusal's code, sentence and hint; the lines read
    assert refused.content.startswith("NOT_FOUND: src/utl.py does not exist\n")
    assert "Check the name; src/util.py exists." in refused.content
    assert read.status == "success" and "def util():\n    return 1\n[" in read.content


def test_every_tool_sync_and_async(toolbox, project):
    tools = {tool.name: tool for tool in langchain_tools(toolbox)}
    assert list(tools) == toolbox.names
    for index, name in enumerate(in_order(list(tools))):
        tool = tools[name]
        assert isinstance(tool, StructuredTool)
        call = _call(name, SUCCEEDING[name], f"c{index}")
        # alternate the sync and the async path (await toolbox.acall)
        message = tool.invoke(call) if index % 2 else asyncio.run(tool.ainvoke(call))
        assert message.status == "success", (name, message.content)
        assert not message.content.startswith(REFUSED), (name, message.content)
    assert (project / "moved.txt").exists() and not (project / "src" / "util.py").exists()


def test_tool_schemas_are_corral_schemas(toolbox):
    for tool in langchain_tools(toolbox):
        assert tool.args_schema == published_schema(toolbox.spec(tool.name).schema)
        assert set(tool.args) == set(toolbox.spec(tool.name).schema["properties"])
