"""The OpenAI Agents SDK: corral's tools as ``agents.FunctionTool`` objects."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..hosts import render
from ..tools import definition
from ._common import acall, require, specs_of, too_deep

if TYPE_CHECKING:
    from agents import FunctionTool

    from ..tools import Toolbox

__all__ = ["openai_agents_tools"]


def _invoker(toolbox: Toolbox, name: str) -> Callable[[Any, str], Awaitable[str]]:
    async def invoke(context: Any, arguments: str) -> str:
        # The SDK hands over the model's arguments as JSON text; text that is
        # not JSON goes to the toolbox as it is and comes back as its refusal
        try:
            args: Any = json.loads(arguments) if arguments.strip() else {}
        except RecursionError:  # nested past what the parser follows: refused, never raised
            return envelope_json(too_deep(name))
        except ValueError:
            args = arguments
        return render(name, await acall(toolbox, name, args))
    return invoke


def openai_agents_tools(toolbox: Toolbox, *, strict: bool = True) -> list[FunctionTool]:
    """One ``FunctionTool`` per tool ``toolbox`` offers.

    With ``strict`` (the default, as the SDK recommends) the schemas are
    corral's strict export (:func:`corral.hosts.strict_schema`):
    optional arguments are required and nullable, and the model's ``null``
    means "not given".  Every result, a refusal included, is what a model is
    shown of the envelope (:func:`corral.hosts.render`), so the model reads
    the hint and the suggested call.
    """
    agents = require("agents", "openai-agents", "corral.integrations.openai_agents_tools")
    tools: list[FunctionTool] = []
    for spec in specs_of(toolbox):
        function = definition(spec, "openai", strict=strict)["function"]
        tools.append(agents.FunctionTool(
            name=function["name"], description=function["description"],
            params_json_schema=function["parameters"],
            on_invoke_tool=_invoker(toolbox, spec.name), strict_json_schema=strict))
    return tools
