"""The one classification boundary: an error from below becomes a refusal.

Tools raise :class:`Refusal` for what they decide themselves and let errors
from :mod:`corral.contained` propagate; :func:`classify` turns those into
refusals phrased from root-relative paths and the facts of the request.

It looks at nothing: a refusal is a function of the error, the call
(:class:`Call`) and the :class:`Facts` gathered through the call's view
before classifying (whether the root is gone, the path spoken of, the
policy's answer where resolution stopped, the close names that exist).
So every row can be tried without a filesystem.  It is a table: the
contained error's type first (:data:`_BY_TYPE`), then its errno
(:data:`_BY_ERRNO`), each to a factory that gets the error's
:class:`Error`.  Default-deny: a cause with no row is ``INTERNAL`` and
carries no path, errno text or host path (the cause is logged, not
returned).
"""

from __future__ import annotations

import errno
import logging
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, NamedTuple
from collections.abc import Callable, Mapping

from ...contained import (EscapeError, HardLinkError, InvalidPathError, PathError,
                          RootVanishedError, SpecialFileError, StaleError, SymlinkError)
from .answer_path import AnswerPath
from .answer_path import sentence_path as _said
from .locator import Found
from .catalogue import (Code, Kind, Refusal, exists, hardlink, internal, not_directory,
                        not_empty, not_found, out_of_open_files, outside_root, shown_path,
                        special_file, swapped)

__all__ = ["classify", "Call", "Facts", "Seen", "Suggests", "GONE_KINDS", "names_path",
           "component_of", "asks_for_close_names", "plausible_typo"]

log = logging.getLogger("corral.tools")

EntryKind = Literal["file", "directory"]  # what a close name is


@dataclass(frozen=True)
class Suggests:
    """The suggested calls a tool offers when a path it was given does not
    exist but a close name does: the same call again with the name fixed
    when the close name is one of ``retry_on`` (``"file"``, ``"directory"``),
    else ``read_file`` of a close file when ``read_instead``."""

    retry_on: frozenset[str] = frozenset()
    read_instead: bool = False


class Call(NamedTuple):
    """The call that failed: the tool, the arguments the model sent
    (defaults left out), and what its spec lets a refusal suggest."""

    tool: str
    args: Mapping[str, Any]
    suggests: Suggests = Suggests()


class Seen(NamedTuple):
    """A path that exists, as a suggested call may use it: a regular file
    or a directory, and its link count."""

    kind: EntryKind
    links: int = 1


class Facts(NamedTuple):
    """What was true of the tree when the error arose, gathered through the
    call's view (each field only when the error makes it matter):

    ``root_gone``, the root directory itself was removed; ``path``, the
    root-relative path the refusal speaks of (``None``: the error names no
    path); ``field``, the argument that named it; ``hidden``, the policy's
    own refusal for where resolution stopped (a rule hides it, so nothing
    else may be said of it); ``close``, existing paths close to a missing
    one, and ``found``, what a respelling of it found; ``seen``, the kind of
    each of those; ``parent_hidden``, a rule hides the directory above the
    missing name; ``allow_hardlinks``, files with more than one link are
    usable."""

    root_gone: bool = False
    path: str | None = None
    field: str | None = None
    hidden: Refusal | None = None
    close: tuple[str, ...] = ()
    found: Found | None = None
    seen: Mapping[str, Seen] = MappingProxyType({})
    parent_hidden: bool = False
    allow_hardlinks: bool = False


class Error(NamedTuple):
    """What a factory knows: the error, the path it speaks of, the
    component where resolution stopped, and the call and its facts."""

    exc: OSError
    path: str
    where: str
    call: Call
    facts: Facts

    @property
    def field(self) -> str | None:
        return self.facts.field

    def details(self, **more: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.field:
            out["field"] = self.field
        out.update(more)
        return out


Factory = Callable[[Error], Refusal]

GONE_KINDS = frozenset({Kind.SWAPPED, Kind.NOT_FOUND, Kind.MISSING})
_OUT_OF_FILES = frozenset({errno.EMFILE, errno.ENFILE})


def classify(exc: BaseException, call: Call, facts: Facts) -> Refusal:
    """The refusal for ``exc`` raised while running ``call``, given the
    ``facts`` of the tree (see :class:`Facts`)."""
    if isinstance(exc, Refusal):
        # a root that vanished is never the caller's "not found" or "changed"
        return internal() if exc.kind in GONE_KINDS and facts.root_gone else exc
    if not isinstance(exc, OSError) or isinstance(exc, RootVanishedError) or facts.root_gone:
        return _internal(exc)
    if exc.errno in _OUT_OF_FILES:
        # a limit of the host's, met anywhere a call opens something (a host
        # path it names, such as the tree lock's file, is never said)
        return facts.hidden or out_of_open_files(facts.path if facts.field else None,
                                                 field=facts.field)
    named = names_path(exc)
    if named is None or facts.path is None:
        return _internal(exc)
    if facts.hidden is not None:
        return facts.hidden
    error = Error(exc, facts.path, component_of(exc) or named, call, facts)
    for kind, factory in _BY_TYPE:
        if isinstance(exc, kind):
            return factory(error)
    by_errno = _BY_ERRNO.get(exc.errno or 0)
    return by_errno(error) if by_errno is not None else _internal(exc)


def names_path(exc: BaseException) -> str | None:
    """The root-relative path an error from the core names, if any."""
    if not isinstance(exc, OSError) or isinstance(exc, Refusal):
        return None
    return exc.filename if isinstance(exc.filename, str) else None


def component_of(exc: BaseException) -> str | None:
    """Where the core's resolution stopped (a missing name, a file taken
    for a directory, a loop), if the error says."""
    component = exc.component if isinstance(exc, PathError) else None
    return component if isinstance(component, str) and component else None


def asks_for_close_names(exc: BaseException) -> bool:
    """Whether the refusal for ``exc`` is "not found", naming close names
    that exist (so the facts must hold them)."""
    return isinstance(exc, OSError) and not isinstance(exc, tuple(k for k, _ in _BY_TYPE)) \
        and exc.errno == errno.ENOENT


# -- factories by type --------------------------------------------------------------------

def _escape(f: Error) -> Refusal:
    assert isinstance(f.exc, EscapeError)
    if f.exc.reason == "moved":  # a directory on the way left the root during the call
        return swapped(f.path)
    # the resolver's reason: "symlink" also for a '..' from a link's text
    return outside_root(f.path, f.field or "path", Kind(f.exc.reason))


def _strict_symlink(f: Error) -> Refusal:
    return Refusal(Code.UNSUPPORTED, f"{_said(f.path)} goes through the symlink "
                   f"{_said(f.where)}, and this root follows no symlinks",
                   "Use the path the link points to instead.",
                   details=f.details(symlink=f.where), kind=Kind.SYMLINK)


def _special(f: Error) -> Refusal:
    assert isinstance(f.exc, SpecialFileError)
    refusal = special_file(f.where, Kind(f.exc.kind), field=f.field)
    return refusal.replace(details={"path": f.path})


def _hard_linked(f: Error) -> Refusal:
    assert isinstance(f.exc, HardLinkError)
    return hardlink(f.path, f.exc.links)  # as reads refuse one


def _invalid_path(f: Error) -> Refusal:
    kind = Kind.PATH_TOO_LONG if f.exc.errno == errno.ENAMETOOLONG else Kind.PATH
    return Refusal(Code.INVALID_ARGUMENT, f"{_said(shown_path(f.path))} is not a usable path: "
                   f"{f.exc.strerror}", "Pass a shorter path of plain names separated by '/'.",
                   details=f.details(path=shown_path(f.path)), kind=kind)


def _stale(f: Error) -> Refusal:
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

_DIRECTORY_TOOLS = frozenset({"list_directory", "glob", "grep", "make_directory"})


def _slashed(f: Error) -> str | None:
    """The name ``f.path`` gives without its trailing ``/``, when the error
    is about that name itself and the tool takes a file (the ``/`` names a
    directory: a file there, or a file to make, is an error of the ``/``;
    a tool that takes a directory is rightly told to pass one)."""
    meant = f.path.rstrip("/")
    if f.call.tool in _DIRECTORY_TOOLS or not meant or meant == f.path:
        return None
    return meant if f.where.rstrip("/") == meant else None


def _not_directory(f: Error) -> Refusal:
    meant = _slashed(f)
    if meant is not None:
        return not_directory(f.path, f"{_said(f.path)} ends with '/', which names a directory, "
                             f"but {_said(meant)} is not one",
                             f"Pass \"{_said(meant)}\" without the trailing '/'.", **_field(f))
    if f.where.rstrip("/") != f.path.rstrip("/"):
        return not_directory(f.path, f"{_said(f.where)} is a file, so {_said(f.path)} "
                             "cannot be inside it",
                             f"Use a path whose directories exist; {_said(f.where)} is a file.",
                             **_field(f), component=AnswerPath(f.where))
    return not_directory(f.path, f"{_said(f.path)} is not a directory", "Pass a directory here.",
                         **_field(f))


def _is_directory(f: Error) -> Refusal:
    meant = _slashed(f)
    if meant is not None:
        return Refusal(Code.INVALID_ARGUMENT, f"{_said(f.path)} ends with '/', which names a "
                       "directory, not a file", f"Pass \"{_said(meant)}\" without the trailing "
                       "'/' to name a file.", details=f.details(), kind=Kind.DIRECTORY)
    return Refusal(Code.INVALID_ARGUMENT, f"{_said(f.where)} is a directory",
                   "Pass a file path here, not a directory.", details=f.details(),
                   kind=Kind.DIRECTORY)


def _exists(f: Error) -> Refusal:
    return exists(f.where, "Choose another name, or pass overwrite: true to replace it.",
                  **_field(f))


def _not_empty(f: Error) -> Refusal:
    return not_empty(f.where, **_field(f))


def _loop(f: Error) -> Refusal:
    return Refusal(Code.UNSUPPORTED, f"{_said(f.path)} leads through a symlink loop or more "
                   f"than 40 symlinks (at {_said(f.where)})",
                   "Use the real path of the file, without the links.",
                   details=f.details(component=AnswerPath(f.where)), kind=Kind.SYMLINK_LOOP)


def _permission(f: Error) -> Refusal:
    if f.where.rstrip("/") in ("", "."):  # the root opened again: no file of the model's
        named = _said(".")
        return Refusal(Code.DENIED, "the filesystem does not let this process open or read the "
                       f"root directory{'' if named == '.' else f' {named}'}; nothing was changed",
                       "Do not retry; ask the user to let this process read the root "
                       "directory.", details=f.details(), kind=Kind.PERMISSION)
    return Refusal(Code.DENIED, f"the filesystem does not permit this on {_said(f.where)}; nothing "
                   "was changed", "Do not retry; use another file or ask the user to fix "
                   "its permissions.", details=f.details(), kind=Kind.PERMISSION)


def _read_only_fs(f: Error) -> Refusal:
    return Refusal(Code.DENIED,
                   f"{_said(f.where)} is on a read-only filesystem; nothing was changed",
                   "Do not try to change files here.", details=f.details(),
                   kind=Kind.READ_ONLY_FILESYSTEM)


def _no_space(f: Error) -> Refusal:
    return Refusal(Code.TOO_LARGE, f"the disk is full (or over quota) writing {_said(f.path)}; the "
                   "file was left as it was", "Free some space or write less, then retry.",
                   details=f.details(), kind=Kind.NO_SPACE)


def _cross_device(f: Error) -> Refusal:
    return Refusal(Code.UNSUPPORTED, f"{_said(f.path)} is on another filesystem, so it cannot be "
                   "moved there atomically", "Copy it with read_file and write_file instead.",
                   details=f.details(), kind=Kind.CROSS_DEVICE)


def _name_too_long(f: Error) -> Refusal:
    return Refusal(Code.INVALID_ARGUMENT, f"{_said(shown_path(f.path))} is too long",
                   "Use shorter names (at most 255 bytes each).",
                   details=f.details(path=shown_path(f.path)), kind=Kind.PATH_TOO_LONG)


def _missing(f: Error) -> Refusal:
    """``NOT_FOUND`` naming the missing component, with close names that
    exist (or the path a respelling found) and a call that may work now."""
    facts, field = f.facts, f.field
    found = facts.found
    candidates = list(facts.close)
    suggestion = None
    if field:
        suggestion = _suggest(list(found.paths) if found else candidates, f,
                              typo=found is None)
    parent = f.where.rstrip("/").rpartition("/")[0] or "."
    if suggestion is None and field and not facts.parent_hidden:
        # the deepest directory that exists: seeing it is the next step
        suggestion = ("list_directory", {"path": parent})
    if found is not None:
        refusal = not_found(f.path, f.where, field=field, did_you_mean=list(found.paths),
                            suggest=suggestion,
                            hint=f"Check the path; {_said(found.paths[0])} exists "
                                 f"({_said(f.path)} read {found.how}).")
        more: dict[str, Any] = {"readAs": found.how}
        if found.searched:
            more["searched"] = found.searched
        if not found.complete:
            more["searchComplete"] = False
        return refusal.replace(details=more)
    return not_found(f.path, f.where, field=field, did_you_mean=candidates, suggest=suggestion)


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

def _field(f: Error) -> dict[str, Any]:
    return {"field": f.field} if f.field else {}


def _internal(exc: BaseException) -> Refusal:
    log.error("internal error in a corral tool", exc_info=exc)
    return internal()


def _suggest(candidates: list[str], f: Error, *, typo: bool = True
             ) -> tuple[str, dict[str, Any]] | None:
    """A call that may succeed now (the toolbox tries it before offering it):
    what the tool's spec allows on the first close name of the right kind,
    if that name is a plausible typo of the one asked for (``typo``) or the
    path meant by another spelling."""
    assert f.field is not None
    asked = f.where.rstrip("/").rpartition("/")[2]
    suggests = f.call.suggests
    for candidate in candidates:
        if typo and not plausible_typo(asked, _component(candidate, f.where)):
            continue
        seen = f.facts.seen.get(candidate)
        if seen is None:
            continue  # neither a file nor a directory, or gone
        usable = seen.kind == "directory" or seen.links <= 1 or f.facts.allow_hardlinks
        if seen.kind in suggests.retry_on and usable:
            return f.call.tool, {**_given(f.call.args), f.field: candidate}
        if seen.kind == "file" and suggests.read_instead and usable:
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
