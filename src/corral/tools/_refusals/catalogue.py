"""The refusal: a typed outcome a model can act on, its vocabulary, and its envelope.

A refusal carries its own sentence (``message``, always copied into
``details`` so structured details can never displace it), one imperative
``hint``, a finer reason (``details.kind``, a :class:`Kind`) and optionally a
call that would succeed as things stand (``suggested_tool`` /
``suggested_args``).  The JSON shape is the stable contract in DESIGN.md.

A refusal is immutable once built: code that wants another hint or more
facts builds a new one with :meth:`Refusal.replace`.  Refusals more than one
place raises are built here, by the factory functions below, so one concept
has one wording and one set of field names everywhere.
"""

from __future__ import annotations

import enum
import stat as st
from types import MappingProxyType
from typing import Any
from collections.abc import Mapping

from .answer_path import sentence_path as _said

__all__ = ["Code", "Kind", "Refusal", "INTERNAL_MESSAGE", "ENTRY_KINDS", "entry_kind",
           "special_kind", "shown_path",
           "internal", "invalid_argument", "not_found", "outside_root", "swapped", "appeared",
           "sha256_mismatch", "directory_given", "special_file", "hardlink", "read_only",
           "denied_rule", "protected", "another_root", "secret", "host_denied", "host_unexpected",
           "time_limit", "not_ready", "too_many_links", "cancelled", "out_of_open_files",
           "root_closed",
           "file_too_large",
           "binary_file", "exists", "not_empty", "not_directory"]


class Code(str, enum.Enum):
    """The refusal codes of the tool contract.  ``details["kind"]`` gives a
    finer reason (a :class:`Kind`)."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"  # the call itself is wrong: fix the arguments
    NOT_FOUND = "NOT_FOUND"  # a path, or an edit's oldText, is not there
    OUTSIDE_ROOT = "OUTSIDE_ROOT"  # the path leads outside the root
    ALREADY_EXISTS = "ALREADY_EXISTS"  # a create or move would replace something
    AMBIGUOUS = "AMBIGUOUS"  # an edit's oldText matches more than once
    STALE = "STALE"  # the file is not what the caller last saw
    TOO_LARGE = "TOO_LARGE"  # over a limit (or the disk is full, or out of time)
    UNSUPPORTED = "UNSUPPORTED"  # a kind of file these tools do not handle
    DENIED = "DENIED"  # the host, a policy rule or the filesystem said no
    INTERNAL = "INTERNAL"  # corral's own failure; says nothing more

    def __str__(self) -> str:
        return self.value


class Kind(str, enum.Enum):
    """Every ``details.kind`` a refusal can carry.  A refusal with a kind
    that is not a member cannot be built (``ValueError``)."""

    # arguments
    ARGUMENT = "argument"  # a schema check failed (type, bound, unknown field)
    UNKNOWN_TOOL = "unknown_tool"
    PATH = "path"  # not usable as a path at all
    PATH_TOO_LONG = "path_too_long"
    ROOT = "root"  # the root itself or '..' where an entry is needed
    SAME_PATH = "same_path"
    SAME_FILE = "same_file"
    INTO_ITSELF = "into_itself"
    OFFSET_PAST_END = "offset_past_end"
    PATTERN = "pattern"  # a glob pattern that names nothing usable
    PATTERN_OUTSIDE_PATH = "pattern_outside_path"
    REGEX = "regex"
    UNSAFE_REGEX = "unsafe_regex"
    MULTILINE = "multiline"
    # search (glob, grep): what RE2 cannot run, a 'path' given as a glob
    REGEX_UNSUPPORTED = "regex_unsupported"
    PATH_IS_PATTERN = "path_is_pattern"
    EMPTY_OLD_TEXT = "empty_old_text"
    NO_CHANGE = "no_change"
    ALREADY_APPLIED = "already_applied"
    NO_MATCH = "no_match"
    LINE_NUMBER_PREFIX = "line_number_prefix"
    PLACEHOLDER = "placeholder"
    PATCH_SYNTAX = "patch_syntax"  # apply_patch: the text is not a patch
    UNCLEAR_INDENTATION = "unclear_indentation"  # newText's indentation could be read two ways
    MARKDOWN_FENCE = "markdown_fence"  # content wrapped in a Markdown code fence
    CONTROL_CHARACTERS = "control_characters"  # a name to create holds them, or ends in a space
    PASTED_PATH = "pasted_path"  # a path with a log line's words before a file that exists
    TEMPORARY_NAME = "temporary_name"  # a name of the form of a write's in-flight temporary file
    NOTEBOOK = "notebook"  # an edit that would leave a notebook's JSON broken
    CUT_OFF = "cut_off"  # a call that ran out of output: an argument missing or truncated
    NORMALIZATION = "normalization"  # oldText and the file differ only in Unicode normal form
    CHANGED_BY_EARLIER_EDIT = "changed_by_earlier_edit"  # a later edit's text an earlier changed
    # where a path leads
    NOT_FOUND = "not_found"  # a path (or a component of it) does not exist
    MISSING = "missing"  # expectedSha256 given for a file that is not there
    DOTDOT = "dotdot"  # OUTSIDE_ROOT: '..' climbs above the root
    ABSOLUTE = "absolute"  # OUTSIDE_ROOT: an absolute path outside the root
    HOME = "home"  # OUTSIDE_ROOT: '~'
    SYMLINK = "symlink"  # a symlink leads out, or is not followed here
    SYMLINK_LOOP = "symlink_loop"
    DIRECTORY = "directory"  # a directory where a file is needed
    NOT_DIRECTORY = "not_directory"  # a file (or other) where a directory is needed
    NOT_EMPTY = "not_empty"
    EXISTS = "exists"
    CROSS_DEVICE = "cross_device"
    # kinds of file
    BINARY = "binary"
    ENCODING = "encoding"
    HARDLINK = "hardlink"
    FIFO = "fifo"
    SOCKET = "socket"
    CHAR_DEVICE = "char_device"
    BLOCK_DEVICE = "block_device"
    OTHER = "other"
    # changed under the caller
    SHA256_MISMATCH = "sha256_mismatch"  # expectedSha256 is not the file's sha256
    SWAPPED = "swapped"  # changed while the call was being authorized or carried out
    # limits
    CONTENT_SIZE = "content_size"
    FILE_TOO_LARGE = "file_too_large"
    RESULT_TOO_LARGE = "result_too_large"
    TOO_MANY_REPLACEMENTS = "too_many_replacements"
    TOO_MANY_PLACES = "too_many_places"  # a patch's hunks occur in too many places to place
    TOO_DEEP = "too_deep"  # folders nested deeper than a walk can hold open
    MULTIPLE_MATCHES = "multiple_matches"
    MULTIPLE_TOLERANT_MATCHES = "multiple_tolerant_matches"
    NO_SPACE = "no_space"
    OPEN_FILES = "open_files"  # the process may open no more files (EMFILE, ENFILE)
    TIME_LIMIT = "time_limit"
    NOT_READY = "not_ready"  # the tree is still being looked through: retry shortly
    TOO_MANY_LINKS = "too_many_links"  # more symlinks than the view keeps: it cannot decide
    # several roots (Workspace)
    ROOT_REQUIRED = "root_required"  # a path that names no root, where there are several
    UNKNOWN_ROOT = "unknown_root"  # a path whose first component is no root's name
    OUTSIDE_ROOTS = "outside_roots"  # OUTSIDE_ROOT: outside every root
    CROSS_ROOT = "cross_root"  # UNSUPPORTED: one call's paths in two roots
    ANOTHER_ROOT = "another_root"  # DENIED: a move or delete would carry another served root
    NO_ROOTS = "no_roots"  # DENIED: the client's roots share nothing with the server's
    # who said no
    HOST = "host"  # the host's authorize refused
    HOST_UNEXPECTED = "host_unexpected"  # authorize answered neither None/True nor False
    REENTERED = "reentered"  # made from authorize, needing what the asking call holds
    CANCELLED = "cancelled"
    ROOT_CLOSED = "root_closed"  # DENIED: the host closed the Root the toolbox acts on
    READ_ONLY = "read_only"
    DENY_RULE = "deny_rule"
    PROTECTED = "protected"
    SECRET = "secret"  # noqa: S105 - a kind of refusal, not a password
    PERMISSION = "permission"
    READ_ONLY_FILESYSTEM = "read_only_filesystem"
    BATCH_BUDGET = "batch_budget"  # read_files: past the byte budget of one call

    def __str__(self) -> str:
        return self.value


INTERNAL_MESSAGE = ("the tool failed for an internal reason (the cause is in the host's log, "
                    "not here)")

_OWN_FIELDS = frozenset({"code", "kind", "message", "hint", "details", "suggested_tool",
                         "suggested_args"})


class Refusal(Exception):
    """A refusal.  Raised inside tools; :meth:`envelope` is what a model sees.

    ``details`` holds facts (root-relative paths, counts, digests); its
    ``message`` key is always the refusal's sentence and its ``kind`` key the
    :class:`Kind` (given as ``kind=`` or as ``details["kind"]``).  Immutable:
    see :meth:`replace`.
    """

    code: Code
    kind: Kind | None
    message: str
    hint: str
    details: Mapping[str, Any]
    suggested_tool: str | None
    suggested_args: Mapping[str, Any] | None

    def __init__(self, code: Code, message: str, hint: str, *,
                 details: Mapping[str, Any] | None = None, kind: Kind | None = None,
                 suggested_tool: str | None = None,
                 suggested_args: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        facts = dict(details or {})
        given = kind if kind is not None else facts.get("kind")
        checked = None if given is None else Kind(given)  # ValueError: not in the vocabulary
        if checked is not None:
            facts["kind"] = checked.value
        facts["message"] = message
        values = {"code": Code(code), "kind": checked, "message": message, "hint": hint,
                  "details": MappingProxyType(facts), "suggested_tool": suggested_tool,
                  "suggested_args": None if suggested_args is None else
                  MappingProxyType(dict(suggested_args))}
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN_FIELDS:
            raise AttributeError(f"a Refusal is immutable: build a new one (replace) instead "
                                 f"of setting {name}")
        super().__setattr__(name, value)

    def replace(self, *, hint: str | None = None, details: Mapping[str, Any] | None = None,
                suggest: tuple[str, Mapping[str, Any]] | bool | None = True) -> Refusal:
        """A new refusal like this one: another ``hint``, ``details`` merged
        in (facts added; ``message`` and ``kind`` stay), and ``suggest`` a new
        suggested call, ``None`` for none, or ``True`` (default) to keep it."""
        facts = {**self.details, **(details or {})}
        facts.pop("message", None)
        facts["kind"] = self.details.get("kind")
        if facts["kind"] is None:
            del facts["kind"]
        if suggest is True:
            tool, args = self.suggested_tool, self.suggested_args
        elif suggest is None or suggest is False:
            tool, args = None, None
        else:
            tool, args = suggest
        return Refusal(self.code, self.message, self.hint if hint is None else hint,
                       details=facts, suggested_tool=tool, suggested_args=args)

    def envelope(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": False, "code": self.code.value, "message": self.message,
                               "details": dict(self.details), "hint": self.hint}
        if self.suggested_tool is not None:
            out["suggestedTool"] = self.suggested_tool
            out["suggestedArgs"] = dict(self.suggested_args or {})
        return out

    def __repr__(self) -> str:
        return f"Refusal({self.code.value}, {self.message!r})"

    def __reduce__(self) -> Any:  # exceptions pickle by args; ours are keywords
        return (_rebuild, (self.code, self.message, self.hint, dict(self.details),
                           self.suggested_tool,
                           None if self.suggested_args is None else dict(self.suggested_args)))

    @classmethod
    def internal(cls) -> Refusal:
        """The default-deny answer: no path, no errno text, nothing of the host."""
        return internal()


def _rebuild(code: Code, message: str, hint: str, details: dict[str, Any],
             tool: str | None, args: dict[str, Any] | None) -> Refusal:
    return Refusal(code, message, hint, details=details, suggested_tool=tool, suggested_args=args)


# -- shared facts ----------------------------------------------------------------------------

#: What an entry is, by its mode's file type, as answers and refusals name it.
ENTRY_KINDS = {st.S_IFREG: "file", st.S_IFDIR: "directory", st.S_IFLNK: "symlink",
               st.S_IFIFO: Kind.FIFO.value, st.S_IFSOCK: Kind.SOCKET.value,
               st.S_IFCHR: Kind.CHAR_DEVICE.value, st.S_IFBLK: Kind.BLOCK_DEVICE.value}
_SPECIAL = (Kind.FIFO, Kind.SOCKET, Kind.CHAR_DEVICE, Kind.BLOCK_DEVICE)


def entry_kind(mode: int) -> str:
    """What the entry of ``mode`` is (:data:`ENTRY_KINDS`); ``"other"`` for a
    file type without a name there."""
    return ENTRY_KINDS.get(st.S_IFMT(mode), Kind.OTHER.value)


def special_kind(mode: int) -> Kind:
    """The kind of a file that is neither regular, directory nor symlink."""
    kind = entry_kind(mode)
    return next((special for special in _SPECIAL if special.value == kind), Kind.OTHER)


def shown_path(path: str, limit: int = 120) -> str:
    """``path`` for a sentence: a directory's trailing '/' dropped, very long ones cut."""
    text = path.rstrip("/") or "."
    return text if len(text) <= limit else text[:limit] + "..."


def _with_field(details: dict[str, Any], field: str | None) -> dict[str, Any]:
    if field:
        details["field"] = field
    return details


# -- factories ------------------------------------------------------------------------------

def internal() -> Refusal:
    """The default-deny answer: no path, no errno text, nothing of the host."""
    return Refusal(Code.INTERNAL, INTERNAL_MESSAGE,
                   "Do not retry this call unchanged; tell the user the tool failed.")


def invalid_argument(tool: str, field: str, wrong: str, hint: str, *,
                     kind: Kind = Kind.ARGUMENT, **facts: Any) -> Refusal:
    """``tool: argument 'field' <wrong>``: a call whose arguments are wrong."""
    return Refusal(Code.INVALID_ARGUMENT, f"{tool}: argument '{field}' {wrong}", hint,
                   details={"field": field, **facts}, kind=kind)


def not_found(path: str, missing: str, *, field: str | None = None,
              did_you_mean: list[str] | None = None, hint: str | None = None,
              suggest: tuple[str, dict[str, Any]] | None = None) -> Refusal:
    """``path`` does not exist (``missing`` is the first component that does not)."""
    details: dict[str, Any] = _with_field({"path": path, "missing": missing}, field)
    if did_you_mean:
        details["didYouMean"] = list(did_you_mean)
    message = (f"{_said(path)} does not exist" if missing in (path, path.rstrip("/"))
               else f"{_said(path)} does not exist: there is no {_said(missing)}")
    if hint is None:
        parent = missing.rstrip("/").rpartition("/")[0] or "."
        hint = (f"Check the name; {_said(did_you_mean[0])} exists." if did_you_mean else
                f"Check the path; list_directory on {_said(parent)} shows what is there.")
    return Refusal(Code.NOT_FOUND, message, hint, details=details, kind=Kind.NOT_FOUND,
                   suggested_tool=suggest[0] if suggest else None,
                   suggested_args=suggest[1] if suggest else None)


OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not "
                "climb above it and symlinks that lead out are not followed.")


def outside_root(shown: str, field: str = "path", kind: Kind = Kind.DOTDOT) -> Refusal:
    """``OUTSIDE_ROOT`` for a path as the model wrote it.  Never a symlink's
    target, and never an absolute path (it would name host directories)."""
    details: dict[str, Any] = {"field": field}
    if shown.startswith("/"):
        message = f"argument '{field}' is an absolute path outside the root"
    else:
        message = f"{_said(shown)} is outside the root"
        details["path"] = shown
    return Refusal(Code.OUTSIDE_ROOT, message, OUTSIDE_HINT, details=details, kind=kind)


def swapped(path: str) -> Refusal:
    """The target changed between the decision and the act: fail closed."""
    return Refusal(Code.STALE, f"{_said(path)} changed while the call was being authorized; "
                   "nothing was done", "Read the file again, then repeat the call.",
                   details={"path": path}, kind=Kind.SWAPPED)


def appeared(path: str) -> Refusal:
    """A call refused for a missing name that another program made
    meanwhile: the refusal would say the name is missing and exists."""
    return Refusal(Code.STALE, f"{_said(path)} appeared while the call ran; nothing was done",
                   "Make the call again: the name exists now.", details={"path": path},
                   kind=Kind.SWAPPED)


def sha256_mismatch(path: str, expected: str, current: str, *, message: str | None = None,
                    hint: str | None = None, suggest: tuple[str, dict[str, Any]] | None = None,
                    **facts: Any) -> Refusal:
    """``expectedSha256`` is not the file's sha256 (``currentSha256``)."""
    text = message or (f"{_said(path)} has changed: its sha256 is not the expectedSha256 given; "
                       "nothing was written")
    return Refusal(Code.STALE, text, hint or (
        "Read the file again (its current sha256 is in details), check your change still "
        "fits, then write with the new expectedSha256."),
        details={"path": path, "expectedSha256": expected, "currentSha256": current, **facts},
        kind=Kind.SHA256_MISMATCH, suggested_tool=suggest[0] if suggest else None,
        suggested_args=suggest[1] if suggest else None)


def directory_given(path: str, tool: str) -> Refusal:
    """A directory given to a tool that takes one file: glob shows what is in it."""
    shown = shown_path(path)
    verb = {"read_file": "reads", "edit_file": "edits"}.get(tool, "takes")
    return Refusal(Code.INVALID_ARGUMENT, f"{_said(shown)} is a directory, not a file",
                   "Use glob to find the files under it (list_directory shows one level); "
                   f"{tool} {verb} one file.", details={"path": shown}, kind=Kind.DIRECTORY,
                   suggested_tool="glob", suggested_args={"path": shown, "pattern": "**/*"})


def special_file(path: str, kind: Kind, *, field: str | None = None,
                 hint: str = "Use regular files only; this one cannot be read or edited."
                 ) -> Refusal:
    """A FIFO, socket, device (or another kind of non-regular file)."""
    what = "not a regular file" if kind is Kind.OTHER else \
        f"a {kind.value.replace('_', ' ')}, not a regular file"
    return Refusal(Code.UNSUPPORTED, f"{_said(shown_path(path))} is {what}", hint,
                   details=_with_field({"path": shown_path(path)}, field), kind=kind)


def hardlink(path: str, links: int) -> Refusal:
    return Refusal(Code.UNSUPPORTED, f"{_said(path)} is a hard-linked file ({links} links), which "
                   "these tools do not read or edit in place",
                   "Use a file that is not hard-linked, or ask the host to allow hard links.",
                   details={"path": path, "links": links}, kind=Kind.HARDLINK)


def read_only(what: str, *, path: str | None = None, operation: str | None = None) -> Refusal:
    """This toolbox is read-only: ``what`` (a tool or an operation) is not available."""
    details: dict[str, Any] = {}
    if path is not None:
        details["path"] = path
    if operation is not None:
        details["operation"] = operation
    else:
        details["tool"] = what
    suffix = "is not allowed" if operation is not None else "is not available"
    return Refusal(Code.DENIED, f"this root is read-only: {what} {suffix}",
                   "Do not try to change files here; read them instead.", details=details,
                   kind=Kind.READ_ONLY)


def denied_rule(path: str, field: str | None = None) -> Refusal:
    """A host deny rule covers ``path`` (as the model wrote it; the rule is not named)."""
    return Refusal(Code.DENIED, f"{_said(path)} is in a path the host does not allow",
                   "Do not use this path; work with other files.",
                   details=_with_field({"path": path}, field), kind=Kind.DENY_RULE)


def another_root(path: str, operation: str, field: str | None = None) -> Refusal:
    """A move or delete of ``path`` would carry away the folder another
    root is served from (a Workspace's nested root, another Toolbox's or
    another ``corral serve``'s): its tools would be left serving nothing or
    somewhere else."""
    return Refusal(Code.DENIED, f"{_said(path)} is or holds the folder another root of the host "
                   f"is served from, so the tools may not {operation} it; nothing was changed",
                   "Change the files inside it instead; if it must go, the host (the user) must "
                   "stop serving that root first.",
                   details=_with_field({"path": path, "operation": operation}, field),
                   kind=Kind.ANOTHER_ROOT)


def protected(path: str, operation: str, field: str | None = None) -> Refusal:
    """A change to what the host runs on its own (``.git/``, ``.envrc``...);
    ``operation`` is a verb: create, replace, edit, move, delete..."""
    return Refusal(Code.DENIED, f"{_said(path)} is protected: the host may run it on its own, "
                   f"so the tools may not {operation} it; nothing was changed",
                   "Do not change this path; if the change is needed, the host (the user) must "
                   "allow it in its policy.",
                   details=_with_field({"path": path, "operation": operation}, field),
                   kind=Kind.PROTECTED)


def secret(path: str, operation: str, field: str | None = None) -> Refusal:
    """A plain secret file (``.env``, a private key...): not read or searched by default."""
    return Refusal(Code.DENIED, f"{_said(path)} looks like a secret file (credentials or keys), "
                   f"which the tools may not {operation} here",
                   "Do not use this file; if its content is needed, ask the user (the host "
                   "must allow secret files explicitly).",
                   details=_with_field({"path": path, "operation": operation}, field),
                   kind=Kind.SECRET)


def host_denied(operation: str, path: str, reason: str | None) -> Refusal:
    """The host's ``authorize`` said no (``reason`` from a ``Denied``)."""
    text = "" if reason is None else f": {reason}"
    return Refusal(Code.DENIED, f"the host refused to {operation} {_said(path)}{text}",
                   "Do not repeat this call; ask the user or do something else.",
                   details={"path": path, "operation": operation,
                            "reason": reason or "refused by the host"}, kind=Kind.HOST)


def host_unexpected(operation: str, path: str, answer: str) -> Refusal:
    """``authorize`` returned something that is neither an allow nor ``False``."""
    return Refusal(Code.DENIED, f"the host refused to {operation} {_said(path)}: its authorize "
                   f"callback returned {answer}, which is not an answer (only None or True "
                   "allow, False denies)", "Do not repeat this call; ask the user to fix the "
                   "host's authorize callback.",
                   details={"path": path, "operation": operation, "returned": answer},
                   kind=Kind.HOST_UNEXPECTED)


def reentered(asking_tool: str, asking_path: str, needs: str) -> Refusal:
    """A call made from the host's ``authorize`` needs a lock the call that
    asked holds until ``authorize`` returns: it would wait on that call."""
    return Refusal(Code.DENIED, f"this call was made from the host's authorize while "
                   f"{asking_tool} ({_said(asking_path)}) waits on its answer, and it needs "
                   f"{needs}, which {asking_tool} holds until authorize returns; nothing was done",
                   "Make this call after authorize returns (keep it and run it once the answer "
                   "is given); calls that need nothing the asking call holds, such as reads, "
                   "may be made from authorize.",
                   details={"askingTool": asking_tool, "askingPath": asking_path,
                            "needs": needs}, kind=Kind.REENTERED)


def time_limit(tool: str, seconds: float, *, partial: Mapping[str, Any] | None = None,
               hint: str | None = None) -> Refusal:
    """The call ran past its deadline (``partial``: what a search found so far)."""
    details: dict[str, Any] = {"seconds": seconds}
    if partial is not None:
        details.update(partial)
        details["partial"] = True
    return Refusal(Code.TOO_LARGE, f"{tool} ran past its time limit of {seconds:g} s and was "
                   "stopped" + ("; what was found so far is in details" if partial is not None
                                else "; nothing was changed"),
                   hint or "Narrow the call (a smaller path, a more specific pattern, a smaller "
                   "window) and try again.", details=details, kind=Kind.TIME_LIMIT)


def not_ready() -> Refusal:
    """The view is still looking through a large tree for the symlinks that
    could decide this call (a name leading to it may be protected, denied
    or secret): nothing was done, and the same call succeeds once it is
    through."""
    return Refusal(Code.TOO_LARGE, "the folder tree is large and is still being looked "
                   "through for symlinks, which decide what the tools may touch; nothing was "
                   "done", "Retry the same call in a few seconds.", kind=Kind.NOT_READY)


def too_many_links() -> Refusal:
    """The tree holds more symlinks than the view keeps track of, and one
    it does not know of could decide this call (a name leading to it may
    be protected, denied or secret): nothing was done."""
    return Refusal(Code.TOO_LARGE, "the folder tree holds more symlinks than the tools keep "
                   "track of, and symlinks decide what the tools may touch; nothing was done",
                   "Ask the user to open a smaller folder.", kind=Kind.TOO_MANY_LINKS)


class Unwatched(str, enum.Enum):
    """Why directories of the tree lie beyond those the view follows each
    call (``details.cause`` of :func:`beyond_watched`): each has its own
    remedy, and a sentence naming another would send the user the wrong way."""

    WATCH_SHARE = "watch_share"  # the view's share of the user's kernel watches is used
    WATCH_BOUND = "watch_bound"  # the most folders the tools watch, short of the kernel's share
    NO_WATCH = "no_watch"  # the backend cannot watch (no inotify): a few looked at a call
    WATCH_REFUSED = "watch_refused"  # it can, but the kernel gave no watch (its limits)
    TOO_MANY = "too_many"  # more folders beyond than the view keeps the times of


# (the sentence's first clause, the hint) for each cause; ``{rest}`` is the
# clause saying that looking at the rest took too long
_UNWATCHED: dict[Unwatched, tuple[str, str]] = {
    Unwatched.WATCH_SHARE: (
        "the folder tree holds more folders than this system lets a program watch, and {rest}",
        "Retry the same call; if it keeps failing, ask the user to open a smaller folder or "
        "to raise fs.inotify.max_user_watches."),
    Unwatched.WATCH_BOUND: (
        "the folder tree holds more folders than the tools watch at most, and {rest}",
        "Retry the same call; if it keeps failing, ask the user to open a smaller folder."),
    Unwatched.NO_WATCH: (
        "the tools cannot watch folders on this system, so they look at a few of them each "
        "call, and {rest}",
        "Retry the same call; if it keeps failing, ask the user to open a smaller folder."),
    Unwatched.WATCH_REFUSED: (
        "the system gave the tools no watch of folders (its limits on watches may be used up "
        "by other programs), so they look at a few of them each call, and {rest}",
        "Retry the same call; if it keeps failing, ask the user to open a smaller folder or "
        "to raise fs.inotify.max_user_instances and fs.inotify.max_user_watches."),
    Unwatched.TOO_MANY: (
        "the folder tree holds more folders than the tools keep track of, so a symlink made "
        "since in one of them (symlinks decide what the tools may touch) could not be found; "
        "nothing was done",
        "Ask the user to open a smaller folder."),
}
_LOOKED_TOO_LONG = ("checking the rest for symlinks made since (which decide what the tools "
                    "may touch) took too long; nothing was done")


def beyond_watched(cause: Unwatched) -> Refusal:
    """The tree holds more folders than the view follows each call (for
    ``cause``), and looking at the rest for symlinks made since (which
    could decide this call) took longer than a call may wait, or cannot be
    done (:attr:`Unwatched.TOO_MANY`): nothing was done."""
    sentence, hint = _UNWATCHED[cause]
    return Refusal(Code.TOO_LARGE, sentence.format(rest=_LOOKED_TOO_LONG), hint,
                   details={"cause": cause.value}, kind=Kind.NOT_READY)


def out_of_open_files(path: str | None, *, field: str | None = None) -> Refusal:
    """The process (or the whole system) may open no more files: a resource
    limit of the host's, over by this call or by others running at once."""
    where = f" opening {_said(path)}" if path else ""
    details = _with_field({"path": path} if path else {}, field)
    return Refusal(Code.TOO_LARGE, f"the host ran out of open files{where} (its limit on "
                   "open file descriptors was reached); the call stopped there",
                   "Retry in a moment with fewer calls at once; if it fails again, tell the user "
                   "the host's open-file limit is reached.", details=details,
                   kind=Kind.OPEN_FILES)


def root_closed(tool: str) -> Refusal:
    """The host closed the Root this toolbox acts on (a Root it lent the
    toolbox, closed while the toolbox was still offered): no call can reach
    the tree until the host gives the tools an open one."""
    return Refusal(Code.DENIED, f"{tool} cannot run: the host closed the root these tools work "
                   "in (the host must open it again and give the tools a new toolbox on it, or "
                   "close this toolbox first)",
                   "Do not retry; tell the user the tools' root was closed by the host.",
                   kind=Kind.ROOT_CLOSED)


def cancelled(tool: str) -> Refusal:
    return Refusal(Code.DENIED, f"{tool} was cancelled by the host before it finished; nothing "
                   "was changed", "Do not repeat this call unless the user asks for it again.",
                   kind=Kind.CANCELLED)


def file_too_large(path: str, size: int, limit: int, tool: str) -> Refusal:
    return Refusal(Code.TOO_LARGE, f"{_said(path)} is {size} bytes, over {tool}'s limit of {limit}",
                   "Leave this file as it is, or ask the user to change it.",
                   details={"path": path, "size": size, "limit": limit},
                   kind=Kind.FILE_TOO_LARGE)


def binary_file(path: str, size: int, tool: str, hint: str) -> Refusal:
    what = "does not show" if tool == "read_file" else "does not change"
    return Refusal(Code.UNSUPPORTED, f"{_said(path)} is a binary file ({size} bytes), which {tool} "
                   f"{what}", hint, details={"path": path, "size": size}, kind=Kind.BINARY)


def exists(path: str, hint: str, **facts: Any) -> Refusal:
    return Refusal(Code.ALREADY_EXISTS, f"{_said(path)} already exists", hint,
                   details={"path": path, **facts}, kind=Kind.EXISTS)


def not_empty(path: str, entries: int | None = None, *,
              suggest: tuple[str, dict[str, Any]] | None = None, **facts: Any) -> Refusal:
    details: dict[str, Any] = {"path": path, **facts}
    if entries is None:
        message = f"{_said(path)} is a directory that is not empty"
        hint = "Delete or move what is inside it first (list_directory shows it)."
    else:
        details["entries"] = entries
        noun = "entry" if entries == 1 else "entries"
        message = (f"{_said(path)} is a directory with {entries} {noun}; "
                   "delete_file removes only empty directories")
        hint = "Delete or move what is inside it first; list_directory shows it."
    return Refusal(Code.INVALID_ARGUMENT, message, hint, details=details, kind=Kind.NOT_EMPTY,
                   suggested_tool=suggest[0] if suggest else None,
                   suggested_args=suggest[1] if suggest else None)


def not_directory(path: str, message: str, hint: str, *,
                  suggest: tuple[str, dict[str, Any]] | None = None, **facts: Any) -> Refusal:
    """Something that is not a directory where one is needed."""
    return Refusal(Code.INVALID_ARGUMENT, message, hint, details={"path": path, **facts},
                   kind=Kind.NOT_DIRECTORY, suggested_tool=suggest[0] if suggest else None,
                   suggested_args=suggest[1] if suggest else None)
