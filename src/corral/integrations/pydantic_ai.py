"""pydantic-ai: corral's tools as one ``FunctionToolset``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..tools import definition
from ._common import acall, require, specs_of

if TYPE_CHECKING:
    from pydantic_ai.toolsets import FunctionToolset

    from ..tools import Toolbox

__all__ = ["pydantic_ai_toolset"]


def _runner(toolbox: Toolbox, name: str) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def run(**arguments: Any) -> dict[str, Any]:
        return await acall(toolbox, name, arguments)
    run.__name__ = name
    return run


def pydantic_ai_toolset(toolbox: Toolbox) -> FunctionToolset[Any]:
    """A toolset with one tool per tool ``toolbox`` offers.

    A refusal is the tool's *result* (the envelope, ``"ok": false`` with the
    hint and suggested call), not a ``ModelRetry``: pydantic-ai ends a run
    once one tool has used up its retries (after two refusals by default),
    while a model that reads a refusal usually recovers on the next call.
    The arguments go to corral unvalidated by pydantic (corral checks them
    and refuses with a field-level message).
    """
    module = "corral.integrations.pydantic_ai_toolset"
    tools_module = require("pydantic_ai.tools", "pydantic-ai-slim", module)
    toolsets = require("pydantic_ai.toolsets", "pydantic-ai-slim", module)
    tools = []
    for spec in specs_of(toolbox):
        item = definition(spec, "anthropic")  # name, description and the plain schema
        tools.append(tools_module.Tool.from_schema(
            _runner(toolbox, spec.name), name=item["name"], description=item["description"],
            json_schema=item["input_schema"]))
    toolset: FunctionToolset[Any] = toolsets.FunctionToolset(tools)
    return toolset
