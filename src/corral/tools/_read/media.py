"""Images for read_file: PNG, JPEG, GIF and WebP, told by their magic bytes.

:func:`read_image` is read_file's hook: given the open, authorized file of a
regular file, it looks at the first bytes and, for an image, answers the
whole file as base64 ``data`` with its ``mimeType`` (and ``width`` /
``height`` when the header gives them cheaply), within
``Limits.read_image_bytes``.  Anything else answers ``None`` and read_file
goes on as for text (other binary files keep its binary refusal).

The name of the file is never consulted: ``logo.png`` holding text is
text, and a PNG called ``notes.txt`` is an image.  The MCP front end maps
the envelope to an ``ImageContent`` (``data`` and ``mimeType`` are that
type's field names).
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from .._runtime.context import ToolContext
from .._refusals.catalogue import Refusal, file_too_large
from .._runtime.view_read import OpenFile

__all__ = ["sniff", "dimensions", "read_image", "IMAGE_OUTPUT", "with_image_output",
           "MIME_TYPES"]

HEAD_BYTES = 32  # enough for every magic number and the PNG/GIF/WebP sizes
CHUNK = 1024 * 1024
JPEG_SEGMENTS = 256  # markers walked looking for a JPEG's size ("when cheap")

_PNG = b"\x89PNG\r\n\x1a\n"
MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


#: The first byte of every image :func:`sniff` recognises: a file starting
#: otherwise is no image, and is not sniffed.
FIRST_BYTES = frozenset({b"\x89", b"\xff", b"G", b"R"})


def sniff(head: bytes) -> str | None:
    """The image MIME type ``head`` (a file's first bytes) starts, or ``None``."""
    if head.startswith(_PNG):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(mime: str, data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from the image's header, ``None`` if it does not say."""
    if mime == "image/png":
        if data[12:16] == b"IHDR" and len(data) >= 24:
            return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        return None
    if mime == "image/gif":
        if len(data) >= 10:
            return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
        return None
    if mime == "image/webp":
        return _webp_size(data)
    if mime == "image/jpeg":
        return _jpeg_size(data)
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        return (int.from_bytes(data[26:28], "little") & 0x3FFF,
                int.from_bytes(data[28:30], "little") & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        return (int.from_bytes(data[24:27], "little") + 1,
                int.from_bytes(data[27:30], "little") + 1)
    return None


# start-of-frame markers: every SOFn but DHT (C4), JPG (C8) and DAC (CC)
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_STANDALONE = frozenset(range(0xD0, 0xD8)) | {0x01}  # RSTn, TEM: no length


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk at most :data:`JPEG_SEGMENTS` markers to the first start of frame."""
    pos = 2
    for _ in range(JPEG_SEGMENTS):
        while pos < len(data) and data[pos] == 0xFF and pos + 1 < len(data) \
                and data[pos + 1] == 0xFF:
            pos += 1  # fill bytes
        if pos + 4 > len(data) or data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker in _STANDALONE:
            pos += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before
            return None
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if marker in _SOF:
            if pos + 9 > len(data) or length < 7:
                return None
            return (int.from_bytes(data[pos + 7:pos + 9], "big"),
                    int.from_bytes(data[pos + 5:pos + 7], "big"))
        if length < 2:
            return None
        pos += 2 + length
    return None


class ImageResult(TypedDict):
    """read_file's answer for an image."""

    path: str
    mimeType: str
    data: str
    size: int
    sha256: str
    width: NotRequired[int]
    height: NotRequired[int]


def read_image(ctx: ToolContext, rel: str, opened: OpenFile, info: os.stat_result
               ) -> ImageResult | None:
    """read_file's answer for an image at the open regular file ``opened``
    (``info`` its fstat), or ``None`` when the file is not one."""
    if info.st_size < 12:
        return None
    pread = opened.pread
    mime = sniff(pread(HEAD_BYTES, 0))
    if mime is None:
        return None
    limit = ctx.limits.read_image_bytes
    if info.st_size > limit:
        raise _too_large(rel, info.st_size, limit, mime)
    chunks: list[bytes] = []
    size = 0
    while True:
        ctx.checkpoint()
        chunk = pread(min(CHUNK, limit + 1 - size), size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:  # it grew since fstat
            raise _too_large(rel, size, limit, mime)
    data = b"".join(chunks)
    result: ImageResult = {"path": rel, "mimeType": mime,
                           "data": base64.b64encode(data).decode("ascii"),
                           "size": size, "sha256": hashlib.sha256(data).hexdigest()}
    size_px = dimensions(mime, data)
    if size_px is not None:
        result["width"], result["height"] = size_px
    return result


def _too_large(rel: str, size: int, limit: int, mime: str) -> Refusal:
    refusal = file_too_large(rel, size, limit, "read_file")
    return refusal.replace(
        hint="Do not read this image whole; ask the user for a smaller copy (file_info gives "
             "its size).", details={"mimeType": mime})


IMAGE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "const": True},
        "path": {"type": "string"},
        "mimeType": {"type": "string", "enum": list(MIME_TYPES)},
        "data": {"type": "string", "contentEncoding": "base64"},
        "size": {"type": "integer", "minimum": 0},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "width": {"type": "integer", "minimum": 0},
        "height": {"type": "integer", "minimum": 0},
    },
    "required": ["ok", "path", "mimeType", "data", "size", "sha256"],
    "additionalProperties": True,
}


def with_image_output(text: Mapping[str, Any]) -> dict[str, Any]:
    """read_file's output schema: its text envelope or an image envelope."""
    return {"type": "object", "anyOf": [dict(text), IMAGE_OUTPUT]}

