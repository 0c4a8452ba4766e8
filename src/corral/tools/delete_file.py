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

from ._context import ToolContext
from ._refusal import Code, Refusal
from ._registry import ToolSpec
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
    ctx.check_deny(rel)
    info = ctx.root.lstat(rel)
    kind = kind_of(info.st_mode)
    if trailing and kind != "directory":
        ctx.refuse_escape(rel + "/")  # "link/" to a directory outside
        raise Refusal(Code.INVALID_ARGUMENT, f"{rel}/ ends with '/', but {rel} is a {kind}",
                      f"Pass \"{rel}\" without the trailing '/'.",
                      details={"path": rel, "kind": "not_directory"})
    if kind == "directory":
        entries = len(ctx.root.listdir(rel))
        if entries:
            raise Refusal(Code.INVALID_ARGUMENT, f"{rel} is a directory with {entries} "
                          f"entr{'y' if entries == 1 else 'ies'}; delete_file removes only empty "
                          "directories", "Delete or move what is inside it first; "
                          "list_directory shows it.",
                          details={"path": rel, "kind": "not_empty", "entries": entries},
                          suggested_tool="list_directory", suggested_args={"path": rel})
    digest = _digest(ctx, rel, info.st_size) if kind == "file" else None
    ctx.authorize(DeleteRequest(rel, kind=kind, sha256=digest))
    with ctx.lock(rel):
        ctx.ensure_same(rel, (info.st_dev, info.st_ino), follow=False, mode=info.st_mode)
        if kind == "directory":
            ctx.root.rmdir(rel)
        else:
            ctx.root.remove(rel)
    return {"path": rel, "kind": kind, "deleted": True}


TOOL = ToolSpec(name="delete_file", description=DESCRIPTION, schema=SCHEMA, run=run,
                mutates=True)
