"""What the server says about its tools, per protocol version, free of I/O.

The listing is the MCP shape of :func:`corral.tools.tool_definitions` (what ``corral
tools --format mcp`` prints), built from the Workspace's specs; with several
roots each description also says how a path names its root.  Fields a protocol version
does not know are left out for it: ``annotations`` from 2025-03-26,
``title`` and ``outputSchema`` (and ``structuredContent`` in results) from
2025-06-18.
"""

from __future__ import annotations

import json
from typing import Any

from ..hosts import envelope_text, json_string, render_escaped
from ..tools import definition
from ..tools import Workspace
from ._wire import RequestId, scrub

__all__ = ["PROTOCOL_VERSIONS", "LATEST", "negotiate", "Catalog", "call_result", "INSTRUCTIONS"]

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = PROTOCOL_VERSIONS[-1]
_ANNOTATIONS_FROM = "2025-03-26"
_STRUCTURED_FROM = "2025-06-18"

INSTRUCTIONS = (
    "File tools confined to one directory tree (the root). Paths are relative to the root; an "
    "absolute path inside it is accepted. '..' may not climb above the root, and symlinks "
    "leading out of it are not followed. read_file shows the first, the last and every "
    "tenth line (hundredth in a read of over 1000 lines; none in a read of under 10) after "
    "its number and a tab (not in the file: never copy them into oldText or content), other "
    "lines as they are; a window's footer says which lines of how many it holds (go on at "
    "the last plus one). Answers about a file end with its sha256, short (16 hex digits, in "
    "brackets): pass it as expectedSha256 to edit_file or write_file to be refused if the "
    "file changed meanwhile. A refused call answers CODE: what is wrong, then what to do, "
    "then often 'Try:' and a call that works as things stand."
)


def negotiate(requested: str) -> str:
    """The client's version if this server speaks it, else the newest."""
    return requested if requested in PROTOCOL_VERSIONS else LATEST


def _at_least(version: str, first: str) -> bool:
    return PROTOCOL_VERSIONS.index(version) >= PROTOCOL_VERSIONS.index(first)


#: the versions whose results carry ``structuredContent``
_STRUCTURED_VERSIONS = frozenset(PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.index(_STRUCTURED_FROM):])


def _for_version(tool: dict[str, Any], version: str) -> dict[str, Any]:
    """``tool`` (the newest MCP shape) without what ``version`` does not know."""
    dropped = set()
    if not _at_least(version, _STRUCTURED_FROM):
        dropped |= {"title", "outputSchema"}
    if not _at_least(version, _ANNOTATIONS_FROM):
        dropped.add("annotations")
    return {key: value for key, value in tool.items() if key not in dropped}


class Catalog:
    """The tool listing and instructions for one Workspace (built once per
    protocol version, when first asked for: the ``initialize`` answer does
    not wait for it; nothing changes after that)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._newest: list[dict[str, Any]] | None = None
        self._listings: dict[str, list[dict[str, Any]]] = {}

    def _definitions(self) -> list[dict[str, Any]]:
        newest = self._newest
        if newest is None:
            rule = self.workspace.path_rule()
            newest = [definition(spec, "mcp") for spec in self.workspace.specs()]
            if rule:
                for item in newest:
                    item["description"] = f"{item['description']}\n\n{rule}"
            self._newest = newest
        return newest

    def tools(self, version: str) -> list[dict[str, Any]]:
        listing = self._listings.get(version)
        if listing is None:
            listing = [_for_version(item, version) for item in self._definitions()]
            self._listings[version] = listing
        return listing

    def instructions(self) -> str:
        rule = self.workspace.path_rule()
        if not rule:
            return INSTRUCTIONS
        several = INSTRUCTIONS.replace("one directory tree (the root)", "directory trees (roots)")
        return f"{several} {rule}"


def call_result(request_id: RequestId, envelope: dict[str, Any], version: str,
                tool: Any = None) -> bytes:
    """The whole answer line to a ``tools/call``: the text a model is shown
    (:func:`corral.hosts.render`, the compact rendering of the envelope),
    the envelope itself as structured content (from 2025-06-18, refusals
    included), and ``isError`` for a refusal.

    Built as text rather than through a dict, the hot path of every call.
    A non-UTF-8 file name (a lone surrogate) is spelled as its escape
    (``\\udcff``, six characters) in the text and in the structured content.
    Images (read_file of a PNG, JPEG, GIF or WebP, and such files in
    read_files) go as image content after the text, in order; the text says
    what each is instead of carrying its base64 again.
    """
    ok = envelope.get("ok") is True
    images = _images(envelope) if ok else []
    # always valid UTF-8 (a lone surrogate is written as its escape); the
    # envelope's JSON too when the same pass made it (never with images)
    quoted, made = render_escaped(tool if isinstance(tool, str) else "",
                                  _elided(envelope, images) if images else envelope)
    # an id is an int or a str (checked when the request was read); the line
    # is put together as UTF-8, the text's (the longest part) escaped straight to it
    parts = [b'{"jsonrpc":"2.0","id":', (str(request_id) if type(request_id) is int
             else _quoted(request_id) if type(request_id) is str
             else json.dumps(request_id, ensure_ascii=False)).encode("utf-8"),
             b',"result":{"content":[{"type":"text","text":', quoted, b"}"]
    for image in images:
        parts += [b',{"type":"image","data":', json.dumps(image["data"]).encode("utf-8"),
                  b',"mimeType":', json.dumps(image["mimeType"]).encode("utf-8"), b"}"]
    parts += [b'],"isError":', b"false" if ok else b"true"]
    if version in _STRUCTURED_VERSIONS:
        # (with images, what the text was made from is not the envelope)
        if made is None or images:
            structured, plain = envelope_text(envelope)
            if not plain:
                structured = json.dumps(scrub(envelope), ensure_ascii=False,
                                        separators=(",", ":"))
            made = structured.encode("utf-8")
        parts += [b',"structuredContent":', made]
    parts.append(b"}}\n")
    return b"".join(parts)


# json.dumps(text, ensure_ascii=False) without building an encoder each call
_quoted = json_string


def _is_image(item: Any) -> bool:
    return (isinstance(item, dict) and isinstance(item.get("data"), str)
            and isinstance(item.get("mimeType"), str) and item["mimeType"].startswith("image/"))


def _images(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    """The image envelopes in a success: the envelope itself (read_file)
    or its ``files`` (read_files), in order."""
    if _is_image(envelope):
        return [envelope]
    files = envelope.get("files")
    return [item for item in files if _is_image(item)] if isinstance(files, list) else []


def _elided(envelope: dict[str, Any], images: list[dict[str, Any]]) -> dict[str, Any]:
    """``envelope`` with each image's base64 replaced by where it went (for
    a tool whose answer is shown as JSON)."""
    def note(n: int, image: dict[str, Any]) -> dict[str, Any]:
        return {**image, "data": f"(the image content block {n} of this result)"}
    if images and images[0] is envelope:
        return note(1, envelope)
    numbered = {id(image): n for n, image in enumerate(images, start=1)}
    files = [note(numbered[id(item)], item) if id(item) in numbered else item
             for item in envelope["files"]]
    return {**envelope, "files": files}
