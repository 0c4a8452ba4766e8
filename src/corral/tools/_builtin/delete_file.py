"""delete_file: remove a file, a symlink (never its target) or an empty directory.

A non-empty directory is refused with its entry count and a way to see
them; there is deliberately no recursive delete.  The host is asked first
(with the file's sha256, so it can keep or log what goes), and the entry
must still be the one authorized when it is removed.
"""

from __future__ import annotations

import os
from typing import Any, Literal, TypedDict

from .._read import cache as read_cache
from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._policy.rules import Op
from .._refusals.catalogue import not_directory, not_empty
from .._runtime.registry import Suggests, ToolSpec, success_schema
from .._runtime.request_types import DeleteRequest
from .._runtime.view import Pinned
from .move_file import EntryKind, entry_name, kind_of, lstat_of, named

DESCRIPTION = (
    "Delete one file, symlink (not its target) or empty directory; never recursive."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096},
    },
    "required": ["path"],
    "additionalProperties": False,
}



def _digest(ctx: ToolContext, target: Pinned, info: os.stat_result) -> str | None:
    """sha256 of the file about to go, for the host (``None`` over the
    edit size limit or if it cannot be read)."""
    if info.st_size > ctx.limits.max_edit_file_bytes:
        return None
    try:
        return target.sha256(info)
    except OSError:
        return None


class DeleteResult(TypedDict):
    path: str
    kind: EntryKind
    deleted: Literal[True]


def run(ctx: ToolContext, args: dict[str, Any]) -> DeleteResult:
    rel, trailing = entry_name(ctx, args["path"], "path")
    with ctx.view.pin(rel, Op.DELETE) as target:  # one step: every act is on what it pinned
        named(target, rel, "path")
        info = lstat_of(ctx, target, rel)
        kind = kind_of(info.st_mode)
        if trailing and kind != "directory":
            ctx.refuse_escape(rel + "/")  # "link/" to a directory outside
            raise not_directory(rel, f"{_said(rel)}/ ends with '/', but {_said(rel)} is a {kind}",
                                f"Pass \"{_said(rel)}\" without the trailing '/'.")
        if kind == "directory":
            entries = target.entries()
            if entries:
                raise not_empty(rel, entries, suggest=("list_directory", {"path": rel}))
        if kind == "file" and info.st_nlink > 1:
            # one name of several goes: the content lives on under the others,
            # which no rule may cover (a secret's would be read in the clear)
            target.decide(Op.MOVE_FROM)
        digest = _digest(ctx, target, info) if kind == "file" else None
        ctx.view.ask(DeleteRequest(target.path, kind=kind, sha256=digest), target)  # canonical
        target.same(info)  # not what the host was asked about: fail closed
        read_cache.forget(info.st_dev, info.st_ino)
        if kind == "directory":
            target.rmdir()
        else:
            target.remove()
    return {"path": rel, "kind": kind, "deleted": True}


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"},
    "kind": {"type": "string", "enum": ["file", "directory", "symlink", "special"]},
    "deleted": {"type": "boolean", "const": True},
}, ["path", "kind", "deleted"])

TOOL = ToolSpec(name="delete_file", title="Delete file", description=DESCRIPTION, schema=SCHEMA,
                output_schema=OUTPUT_SCHEMA, run=run, request=DeleteRequest, mutates=True,
                idempotent=True, destructive=True, suggests=Suggests(read_instead=True))
