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
    "for files, sorted by name. Symlinks are shown as symlinks and never followed or described. "
    "When there are more entries than the limit, 'truncated' is true and 'total' gives the "
    "count; entries hidden by the host's deny rules are counted in 'denied'. To find files by "
    "name in a whole tree use glob; to read a file use read_file."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096, "default": ".",
                 "description": "Directory to list, relative to the root (default \".\")."},
    },
    "additionalProperties": False,
}


_KINDS = {st.S_IFIFO: "fifo", st.S_IFSOCK: "socket", st.S_IFCHR: "char_device",
          st.S_IFBLK: "block_device"}


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rel = ctx.rel(args["path"])
    ctx.check_deny(rel)
    info = ctx.root.stat(rel)
    shown = rel.rstrip("/") or "."
    if not st.S_ISDIR(info.st_mode):
        if st.S_ISREG(info.st_mode):
            raise Refusal(Code.INVALID_ARGUMENT, f"{shown} is a file, not a directory",
                          "Use read_file to read a file; list_directory takes a directory.",
                          details={"path": shown, "kind": "not_directory"},
                          suggested_tool="read_file", suggested_args={"path": shown})
        kind = _KINDS.get(st.S_IFMT(info.st_mode), "other")
        raise Refusal(Code.INVALID_ARGUMENT, f"{shown} is a {kind.replace('_', ' ')}, not a "
                      "directory", "Pass a directory; list_directory on its parent shows it.",
                      details={"path": shown, "kind": "not_directory", "type": kind})
    ctx.authorize(ListRequest(shown))
    identity = (info.st_dev, info.st_ino)
    ctx.ensure_same(rel, identity)  # a swap during authorization fails closed
    entries = sorted(ctx.root.scandir(rel, stat=True), key=lambda e: e.name)
    ctx.ensure_same(rel, identity)  # and one while listing
    limit = ctx.limits.list_entries
    shown_entries = []
    denied = 0
    for entry in entries:
        if ctx.is_denied(entry.path):
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


TOOL = ToolSpec(name="list_directory", description=DESCRIPTION, schema=SCHEMA, run=run)
