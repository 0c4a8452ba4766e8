"""What the server says about its tools, per protocol version, free of I/O.

The listing is built from the Workspace's own definitions (names,
descriptions and JSON Schemas verbatim) and specs (title, output schema,
whether a tool mutates, destroys, is idempotent).  Fields a protocol version
does not know are left out for it: ``annotations`` from 2025-03-26,
``title`` and ``outputSchema`` (and ``structuredContent`` in results) from
2025-06-18.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..cli import envelope_text
from ._wire import scrub

__all__ = ["PROTOCOL_VERSIONS", "LATEST", "negotiate", "Catalog", "call_result", "INSTRUCTIONS"]

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = PROTOCOL_VERSIONS[-1]
_ANNOTATIONS_FROM = "2025-03-26"
_STRUCTURED_FROM = "2025-06-18"

INSTRUCTIONS = (
    "File tools confined to one directory tree (the root). Paths are relative to the root. "
    "A refused call returns a JSON object with a code, a message, details and a hint saying "
    "what to do next; some also carry suggestedTool and suggestedArgs, a call that works."
)


def negotiate(requested: str) -> str:
    """The client's version if this server speaks it, else the newest."""
    return requested if requested in PROTOCOL_VERSIONS else LATEST


def _at_least(version: str, first: str) -> bool:
    return PROTOCOL_VERSIONS.index(version) >= PROTOCOL_VERSIONS.index(first)


@dataclass(frozen=True)
class _Facts:
    """What MCP's annotations say of one tool."""

    title: str
    read_only: bool
    destructive: bool
    idempotent: bool
    output_schema: dict[str, Any] | None


def _facts(spec: Any) -> _Facts:
    # ToolSpec's title/destructive/idempotent/output_schema are contract C3
    # (tools); until they land the defaults follow from ``mutates``.
    mutates = bool(spec.mutates)
    title = getattr(spec, "title", None) or spec.name.replace("_", " ").capitalize()
    return _Facts(title=title, read_only=not mutates,
                  destructive=bool(getattr(spec, "destructive", mutates)),
                  idempotent=bool(getattr(spec, "idempotent", not mutates)),
                  output_schema=getattr(spec, "output_schema", None))


class Catalog:
    """The tool listing and instructions for one Workspace (built once per
    protocol version; thread-safe once built, as nothing changes)."""

    def __init__(self, workspace: Any) -> None:
        self.workspace = workspace
        self._definitions = workspace.definitions()
        self._facts = {item["name"]: _facts(workspace.spec(item["name"]))
                       for item in self._definitions}
        self._listings: dict[str, list[dict[str, Any]]] = {}

    def tools(self, version: str) -> list[dict[str, Any]]:
        listing = self._listings.get(version)
        if listing is None:
            listing = [self._tool(item, version) for item in self._definitions]
            self._listings[version] = listing
        return listing

    def _tool(self, item: dict[str, Any], version: str) -> dict[str, Any]:
        facts = self._facts[item["name"]]
        tool: dict[str, Any] = {"name": item["name"]}
        if _at_least(version, _STRUCTURED_FROM):
            tool["title"] = facts.title
        tool["description"] = item["description"]
        tool["inputSchema"] = item["inputSchema"]
        if _at_least(version, _STRUCTURED_FROM) and facts.output_schema is not None:
            tool["outputSchema"] = facts.output_schema
        if _at_least(version, _ANNOTATIONS_FROM):
            tool["annotations"] = {"title": facts.title, "readOnlyHint": facts.read_only,
                                   "destructiveHint": facts.destructive,
                                   "idempotentHint": facts.idempotent, "openWorldHint": False}
        return tool

    def instructions(self) -> str:
        rule = self.workspace.path_rule()
        if not rule:
            return INSTRUCTIONS
        return (f"{INSTRUCTIONS.replace('one directory tree (the root)', 'directory trees (roots)')}"
                f" {rule}")


def call_result(envelope: dict[str, Any], version: str) -> dict[str, Any]:
    """The ``tools/call`` result for one envelope: its JSON as text, the
    envelope itself as structured content (successes, 2025-06-18 on), and
    ``isError`` for a refusal.

    A refusal has no structured content: the output schema describes the
    success envelope, and clients check structured content against it.
    A non-UTF-8 file name (a lone surrogate) is escaped in the text, which
    stays exact, and replaced by U+FFFD in the structured content.
    """
    text, plain = envelope_text(envelope)
    ok = envelope.get("ok") is True
    out: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": not ok}
    if ok and _at_least(version, _STRUCTURED_FROM):
        out["structuredContent"] = envelope if plain else scrub(envelope)
    return out
