"""The Anthropic Messages API: tool definitions, ``tool_result`` blocks whose
refusals are ``is_error``, and a loop that runs the tools a reply asks for."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..hosts import render
from ..tools import Code, Kind, Refusal, offered_specs, tool_definitions
from ._common import require
from ._text_editor import EDITOR_NAME, EDITOR_TYPE, run_text_editor

if TYPE_CHECKING:
    from ..tools import Toolbox

__all__ = ["anthropic_tools", "anthropic_tool_results", "run_anthropic", "text_editor_tool"]

Editor = Literal["corral", "text_editor"]


def anthropic_tools(toolbox: Toolbox, *, editor: Editor = "corral") -> list[dict[str, Any]]:
    """The ``tools=`` list for ``client.messages.create``: corral's tools, or
    (``editor="text_editor"``) Claude's text editor beside corral's read and
    search tools, so the model has one way to change files."""
    if editor == "text_editor":
        return [*tool_definitions(toolbox, "anthropic", read_only=True), text_editor_tool(toolbox)]
    return tool_definitions(toolbox, "anthropic")


def text_editor_tool(toolbox: Toolbox, max_characters: int | None = None) -> dict[str, Any]:
    """The definition of Claude's text editor tool (built into the model: no
    schema to send).  :func:`anthropic_tool_results` runs its blocks on
    ``toolbox``; ``max_characters`` caps what one ``view`` shows."""
    del toolbox  # the definition is the same for every toolbox; kept for symmetry of calls
    tool: dict[str, Any] = {"type": EDITOR_TYPE, "name": EDITOR_NAME}
    if max_characters is not None:
        tool["max_characters"] = max_characters
    return tool


def _field(block: Any, name: str) -> Any:
    # a reply's content blocks are SDK objects; stored conversations are dicts
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def anthropic_tool_results(toolbox: Toolbox, content: Iterable[Any], *,
                           max_characters: int | None = None,
                           editor: Editor = "corral") -> list[dict[str, Any]]:
    """One ``tool_result`` block per ``tool_use`` block in ``content`` (a
    reply's ``content``), in order: what a model is shown of the envelope
    (:func:`corral.hosts.render`, a compact text), with ``is_error``
    true for a refusal.  A text editor block (``str_replace_based_edit_tool``)
    runs on the toolbox too, its refusal an ``is_error`` result with corral's
    sentence and hint.  Send them back as the next user message.

    ``editor`` is the offer :func:`anthropic_tools` made: with
    ``"text_editor"`` a block naming one of corral's tools that change
    files is refused as a tool that is not there (the model was offered
    one way to change files, whatever its reply names)."""
    # corral's offer is the toolbox's own, which refuses the rest itself
    offered = None if editor == "corral" else \
        {spec.name for spec in offered_specs(toolbox, read_only=True)}
    results = []
    for block in content:
        if _field(block, "type") != "tool_use":
            continue
        name = _field(block, "name")
        if offered is not None and name != EDITOR_NAME and \
                (not isinstance(name, str) or name not in offered):
            results.append({"type": "tool_result", "tool_use_id": _field(block, "id"),
                            "content": render(str(name), _not_offered(name, offered)),
                            "is_error": True})
            continue
        if name == EDITOR_NAME:
            done = run_text_editor(toolbox, _field(block, "input"))
            text = done.text
            # the cap is on what a view shows; a refusal is shown whole (its next step last)
            if max_characters is not None and not done.is_error and len(text) > max_characters:
                text = text[:max_characters] + "\n[cut at max_characters]"
            results.append({"type": "tool_result", "tool_use_id": _field(block, "id"),
                            "content": text, "is_error": done.is_error})
            continue
        envelope = toolbox.call(_field(block, "name"), _field(block, "input"))
        results.append({"type": "tool_result", "tool_use_id": _field(block, "id"),
                        "content": render(_field(block, "name"), envelope),
                        "is_error": envelope.get("ok") is not True})
    return results


def _not_offered(name: Any, offered: set[str]) -> dict[str, Any]:
    shown = name if isinstance(name, str) and len(name) <= 64 else "that name"
    usable = ", ".join(sorted([*offered, EDITOR_NAME]))
    return Refusal(Code.INVALID_ARGUMENT, f"there is no tool called {shown}",
                   f"Use one of: {usable}.", kind=Kind.UNKNOWN_TOOL).envelope()


def run_anthropic(toolbox: Toolbox, messages: list[Any], *, model: str, max_tokens: int = 4096,
                  client: Any = None, max_turns: int = 25, editor: Editor = "corral",
                  max_characters: int | None = None, **create: Any) -> Any:
    """Call ``client.messages.create`` with the toolbox's tools, run every
    tool the reply asks for, send the results back, and repeat until the
    model stops asking (or ``max_turns`` replies).  Returns the last reply;
    ``messages`` is extended with the whole exchange.

    ``client`` is an ``anthropic.Anthropic`` (made from the environment
    when not given); ``create`` passes further arguments (``system``...).
    ``editor="text_editor"`` offers Claude's text editor in place of
    corral's write and edit tools (see :func:`anthropic_tools`).
    """
    if client is None:
        client = require("anthropic", "anthropic", "corral.integrations.run_anthropic").Anthropic()
    tools = anthropic_tools(toolbox, editor=editor)
    if editor == "text_editor" and max_characters is not None:
        tools[-1] = text_editor_tool(toolbox, max_characters)
    reply = None
    for _ in range(max_turns):
        reply = client.messages.create(model=model, max_tokens=max_tokens, messages=messages,
                                       tools=tools, **create)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        messages.append({"role": "user",
                         "content": anthropic_tool_results(toolbox, reply.content,
                                                           max_characters=max_characters,
                                                           editor=editor)})
    return reply
