"""The one classification boundary: an error from below becomes a refusal.

Tools raise :class:`Refusal` for what they decide themselves and let errors
from :mod:`corral.contained` propagate; :func:`classify` turns those into
refusals phrased from root-relative paths and the facts of the request.
It is a table: the contained error's type first (:data:`_BY_TYPE`), then
its errno (:data:`_BY_ERRNO`), each to a factory that gets the error's
:class:`Facts`.  Default-deny: a cause with no row is ``INTERNAL`` and
carries no path, errno text or host path (the cause is logged, not returned).
"""

from __future__ import annotations

import difflib
import errno
import logging
import os
import stat as st
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Mapping

from ...contained import (EscapeError, HardLinkError, InvalidPathError, PathError,
                          RootVanishedError, SpecialFileError, StaleError, SymlinkError)
from .._runtime.context import ToolContext
from .locator import respelled
from .catalogue import (Code, Kind, Refusal, exists, hardlink, internal, not_directory,
                        not_empty, not_found, shown_path, special_file, swapped)
from .._runtime.registry import Suggests

__all__ = ["classify", "close_paths", "missing_path", "Facts"]

log = logging.getLogger("corral.tools")

_PATH_FIELDS = ("path", "source", "destination")
MAX_SIBLINGS = 5000  # names of one directory compared with a missing one


@dataclass(frozen=True)
class Facts:
    """What a factory knows: the error, the root-relative path it names,
    the component where resolution stopped, which argument named the path,
    and the call (tool, the arguments the model sent, its context)."""

    exc: OSError
    path: str
    where: str
    field: str | None
    tool: str
    args: Mapping[str, Any]
    ctx: ToolContext
    suggests: Suggests

    def details(self, **more: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.field:
            out["field"] = self.field
        out.update(more)
        return out


Factory = Callable[[Facts], Refusal]


def classify(exc: BaseException, *, tool: str, args: Mapping[str, Any], ctx: ToolContext,
             suggests: Suggests | None = None) -> Refusal:
    """The refusal for ``exc`` raised while running ``tool`` with ``args``
    (``suggests``: what the tool's spec lets a not-found refusal offer)."""
    if isinstance(exc, Refusal):
        # a root that vanished is never the caller's "not found" or "changed"
        return internal() if exc.kind in _GONE_KINDS and _root_gone(ctx) else exc
    if not isinstance(exc, OSError) or isinstance(exc, RootVanishedError) or _root_gone(ctx):
        return _internal(exc)
    named = exc.filename if isinstance(exc.filename, str) else None
    if named is None:
        return _internal(exc)
    field, path = _field_of(named, args, ctx)
    component = exc.component if isinstance(exc, PathError) else None
    if isinstance(component, str) and component:
        hidden = ctx.hidden(component, path, field)  # decided on where resolution stopped
        if hidden is not None:
            return hidden
    facts = Facts(exc, path, component or named, field, tool, args, ctx, suggests or Suggests())
    for kind, factory in _BY_TYPE:
        if isinstance(exc, kind):
            return factory(facts)
    by_errno = _BY_ERRNO.get(exc.errno or 0)
    return by_errno(facts) if by_errno is not None else _internal(exc)


# -- factories by type --------------------------------------------------------------------

def _escape(f: Facts) -> Refusal:
    assert isinstance(f.exc, EscapeError)
    # the resolver's reason: "symlink" also for a '..' from a link's text
    return f.ctx.outside(f.path, f.field or "path", Kind(f.exc.reason).value)


def _strict_symlink(f: Facts) -> Refusal:
    return Refusal(Code.UNSUPPORTED, f"{f.path} goes through the symlink {f.where}, and this root "
                   "follows no symlinks", "Use the path the link points to instead.",
                   details=f.details(symlink=f.where), kind=Kind.SYMLINK)


def _special(f: Facts) -> Refusal:
    assert isinstance(f.exc, SpecialFileError)
    refusal = special_file(f.where, Kind(f.exc.kind), field=f.field)
    return refusal.replace(details={"path": f.path})


def _hard_linked(f: Facts) -> Refusal:
    assert isinstance(f.exc, HardLinkError)
    return hardlink(f.path, f.exc.links)  # as reads refuse one


def _invalid_path(f: Facts) -> Refusal:
    kind = Kind.PATH_TOO_LONG if f.exc.errno == errno.ENAMETOOLONG else Kind.PATH
    return Refusal(Code.INVALID_ARGUMENT, f"{shown_path(f.path)} is not a usable path: "
                   f"{f.exc.strerror}", "Pass a shorter path of plain names separated by '/'.",
                   details=f.details(path=shown_path(f.path)), kind=kind)


def _stale(f: Facts) -> Refusal:
    return swapped(f.path)


_BY_TYPE: tuple[tuple[type[OSError], Factory], ...] = (
    (StaleError, _stale),  # the tree no longer matches what was resolved: fail closed
    (EscapeError, _escape),
    (SymlinkError, _strict_symlink),
    (SpecialFileError, _special),
    (HardLinkError, _hard_linked),
    (InvalidPathError, _invalid_path),
)


# -- factories by errno -------------------------------------------------------------------

def _not_directory(f: Facts) -> Refusal:
    if f.where.rstrip("/") != f.path.rstrip("/"):
        return not_directory(f.path, f"{f.where} is a file, so {f.path} cannot be inside it",
                             f"Use a path whose directories exist; {f.where} is a file.",
                             **_field(f), component=f.where)
    return not_directory(f.path, f"{f.path} is not a directory", "Pass a directory here.",
                         **_field(f))


def _is_directory(f: Facts) -> Refusal:
    return Refusal(Code.INVALID_ARGUMENT, f"{f.where} is a directory",
                   "Pass a file path here, not a directory.", details=f.details(),
                   kind=Kind.DIRECTORY)


def _exists(f: Facts) -> Refusal:
    return exists(f.where, "Choose another name, or pass overwrite: true to replace it.",
                  **_field(f))


def _not_empty(f: Facts) -> Refusal:
    return not_empty(f.where, **_field(f))


def _loop(f: Facts) -> Refusal:
    return Refusal(Code.UNSUPPORTED, f"{f.path} leads through a symlink loop or more than 40 "
                   f"symlinks (at {f.where})", "Use the real path of the file, without the links.",
                   details=f.details(component=f.where), kind=Kind.SYMLINK_LOOP)


def _permission(f: Facts) -> Refusal:
    return Refusal(Code.DENIED, f"the filesystem does not permit this on {f.where}; nothing "
                   "was changed", "Do not retry; use another file or ask the user to fix "
                   "its permissions.", details=f.details(), kind=Kind.PERMISSION)


def _read_only_fs(f: Facts) -> Refusal:
    return Refusal(Code.DENIED, f"{f.where} is on a read-only filesystem; nothing was changed",
                   "Do not try to change files here.", details=f.details(),
                   kind=Kind.READ_ONLY_FILESYSTEM)


def _no_space(f: Facts) -> Refusal:
    return Refusal(Code.TOO_LARGE, f"the disk is full (or over quota) writing {f.path}; the "
                   "file was left as it was", "Free some space or write less, then retry.",
                   details=f.details(), kind=Kind.NO_SPACE)


def _cross_device(f: Facts) -> Refusal:
    return Refusal(Code.UNSUPPORTED, f"{f.path} is on another filesystem, so it cannot be "
                   "moved there atomically", "Copy it with read_file and write_file instead.",
                   details=f.details(), kind=Kind.CROSS_DEVICE)


def _name_too_long(f: Facts) -> Refusal:
    return Refusal(Code.INVALID_ARGUMENT, f"{shown_path(f.path)} is too long",
                   "Use shorter names (at most 255 bytes each).",
                   details=f.details(path=shown_path(f.path)), kind=Kind.PATH_TOO_LONG)


def _missing(f: Facts) -> Refusal:
    """``NOT_FOUND`` naming the missing component, with close names that exist."""
    return missing_path(f.ctx, f.path, f.where, field=f.field, tool=f.tool, args=f.args,
                        suggests=f.suggests)


def missing_path(ctx: ToolContext, path: str, missing: str, *, field: str | None, tool: str,
                 args: Mapping[str, Any], suggests: Suggests | None = None,
                 hint: str | None = None) -> Refusal:
    """``NOT_FOUND`` for ``path`` (``missing``: its first component that does
    not exist), with close names that do and a suggested call; ``hint``, if
    given, replaces the default hint when no close name exists (a tool that
    knows better, e.g. edit_file: "create it with write_file")."""
    candidates = close_paths(path, missing, ctx)
    suggestion = None
    found = respelled(ctx, path, search=bool(field)) if field and not candidates else None
    if field:
        facts = Facts(OSError(), path, missing, field, tool, args, ctx, suggests or Suggests())
        suggestion = _suggest(found.paths if found else candidates, facts, typo=found is None)
    parent = missing.rstrip("/").rpartition("/")[0] or "."
    if suggestion is None and field and not ctx.is_denied(parent):
        # the deepest directory that exists: seeing it is the next step
        suggestion = ("list_directory", {"path": parent})
    if found is not None:
        refusal = not_found(path, missing, field=field, did_you_mean=found.paths,
                            suggest=suggestion,
                            hint=f"Check the path; {found.paths[0]} exists ({path} read "
                                 f"{found.how}).")
        more: dict[str, Any] = {"readAs": found.how}
        if found.searched:
            more["searched"] = found.searched
        if not found.complete:
            more["searchComplete"] = False
        return refusal.replace(details=more)
    return not_found(path, missing, field=field, did_you_mean=candidates, suggest=suggestion,
                     hint=None if candidates else hint)


_BY_ERRNO: dict[int, Factory] = {
    errno.ENOENT: _missing,
    errno.ENOTDIR: _not_directory,
    errno.EISDIR: _is_directory,
    errno.EEXIST: _exists,
    errno.ENOTEMPTY: _not_empty,
    errno.ELOOP: _loop,
    errno.EACCES: _permission,
    errno.EPERM: _permission,
    errno.EROFS: _read_only_fs,
    errno.ENOSPC: _no_space,
    errno.EDQUOT: _no_space,
    errno.EXDEV: _cross_device,
    errno.ENAMETOOLONG: _name_too_long,
}


# -- helpers ------------------------------------------------------------------------------

def _field(f: Facts) -> dict[str, Any]:
    return {"field": f.field} if f.field else {}


_GONE_KINDS = frozenset({Kind.SWAPPED, Kind.NOT_FOUND, Kind.MISSING})


def _root_gone(ctx: ToolContext) -> bool:
    """Whether the root directory itself was removed (its fd still works:
    a removed directory has no links left)."""
    try:
        return os.fstat(ctx.root.fileno()).st_nlink == 0
    except (OSError, ValueError):
        return True


def _internal(exc: BaseException) -> Refusal:
    log.error("internal error in a corral tool", exc_info=exc)
    return internal()


def _field_of(named: str, args: Mapping[str, Any], ctx: ToolContext) -> tuple[str | None, str]:
    """Which path argument the error is about, and the path to speak of: the
    argument itself when the error names it or a directory above it (a write
    that creates parents fails on a parent; the model named the file)."""
    above = named.rstrip("/") + "/"
    for name in _PATH_FIELDS:
        value = args.get(name)
        if isinstance(value, str):
            try:
                rel = ctx.rel(value, name)
            except Refusal:
                continue
            if rel == named:
                return name, named
            if rel.startswith(above) and named not in (".", ""):
                return name, rel
    return None, named


def close_paths(path: str, missing: str, ctx: ToolContext) -> list[str]:
    """Existing paths close to ``path`` whose component ``missing`` is not
    there (a typo in the name or in a parent directory); never a path a deny
    rule hides."""
    parent, _, name = missing.rstrip("/").rpartition("/")
    rest = path.rstrip("/")[len(missing.rstrip("/")):]  # what follows the missing part
    try:
        siblings = ctx.root.listdir(parent or ".")[:MAX_SIBLINGS]
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
        candidate = f"{parent}/{match}{rest}" if parent else match + rest
        if ctx.is_denied(candidate):
            continue  # a denied name must not leak through a suggestion
        try:
            if not ctx.root.exists(candidate) or ctx.is_denied(ctx.root.realpath(candidate)):
                continue
        except OSError:
            continue
        out.append(candidate)
    return out[:3]


def _suggest(candidates: list[str], f: Facts, *, typo: bool = True
             ) -> tuple[str, dict[str, Any]] | None:
    """A call that may succeed now (the toolbox tries it before offering it):
    what the tool's spec allows on the first close name of the right kind,
    if that name is a plausible typo of the one asked for (``typo``) or the
    path meant by another spelling."""
    assert f.field is not None
    asked = f.where.rstrip("/").rpartition("/")[2]
    for candidate in candidates:
        if typo and not plausible_typo(asked, _component(candidate, f.where)):
            continue
        try:
            info = f.ctx.root.stat(candidate)
        except OSError:
            continue
        kind = "directory" if st.S_ISDIR(info.st_mode) else \
            "file" if st.S_ISREG(info.st_mode) else None
        if kind is None:
            continue
        usable = kind == "directory" or not (info.st_nlink > 1 and not f.ctx.allow_hardlinks)
        if kind in f.suggests.retry_on and usable:
            return f.tool, {**_given(f.args), f.field: candidate}
        if kind == "file" and f.suggests.read_instead and usable:
            return "read_file", {"path": candidate}
    return None


def _component(candidate: str, where: str) -> str:
    """The name in ``candidate`` that stands where the missing ``where`` was."""
    depth = where.rstrip("/").count("/")
    parts = candidate.split("/")
    return parts[depth] if depth < len(parts) else parts[-1]


def plausible_typo(asked: str, found: str) -> bool:
    """Whether ``found`` is a plausible misspelling fix of ``asked``: the same
    but for case, the same stem with another extension, or a few edits
    apart (one for short names, up to three for long ones)."""
    if asked.lower() == found.lower():
        return True
    stem_a, dot_a, _ = asked.rpartition(".")
    stem_f, dot_f, _ = found.rpartition(".")
    if dot_a and dot_f and stem_a and stem_a.lower() == stem_f.lower():
        return True
    limit = 1 if len(asked) <= 4 else 2 if len(asked) <= 10 else 3
    return _edits_within(asked.lower(), found.lower(), limit)


def _edits_within(a: str, b: str, limit: int) -> bool:
    """Whether the optimal string alignment distance (insert, delete,
    substitute, swap neighbours) of ``a`` and ``b`` is at most ``limit``:
    a banded table, O(len * limit)."""
    if abs(len(a) - len(b)) > limit:
        return False
    far = limit + 1
    before: dict[int, int] = {}
    row = {j: j for j in range(min(len(b), limit) + 1)}
    for i in range(1, len(a) + 1):
        new = {0: i} if i <= limit else {}
        for j in range(max(1, i - limit), min(len(b), i + limit) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            best = min(row.get(j, far) + 1, new.get(j - 1, far) + 1, row.get(j - 1, far) + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, before.get(j - 2, far) + 1)
            new[j] = best
        if min(new.values(), default=far) > limit:
            return False
        before, row = row, new
    return row.get(len(b), far) <= limit


def _given(args: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if v is not None}
