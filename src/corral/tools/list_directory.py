"""list_directory: the entries of one directory, sorted, capped honestly."""

from __future__ import annotations

import stat as st
from typing import Any

from ._context import ToolContext
from ._refusal import Code, Refusal
from ._registry import ToolSpec
from ._requests import ListRequest

DESCRIPTION = (
    "List the entries of one directory: name, kind (file, dir, symlink, other) and size in bytes "
    "for files, sorted by name. Symlinks are shown as symlinks and never followed. When there are "
    "more entries than the limit, 'truncated' is true and 'total' gives the count. To find files "
    "by name in a whole tree use glob; to read a file use read_file."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096, "default": ".",
                 "description": "Directory to list, relative to the root (default \".\")."},
    },
    "additionalProperties": False,
}


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rel = ctx.rel(args["path"])
    ctx.check_deny(rel)
    info = ctx.root.stat(rel)
    if not st.S_ISDIR(info.st_mode):
        suggestion: dict[str, Any] = {}
        if st.S_ISREG(info.st_mode):
            suggestion = {"suggested_tool": "read_file", "suggested_args": {"path": rel}}
        raise Refusal(Code.INVALID_ARGUMENT, f"{rel} is a file, not a directory",
                      "Use read_file to read a file; list_directory takes a directory.",
                      details={"path": rel, "kind": "not_directory"}, **suggestion)
    ctx.authorize(ListRequest(rel))
    ctx.ensure_same(rel, (info.st_dev, info.st_ino))
    entries = sorted(ctx.root.scandir(rel), key=lambda e: e.name)
    limit = ctx.limits.list_entries
    shown = []
    denied = 0
    for entry in entries:
        if ctx.is_denied(entry.path):
            denied += 1
            continue
        if len(shown) == limit:
            continue  # counted in total below
        item: dict[str, Any] = {"name": entry.name, "kind": entry.kind}
        if entry.kind == "file":
            try:
                item["size"] = entry.stat(follow_symlinks=False).st_size
            except OSError:
                pass  # removed since listing: keep the name, say nothing more
        shown.append(item)
    total = len(entries) - denied
    result: dict[str, Any] = {"path": rel, "entries": shown, "truncated": total > len(shown),
                              "total": total}
    if denied:
        result["denied"] = denied
    return result


TOOL = ToolSpec(name="list_directory", description=DESCRIPTION, schema=SCHEMA, run=run)
