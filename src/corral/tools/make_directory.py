"""make_directory: create a directory and its missing parents.

Order: find which directories would be created (canonical root-relative
paths, as resolution reaches them: ``a/../b`` creates ``a`` and ``b``, a
symlinked parent is where it leads), check the host's rules on each,
describe them to the host (:class:`MakeDirectoryRequest`), check nothing
changed while it decided, create them (``mkdirat`` then an ``O_NOFOLLOW``
open of each, so a symlink planted meanwhile is refused), and name what was
created.  A directory that exists already is success with nothing created;
a file (or anything not a directory) in the way is refused.
"""

from __future__ import annotations

import stat as st
from dataclasses import dataclass, field
from typing import Any

from ._context import ToolContext
from ._locate import Location
from ._policy import Op
from ._refusal import Code, Kind, Refusal, not_directory, swapped
from ._registry import ToolSpec, success_schema
from ._requests import Request

DESCRIPTION = (
    "Create a directory, and any missing parent directories. 'createdDirectories' lists what "
    "was created, outermost first (check it: a typo in a name shows up there); a directory "
    "that already exists is not an error ('createdDirectories' is empty). A file in the way is "
    "refused. Files are created with write_file, which makes missing parents itself: call this "
    "only for an empty directory."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "The directory to create, relative to the root."},
    },
    "required": ["path"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class MakeDirectoryRequest(Request):
    """``creates_directories``: canonical root-relative paths, outermost
    first, created only after this is allowed (empty: it exists)."""

    operation = "mkdir"
    creates_directories: tuple[str, ...] = field(default_factory=tuple)


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rel = ctx.rel(args["path"])
    shown = rel.rstrip("/") or "."
    # the policy on where it really leads and on every directory it creates
    # (.git/ is protected by default, deny rules refuse on the way too)
    where = ctx.check_path(rel, Op.MKDIR)
    plan = _plan(ctx, rel, shown)
    for made in plan:  # and on what the core will really create
        ctx.check(Location(made), Op.MKDIR, shown=shown)
    ctx.authorize(MakeDirectoryRequest(where.path, creates_directories=tuple(plan)))
    if _plan(ctx, rel, shown) != plan:
        raise swapped(shown)  # the tree changed while the host decided: fail closed
    created = _make(ctx, rel, shown) if plan else []
    if created != plan:
        # created now and not what was authorized: a race between the check
        # above and the creation (C1's Target.make_parents closes it)
        raise swapped(shown)
    return {"path": shown, "createdDirectories": created, "created": bool(created)}


def _plan(ctx: ToolContext, rel: str, shown: str) -> list[str]:
    """The directories ``rel`` needs created (the one path operation of
    this module's plan; C1's ``Root.target(rel, create_parents=True)
    .creates`` replaces it)."""
    try:
        return ctx.root.makedirs(rel, exist_ok=True, dry_run=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise _in_the_way(ctx, rel, shown, exc) from None


def _make(ctx: ToolContext, rel: str, shown: str) -> list[str]:
    """Create them (C1: ``Target.make_parents()``)."""
    try:
        return ctx.root.makedirs(rel, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise swapped(shown) from None  # the plan said it could be made


def _in_the_way(ctx: ToolContext, rel: str, shown: str, exc: OSError) -> Refusal:
    """Something that is not a directory where one is needed: the leaf
    itself (``ALREADY_EXISTS``) or a parent (``INVALID_ARGUMENT``)."""
    where = getattr(exc, "component", None) or shown
    leaf = isinstance(exc, FileExistsError) or where == shown
    try:
        mode = ctx.root.lstat(shown if leaf else where).st_mode
    except OSError:
        mode = 0
    what = ("a symlink" if st.S_ISLNK(mode) else "a file" if st.S_ISREG(mode) or not mode
            else "not a directory")
    if leaf:
        return Refusal(Code.ALREADY_EXISTS, f"{shown} already exists and is {what}, not a "
                       "directory; nothing was created", "Choose another name for the "
                       "directory, or use the existing entry as it is.",
                       details={"path": shown, "field": "path", "type": _type(mode)},
                       kind=Kind.EXISTS)
    return not_directory(shown, f"{where} is {what}, so {shown} cannot be created inside it",
                         f"Use a path whose parents are directories; {where} is {what}.",
                         field="path", component=where)


def _type(mode: int) -> str:
    if st.S_ISLNK(mode):
        return "symlink"
    return "file" if st.S_ISREG(mode) or not mode else "other"


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"},
    "createdDirectories": {"type": "array", "items": {"type": "string"},
                           "description": "Created, outermost first; empty if it existed."},
    "created": {"type": "boolean"},
}, ["path", "createdDirectories", "created"])

TOOL = ToolSpec(name="make_directory", title="Make directory", description=DESCRIPTION,
                schema=SCHEMA, output_schema=OUTPUT_SCHEMA, run=run,
                request=MakeDirectoryRequest, mutates=True, idempotent=True, destructive=False)
