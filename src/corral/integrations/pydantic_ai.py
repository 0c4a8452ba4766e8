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


class _NotAnObject:
    """Arguments the model wrote that are not a JSON object (``[1]``,
    ``null``), carried to the tool as they are: pydantic-ai calls the tool
    with ``**arguments``, which only an object can be."""

    def __init__(self, value: Any) -> None:
        self.value = value


_WHOLE = "arguments"  # the one key carrying a _NotAnObject (never the model's own value)


def _as_keywords(value: Any) -> Any:
    return value if isinstance(value, dict) else {_WHOLE: _NotAnObject(value)}


def _runner(toolbox: Toolbox, name: str) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def run(**arguments: Any) -> dict[str, Any]:
        whole = arguments.get(_WHOLE)
        if len(arguments) == 1 and isinstance(whole, _NotAnObject):
            return await acall(toolbox, name, whole.value)  # refused as the model sent it
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
    core = require("pydantic_core", "pydantic-ai-slim", module)
    # from_schema passes what the model wrote on as it is (its validator takes
    # anything); this one also carries a value that is not an object to the tool
    keywords = core.SchemaValidator(
        core.core_schema.no_info_plain_validator_function(_as_keywords))
    tools = []
    for spec in specs_of(toolbox):
        item = definition(spec, "anthropic")  # name, description and the plain schema
        tool = tools_module.Tool.from_schema(
            _runner(toolbox, spec.name), name=item["name"], description=item["description"],
            json_schema=item["input_schema"])
        tool.function_schema.validator = keywords
        tools.append(tool)
    toolset: FunctionToolset[Any] = toolsets.FunctionToolset(tools)
    return toolset
