"""The OpenAI Agents SDK: corral's tools as ``agents.FunctionTool`` objects."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..hosts import one_line, render
from ..tools import definition, v4a_patch
from ._common import acall, as_word, named_in, require, reworded, specs_of, too_deep

if TYPE_CHECKING:
    from agents import FunctionTool

    from ..tools import Toolbox

__all__ = ["CorralEditor", "apply_patch_tool", "openai_agents_tools"]


def _invoker(toolbox: Toolbox, name: str) -> Callable[[Any, str], Awaitable[str]]:
    async def invoke(context: Any, arguments: str) -> str:
        # The SDK hands over the model's arguments as JSON text; text that is
        # not JSON goes to the toolbox as it is and comes back as its refusal
        try:
            args: Any = json.loads(arguments) if arguments.strip() else {}
        except RecursionError:  # nested past what the parser follows: refused, never raised
            return render(name, too_deep(name))
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


# -- apply_patch ------------------------------------------------------------------

# apply_patch's sentences name the envelope's lines; this model sends operations
_ENVELOPE_WORDS = (
    (re.compile(r"'\*\*\* Update File: ([^']*)'"), r"update_file on \1"),
    (re.compile(r"'\*\*\* Add File: ([^']*)'"), r"create_file on \1"),
    (re.compile(r"'\*\*\* Delete File: ([^']*)'"), r"delete_file on \1"),
    (re.compile(r"(?:the )?'\*\*\* Move to:'(?: line)?"), "move_to"),
    (re.compile(r"\bthe section for\b"), "the operation on"),
)


# apply_patch's one argument, and the tool itself: this model has neither
# (as words of their own: never inside a name, ``tools/apply_patch.py``)
_PATCH_ARGUMENT = as_word("'input'")
_PATCH_TOOL = as_word("apply_patch")


def _operation_words(text: str, operation: Any, details: Any) -> str:
    """apply_patch's refusal in the operation's words; every name it says
    (the operation's, those its details carry) kept as it is on the disk."""
    for envelope, words in _ENVELOPE_WORDS:
        text = envelope.sub(words, text)
    field = f"'{_field_at_fault(operation, details)}'"
    tool = str(getattr(operation, "type", "")) or "the operation"
    names = [getattr(operation, "path", None), getattr(operation, "move_to", None),
             *named_in(details)]
    return reworded(text, lambda part: _PATCH_TOOL.sub(tool, _PATCH_ARGUMENT.sub(field, part)),
                    names)


def _field_at_fault(operation: Any, details: Any) -> str:
    """The operation's field a refusal of apply_patch's ``input`` is about:
    ``move_to`` when it names that path; else the first of ``path``,
    ``move_to``, ``diff`` holding what is refused (a NUL byte, a lone
    surrogate, an absolute path); else the diff (the patch's size is the
    diff's), or ``path`` for a ``delete_file``, which has none."""
    fields = [(name, getattr(operation, name, None)) for name in ("path", "move_to", "diff")]
    named = details.get("path") if isinstance(details, dict) else None
    if isinstance(named, str):
        return "move_to" if named == fields[1][1] and named != fields[0][1] else "path"
    for name, value in fields:
        if isinstance(value, str) and ("\x00" in value or _not_text(value)
                                       or (name != "diff" and value.startswith("/"))):
            return name
    return "diff" if isinstance(fields[2][1], str) else "path"


def _not_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return True
    return False


class CorralEditor:
    """An ``agents.ApplyPatchEditor`` that applies each operation with
    corral's ``apply_patch`` tool in the V4A dialect, so every rule of the
    toolbox holds.  A refusal is ``ApplyPatchResult(status="failed")`` with
    corral's sentence and hint; nothing raises into the run."""

    def __init__(self, toolbox: Toolbox) -> None:
        self.toolbox = toolbox

    async def _apply(self, operation: Any) -> Any:
        agents = require("agents", "openai-agents", "corral.integrations.apply_patch_tool")
        try:
            patch = v4a_patch(str(getattr(operation, "type", "")),
                              getattr(operation, "path", ""), getattr(operation, "diff", None),
                              getattr(operation, "move_to", None))
        except ValueError as exc:
            return agents.ApplyPatchResult(
                status="failed", output=f"INVALID_ARGUMENT: the operation cannot be read: {exc}\n"
                "Send one file's operation: create_file with every diff line '+', update_file "
                "with '@@' hunks of ' ', '-' and '+' lines, or delete_file without a diff.")
        envelope = await acall(self.toolbox, "apply_patch", {"input": patch, "dialect": "v4a"})
        if envelope.get("ok") is not True:
            # one line each: a sentence may name what the tool found on the disk
            details = envelope.get("details")
            text = (f"{envelope.get('code')}: "
                    f"{_operation_words(one_line(envelope.get('message')), operation, details)}")
            if envelope.get("hint"):
                text += f"\n{_operation_words(one_line(envelope['hint']), operation, details)}"
            return agents.ApplyPatchResult(status="failed", output=text)
        return agents.ApplyPatchResult(status="completed", output=render("apply_patch", envelope))

    async def create_file(self, operation: Any) -> Any:
        return await self._apply(operation)

    async def update_file(self, operation: Any) -> Any:
        return await self._apply(operation)

    async def delete_file(self, operation: Any) -> Any:
        return await self._apply(operation)


def apply_patch_tool(toolbox: Toolbox) -> Any:
    """An ``agents.ApplyPatchTool`` whose editor is :class:`CorralEditor`.
    Offer it beside corral's read and search tools
    (``openai_agents_tools(Toolbox(root, read_only=True))``), never beside
    corral's own write and edit tools: one way to change files."""
    agents = require("agents", "openai-agents", "corral.integrations.apply_patch_tool")
    return agents.ApplyPatchTool(editor=CorralEditor(toolbox))
