"""LangChain: corral's tools as ``StructuredTool`` objects."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..hosts import envelope_json
from ..tools import definition
from ._common import acall, require, specs_of

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

    from ..tools import Toolbox

__all__ = ["langchain_tools"]


def _answer(envelope: dict[str, Any], refused: type[Exception]) -> str:
    # a refusal is raised as ToolException, which handle_tool_error turns
    # into the tool's message with status="error": the model reads it, the
    # chain does not stop
    text = envelope_json(envelope)
    if envelope.get("ok") is not True:
        raise refused(text)
    return text


def _functions(toolbox: Toolbox, name: str, refused: type[Exception]
               ) -> tuple[Callable[..., str], Callable[..., Awaitable[str]]]:
    def run(**arguments: Any) -> str:
        return _answer(toolbox.call(name, arguments), refused)

    async def arun(**arguments: Any) -> str:
        return _answer(await acall(toolbox, name, arguments), refused)
    return run, arun


def langchain_tools(toolbox: Toolbox) -> list[StructuredTool]:
    """One ``StructuredTool`` per tool ``toolbox`` offers (sync and async).

    The schema is corral's JSON Schema (LangChain passes the model's
    arguments through; corral checks them).  A success is the envelope's
    JSON; a refusal is the same JSON in a ``ToolMessage`` with
    ``status="error"``.
    """
    lc_tools = require("langchain_core.tools", "langchain-core",
                       "corral.integrations.langchain_tools")
    tools: list[StructuredTool] = []
    for spec in specs_of(toolbox):
        item = definition(spec, "anthropic")
        run, arun = _functions(toolbox, spec.name, lc_tools.ToolException)
        tools.append(lc_tools.StructuredTool(
            name=item["name"], description=item["description"], args_schema=item["input_schema"],
            func=run, coroutine=arun, handle_tool_error=True))
    return tools
