"""move_file: rename a file, symlink or directory inside the root.

Decisions: an existing destination is refused (``ALREADY_EXISTS``) unless
``overwrite``, which replaces a file or symlink but never a directory, and
only one there when the move was decided: where the name was empty the
check is the rename itself (``RENAME_NOREPLACE``, with ``overwrite`` too),
so nothing appearing in between is ever replaced; where it held the file
decided on, the two names are swapped (``RENAME_EXCHANGE``) and what came
back is looked at: another program's file put there since the last look is
swapped back (``STALE``), never lost.  A destination ending in ``/`` (or ``.``) means
"into this directory".  Missing parents of the destination are created,
after the host has seen them in the request, and reported as
``createdDirectories`` (as write_file does).  Neither end's final symlink is
followed: a symlink is moved itself.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from dataclasses import dataclass

from .._read import cache as read_cache
from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._runtime.limits import (CREATED_SCHEMA, CreatedDirectories, created_directories,
                               listed_directories)
from .._policy.rules import Op
from .._refusals.catalogue import Code, Kind, Refusal, entry_kind, exists, not_directory, swapped
from .._runtime.registry import Suggests, ToolSpec, success_schema
from .._runtime.request_types import MoveRequest
from .._runtime.view import Pinned

DESCRIPTION = (
    "Move or rename a file, symlink (not its target) or directory. A destination ending in "
    "'/' means into that directory; missing parents are made. An existing destination is "
    "refused unless overwrite: true (files and symlinks only)."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "source": {"type": "string", "minLength": 1, "maxLength": 4096},
        "destination": {"type": "string", "minLength": 1, "maxLength": 4096},
        "overwrite": {"type": "boolean", "default": False},
    },
    "required": ["source", "destination"],
    "additionalProperties": False,
}


EntryKind = Literal["file", "directory", "symlink", "special"]


class MoveResult(CreatedDirectories):
    source: str
    destination: str
    kind: EntryKind
    overwritten: bool


def kind_of(mode: int) -> EntryKind:
    """What a move or delete acts on: a FIFO, socket or device is ``special``."""
    return _ACTED_ON.get(entry_kind(mode), "special")


_ACTED_ON: dict[str, EntryKind] = {"file": "file", "directory": "directory", "symlink": "symlink"}


def entry_name(ctx: ToolContext, value: str, field: str) -> tuple[str, bool]:
    """``value`` as a root-relative entry to act on (no trailing ``/``),
    and whether it had one."""
    rel = ctx.rel(value, field)
    return rel.rstrip("/") or ".", rel.endswith("/")


def named(target: Pinned, rel: str, field: str) -> None:
    """Refuse a target that names no entry: the root itself, or a path
    ending in ``..`` (the resolver says so: its ``name`` is ``None``)."""
    if target.name is None:
        raise Refusal(Code.INVALID_ARGUMENT, f"argument '{field}' names "
                      f"{'the root itself' if rel == '.' else 'a parent directory (..)'}, "
                      "not an entry inside it", "Name the file or directory itself, e.g. "
                      "\"src/old.py\".", details={"field": field, "path": rel}, kind=Kind.ROOT)


def lstat_of(ctx: ToolContext, target: Pinned, rel: str) -> os.stat_result:
    """The entry's lstat; a missing one is the core's own "not found"
    (which says what is missing)."""
    info = target.lstat()
    if info is None:
        target.raise_missing()
        raise swapped(rel)  # there again already: decide again
    return info


@dataclass
class _Source:
    """The move's source as its check found it: its lstat and its kind."""

    info: os.stat_result | None = None
    kind: EntryKind | None = None


def run(ctx: ToolContext, args: dict[str, Any]) -> MoveResult:
    src, src_dir = entry_name(ctx, args["source"], "source")
    overwrite = args["overwrite"]
    seen = _Source()

    def destination(source: Pinned) -> str:
        named(source, src, "source")
        seen.info = info = lstat_of(ctx, source, src)
        seen.kind = kind = kind_of(info.st_mode)
        if src_dir and kind != "directory":
            ctx.refuse_escape(src + "/", "source")  # "link/" to a directory outside
            raise not_directory(src, f"{_said(src)}/ ends with '/', but {_said(src)} is a {kind}",
                                f"Pass \"{_said(src)}\" without the trailing '/'.", field="source")
        return _destination(ctx, args["destination"], src)

    # one step: the tree held still, both ends resolved once, decided, asked, acted on
    with ctx.view.pin_move(src, destination) as (source, dest):
        info, kind, dst = seen.info, seen.kind, dest.shown
        assert info is not None and kind is not None  # set by destination() above
        named(dest, dst, "destination")
        existing = dest.lstat()
        _check_ends(ctx, source, dest, src, dst, kind, info, existing, overwrite)
        # the host judges where both ends are (canonical), never the spelling
        asked, omitted = listed_directories(dest.creates)
        ctx.view.ask(MoveRequest(source.path, destination=dest.path, overwrite=overwrite,
                                 kind=kind, creates_directories=asked,
                                 creates_omitted=omitted), source, dest)
        source.same(info)
        dest.same(existing)
        if existing is not None:
            read_cache.forget(existing.st_dev, existing.st_ino)
        with dest.parents_made() as created:
            try:
                if existing is not None:
                    # only what was there when decided is replaced: swapped
                    # with it, what came back looked at (another's: back)
                    source.replace_at(dest, existing)
                else:
                    # a name empty then is taken with RENAME_NOREPLACE,
                    # overwrite or not
                    source.rename_to(dest, replace=False)
            except FileExistsError:  # appeared since the check: never replaced
                raise _exists(dst, "file", src, kind) from None
    return {"source": src, "destination": dst, "kind": kind,
            "overwritten": existing is not None, **created_directories(created)}


def _destination(ctx: ToolContext, value: str, src: str) -> str:
    """The destination entry: a path ending in '/' (or the root) means
    "into that directory, under the source's own name"."""
    dst_rel = ctx.rel(value, "destination")
    if dst_rel == "." or dst_rel.endswith("/"):
        into = dst_rel.rstrip("/") or "."
        base = src.rpartition("/")[2]
        return base if into == "." else f"{into}/{base}"
    return entry_name(ctx, dst_rel, "destination")[0]


def _check_ends(ctx: ToolContext, source: Pinned, dest: Pinned, src: str, dst: str, kind: str,
                info: os.stat_result, existing: os.stat_result | None, overwrite: bool) -> None:
    """What is decided on the two pinned ends before the host is asked."""
    if existing is not None:
        dest.decide(Op.REPLACE)
    if source.path == dest.path:
        raise Refusal(Code.INVALID_ARGUMENT, f"{_said(src)} and {_said(dst)} are the same path",
                      "Pass a different destination.",
                      details={"source": src, "destination": dst}, kind=Kind.SAME_PATH)
    if kind == "directory" and dest.path.startswith(source.path + "/"):
        raise Refusal(Code.INVALID_ARGUMENT, f"{_said(dst)} is inside {_said(src)}, and a "
                                             f"directory cannot "
                      "be moved into itself", "Choose a destination outside the directory.",
                      details={"source": src, "destination": dst}, kind=Kind.INTO_ITSELF)
    if existing is not None:
        _check_existing(src, dst, kind, info, existing, overwrite)
    found = source.carried_rule(dest, kind)
    if found is not None:
        _inner, rule, field = found
        raise _holds(src, rule, field)


_HELD = {Kind.DENY_RULE: "a path the host does not allow",
         Kind.PROTECTED: "a path that is protected (the host may run it on its own)",
         Kind.SECRET: "a secret file",
         Kind.ANOTHER_ROOT: "the folder another root of the host is served from"}


def _holds(src: str, kind: Kind, field: str) -> Refusal:
    where = "" if field == "source" else " that would be protected at the destination"
    what = _HELD[kind] if field == "source" else "a path"
    hint = "Move the other entries one by one instead"
    hint += ("; if this move is needed, the host (the user) must allow it." if kind is
             Kind.PROTECTED else ".")
    return Refusal(Code.DENIED, f"{_said(src)} holds {what}{where}, so it cannot be moved", hint,
                   details={"path": src, "field": field}, kind=kind)


def _exists(dst: str, kind: str, src: str, src_kind: str) -> Refusal:
    """``dst`` is taken; the hint offers only what would work as things
    stand (overwrite: true never replaces a directory, nor puts one over a file)."""
    if kind == "directory":
        hint = (f"{_said(dst)} is a directory: to move {_said(src)} into it pass destination "
                f"\"{_said(dst)}/\", "
                "or choose another name.")
    elif src_kind == "directory":
        hint = (f"{_said(dst)} is a {kind} and {_said(src)} is a directory, which cannot replace "
                f"it: choose another destination, or delete {_said(dst)} first.")
    else:
        hint = "Choose another destination, or pass overwrite: true to replace it."
    return exists(dst, hint, field="destination", existing=kind)


def _check_existing(src: str, dst: str, kind: str, info: Any, existing: Any,
                    overwrite: bool) -> None:
    there = kind_of(existing.st_mode)
    if (existing.st_dev, existing.st_ino) == (info.st_dev, info.st_ino):
        raise Refusal(Code.INVALID_ARGUMENT, f"{_said(src)} and {_said(dst)} are the same file "
                                             f"(hard links "
                      "or another spelling of one name)", "Pass a different destination.",
                      details={"source": src, "destination": dst}, kind=Kind.SAME_FILE)
    if not overwrite:
        raise _exists(dst, there, src, kind)
    if there == "directory":
        raise Refusal(Code.INVALID_ARGUMENT, f"{_said(dst)} is a directory, which move_file never "
                      "replaces", "Choose another destination, or delete the directory first "
                      "(delete_file removes empty directories).",
                      details={"field": "destination", "path": dst}, kind=Kind.DIRECTORY)
    if kind == "directory":
        raise not_directory(dst, f"{_said(dst)} is a {there} and {_said(src)} is a directory; a "
                                 f"directory "
                            "cannot replace a file", f"Delete {_said(dst)} first, or choose "
                            "another destination.", field="destination")


OUTPUT_SCHEMA = success_schema({
    "source": {"type": "string"}, "destination": {"type": "string"},
    "kind": {"type": "string", "enum": ["file", "directory", "symlink", "special"]},
    "overwritten": {"type": "boolean"},
    **CREATED_SCHEMA,
}, ["source", "destination", "kind", "overwritten", "createdDirectories"])

TOOL = ToolSpec(name="move_file", title="Move file", description=DESCRIPTION, schema=SCHEMA,
                output_schema=OUTPUT_SCHEMA, run=run, request=MoveRequest, mutates=True,
                idempotent=False, destructive=True, suggests=Suggests(read_instead=True))
