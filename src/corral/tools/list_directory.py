"""list_directory: the entries of one directory, sorted, capped honestly."""

from __future__ import annotations

import stat as st
from typing import Any

from . import _listing_tree
from ._context import ToolContext
from ._policy import Op
from ._refusal import not_directory, special_kind
from ._registry import Suggests, ToolSpec, success_schema
from ._requests import ListRequest

DESCRIPTION = (
    "List the entries of one directory: name, kind (file, dir, symlink, other) and size in bytes "
    "for files, sorted by name. Symlinks are shown as symlinks and never followed or described. "
    "When there are more entries than the limit, 'truncated' is true and 'total' gives the "
    "count; entries hidden by the host's deny rules are counted in 'denied'. To find files by "
    "name in a whole tree use glob; to read a file use read_file."
) + _listing_tree.DESCRIPTION_NOTE

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096, "default": ".",
                 "description": "Directory to list, relative to the root (default \".\")."},
        **_listing_tree.ARGUMENTS,
    },
    "additionalProperties": False,
}

CHECK_EVERY = 256  # entries between two checkpoints


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rel = ctx.rel(args["path"])
    where = ctx.check_path(rel, Op.LIST)
    info = ctx.root.stat(rel)
    shown = rel.rstrip("/") or "."
    if not st.S_ISDIR(info.st_mode):
        if st.S_ISREG(info.st_mode):
            raise not_directory(shown, f"{shown} is a file, not a directory",
                                "Use read_file to read a file; list_directory takes a directory.",
                                suggest=("read_file", {"path": shown}))
        kind = special_kind(info.st_mode).value
        raise not_directory(shown, f"{shown} is a {kind.replace('_', ' ')}, not a directory",
                            "Pass a directory; list_directory on its parent shows it.", type=kind)
    if args["depth"] > 1:  # newtools hook: the tree
        return _listing_tree.tree(ctx, rel, info, args)
    ctx.authorize(ListRequest(shown))
    identity = (info.st_dev, info.st_ino)
    ctx.ensure_same(rel, identity)  # a swap during authorization fails closed
    entries = sorted(ctx.root.scandir(rel, stat=True), key=lambda e: e.name)
    ctx.ensure_same(rel, identity)  # and one while listing
    limit = ctx.limits.list_entries
    shown_entries: list[dict[str, Any]] = []
    denied = 0
    for index, entry in enumerate(entries):
        if index % CHECK_EVERY == CHECK_EVERY - 1:
            ctx.checkpoint()
        if not ctx.visible(f"{where.path}/{entry.name}" if where.path != "." else entry.name,
                           Op.LIST):
            denied += 1
            continue
        if len(shown_entries) == limit:
            continue  # counted in total below
        item: dict[str, Any] = {"name": entry.name, "kind": entry.kind}
        if entry.kind == "file":
            try:
                item["size"] = entry.stat(follow_symlinks=False).st_size
            except OSError:
                pass  # removed since listing: keep the name, say nothing more
        shown_entries.append(item)
    total = len(entries) - denied
    result: dict[str, Any] = {"path": shown, "entries": shown_entries,
                              "truncated": total > len(shown_entries), "total": total}
    if denied:
        result["denied"] = denied
    return result


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"},
    "entries": {"type": "array", "items": {
        "type": "object",
        "properties": {"name": {"type": "string"},
                       "kind": {"type": "string", "enum": ["file", "dir", "symlink", "other"]},
                       "size": {"type": "integer"}},
        "required": ["name", "kind"]}},
    "truncated": {"type": "boolean"}, "total": {"type": "integer"},
    "denied": {"type": "integer"},
}, ["path", "entries", "truncated", "total"])

TOOL = ToolSpec(name="list_directory", title="List directory", description=DESCRIPTION,
                schema=SCHEMA, output_schema=_listing_tree.with_tree_output(OUTPUT_SCHEMA),
                run=run, request=ListRequest,
                suggests=Suggests(retry_on=frozenset({"directory"})))
