"""The Anthropic Messages API: tool definitions, ``tool_result`` blocks whose
refusals are ``is_error``, and a loop that runs the tools a reply asks for."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..hosts import render
from ..tools import tool_definitions
from ._common import require

if TYPE_CHECKING:
    from ..tools import Toolbox

__all__ = ["anthropic_tools", "anthropic_tool_results", "run_anthropic"]


def anthropic_tools(toolbox: Toolbox) -> list[dict[str, Any]]:
    """The ``tools=`` list for ``client.messages.create``."""
    return tool_definitions(toolbox, "anthropic")


def _field(block: Any, name: str) -> Any:
    # a reply's content blocks are SDK objects; stored conversations are dicts
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def anthropic_tool_results(toolbox: Toolbox, content: Iterable[Any]) -> list[dict[str, Any]]:
    """One ``tool_result`` block per ``tool_use`` block in ``content`` (a
    reply's ``content``), in order: what a model is shown of the envelope
    (:func:`corral.hosts.render`, a compact text), with ``is_error``
    true for a refusal.  Send them back as the next user message."""
    results = []
    for block in content:
        if _field(block, "type") != "tool_use":
            continue
        envelope = toolbox.call(_field(block, "name"), _field(block, "input"))
        results.append({"type": "tool_result", "tool_use_id": _field(block, "id"),
                        "content": render(_field(block, "name"), envelope),
                        "is_error": envelope.get("ok") is not True})
    return results


def run_anthropic(toolbox: Toolbox, messages: list[Any], *, model: str, max_tokens: int = 4096,
                  client: Any = None, max_turns: int = 25, **create: Any) -> Any:
    """Call ``client.messages.create`` with the toolbox's tools, run every
    tool the reply asks for, send the results back, and repeat until the
    model stops asking (or ``max_turns`` replies).  Returns the last reply;
    ``messages`` is extended with the whole exchange.

    ``client`` is an ``anthropic.Anthropic`` (made from the environment
    when not given); ``create`` passes further arguments (``system``...).
    """
    if client is None:
        client = require("anthropic", "anthropic", "corral.integrations.run_anthropic").Anthropic()
    tools = anthropic_tools(toolbox)
    reply = None
    for _ in range(max_turns):
        reply = client.messages.create(model=model, max_tokens=max_tokens, messages=messages,
                                       tools=tools, **create)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        messages.append({"role": "user",
                         "content": anthropic_tool_results(toolbox, reply.content)})
    return reply
