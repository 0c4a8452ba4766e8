"""delete_file: remove a file, a symlink (never its target) or an empty directory.

A non-empty directory is refused with its entry count and a way to see
them; there is deliberately no recursive delete.  The host is asked first
(with the file's sha256, so it can keep or log what goes), and the entry
must still be the one authorized when it is removed.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from . import _read_cache as read_cache
from ._context import ToolContext
from ._policy import Op
from ._refusal import not_directory, not_empty
from ._registry import Suggests, ToolSpec, success_schema
from ._requests import DeleteRequest
from .move_file import entry_name, kind_of

DESCRIPTION = (
    "Delete one file, symlink or empty directory. A symlink is deleted itself, never what it "
    "points to. A directory that still has entries is refused (move or delete them first; "
    "list_directory shows them): nothing is ever deleted recursively."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "File, symlink or empty directory to delete."},
    },
    "required": ["path"],
    "additionalProperties": False,
}

_DIGEST_CHUNK = 1 << 20


def _digest(ctx: ToolContext, rel: str, size: int) -> str | None:
    """sha256 of the file about to go, for the host (``None`` over the
    edit size limit or if it cannot be read)."""
    if size > ctx.limits.max_edit_file_bytes:
        return None
    backend = ctx.root.backend
    try:
        fd = ctx.root.open(rel, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    digest = hashlib.sha256()
    try:
        while True:
            ctx.checkpoint()
            chunk = backend.read(fd, _DIGEST_CHUNK)
            if not chunk:
                return digest.hexdigest()
            digest.update(chunk)
    except OSError:
        return None
    finally:
        backend.close(fd)


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rel, trailing = entry_name(ctx, args["path"], "path")
    ctx.check_path(rel, Op.DELETE, follow=False)
    info = ctx.root.lstat(rel)
    kind = kind_of(info.st_mode)
    if trailing and kind != "directory":
        ctx.refuse_escape(rel + "/")  # "link/" to a directory outside
        raise not_directory(rel, f"{rel}/ ends with '/', but {rel} is a {kind}",
                            f"Pass \"{rel}\" without the trailing '/'.")
    if kind == "directory":
        entries = len(ctx.root.listdir(rel))
        if entries:
            raise not_empty(rel, entries, suggest=("list_directory", {"path": rel}))
    digest = _digest(ctx, rel, info.st_size) if kind == "file" else None
    ctx.authorize(DeleteRequest(rel, kind=kind, sha256=digest))
    with ctx.lock(rel):
        ctx.ensure_same(rel, (info.st_dev, info.st_ino), follow=False, mode=info.st_mode)
        read_cache.forget(info.st_dev, info.st_ino)
        if kind == "directory":
            ctx.root.rmdir(rel)
        else:
            ctx.root.remove(rel)
    return {"path": rel, "kind": kind, "deleted": True}


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"},
    "kind": {"type": "string", "enum": ["file", "directory", "symlink", "special"]},
    "deleted": {"type": "boolean", "const": True},
}, ["path", "kind", "deleted"])

TOOL = ToolSpec(name="delete_file", title="Delete file", description=DESCRIPTION, schema=SCHEMA,
                output_schema=OUTPUT_SCHEMA, run=run, request=DeleteRequest, mutates=True,
                idempotent=True, destructive=True, suggests=Suggests(read_instead=True))
