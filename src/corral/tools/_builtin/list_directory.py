"""list_directory: the entries of one directory, sorted, capped honestly."""

from __future__ import annotations

import stat as st
from typing import Any

from ...contained import SizedListing, SpecialFileError
from .._read import tree as _listing_tree
from .._read.tree import Entry, ListResult, ignored_entry
from .._search.ignore import GIT_DIR, IGNORE_FILE, IgnoreScope
from .._search.walk import directory_scope
from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._runtime.view import holding_tree, kind_of, open_directory
from .._runtime.view_walk import OpenDirectory
from .._policy.rules import Op
from .._refusals.catalogue import not_directory, special_kind
from .._runtime.registry import Suggests, ToolSpec, success_schema
from .._runtime.request_types import ListRequest

DESCRIPTION = (
    "List a directory, one entry per line: subdirectories end in '/', files show their size "
    "in bytes. depth > 1 also lists what subdirectories hold, indented (up to 1000 entries; "
    "below the first level, what .gitignore ignores is left out unless includeIgnored). To "
    "find files by name in a tree use glob."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096, "default": "."},
        **_listing_tree.ARGUMENTS,
    },
    "additionalProperties": False,
}

CHECK_EVERY = 256  # entries between two checkpoints


def run(ctx: ToolContext, args: dict[str, Any]) -> ListResult:
    rel = ctx.rel(args["path"])
    shown = rel.rstrip("/") or "."
    with _directory(ctx, rel, shown) as handle:  # policy, host and listing: this directory
        if args["depth"] > 1:  # a tree: the host is asked about the whole depth
            return _listing_tree.tree(ctx, handle, args)
        if ctx.hears_requests:  # otherwise nothing would read the request: it is not made
            ctx.authorize(ListRequest(shown))
        if ctx.asks_host:  # THREATS row 10: the name swapped while the host decided
            info = handle.stat()
            ctx.ensure_same(rel, (info.st_dev, info.st_ino))
        with holding_tree(ctx.view):  # (after the host was asked) no new folder half made
            listing = handle.sized_listing()
        codes = dict(zip(listing.names, listing.codes))  # name -> size, or a negative kind
        ignore = _ignore_scope(ctx, handle, codes)
    names = sorted(codes)
    scope = ctx.scope(handle.path, Op.LIST)
    limit = ctx.limits.list_entries
    kinds = SizedListing.KINDS
    shown_entries: list[Entry] = []
    denied = 0
    for start in range(0, len(names), CHECK_EVERY):
        ctx.checkpoint()
        chunk = names[start:start + CHECK_EVERY]
        visible = scope.visible_names(chunk)  # chunk itself when nothing is hidden
        denied += len(chunk) - len(visible)
        room = limit - len(shown_entries)  # the rest are counted in total below
        if room > 0:
            shown_entries += [{"name": name, "kind": "file", "size": code}
                              if (code := codes[name]) >= 0 else {"name": name, "kind": kinds[code]}
                              for name in (visible if len(visible) <= room else visible[:room])]
    if ignore is not None or GIT_DIR in codes:
        for entry in shown_entries:
            if ignored_entry(ignore, entry["name"], entry["kind"] == "dir"):
                entry["ignored"] = True  # as the tree marks its first level
    total = len(names) - denied
    result: ListResult = {"path": shown, "entries": shown_entries,
                          "truncated": total > len(shown_entries), "total": total}
    if denied:
        result["denied"] = denied
    return result


def _ignore_scope(ctx: ToolContext, handle: OpenDirectory, codes: dict[str, int]
                  ) -> IgnoreScope | None:
    """The ignore rules for the entries of ``handle``'s directory, as the
    tree and the searches read them; ``None`` when none can apply (outside
    any work tree, or the root without a .gitignore or a .git: then nothing
    is read)."""
    if handle.path == "." and IGNORE_FILE not in codes and GIT_DIR not in codes:
        return None
    return directory_scope(ctx, handle.fileno(), handle.path, codes)


def _directory(ctx: ToolContext, rel: str, shown: str) -> OpenDirectory:
    """The directory, open (the policy checked where it really is);
    anything else is refused, a file with a read_file suggestion."""
    try:
        return open_directory(ctx.view, rel, Op.LIST)
    except (NotADirectoryError, SpecialFileError):
        info = kind_of(ctx.view, rel)
        if st.S_ISREG(info.st_mode):
            raise not_directory(shown, f"{_said(shown)} is a file, not a directory",
                                "Use read_file to read a file; list_directory takes a directory.",
                                suggest=("read_file", {"path": shown})) from None
        kind = special_kind(info.st_mode).value
        raise not_directory(shown, f"{_said(shown)} is a {kind.replace('_', ' ')}, not a directory",
                            "Pass a directory; list_directory on its parent shows it.",
                            type=kind) from None


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"},
    "entries": {"type": "array", "items": {
        "type": "object",
        "properties": {"name": {"type": "string"},
                       "kind": {"type": "string", "enum": ["file", "dir", "symlink", "other"]},
                       "size": {"type": "integer"},
                       "ignored": {"type": "boolean",
                                   "description": "ignored by .gitignore (or .git itself)"}},
        "required": ["name", "kind"]}},
    "truncated": {"type": "boolean"}, "total": {"type": "integer"},
    "denied": {"type": "integer"},
}, ["path", "entries", "truncated", "total"])

TOOL = ToolSpec(name="list_directory", title="List directory", description=DESCRIPTION,
                schema=SCHEMA, output_schema=_listing_tree.with_tree_output(OUTPUT_SCHEMA),
                run=run, request=ListRequest,
                suggests=Suggests(retry_on=frozenset({"directory"})))
