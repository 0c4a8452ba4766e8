"""What a tool gets to work with: the policed view of the root, the limits,
the host's policy.

Tools never see host paths.  :meth:`ToolContext.rel` turns what a model wrote
into a root-relative path (or a refusal); :meth:`ToolContext.authorize` asks
the host; :meth:`ToolContext.lock` serialises read-decide-write on one file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat as st
import threading
import time
import weakref
from typing import Any, TypeVar, cast
from collections.abc import Callable, Sequence

from ...hosts import file_uri_path
from ...contained import TEMP_SUFFIX, EscapeError, PathError
from .host_paths import root_prefixes, under
from .limits import Limits
from .control import CancelToken, Progress, ProgressCallback
from .._policy.locate import Location
from .view import CallView, OpenFile, View, call as view_call, policy_refusal as _policy_refusal
from .._policy.rules import Op, Policy, Scope
from .._refusals.names import names_temporary, temporary_name
from .._refusals.catalogue import (Code, Kind, Refusal, cancelled, hardlink, host_denied,
                                   host_unexpected, internal, outside_root, read_only, swapped,
                                   time_limit)
from .request_types import Authorizer, Denied, Request

__all__ = ["ToolContext", "ToolboxState", "PlainCall", "sha256_hex", "Identity", "clean_path"]

log = logging.getLogger("corral.tools")
T = TypeVar("T")
_now = time.monotonic  # the deadline's clock (tests replace it to drive time limits)

Identity = tuple[int, int]  # (st_dev, st_ino)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ToolboxState:
    """What every call of one :class:`~corral.tools.Toolbox` shares (thread-safe)."""

    def __init__(self, view: View, *, limits: Limits, authorize: Authorizer | None,
                 allow_hardlinks: bool, read_only: bool) -> None:
        self.view = view
        self.limits = limits
        self.allow_hardlinks = allow_hardlinks
        self.read_only = read_only
        self.authorizer = authorize
        self.policy = view.policy
        # runs a read-only tool inside a call (set by the toolbox): see ToolContext.try_tool
        self.runner: Callable[[str, dict[str, Any], ToolContext], dict[str, Any] | None] = \
            lambda name, args, ctx: None
        # runs any offered tool inside a call (set by the toolbox): see ToolContext.call
        self.caller: Callable[[str, Any, ToolContext], dict[str, Any]] = \
            lambda name, args, ctx: internal().envelope()
        self._stores: dict[Callable[[], Any], Any] = {}
        self._stores_guard = threading.Lock()
        self.prefixes = root_prefixes(view.host_path)  # for absolute paths inside the root

    def store(self, factory: Callable[[], T]) -> T:
        """The one ``factory()`` object of this toolbox (made on first use)."""
        found: T | None = self._stores.get(factory)  # once made, never replaced: no lock to read it
        if found is not None:
            return found
        with self._stores_guard:
            found = self._stores.get(factory)
            if found is None:
                found = self._stores[factory] = factory()
            return cast(T, found)

    def context(self, tool: str, *, seconds: float, cancel: Sequence[CancelToken] = (),
                progress: ProgressCallback | None = None, asks_host: bool = True
                ) -> ToolContext:
        """The context of one call of ``tool``, due to end within ``seconds``."""
        return ToolContext(self, tool, seconds=seconds, cancel=tuple(cancel), progress=progress,
                           asks_host=asks_host)


# A path ``rel`` gives back as it is: names (none "." or empty, no
# backslash) joined by single slashes, not starting with "/" or "~".
_CLEAN_SEGMENT = r"(?!\.(?:/|$))[^/\\]+"
_CLEAN_PATH = re.compile(rf"(?![~/]){_CLEAN_SEGMENT}(?:/{_CLEAN_SEGMENT})*")
_clean: dict[str, None] = {}  # paths found clean (a model names the same few again and again)
_CLEAN_KEPT = 4096  # paths remembered, each of at most _CLEAN_CHARS characters
_CLEAN_CHARS = 256


def _is_clean(value: str) -> bool:
    """Whether ``value`` is a clean ASCII path (a short one is remembered);
    one that may name an in-flight name is not (``rel`` refuses those)."""
    if not (value.isascii() and _CLEAN_PATH.fullmatch(value)) or TEMP_SUFFIX in value:
        return False
    if len(value) <= _CLEAN_CHARS:
        if len(_clean) >= _CLEAN_KEPT:
            _clean.clear()
        _clean[value] = None
    return True


def clean_path(value: str, limits: Limits) -> bool:
    """Whether ``value`` is a path :meth:`ToolContext.rel` gives back as
    it is (nothing forgiven, no note)."""
    return (value in _clean or _is_clean(value)) and len(value) <= limits.max_path_bytes


class PlainCall:
    """What a tool's plain run (``ToolSpec.plain``) works with: the view
    every call of the Toolbox shares, the limits, its tools' stores and the
    call's deadline and cancel tokens.
    Only a call with no progress and no one to hear its requests (no
    ``authorize``, not read-only) is run plainly: such a call has nothing
    else a :class:`ToolContext` would hold."""

    __slots__ = ("__weakref__", "view", "limits", "tool", "seconds", "_deadline", "_cancel",
                 "readied", "_state")

    def __init__(self, state: ToolboxState, tool: str, seconds: float,
                 cancel: tuple[CancelToken, ...] = ()) -> None:
        self.view = state.view
        self.limits = state.limits
        self._state = state
        self.tool = tool
        self.seconds = seconds
        self._deadline = _now() + seconds
        self._cancel = cancel
        self.readied = False  # what other programs changed taken in (by :meth:`ready`)

    def checkpoint(self) -> None:
        """:meth:`ToolContext.checkpoint`: ``DENIED`` (kind ``cancelled``)
        once a token is cancelled, ``TOO_LARGE`` past the deadline."""
        for token in self._cancel:
            if token.cancelled:
                raise cancelled(self.tool)
        if _now() >= self._deadline:
            raise time_limit(self.tool, self.seconds)

    def ready(self, acts: bool = True) -> None:
        """:meth:`CallView.ready` (``acts``: the call may change files after this)."""
        self.readied = True
        view_call.ready(self.view, weakref.ref(self), acts)

    def open_read(self, rel: str) -> OpenFile:
        """:meth:`CallView.open_read` of ``rel`` for ``Op.READ`` (a read
        holds no lock: nothing of a :class:`CallView` is needed)."""
        return view_call.open_read(self.view, rel, self.checkpoint, Op.READ)

    def store(self, factory: Callable[[], T]) -> T:
        """:meth:`ToolContext.store`."""
        state = self._state
        found: T | None = state._stores.get(factory)  # (made already: no call of state.store)
        return found if found is not None else state.store(factory)


class ToolContext:
    """What one call of a tool works with: the policed view of the root
    (:attr:`view`), the limits, the host's policy, and the call's own
    deadline, cancel tokens and progress."""

    __slots__ = ("__weakref__", "state", "view", "limits", "tool", "allow_hardlinks", "read_only",
                 "seconds", "notes", "_deadline", "_cancel", "_progress", "asks_host",
                 "hears_requests", "tried_plain")

    def __init__(self, state: ToolboxState, tool: str, *, seconds: float,
                 cancel: tuple[CancelToken, ...], progress: ProgressCallback | None,
                 asks_host: bool) -> None:
        self.state = state
        self.limits = state.limits
        self.allow_hardlinks = state.allow_hardlinks
        self.read_only = state.read_only
        self.tool = tool
        self.seconds = seconds
        self.notes: list[str] = []  # how forgiven paths were read (added to the answer)
        self._deadline = _now() + seconds
        self._cancel = cancel
        self._progress = progress
        # whether :meth:`authorize` can refuse a read-only request (a host
        # callback is set); without one, building the request is wasted work
        self.asks_host = asks_host and state.authorizer is not None
        # whether :meth:`authorize` looks at a request at all: a host callback
        # is asked, or the toolbox is read-only (a mutating request is
        # refused).  When not, a tool may leave its request unmade.
        self.hears_requests = self.asks_host or self.read_only
        self.view = CallView(state.view, self)
        # the tool's plain step was tried in this call already (by its plain run)
        self.tried_plain = False

    def deadline_of(self, call: PlainCall) -> None:
        """Keep the deadline of the plain run ``call`` (this context
        answers for it)."""
        self._deadline = call._deadline

    def probe(self, tool: str) -> ToolContext:
        """A context for trying a suggested call of ``tool`` within this call:
        same deadline and tokens, no progress, and the host's ``authorize``
        left out (deny rules, read-only and limits still hold)."""
        other = ToolContext(self.state, tool, seconds=self.seconds, cancel=self._cancel,
                            progress=None, asks_host=False)
        other._deadline = self._deadline
        return other

    def call(self, name: str, args: Any) -> dict[str, Any]:
        """The envelope of tool ``name`` run with ``args`` as part of this
        call (its deadline and cancel tokens; the host is asked as for the
        model's own calls; a suggested call is verified): for a tool that
        runs others (read_files)."""
        nested = ToolContext(self.state, name, seconds=self.seconds, cancel=self._cancel,
                             progress=None, asks_host=self.asks_host)
        nested._deadline = self._deadline
        return self.state.caller(name, args, nested)

    def try_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The success envelope of the read-only tool ``name`` run with
        ``args`` within this call (its deadline, no host question), or
        ``None`` if it refused: for a refusal that answers with what a
        better call finds (read_file given a glob pattern)."""
        return self.state.runner(name, args, self.probe(name))

    def store(self, factory: Callable[[], T]) -> T:
        """Per-toolbox state of a tool (e.g. what edit_file remembers)."""
        state = self.state
        found: T | None = state._stores.get(factory)  # (made already: no call of state.store)
        return found if found is not None else state.store(factory)

    # -- bounds --------------------------------------------------------
    def checkpoint(self) -> None:
        """Raise ``DENIED`` (kind ``cancelled``) if the call was cancelled,
        ``TOO_LARGE`` (kind ``time_limit``) past its deadline.  Tools call it
        in every loop over model-sized input or files."""
        for token in self._cancel:
            if token.cancelled:
                raise cancelled(self.tool)
        if _now() >= self._deadline:
            raise time_limit(self.tool, self.seconds)

    def past_deadline(self) -> bool:
        """Whether the deadline passed (for a search that stops and answers partly)."""
        return _now() >= self._deadline

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        """Report progress to the host (if it asked); a failing callback is logged."""
        if self._progress is None:
            return
        try:
            self._progress(Progress(done, total, message))
        except Exception:
            log.exception("progress callback failed; ignored")

    # -- paths ---------------------------------------------------------
    def rel(self, value: str, field: str = "path") -> str:
        """A model's path as a clean root-relative path (``"."`` for the root).

        Accepts relative paths and absolute paths inside the root (echoed back
        root-relative).  ``.`` and empty segments are dropped; ``..`` is kept
        for the core to resolve (it refuses climbing out).  Refuses empty,
        over-long and outside-absolute paths.  Forgives, where unambiguous, a
        ``file://`` URI of a path inside the root and ``\\`` separators when
        no entry is named that way; the answer then carries a note
        (``pathNotes``) saying how the path was read.
        """
        if (value in _clean or _is_clean(value)) and len(value) <= self.limits.max_path_bytes:
            return value  # already clean: relative, no '.' or empty segment, nothing to forgive
        if value == "":
            raise Refusal(Code.INVALID_ARGUMENT, f"argument '{field}' is empty",
                          "Pass a path relative to the root, such as \".\" or \"src/main.py\".",
                          details={"field": field}, kind=Kind.PATH)
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > self.limits.max_path_bytes:
            raise Refusal(Code.INVALID_ARGUMENT,
                          f"argument '{field}' is {size} bytes, over the limit of "
                          f"{self.limits.max_path_bytes}",
                          "Pass a shorter path relative to the root.",
                          details={"field": field, "limit": self.limits.max_path_bytes},
                          kind=Kind.PATH_TOO_LONG)
        text, forgiven = self._forgiven(value, field)
        if text == "~" or text.startswith("~/"):
            raise self._home(value, text, field)
        if text.startswith("/"):
            text = self._inside(text, field)
        parts = [p for p in text.split("/") if p not in ("", ".")]
        if TEMP_SUFFIX in text and names_temporary(parts):
            raise temporary_name(value, field)
        # "d/" and "d/." both mean "d, which must be a directory" (a link
        # followed): dropping the "/." would name the link d itself
        trailing = "/" in text and text.rsplit("/", 1)[1] in ("", ".") and bool(parts)
        clean = "/".join(parts) if parts else "."
        result = clean + "/" if trailing else clean
        if forgiven:
            self._note(f"{field} was read as {result!r} ({forgiven})")
        return result

    def _home(self, value: str, text: str, field: str) -> Refusal:
        """``~/...`` is outside the root; when the rest names something in
        the root (the model took the root for its home), that is offered."""
        refusal = outside_root(value, field, Kind.HOME)
        rest = text[2:].strip("/")
        if not rest or self.is_denied(rest) or names_temporary(rest.split("/")):
            return refusal
        try:
            info = self.view.stat(rest)
            if self.is_denied(self.view.realpath(rest)):
                return refusal
        except OSError:
            return refusal
        tool = "list_directory" if st.S_ISDIR(info.st_mode) else "read_file"
        return refusal.replace(details={"didYouMean": [rest]},
                               hint=f"Use the path relative to the root: {rest} exists.",
                               suggest=(tool, {"path": rest}))

    def _forgiven(self, value: str, field: str) -> tuple[str, str]:
        """``value`` with a ``file://`` URI read as its path and Windows
        separators as '/' (only if nothing is named with the backslashes),
        and what was forgiven ("" for nothing)."""
        text, forgiven = value, []
        if text[:7].lower() == "file://":
            path = file_uri_path(text)
            if path is None:
                raise outside_root("/", field, Kind.ABSOLUTE)  # another host, or C:/...
            if "\x00" in path:  # %00: what the argument check refuses in plain text
                raise Refusal(Code.INVALID_ARGUMENT,
                              f"argument '{field}' contains a NUL byte (%00 in its file:// URI)",
                              f"Remove the NUL character (%00) from '{field}'.",
                              details={"field": field, "problem": "nul"}, kind=Kind.ARGUMENT)
            text = path
            forgiven.append("a file:// URI is read as its path")
        if "\\" in text and not self._names_entry(text):
            text = text.replace("\\", "/")
            forgiven.append("paths use '/' between names, not '\\'")
        return text, "; ".join(forgiven)

    def _names_entry(self, text: str) -> bool:
        """Whether ``text`` (with its backslashes) names an existing entry."""
        if text.startswith("/"):
            return False  # an absolute path: the backslashes cannot be names in the root
        if self.is_denied(text):
            return False  # what a rule hides is never looked for: the reading would tell
        try:
            self.view.stat(text, follow=False)
        except OSError:
            return False
        return True

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def _inside(self, value: str, field: str) -> str:
        """An absolute path inside the root, as a path relative to it."""
        for prefix in self.state.prefixes:
            if under(prefix, value):
                return value[len(prefix):].lstrip("/")
        raise outside_root(value, field, Kind.ABSOLUTE)

    def refuse_escape(self, rel: str, field: str = "path") -> None:
        """Raise the core's escape error if ``rel``, resolved (links followed),
        leads outside the root, and the policy's refusal if a deny or secret
        rule hides where it leads, where resolution stopped or a place it
        passed.  For tools that refuse a path by its shape ('..' at the end,
        a trailing '/'): an escape must not hide behind a weaker answer, and
        a hidden name is answered as it is whatever is there (the shape's
        answer would come only where no link there led out).  Any other
        error is left to the caller's own check."""
        try:
            self.view.stat(rel)
        except EscapeError:
            raise
        except OSError as exc:
            stopped = exc.component if isinstance(exc, PathError) else None
            hidden = self.hidden(stopped, rel, field) if isinstance(stopped, str) and stopped \
                else None
            if hidden is not None:
                raise hidden from None
            return
        if self.policy.hides:
            self.check_path(rel, Op.SEARCH, field)

    def outside(self, shown: str, field: str = "path", reason: str = "dotdot") -> Refusal:
        """The ``OUTSIDE_ROOT`` refusal for a path as the model wrote it."""
        return outside_root(shown, field, Kind(reason))

    # -- policy: decided on where a path really leads -------------------
    @property
    def policy(self) -> Policy:
        return self.state.policy

    @property
    def may_deny(self) -> bool:
        """Whether any rule could hide a path (when not, searches skip the checks)."""
        return self.state.policy.hides

    def locate(self, rel: str, *, follow: bool = True) -> Location:
        """Where ``rel`` really is, as the one resolver reaches it."""
        return self.view.locate(rel, follow=follow)

    def check(self, location: Location, op: Op, *, field: str = "path",
              shown: str | None = None) -> None:
        """Refuse ``op`` on ``location`` if the policy says no: on the target
        itself, on every directory the call would create, and (deny rules)
        on every directory the path passes through.  A refusal names the
        path as the model wrote it (``shown``), never where a link led."""
        name = shown if shown is not None else location.path
        self.state.view.check(location, op, shown=name, field=field)

    def check_path(self, rel: str, op: Op, field: str = "path", *, follow: bool = True
                   ) -> Location:
        """:meth:`locate` ``rel`` and :meth:`check` ``op`` on it."""
        location = self.locate(rel, follow=follow)
        self.check(location, op, field=field, shown=rel.rstrip("/") or ".")
        return location

    def visible(self, canonical: str, op: Op = Op.SEARCH) -> bool:
        """Whether the entry at the canonical path ``canonical`` may be shown
        by a listing (``Op.LIST``: deny rules hide) or a search
        (``Op.SEARCH``: deny rules and secret files hide).  Count what is
        hidden, never name it.  Decided on every known name leading there
        too (a denied link's target is denied)."""
        return self.state.view.visible(canonical, op)

    def scope(self, canonical_dir: str, op: Op = Op.SEARCH) -> Scope:
        """:meth:`visible` for the entries of one directory, one name test
        each (for a walk): ``ctx.scope(dir).visible(name)``."""
        return self.state.view.scope(canonical_dir, op)

    def is_denied(self, rel: str) -> bool:
        """Whether a search must leave ``rel`` out (``not visible``, where
        ``rel`` is resolved first when it can be)."""
        return self.view.hides(rel)

    def hidden(self, canonical: str, shown: str, field: str | None) -> Refusal | None:
        """The refusal for an error whose component (``canonical``, where
        resolution stopped: a missing name, a non-directory, a loop) lies
        where a deny or secret rule hides things, or ``None``.  Naming it,
        or saying it is missing, would be an oracle for what exists there;
        the answer is the same ``DENIED`` an existing path there gets."""
        policy = self.state.policy
        if not policy.hides:
            return None
        kind = self.state.view.rule(Location(canonical), Op.SEARCH)
        return None if kind is None else _policy_refusal(kind, shown.rstrip("/") or ".", Op.READ,
                                                         field or "path")

    def hidden_on_the_way(self, exc: PathError, shown: str,
                          field: str | None) -> Refusal | None:
        """The refusal for an error that went through a place a rule hides
        before it stopped (a denied link whose text climbs out,
        ``secrets/../..``: the core names only the ``..`` that left;
        ``secrets/key.txt/../../top.txt/new``: the file after), or ``None``:
        the ``DENIED`` a path there gets, whatever is there."""
        if not self.state.policy.hides:
            return None
        for place in exc.passed:
            if not self.state.view.visible(place, Op.LIST):
                return _policy_refusal(Kind.DENY_RULE, shown.rstrip("/") or ".", Op.READ,
                                       field or "path")
        return None

    def check_deny(self, rel: str, field: str = "path") -> None:
        """Refuse a read or search of ``rel`` the policy does not allow."""
        self.check_path(rel, Op.SEARCH, field)

    # -- host policy ---------------------------------------------------
    def authorize(self, request: Request) -> None:
        """Ask the host; raise ``DENIED`` unless it answers ``None`` or ``True``.

        ``False`` denies with the default reason, :class:`Denied` with its
        own; any other answer denies and says the callback misbehaved; an
        exception from the callback is logged and fails closed (``INTERNAL``).
        """
        if self.read_only and request.mutates:
            raise read_only(request.operation, path=request.path, operation=request.operation)
        authorizer = self.state.authorizer
        if authorizer is None or not self.asks_host:
            return
        try:
            answer: object = self.view.hear(authorizer, request)
        except Denied as denied:
            raise host_denied(request.operation, request.path, str(denied.reason)[:1000]) from None
        except Exception:
            log.exception("authorize callback failed; refusing (fail closed)")
            raise internal() from None
        if answer is None or answer is True:
            return
        if answer is False:
            raise host_denied(request.operation, request.path, None)
        shown = type(answer).__name__
        log.warning("authorize callback returned %s (%r), not None/True/False; refusing",
                    shown, answer)
        raise host_unexpected(request.operation, request.path, f"a value of type {shown}")

    # -- identity ------------------------------------------------------
    def ensure_same(self, rel: str, before: Identity | None, *, follow: bool = True,
                    mode: int | None = None) -> None:
        """Fail closed if ``rel`` is no longer what was authorized.  With
        ``mode`` (the ``st_mode`` seen then) the file type must match too: a
        file's inode number is reused at once on some filesystems (ext4), so
        a symlink put in its place can carry the old (dev, ino)."""
        try:
            info = self.view.stat(rel, follow=follow)
        except FileNotFoundError:
            info = None
        now = None if info is None else (info.st_dev, info.st_ino)
        if now != before or (mode is not None and info is not None
                             and st.S_IFMT(info.st_mode) != st.S_IFMT(mode)):
            raise swapped(rel)

    def check_hardlink(self, rel: str, info: os.stat_result) -> None:
        if st.S_ISREG(info.st_mode) and info.st_nlink > 1 and not self.allow_hardlinks:
            raise hardlink(rel, info.st_nlink)
