"""LangChain: corral's tools as ``StructuredTool`` objects."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..hosts import render
from ..tools import definition
from ._common import MAX_DEPTH, acall, nested_deeper, require, specs_of, too_deep

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

    from ..tools import Toolbox

__all__ = ["langchain_tools"]


def _answer(name: str, envelope: dict[str, Any], refused: type[Exception]) -> str:
    # a refusal is raised as ToolException, which handle_tool_error turns
    # into the tool's message with status="error": the model reads it, the
    # chain does not stop
    text = render(name, envelope)
    if envelope.get("ok") is not True:
        raise refused(text)
    return text


def _functions(toolbox: Toolbox, name: str, refused: type[Exception]
               ) -> tuple[Callable[..., str], Callable[..., Awaitable[str]]]:
    def run(**arguments: Any) -> str:
        return _answer(name, toolbox.call(name, arguments), refused)

    async def arun(**arguments: Any) -> str:
        return _answer(name, await acall(toolbox, name, arguments), refused)
    return run, arun


def langchain_tools(toolbox: Toolbox) -> list[StructuredTool]:
    """One ``StructuredTool`` per tool ``toolbox`` offers (sync and async).

    The schema is corral's JSON Schema (LangChain passes the model's
    arguments through; corral checks them).  A success is what a model is
    shown of the envelope (:func:`corral.hosts.render`, a compact text); a
    refusal is its text (code, sentence, hint, suggested call) in a
    ``ToolMessage`` with ``status="error"``.
    """
    lc_tools = require("langchain_core.tools", "langchain-core",
                       "corral.integrations.langchain_tools")
    tool_class = _guarded(lc_tools.StructuredTool, toolbox)
    tools: list[StructuredTool] = []
    for spec in specs_of(toolbox):
        item = definition(spec, "anthropic")
        run, arun = _functions(toolbox, spec.name, lc_tools.ToolException)
        tools.append(tool_class(
            name=item["name"], description=item["description"], args_schema=item["input_schema"],
            func=run, coroutine=arun, handle_tool_error=True))
    return tools


# names LangChain's StructuredTool takes from a call's arguments for itself
# (``self`` collides with its method's, the others it drops or replaces)
_LANGCHAINS_OWN = frozenset({"self", "config", "run_manager"})


def _guarded(base: Any, toolbox: Toolbox) -> Any:
    """``StructuredTool`` that answers, before LangChain handles them, a
    tool call whose arguments LangChain would choke on (nested deeper than
    JSON text could carry them: it prints its input, which fails past
    Python's recursion limit; not an object) or read as its own (a name in
    :data:`_LANGCHAINS_OWN`): the model gets the refusal as an error
    ``ToolMessage``, corral's own for the arguments as sent."""

    def unusable(call: Any) -> bool:
        if not (isinstance(call, dict) and call.get("type") == "tool_call"):
            return False
        args = call.get("args")
        return not isinstance(args, dict) or not _LANGCHAINS_OWN.isdisjoint(args)

    def message(tool: Any, call: Any, envelope: dict[str, Any]) -> Any:
        from langchain_core.messages import ToolMessage

        return ToolMessage(content=render(tool.name, envelope), name=tool.name,
                           tool_call_id=call.get("id"),
                           status="success" if envelope.get("ok") is True else "error")

    def too_deeply(call: Any) -> bool:
        return (isinstance(call, dict) and call.get("type") == "tool_call"
                and nested_deeper(call.get("args"), MAX_DEPTH))

    def invoke(self: Any, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if too_deeply(input):
            return message(self, input, too_deep(self.name))
        if unusable(input):  # the toolbox refuses them, naming what the model sent
            return message(self, input, toolbox.call(self.name, input.get("args")))
        return base.invoke(self, input, config, **kwargs)

    async def ainvoke(self: Any, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if too_deeply(input):
            return message(self, input, too_deep(self.name))
        if unusable(input):
            return message(self, input, await acall(toolbox, self.name, input.get("args")))
        return await base.ainvoke(self, input, config, **kwargs)

    return type("CorralStructuredTool", (base,), {"invoke": invoke, "ainvoke": ainvoke})
