"""The tool registry: a tool is one module with a ``TOOL`` spec, plus its
name in :data:`TOOL_MODULES`."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from ._context import ToolContext

__all__ = ["ToolSpec", "TOOL_MODULES", "load_tools"]


@dataclass(frozen=True)
class ToolSpec:
    """One tool.

    ``run(ctx, args)`` gets arguments already checked against ``schema``
    (defaults filled in) and returns the success fields (``ok`` is added by
    the toolbox).  It raises :class:`~corral.tools.Refusal` for what it
    decides itself and lets errors from the contained core propagate to the
    classification boundary.
    """

    name: str
    description: str
    schema: dict[str, Any]
    run: Callable[[ToolContext, dict[str, Any]], dict[str, Any]]
    mutates: bool = False


# Registry entries: module names under corral.tools, in the order tools are listed.
TOOL_MODULES = (
    "read_file",
    "write_file",
    "edit_file",
    "list_directory",
    "glob",
    "grep",
    "move_file",
    "delete_file",
)


def load_tools() -> dict[str, ToolSpec]:
    tools: dict[str, ToolSpec] = {}
    for module_name in TOOL_MODULES:
        module = importlib.import_module(f"corral.tools.{module_name}")
        spec: ToolSpec = module.TOOL
        tools[spec.name] = spec
    return tools
