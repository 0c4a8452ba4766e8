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
budget did not reach.  Directories are entered by their canonical path and
checked to be the directory seen in their parent's listing; symlinks are
listed as symlinks and never followed.  Names the host's rules hide are
counted (``denied``), never named.  Below the first level, what .gitignore
ignores (and ``.git``) is left out and counted (``ignoredEntries``) unless
``includeIgnored``; on the first level it is listed, marked ``ignored``
(a directory is not entered).  The .gitignore rules are the search tools' own
(``tools/_search``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from ._context import ToolContext
from ._policy import Op
from ._refusal import swapped
from ._requests import ListRequest, declare
from ._search import IgnoreRules, ancestor_rules, load_ignore_at

__all__ = ["TreeRequest", "tree", "ARGUMENTS", "DESCRIPTION_NOTE", "with_tree_output"]

GIT_DIR = ".git"
CHECK_EVERY = 256  # entries between two checkpoints
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY

ARGUMENTS: dict[str, Any] = {
    "depth": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1,
              "description": "Levels to list (default 1: this directory only); deeper levels "
                             "are nested in each directory's 'entries'."},
    "includeIgnored": {"type": "boolean", "default": False,
                       "description": "With depth > 1, also list below the first level what "
                                      ".gitignore ignores, and .git (default false)."},
}

DESCRIPTION_NOTE = (
    " With 'depth' > 1 each directory entry gets its own 'entries' (nested, same shape), listed "
    "level by level up to 1000 entries in all: a directory whose entries were cut has "
    "'truncated' and 'total', one the limit did not reach has 'truncated' and no 'entries', "
    "and 'unlisted' counts those. Below the first level, files and directories that .gitignore "
    "ignores (and .git) are left out and counted in 'ignoredEntries' unless includeIgnored is "
    "true; on the first level they are listed, marked 'ignored': true (and not entered)."
)


@dataclass(frozen=True)
class TreeRequest(ListRequest):
    """A tree listing of ``path``, ``depth`` levels deep."""

    depth: int = 1
    include_ignored: bool = False


declare(TreeRequest, False)

_Chain = tuple[tuple[str, Any], ...]  # (.gitignore prefix, its rules), below the base


@dataclass
class _Dir:
    """A directory to list: its item in the answer, where it really is,
    what it is (dev, ino), its level, and the .gitignore files above it."""

    item: dict[str, Any]
    real: str
    identity: tuple[int, int]
    level: int
    chain: _Chain = ()


@dataclass
class _Budget:
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


@dataclass
class _Listing:
    """One directory's visible entries (sorted), and what was left out."""

    names: list[tuple[str, str]] = field(default_factory=list)  # (name, kind)
    denied: int = 0
    ignored: int = 0


def tree(ctx: ToolContext, rel: str, info: os.stat_result, args: Mapping[str, Any]
         ) -> dict[str, Any]:
    """list_directory's answer for ``depth`` > 1 (``info``: the stat of ``rel``)."""
    depth: int = min(args["depth"], ctx.limits.list_depth)
    include_ignored: bool = args["includeIgnored"]
    shown = rel.rstrip("/") or "."
    ctx.authorize(TreeRequest(shown, depth=depth, include_ignored=include_ignored))
    identity = (info.st_dev, info.st_ino)
    ctx.ensure_same(rel, identity)  # a swap during authorization fails closed
    real = ctx.root.realpath(rel)
    top: dict[str, Any] = {"path": shown}
    walk = _Walk(ctx, depth, include_ignored, _Budget(ctx.limits.list_entries))
    walk.run(_Dir(top, real, identity, 1), ancestor_rules(ctx, real), rel)
    result: dict[str, Any] = {"path": shown, "entries": top.get("entries", []),
                              "truncated": walk.budget.cut, "total": top.get("total", 0)}
    if top.get("denied"):
        result["denied"] = top["denied"]
    result.update(depth=depth, shown=walk.budget.shown)
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

    def run(self, top: _Dir, base_rules: IgnoreRules, rel: str) -> None:
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
                below += self._list(node, base_rules, rel if node is top else None)
            level = below

    def _list(self, node: _Dir, rules: IgnoreRules, top_rel: str | None) -> list[_Dir]:
        """List ``node`` into its item; return its directories to list next."""
        fd = self._open(node, top_rel)
        if fd is None:
            node.item["unreadable"] = True
            return []
        backend = self.ctx.root.backend
        try:
            for prefix, spec in node.chain:
                rules.push(prefix, spec)
            own = load_ignore_at(self.ctx, fd)
            prefix = "" if node.real == "." else node.real + "/"
            if own is not None:
                rules.push(prefix, own)
            try:
                listing = self._scan(fd, node, rules, prefix)
            finally:
                for _ in range(len(node.chain) + (own is not None)):
                    rules.pop()
            chain = node.chain + (((prefix, own),) if own is not None else ())
            return self._fill(node, listing, fd, prefix, chain)
        finally:
            backend.close(fd)

    def _open(self, node: _Dir, top_rel: str | None) -> int | None:
        """An fd of ``node``'s directory, ``None`` if it is gone or no
        longer the directory listed (the one path operation of this module:
        C1's ``Root.open_handle`` replaces it).  The base itself failing is
        the call failing (``STALE``)."""
        root = self.ctx.root
        try:
            # the base as list_directory resolved it (a link to a directory is
            # followed there); below it, canonical paths, links never followed
            fd = (root.open(top_rel, _DIR_FLAGS) if top_rel is not None else
                  root.open(node.real, _DIR_FLAGS | os.O_NOFOLLOW))
        except OSError:
            if top_rel is not None:
                raise
            return None
        info = root.backend.fstat(fd)
        if (info.st_dev, info.st_ino) != node.identity:
            root.backend.close(fd)
            if top_rel is not None:
                raise swapped(node.item["path"])
            return None
        return fd

    def _scan(self, fd: int, node: _Dir, rules: IgnoreRules, prefix: str) -> _Listing:
        ctx = self.ctx
        listing = _Listing()
        hide = not self.include_ignored and node.level > 1
        mark = not self.include_ignored and node.level == 1
        for index, (name, kind) in enumerate(_entries(ctx, fd)):
            if index % CHECK_EVERY == CHECK_EVERY - 1:
                ctx.checkpoint()
            real = prefix + name
            if not ctx.visible(real, Op.LIST):  # as list_directory: deny rules hide
                listing.denied += 1
            elif hide and self._ignored(rules, real, name, kind):
                listing.ignored += 1
            else:
                marked = mark and self._ignored(rules, real, name, kind)
                # listed, and when marked ignored, not entered
                listing.names.append((name, "ignored-" + kind if marked else kind))
        return listing

    @staticmethod
    def _ignored(rules: IgnoreRules, real: str, name: str, kind: str) -> bool:
        if name == GIT_DIR:
            return True
        return bool(rules) and rules.ignored(real, kind == "dir")

    def _fill(self, node: _Dir, listing: _Listing, fd: int, prefix: str,
              chain: _Chain) -> list[_Dir]:
        item = node.item
        budget = self.budget
        entries: list[dict[str, Any]] = []
        below: list[_Dir] = []
        for name, marked in listing.names:
            if budget.left <= 0:
                break
            ignored = marked.startswith("ignored-")
            kind = marked[len("ignored-"):] if ignored else marked
            child: dict[str, Any] = {"name": name, "kind": kind}
            info = self._lstat(fd, name) if kind in ("file", "dir") else None
            if kind == "file" and info is not None:
                child["size"] = info.st_size
            if ignored:
                child["ignored"] = True
            elif kind == "dir" and node.level < self.depth and info is not None:
                below.append(_Dir(child, prefix + name, (info.st_dev, info.st_ino),
                                  node.level + 1, chain))
            entries.append(child)
            budget.left -= 1
        item["entries"] = entries
        item["total"] = len(listing.names)
        if len(entries) < len(listing.names):
            item["truncated"] = budget.cut = True
        for key, count in (("denied", listing.denied), ("ignoredEntries", listing.ignored)):
            if count:
                item[key] = count
        budget.ignored += listing.ignored
        return below

    def _lstat(self, fd: int, name: str) -> os.stat_result | None:
        try:
            return self.ctx.root.backend.lstat_at(fd, name)
        except OSError:
            return None  # removed since listing: keep the name, say nothing more


def _entries(ctx: ToolContext, fd: int) -> list[tuple[str, str]]:
    """(name, kind) of every entry of the directory ``fd``, sorted by name."""
    it = ctx.root.backend.scandir(fd)
    try:
        return sorted((entry.name, _kind(entry)) for entry in it)
    finally:
        close = getattr(it, "close", None)
        if callable(close):
            close()


def _kind(entry: os.DirEntry[str]) -> str:
    """The entry's kind from its d_type; nothing is followed."""
    if entry.is_symlink():
        return "symlink"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


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

