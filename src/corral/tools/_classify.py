"""The one classification boundary: an error from below becomes a refusal.

Tools raise :class:`Refusal` for what they decide themselves and let errors
from :mod:`corral.contained` propagate; :func:`classify` turns those into
refusals phrased from root-relative paths and the facts of the request.
Default-deny: a cause with no case here is ``INTERNAL`` and carries no path,
errno text or host path (the cause is logged, not returned).
"""

from __future__ import annotations

import difflib
import errno
import logging
import posixpath
import stat as st
from typing import Any

from ..contained import (EscapeError, InvalidPathError, RootVanishedError, SpecialFileError,
                         SymlinkError)
from ._context import ToolContext
from ._refusal import Code, Refusal

__all__ = ["classify", "close_paths", "READ_ONLY_TOOLS"]

log = logging.getLogger("corral.tools")

READ_ONLY_TOOLS = ("read_file", "list_directory", "glob", "grep")
_PATH_FIELDS = ("path", "source", "destination")


def classify(exc: BaseException, *, tool: str, args: dict[str, Any], ctx: ToolContext) -> Refusal:
    """The refusal for ``exc`` raised while running ``tool`` with ``args``."""
    if isinstance(exc, Refusal):
        return exc
    if not isinstance(exc, OSError) or isinstance(exc, RootVanishedError):
        return _internal(exc)
    path = exc.filename if isinstance(exc.filename, str) else None
    if path is None:
        return _internal(exc)
    field = _field_of(path, args, ctx)
    where = getattr(exc, "component", None) or path
    details: dict[str, Any] = {"path": path}
    if field:
        details["field"] = field

    if isinstance(exc, EscapeError):
        reason = exc.reason
        if reason == "dotdot" and not _climbs_out(path):
            # the '..' that left came from a symlink's target, not from the
            # path as written (the core reports the step, not its origin)
            reason = "symlink"
        return ctx.outside(path, field or "path", reason)
    if isinstance(exc, SymlinkError):
        return Refusal(Code.UNSUPPORTED, f"{path} goes through the symlink {where}, and this root "
                       "follows no symlinks", "Use the path the link points to instead.",
                       details={**details, "kind": "symlink", "symlink": where})
    if isinstance(exc, SpecialFileError):
        return Refusal(Code.UNSUPPORTED, f"{where} is a {exc.kind.replace('_', ' ')}, not a "
                       "regular file", "Use regular files only; this one cannot be read or edited.",
                       details={**details, "kind": exc.kind})
    if isinstance(exc, InvalidPathError):
        kind = "path_too_long" if exc.errno == errno.ENAMETOOLONG else "path"
        return Refusal(Code.INVALID_ARGUMENT, f"{_shown(path)} is not a usable path: "
                       f"{exc.strerror}", "Pass a shorter path of plain names separated by '/'.",
                       details={**details, "path": _shown(path), "kind": kind})

    code = exc.errno
    if code == errno.ENOENT:
        return _not_found(path, where, field, tool, args, ctx)
    if code == errno.ENOTDIR:
        if where.rstrip("/") != path.rstrip("/"):
            return Refusal(Code.INVALID_ARGUMENT, f"{where} is a file, so {path} cannot be "
                           "inside it", f"Use a path whose directories exist; {where} is a file.",
                           details={**details, "kind": "not_directory", "component": where})
        return Refusal(Code.INVALID_ARGUMENT, f"{path} is not a directory",
                       "Pass a directory here.", details={**details, "kind": "not_directory"})
    if code == errno.EISDIR:
        return Refusal(Code.INVALID_ARGUMENT, f"{where} is a directory",
                       "Pass a file path here, not a directory.",
                       details={**details, "kind": "directory"})
    if code == errno.EEXIST:
        return Refusal(Code.ALREADY_EXISTS, f"{where} already exists",
                       "Choose another name, or pass overwrite: true to replace it.",
                       details={**details, "kind": "exists", "path": where})
    if code == errno.ENOTEMPTY:
        return Refusal(Code.INVALID_ARGUMENT, f"{where} is a directory that is not empty",
                       "Delete or move what is inside it first (list_directory shows it).",
                       details={**details, "kind": "not_empty", "path": where})
    if code == errno.ELOOP:
        return Refusal(Code.UNSUPPORTED, f"{path} leads through a symlink loop or more than 40 "
                       f"symlinks (at {where})", "Use the real path of the file, without the links.",
                       details={**details, "kind": "symlink_loop", "component": where})
    if code in (errno.EACCES, errno.EPERM):
        return Refusal(Code.DENIED, f"the filesystem does not permit this on {where}; nothing "
                       "was changed", "Do not retry; use another file or ask the user to fix "
                       "its permissions.", details={**details, "kind": "permission"})
    if code == errno.EROFS:
        return Refusal(Code.DENIED, f"{where} is on a read-only filesystem; nothing was changed",
                       "Do not try to change files here.",
                       details={**details, "kind": "read_only_filesystem"})
    if code in (errno.ENOSPC, errno.EDQUOT):
        return Refusal(Code.TOO_LARGE, f"the disk is full (or over quota) writing {path}; the "
                       "file was left as it was", "Free some space or write less, then retry.",
                       details={**details, "kind": "no_space"})
    if code == errno.EXDEV:
        return Refusal(Code.UNSUPPORTED, f"{path} is on another filesystem, so it cannot be "
                       "moved there atomically", "Copy it with read_file and write_file instead.",
                       details={**details, "kind": "cross_device"})
    if code == errno.ENAMETOOLONG:
        return Refusal(Code.INVALID_ARGUMENT, f"{_shown(path)} is too long",
                       "Use shorter names (at most 255 bytes each).",
                       details={**details, "path": _shown(path), "kind": "path_too_long"})
    return _internal(exc)


def _climbs_out(path: str) -> bool:
    """Whether ``path`` as written (no symlink followed) goes above the root."""
    depth = 0
    for part in path.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


def _internal(exc: BaseException) -> Refusal:
    log.error("internal error in a corral tool", exc_info=exc)
    return Refusal.internal()


def _shown(path: str) -> str:
    return path if len(path) <= 120 else path[:120] + "..."


def _field_of(path: str, args: dict[str, Any], ctx: ToolContext) -> str | None:
    for name in _PATH_FIELDS:
        value = args.get(name)
        if isinstance(value, str):
            try:
                if ctx.rel(value, name) == path:
                    return name
            except Refusal:
                continue
    return None


def _not_found(path: str, missing: str, field: str | None, tool: str, args: dict[str, Any],
               ctx: ToolContext) -> Refusal:
    """``NOT_FOUND`` naming the missing component, with close names that exist."""
    details: dict[str, Any] = {"path": path, "missing": missing}
    if field:
        details["field"] = field
    candidates = close_paths(path, missing, ctx)
    if candidates:
        details["didYouMean"] = candidates
    message = (f"{path} does not exist" if missing in (path, path.rstrip("/"))
               else f"{path} does not exist: there is no {missing}")
    suggestion = _suggest(candidates, field, tool, args, ctx) if field else None
    parent = posixpath.dirname(missing.rstrip("/")) or "."
    if candidates:
        hint = f"Check the name; {candidates[0]} exists."
    else:
        hint = f"Check the path; list_directory on {parent} shows what is there."
    if suggestion is None and field and not ctx.is_denied(parent):
        # the deepest directory that exists: seeing it is the next step
        suggestion = ("list_directory", {"path": parent})
    if suggestion:
        return Refusal(Code.NOT_FOUND, message, hint, details=details,
                       suggested_tool=suggestion[0], suggested_args=suggestion[1])
    return Refusal(Code.NOT_FOUND, message, hint, details=details)


def close_paths(path: str, missing: str, ctx: ToolContext) -> list[str]:
    """Existing paths close to ``path`` whose component ``missing`` is not
    there (a typo in the name or in a parent directory); never a path a deny
    rule hides."""
    parent, name = posixpath.split(missing.rstrip("/"))
    rest = path.rstrip("/")[len(missing.rstrip("/")):]  # what follows the missing part
    try:
        siblings = ctx.root.listdir(parent or ".")
    except OSError:
        return []
    lowered = {s.lower(): s for s in siblings}
    matches = []
    if name.lower() in lowered:
        matches.append(lowered[name.lower()])
    matches += [m for m in difflib.get_close_matches(name, siblings, n=5, cutoff=0.6)
                if m not in matches]
    out = []
    for match in matches:
        candidate = posixpath.join(parent, match) + rest if parent else match + rest
        if ctx.is_denied(candidate):
            continue  # a denied name must not leak through a suggestion
        try:
            if not ctx.root.exists(candidate) or ctx.is_denied(ctx.root.realpath(candidate)):
                continue
        except OSError:
            continue
        out.append(candidate)
    return out[:3]


_close_paths = close_paths  # the name other modules used first


def _suggest(candidates: list[str], field: str, tool: str, args: dict[str, Any],
             ctx: ToolContext) -> tuple[str, dict[str, Any]] | None:
    """A call that succeeds now: the same read-only tool on the first close
    name of the right kind, or ``read_file`` of it for a mutating tool."""
    for candidate in candidates:
        try:
            info = ctx.root.stat(candidate)
        except OSError:
            continue
        is_file, is_dir = st.S_ISREG(info.st_mode), st.S_ISDIR(info.st_mode)
        if tool in ("list_directory", "glob") and is_dir:
            return tool, {**_given(args), field: candidate}
        if tool == "grep" and (is_dir or is_file):
            return tool, {**_given(args), field: candidate}
        if tool not in READ_ONLY_TOOLS + ("write_file",) and is_file and \
                not (info.st_nlink > 1 and not ctx.allow_hardlinks):
            return "read_file", {"path": candidate}
        if tool == "read_file" and is_file and not (info.st_nlink > 1 and not ctx.allow_hardlinks):
            return tool, {**_given(args), field: candidate}
    return None


def _given(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if v is not None}
