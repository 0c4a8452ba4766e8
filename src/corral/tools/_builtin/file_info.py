"""file_info: what an entry is, without reading it.

The entry itself is described (``lstat``: a final symlink is not
followed), from the directory its parent resolved to.  For a symlink,
``target`` is where it leads, as a canonical root-relative path, only when
that is inside the root and not hidden by the host's rules; of a link that
leads out nothing but ``targetKind: "outside"`` is said (never its text,
never a host path).  Nothing is opened, so a FIFO or device is described
without blocking.  A hard-linked file is refused as read_file refuses it
(its size, mode and times are those of its other names, one of which may
be denied), and described when the host allows hard links.  A directory
the host's rules may hide entries of is described as if those were not
there: its links counted again over the subdirectories it shows (``1``,
the count not kept, past :data:`MOST_COUNTED` entries).  No directory is
given a size: on tmpfs and btrfs a directory's size grows with what it
holds, so it would count what the rules hide and a write's temporary file
in flight (a state no one-at-a-time order of calls shows), and elsewhere it
says nothing a model can use.
"""

from __future__ import annotations

import os
import stat as st
from typing import Any, NotRequired, TypedDict

from ...contained import SizedListing
from .._runtime.context import ToolContext
from .._runtime.view import holding_tree, open_below
from .._policy.rules import Op, Scope
from .._refusals.catalogue import ENTRY_KINDS, entry_kind, swapped
from .._runtime.registry import Suggests, ToolSpec, success_schema
from .._runtime.request_types import InfoRequest
from .._runtime.view_read import Lead

DESCRIPTION = (
    "Kind, size, mode, links and modification time of a file, directory or symlink, without"
    " reading it (a symlink itself, with its target; a trailing '/' follows a link to a "
    "directory)."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096},
    },
    "required": ["path"],
    "additionalProperties": False,
}

KINDS = ENTRY_KINDS
TARGET_KINDS = (*KINDS.values(), "other", "missing", "outside", "loop")
_NS = 1_000_000_000
# a directory's link count not kept (as btrfs says it, and find(1) reads it)
_NOT_COUNTED = 1
#: the entries of a directory listed to count its links again, at most
MOST_COUNTED = 100_000


def iso_utc(ns: int) -> str:
    """``ns`` since the epoch as ISO 8601 UTC with nanoseconds (``...T12:00:00.000000001Z``)."""
    import datetime as _dt  # here: file_info only, not every program that lists the tools

    seconds, fraction = divmod(ns, _NS)
    moment = _dt.datetime.fromtimestamp(seconds, _dt.UTC)
    return f"{moment.strftime('%Y-%m-%dT%H:%M:%S')}.{fraction:09d}Z"


class Times(TypedDict):
    mtime: str
    mtimeNs: int
    ctime: str
    ctimeNs: int
    atime: str
    atimeNs: int
    birthtime: NotRequired[str]
    birthtimeNs: NotRequired[int]


class Where(TypedDict):
    """A file's size, or where a symlink leads (a link's size is its text's: never said)."""

    size: NotRequired[int]
    target: NotRequired[str]
    targetKind: NotRequired[str]


class InfoResult(Where, Times):
    path: str
    kind: str
    mode: str
    links: int


def _times(info: os.stat_result) -> Times:
    m, c, a = info.st_mtime_ns, info.st_ctime_ns, info.st_atime_ns
    out: Times = {"mtime": iso_utc(m), "mtimeNs": m, "ctime": iso_utc(c), "ctimeNs": c,
                  "atime": iso_utc(a), "atimeNs": a}
    birth = getattr(info, "st_birthtime", None)  # macOS, BSD; not Linux's stat
    if isinstance(birth, (int, float)):
        ns = int(getattr(info, "st_birthtime_ns", int(birth * _NS)))
        out["birthtime"], out["birthtimeNs"] = iso_utc(ns), ns
    return out


def _where(lead: Lead) -> Where:
    """Where a symlink leads, as far as the view lets it be said."""
    where: Where = {}
    if lead.path is not None:
        where["target"] = lead.path
    if lead.kind is not None:
        where["targetKind"] = lead.kind
    return where


def _visible_links(ctx: ToolContext, canonical: str, info: os.stat_result,
                   scope: Scope) -> int:
    """Two and the subdirectories the directory ``canonical`` shows (its
    link count were its hidden entries not there); :data:`_NOT_COUNTED`
    past :data:`MOST_COUNTED` entries, or when it is no longer the one
    looked at."""
    opened = open_below(ctx.view, canonical, (info.st_dev, info.st_ino))
    if opened is None:
        raise swapped(canonical)
    with opened:
        listing = opened.sized_listing()
    if len(listing.names) > MOST_COUNTED:
        return _NOT_COUNTED
    directories = [name for name, code in zip(listing.names, listing.codes)
                   if code == SizedListing.DIR]
    return 2 + len(scope.visible_names(directories))


def run(ctx: ToolContext, args: dict[str, Any]) -> InfoResult:
    rel = ctx.rel(args["path"])
    shown = rel.rstrip("/") or "."
    # the entry itself (a final link not followed; with a trailing '/' the
    # directory it leads to), resolved once, the policy decided on what was
    # reached: metadata is what a listing shows, so deny rules refuse and
    # secret files are described (their content is never read)
    with ctx.view.look(rel, Op.LIST, follow=rel.endswith("/"), shown=shown) as entry:
        info = entry.info
        ctx.authorize(InfoRequest(shown))
        # what it says is read under the tree lock (after the host was asked):
        # no parents half made, nor a move or delete half done, is described
        with holding_tree(ctx.view):
            now = entry.lstat()  # a swap during authorization fails closed
            if now is None or (now.st_dev, now.st_ino, st.S_IFMT(now.st_mode)) != (
                    info.st_dev, info.st_ino, st.S_IFMT(info.st_mode)):
                raise swapped(shown)
            info = now
            ctx.check_hardlink(shown, info)
            links = info.st_nlink
            where: Where = (_where(ctx.view.lead(entry)) if st.S_ISLNK(info.st_mode)
                            else {} if st.S_ISDIR(info.st_mode) else {"size": info.st_size})
            if st.S_ISDIR(info.st_mode):
                scope = ctx.scope(entry.path, Op.LIST)
                if scope.may_hide():
                    # a directory's links count what it holds: hidden entries
                    # must not count, so its links are counted again over what it shows
                    links = _visible_links(ctx, entry.path, info, scope)
    return {"path": shown, "kind": entry_kind(info.st_mode), **where,
            "mode": f"{st.S_IMODE(info.st_mode):04o}", "links": links, **_times(info)}


_TIME = {"type": "string", "format": "date-time"}
_NS_VALUE = {"type": "integer"}

OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"},
    "kind": {"type": "string", "enum": [*KINDS.values(), "other"]},
    "size": {"type": "integer", "minimum": 0},
    "mode": {"type": "string", "pattern": "^[0-7]{4}$"},
    "links": {"type": "integer", "minimum": 0},
    "mtime": _TIME, "ctime": _TIME, "atime": _TIME, "birthtime": _TIME,
    "mtimeNs": _NS_VALUE, "ctimeNs": _NS_VALUE, "atimeNs": _NS_VALUE, "birthtimeNs": _NS_VALUE,
    "target": {"type": "string"},
    "targetKind": {"type": "string", "enum": list(TARGET_KINDS)},
}, ["path", "kind", "mode", "links", "mtime", "ctime", "atime", "mtimeNs", "ctimeNs",
    "atimeNs"])

TOOL = ToolSpec(name="file_info", title="File info", description=DESCRIPTION, schema=SCHEMA,
                output_schema=OUTPUT_SCHEMA, run=run, request=InfoRequest,
                suggests=Suggests(retry_on=frozenset({"file", "directory"})))
