"""The tool registry: a tool is one module with a ``TOOL`` spec, plus its
name in :data:`TOOL_MODULES`.

Everything else about a tool derives from its :class:`ToolSpec`: whether its
requests mutate (and so whether a read-only toolbox offers it), the
annotations and output schema the front ends publish, which suggested calls
the classification boundary may offer for it, and which tools a suggestion
may be tried with (only ones that change nothing).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal
from collections.abc import Callable, Iterable, Mapping

from .._refusals.classify import Suggests
from .context import PlainCall, ToolContext
from .request_types import Request, declare

__all__ = ["ToolSpec", "Suggests", "TOOL_MODULES", "OPTIONAL_TOOL_MODULES", "load_tools",
           "read_only_tools", "success_schema", "Editing"]

@dataclass(frozen=True)
class ToolSpec:
    """One tool.

    ``run(ctx, args)`` gets arguments already checked against ``schema``
    (defaults filled in) and returns the success fields (``ok`` is added by
    the toolbox); ``output_schema`` describes the whole success envelope.
    It raises :class:`~corral.tools.Refusal` for what it decides itself and
    lets errors from the contained core propagate to the classification
    boundary.  ``request`` is the :class:`~corral.tools.Request` class it asks
    the host with; ``mutates`` says whether that request changes files (one
    source: the request class takes it from here).
    """

    name: str
    title: str
    description: str
    schema: Mapping[str, Any]
    output_schema: Mapping[str, Any]
    run: Callable[[ToolContext, dict[str, Any]], Mapping[str, Any]]
    request: type[Request]
    mutates: bool = False
    idempotent: bool = True  # the same call again changes nothing more
    destructive: bool = False  # may delete or replace what was there
    suggests: Suggests = field(default_factory=Suggests)
    # the tool's commonest call run straight, for a call nothing else
    # hears (:class:`PlainCall`): its success fields, or ``None`` where
    # ``args`` (checked) are not such a call (the toolbox then runs ``run``,
    # told what the plain run did: ``PlainCall.readied``, ``tried_plain``)
    plain: Callable[[PlainCall, dict[str, Any]], Mapping[str, Any] | None] | None = None

    def __post_init__(self) -> None:
        declare(self.request, self.mutates)

    @property
    def read_only(self) -> bool:
        return not self.mutates


def success_schema(properties: Mapping[str, Any], required: Iterable[str]) -> dict[str, Any]:
    """The JSON Schema of a success envelope: ``ok: true`` plus ``properties``
    (more fields may be added over time, so the object stays open)."""
    return {"type": "object",
            "properties": {"ok": {"type": "boolean", "const": True}, **properties},
            "required": ["ok", *required], "additionalProperties": True}


# Registry entries: the built-in tools' names, in the order tools are listed.
TOOL_MODULES = (
    "read_file",
    "write_file",
    "edit_file",
    "list_directory",
    "glob",
    "grep",
    "move_file",
    "delete_file",
    "read_files",
    "file_info",
    "make_directory",
)

# Tools every Toolbox answers but lists only when the host asks for them:
# apply_patch is the form of editing GPT-5 and Codex models are trained on,
# offered *instead of* corral's own write and edit tools (one way to change files).
OPTIONAL_TOOL_MODULES = ("apply_patch",)
Editing = Literal["corral", "apply_patch"]  # which tools a model changes files with


def load_tools(modules: Iterable[str] | None = None) -> dict[str, ToolSpec]:
    """The specs of ``modules`` (default :data:`TOOL_MODULES`; built-in tool
    names, or dotted names of modules elsewhere that define
    ``TOOL``), by tool name, in order."""
    tools: dict[str, ToolSpec] = {}
    for module_name in TOOL_MODULES if modules is None else modules:
        spec = _module(module_name).TOOL
        if not isinstance(spec, ToolSpec):
            raise TypeError(f"{module_name}.TOOL is not a ToolSpec")
        tools[spec.name] = spec
    return tools


# Built-in tools whose module is not named after the tool (a module named
# ``glob`` would shadow the standard library's wherever its folder is on sys.path).
_MODULE_OF = {"glob": "glob_tool"}


def _module(name: str) -> ModuleType:
    """The built-in tool ``name``'s module, or else the module importable as ``name``
    (a dotted name is always a module's: no built-in tool's name has a dot)."""
    if "." in name:
        return importlib.import_module(name)
    own = f"corral.tools._builtin.{_MODULE_OF.get(name, name)}"
    try:
        return importlib.import_module(own)
    except ModuleNotFoundError as exc:
        if exc.name != own:
            raise
    return importlib.import_module(name)


def read_only_tools(specs: Iterable[ToolSpec]) -> tuple[str, ...]:
    """The names of the tools that change nothing (suggestions may be tried with them)."""
    return tuple(spec.name for spec in specs if not spec.mutates)
