"""The tools in each host's shape (see :mod:`corral.hosts` for the formats),
built from the registry's :class:`~corral.tools.ToolSpec` entries, so
listing the tools needs no root and no :class:`~corral.tools.Toolbox`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...hosts import FORMATS, HostFormat, output_schema, published_schema, strict_schema
from .registry import OPTIONAL_TOOL_MODULES, Editing, ToolSpec, load_tools

if TYPE_CHECKING:
    from .toolbox import Toolbox

__all__ = ["PATH_CONTRACT", "tool_definitions", "definition", "offered_specs"]

# What every description ends with, for hosts that show a model no server
# instructions: the one convention every tool shares, in one short sentence
# (the MCP server's instructions say the rest once).
PATH_CONTRACT = "Paths are relative to the root."


def offered_specs(source: Toolbox | Iterable[ToolSpec] | None = None, *,
                  read_only: bool = False, editing: Editing = "corral") -> list[ToolSpec]:
    """The specs to list: a toolbox's offered tools, the given specs, or
    (``None``) every registered tool (with ``editing="apply_patch"``, the
    tools that change nothing and apply_patch); ``read_only`` leaves out
    mutating ones."""
    if source is None and editing == "apply_patch":
        specs: list[ToolSpec] = [spec for spec in load_tools().values() if not spec.mutates]
        specs += load_tools(OPTIONAL_TOOL_MODULES).values()
    elif source is None:
        specs = list(load_tools().values())
    elif isinstance(source, Iterable):
        specs = list(source)
    else:
        specs = source.specs()
    return [spec for spec in specs if not (read_only and spec.mutates)]


def _mcp_annotations(spec: ToolSpec) -> dict[str, Any]:
    return {"title": spec.title, "readOnlyHint": not spec.mutates,
            "destructiveHint": spec.destructive and spec.mutates,
            "idempotentHint": spec.idempotent, "openWorldHint": False}


def definition(spec: ToolSpec, fmt: HostFormat = "mcp", *, strict: bool = False
               ) -> dict[str, Any]:
    """One tool in host ``fmt``'s shape (``strict`` applies to the two
    ``openai`` formats)."""
    description = f"{spec.description} {PATH_CONTRACT}"
    schema = published_schema(spec.schema)
    if fmt == "mcp":
        item: dict[str, Any] = {"name": spec.name, "title": spec.title,
                                "description": description, "inputSchema": schema}
        if spec.output_schema:
            item["outputSchema"] = output_schema(spec.output_schema)
        item["annotations"] = _mcp_annotations(spec)
        return item
    if fmt == "openai":
        return {"type": "function",
                "function": {"name": spec.name, "description": description,
                             "parameters": strict_schema(schema) if strict else schema,
                             "strict": strict}}
    if fmt == "openai-responses":
        return {"type": "function", "name": spec.name, "description": description,
                "parameters": strict_schema(schema) if strict else schema, "strict": strict}
    if fmt == "anthropic":
        return {"name": spec.name, "description": description, "input_schema": schema}
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def tool_definitions(source: Toolbox | Sequence[ToolSpec] | None = None,
                     fmt: HostFormat = "mcp", *, strict: bool = False,
                     read_only: bool = False, editing: Editing = "corral"
                     ) -> list[dict[str, Any]]:
    """Every offered tool in host ``fmt``'s shape (see the module doc);
    ``source`` and ``editing`` as :func:`offered_specs` takes them."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return [definition(spec, fmt, strict=strict)
            for spec in offered_specs(source, read_only=read_only, editing=editing)]
