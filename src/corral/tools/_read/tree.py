"""list_directory with ``depth`` > 1: a bounded, .gitignore-aware tree.

The answer is nested: each directory entry listed gets ``entries`` of its
own, in the shape of the first level (``name``, ``kind``, ``size`` for
files), so ``depth: 1`` (list_directory's own code) and the first level of
any deeper tree are the same list.  Nested rather than flat because a
model reads a tree as one (names are never repeated as path prefixes,
which also keeps it short), the reference server's ``directory_tree`` is
nested, and the counts that make truncation honest (``total``,
``truncated``, ``denied``, ``ignored``) belong to the directory they count.

Levels are listed breadth first under one budget (``Limits.list_entries``
entries in all), so when it runs out the upper levels are complete and
what was left out is said: a directory's ``total`` and ``truncated``, and
``unlisted`` directories (marked ``truncated``, no ``entries``) that the
budget did not reach.  The base is the handle list_directory's path
resolves to (``Root.open_handle``, the one resolver: its canonical path is where the
policy and .gitignore files are judged); below it, directories are opened
by their canonical path, no final link followed, and must be the directory
seen in their parent's listing, still at that path (else they are marked
``unreadable``, not listed); symlinks are listed as symlinks and never
followed.  Names the host's rules hide are
counted (``denied``), never named.  Below the first level, what .gitignore
ignores (and ``.git``) is left out and counted (``ignoredEntries``) unless
``includeIgnored``; on the first level it is listed, marked ``ignored``
(a directory is not entered).  The .gitignore rules are the search tools' own
(``tools/_search``, ``tools/_search_ignore``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from ...contained import DirEntry
from .._runtime.context import ToolContext
from .._runtime.view import open_below, walking
from .._runtime.view_walk import OpenDirectory
from .._policy.rules import Op
from .._runtime.request_types import TreeRequest, declare
from .._search.walk import directory_scope, entered_scope
from .._search.ignore import GIT_DIR, IgnoreScope

__all__ = ["Entry", "ListResult", "tree", "ARGUMENTS", "with_tree_output"]

CHECK_EVERY = 256  # entries between two checkpoints

ARGUMENTS: dict[str, Any] = {
    "depth": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
    "includeIgnored": {"type": "boolean", "default": False},
}


declare(TreeRequest, False)

class Entry(TypedDict):
    """One entry of a listing; a tree's directories carry their own ``entries``."""

    name: str
    kind: str
    size: NotRequired[int]
    ignored: NotRequired[bool]
    entries: NotRequired[list[Entry]]
    total: NotRequired[int]
    truncated: NotRequired[bool]
    denied: NotRequired[int]
    ignoredEntries: NotRequired[int]
    unreadable: NotRequired[bool]


class ListResult(TypedDict):
    """list_directory's answer; ``depth`` and what follows only for a tree."""

    path: str
    entries: list[Entry]
    truncated: bool
    total: int
    denied: NotRequired[int]
    depth: NotRequired[int]
    shown: NotRequired[int]
    unlisted: NotRequired[int]
    ignoredEntries: NotRequired[int]


@dataclass(eq=False)
class _Dir:
    """A directory to list: its item in the answer, where it really is,
    what it is (dev, ino), its level, and the ignore rules its parent's
    scope leads to (``None``: outside any work tree)."""

    item: Entry
    real: str
    identity: tuple[int, int]
    level: int
    ignore: IgnoreScope | None = None


@dataclass(eq=False)
class _Budget:
    """The entries a tree listing may still show, and counts of those it left out."""

    size: int
    left: int = 0
    unlisted: int = 0
    ignored: int = 0
    cut: bool = False

    def __post_init__(self) -> None:
        self.left = self.size

    @property
    def shown(self) -> int:
        return self.size - self.left


@dataclass(eq=False)
class _Listing:
    """One directory's visible entries (sorted), and what was left out."""

    entries: list[tuple[DirEntry, bool]] = field(default_factory=list)  # (entry, ignored)
    denied: int = 0
    ignored: int = 0


def tree(ctx: ToolContext, base: OpenDirectory, args: Mapping[str, Any]) -> ListResult:
    """list_directory's answer for ``depth`` > 1 of the directory ``base``
    it opened (and decided on)."""
    depth: int = min(args["depth"], ctx.limits.list_depth)
    include_ignored: bool = args["includeIgnored"]
    shown = base.shown
    identity = base.identity()
    ctx.authorize(TreeRequest(shown, depth=depth, include_ignored=include_ignored))
    if ctx.asks_host:  # the name swapped while the host decided: fail closed
        ctx.ensure_same(shown, identity)
    top: Entry = {"name": shown, "kind": "dir"}  # only its entries and counts are answered
    walk = _Walk(ctx, depth, include_ignored, _Budget(ctx.limits.list_entries))
    with walking(ctx.view, base):  # one state of the tree: no move or delete meanwhile
        walk.run(_Dir(top, base.path, identity, 1), base)
    result: ListResult = {"path": shown, "entries": top.get("entries", []),
                          "truncated": walk.budget.cut, "total": top.get("total", 0)}
    if top.get("denied"):
        result["denied"] = top["denied"]
    result["depth"] = depth
    result["shown"] = walk.budget.shown
    if walk.budget.unlisted:
        result["unlisted"] = walk.budget.unlisted
    if walk.budget.ignored:
        result["ignoredEntries"] = walk.budget.ignored
    return result


class _Walk:
    def __init__(self, ctx: ToolContext, depth: int, include_ignored: bool,
                 budget: _Budget) -> None:
        self.ctx = ctx
        self.depth = depth
        self.include_ignored = include_ignored
        self.budget = budget

    def run(self, top: _Dir, base: OpenDirectory) -> None:
        level = [top]
        while level:
            below: list[_Dir] = []
            for node in level:
                self.ctx.checkpoint()
                self.ctx.progress(self.budget.shown, None, node.real)
                if self.budget.left <= 0:
                    node.item["truncated"] = True  # the budget did not reach it
                    self.budget.unlisted += 1
                    self.budget.cut = True
                    continue
                if node is top:
                    below += self._list(node, base, top=True)
                    continue
                handle = self._open(node)
                if handle is None:
                    node.item["unreadable"] = True
                    continue
                with handle:
                    below += self._list(node, handle)
            level = below

    def _list(self, node: _Dir, handle: OpenDirectory, *, top: bool = False) -> list[_Dir]:
        """List ``node`` into its item; return its directories to list next."""
        entries = sorted(handle.scandir(stat=True), key=lambda e: e.name)
        ignore = None
        if not self.include_ignored:
            names = [entry.name for entry in entries]
            ignore = directory_scope(self.ctx, handle.fileno(), node.real, names) if top else \
                entered_scope(self.ctx, handle.fileno(), node.real, node.ignore, names)
        prefix = "" if node.real == "." else node.real + "/"
        return self._fill(node, self._scan(entries, node, ignore, prefix), prefix, ignore)

    def _open(self, node: _Dir) -> OpenDirectory | None:
        """The directory below the base, by its canonical path with no link
        followed, or ``None`` if it is gone or no longer the directory seen
        in its parent's listing (or no longer there: a link on the way
        would move its canonical path)."""
        return open_below(self.ctx.view, node.real, node.identity)

    def _scan(self, entries: list[DirEntry], node: _Dir, ignore: IgnoreScope | None,
              prefix: str) -> _Listing:
        ctx = self.ctx
        listing = _Listing()
        hide = not self.include_ignored and node.level > 1
        mark = not self.include_ignored and node.level == 1
        for index, entry in enumerate(entries):
            if index % CHECK_EVERY == CHECK_EVERY - 1:
                ctx.checkpoint()
            if not ctx.visible(prefix + entry.name, Op.LIST):  # as list_directory: deny rules hide
                listing.denied += 1
            elif hide and _ignored(ignore, entry):
                listing.ignored += 1
            else:
                # listed, and when marked ignored, not entered
                listing.entries.append((entry, mark and _ignored(ignore, entry)))
        return listing

    def _fill(self, node: _Dir, listing: _Listing, prefix: str, ignore: IgnoreScope | None
              ) -> list[_Dir]:
        item = node.item
        budget = self.budget
        entries: list[Entry] = []
        below: list[_Dir] = []
        for entry, ignored in listing.entries:
            if budget.left <= 0:
                break
            child: Entry = {"name": entry.name, "kind": entry.kind}
            info = entry.stat(follow_symlinks=False)  # taken while listing
            if entry.kind == "file" and info.st_nlink <= 1:  # as the first level: a
                child["size"] = info.st_size  # hard link's size is its other names'
            if ignored:
                child["ignored"] = True
            elif entry.kind == "dir" and node.level < self.depth:
                below.append(_Dir(child, prefix + entry.name, (info.st_dev, info.st_ino),
                                  node.level + 1,
                                  ignore.child(entry.name) if ignore is not None else None))
            entries.append(child)
            budget.left -= 1
        item["entries"] = entries
        item["total"] = len(listing.entries)
        if len(entries) < len(listing.entries):
            item["truncated"] = budget.cut = True
        if listing.denied:
            item["denied"] = listing.denied
        if listing.ignored:
            item["ignoredEntries"] = listing.ignored
        budget.ignored += listing.ignored
        return below


def ignored_entry(ignore: IgnoreScope | None, name: str, is_dir: bool) -> bool:
    """Whether the entry ``name`` of a directory whose ignore rules are
    ``ignore`` is left out as git leaves it out (``.git`` itself always)."""
    return name == GIT_DIR or (ignore is not None and ignore.ignored(name, is_dir))


def _ignored(ignore: IgnoreScope | None, entry: DirEntry) -> bool:
    return ignored_entry(ignore, entry.name, entry.kind == "dir")


def with_tree_output(schema: Mapping[str, Any]) -> dict[str, Any]:
    """list_directory's output schema with the tree's fields (entries nest)."""
    out = dict(schema)
    props = dict(out["properties"])
    entry = dict(props["entries"]["items"])
    entry_props = {
        **entry["properties"],
        "entries": {"type": "array", "items": {"$ref": "#/$defs/entry"}},
        "total": {"type": "integer", "minimum": 0}, "truncated": {"type": "boolean"},
        "denied": {"type": "integer", "minimum": 1}, "ignored": {"type": "boolean"},
        "ignoredEntries": {"type": "integer", "minimum": 1}, "unreadable": {"type": "boolean"},
    }
    entry["properties"] = entry_props
    props["entries"] = {"type": "array", "items": {"$ref": "#/$defs/entry"}}
    props.update(depth={"type": "integer", "minimum": 1}, shown={"type": "integer", "minimum": 0},
                 unlisted={"type": "integer", "minimum": 1},
                 ignoredEntries={"type": "integer", "minimum": 1})
    out["properties"] = props
    out["$defs"] = {"entry": entry}
    return out

