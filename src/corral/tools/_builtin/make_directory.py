"""make_directory: create a directory and its missing parents.

Order: resolve once (:meth:`Root.target` with ``create_parents``: the
parent held open, the directories that would be created as canonical
root-relative paths, a symlinked parent where it leads, ``nx`` of
``nx/../b`` never made), check the host's policy on the target, on each of
those and on what the path passes, describe them to the host
(:class:`MakeDirectoryRequest`), then create them from the held parent
(``mkdirat`` and an ``O_NOFOLLOW`` reopen of each: nothing is resolved
again, so a swap while the host decided cannot redirect it; the parent
itself moved elsewhere meanwhile, into ``.git`` say, is ``STALE``) and name
what was created.  A directory that exists already (or an inside symlink to one)
is success with nothing created; anything else in the way is refused.
"""

from __future__ import annotations

import stat as st
from typing import Any

from ...contained import StaleError
from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._runtime.limits import (CREATED_SCHEMA, CreatedDirectories, created_directories,
                               listed_directories)
from .._policy.locate import Location
from .._policy.rules import Op
from .._refusals.catalogue import Code, Kind, Refusal, entry_kind, swapped
from .._runtime.registry import ToolSpec, success_schema
from .._runtime.request_types import MakeDirectoryRequest
from .._runtime.view import Pinned

DESCRIPTION = (
    "Create a directory and its missing parents (the answer names them); one that exists "
    "already is not an error. write_file makes parents itself: use this only for an empty "
    "directory."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096},
    },
    "required": ["path"],
    "additionalProperties": False,
}


class MakeDirectoryResult(CreatedDirectories):
    path: str
    created: bool


def run(ctx: ToolContext, args: dict[str, Any]) -> MakeDirectoryResult:
    rel = ctx.rel(args["path"])
    shown = rel.rstrip("/") or "."
    # one step: the policy on where it really leads, on every directory it
    # creates and on those it passes (.git/ is protected by default)
    with ctx.view.pin(rel, Op.MKDIR, shown=shown, create_parents=True) as target:
        current = target.lstat()
        if current is not None and st.S_ISLNK(current.st_mode):
            _decide_where_it_leads(ctx, rel, shown)
        if current is not None and not st.S_ISDIR(current.st_mode) and not (
                st.S_ISLNK(current.st_mode) and target.leads_to_directory()):
            raise _in_the_way(shown, current.st_mode)
        plan = [] if current is not None else [*target.creates, target.path]
        asked, omitted = listed_directories(plan)
        ctx.view.ask(MakeDirectoryRequest(target.path, creates_directories=asked,
                                          creates_omitted=omitted), target,
                     same_place=False)
        if plan and ctx.asks_host:  # the directory it acts from may have moved meanwhile
            target.ensure_held_place()
        made = _make(target, shown) if plan else []
        # what this call made: another may have made it while the host decided
        return {"path": shown, **created_directories(made),
                "created": bool(made) and made[-1] == target.path}


def _decide_where_it_leads(ctx: ToolContext, rel: str, shown: str) -> None:
    """A link at the path is decided on where it leads too, whether that
    is there or not (its text read through missing directories): what a
    denied folder holds is never told by which answer comes back."""
    try:
        end: Location | None = ctx.view.locate(rel)
    except (OSError, ValueError):
        end = ctx.view.dangling_end(rel)
    if end is not None:
        ctx.view.check(end, Op.MKDIR, shown=shown)


def _make(target: Pinned, shown: str) -> list[str]:
    """Create the planned directories from the held parent (nothing is
    resolved again, so a swap while the host decided cannot redirect it);
    one someone else made meanwhile is used and not listed."""
    try:
        with target.parents_made() as made:
            try:
                target.mkdir()
            except FileExistsError:
                now = target.lstat()
                if now is None or not st.S_ISDIR(now.st_mode):
                    raise swapped(shown) from None
                return made
    except (StaleError, FileNotFoundError):
        # something other than a directory is there now, or the directory
        # decided on was removed while the host decided: fail closed
        raise swapped(shown) from None
    return [*made, target.path]


def _in_the_way(shown: str, mode: int) -> Refusal:
    """``ALREADY_EXISTS``: the entry is there and is not a directory."""
    what = "a symlink" if st.S_ISLNK(mode) else "a file" if st.S_ISREG(mode) else \
        "not a directory"
    return Refusal(Code.ALREADY_EXISTS, f"{_said(shown)} already exists and is {what}, not a "
                   "directory; nothing was created", "Choose another name for the "
                   "directory, or use the existing entry as it is.",
                   details={"path": shown, "field": "path", "type": _type(mode)},
                   kind=Kind.EXISTS)


def _type(mode: int) -> str:
    kind = entry_kind(mode)
    return kind if kind in ("symlink", "file") else "other"


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"},
    **CREATED_SCHEMA,
    "created": {"type": "boolean"},
}, ["path", "createdDirectories", "created"])

TOOL = ToolSpec(name="make_directory", title="Make directory", description=DESCRIPTION,
                schema=SCHEMA, output_schema=OUTPUT_SCHEMA, run=run,
                request=MakeDirectoryRequest, mutates=True, idempotent=True, destructive=False)
