"""What a tool gets to work with: the root, the limits, the host's policy.

Tools never see host paths.  :meth:`ToolContext.rel` turns what a model wrote
into a root-relative path (or a refusal); :meth:`ToolContext.authorize` asks
the host; :meth:`ToolContext.lock` serialises read-decide-write on one file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat as st
import sys
import threading
import unicodedata
from contextlib import contextmanager
import time
from typing import Any, Callable, Iterator, Sequence, TypeVar, cast

import pathspec

from ..contained import EscapeError, Root
from ._limits import Limits
from ._control import CancelToken, Progress, ProgressCallback
from ._refusal import (Code, Kind, Refusal, cancelled, denied_rule, hardlink, host_denied,
                       host_unexpected, internal, outside_root, read_only, swapped, time_limit)
from ._requests import Authorizer, Denied, Request

__all__ = ["ToolContext", "ToolboxState", "sha256_hex", "Identity"]

log = logging.getLogger("corral.tools")
T = TypeVar("T")
_now = time.monotonic  # the deadline's clock (tests replace it to drive time limits)

Identity = tuple[int, int]  # (st_dev, st_ino)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fold(text: str) -> str:
    """One spelling for names a case-insensitive or normalising filesystem
    treats as one (``.ENV`` = ``.env``, NFD = NFC)."""
    return unicodedata.normalize("NFC", text).casefold()


def _spec(lines: list[str]) -> pathspec.PathSpec:
    # "gitignore" is the name pathspec >= 1.0 wants; older releases know
    # the same patterns as "gitwildmatch"
    try:
        return pathspec.PathSpec.from_lines("gitignore", lines)
    except (KeyError, LookupError):
        return pathspec.PathSpec.from_lines("gitwildmatch", lines)


class _PathLocks:
    """Process-local locks keyed by a file's real root-relative path."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(key, (None, 0))
            if lock is None:
                lock = threading.Lock()
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)


class ToolboxState:
    """What every call of one :class:`~corral.tools.Toolbox` shares (thread-safe)."""

    def __init__(self, root: Root, *, limits: Limits, authorize: Authorizer | None,
                 deny: Sequence[str], allow_hardlinks: bool, read_only: bool) -> None:
        self.root = root
        self.limits = limits
        self.allow_hardlinks = allow_hardlinks
        self.read_only = read_only
        self.authorizer = authorize
        self.deny = _spec([_fold(p) for p in deny]) if deny else None
        self.locks = _PathLocks()
        self._stores: dict[Callable[[], Any], Any] = {}
        self._stores_guard = threading.Lock()
        # Absolute paths a model may use for files inside the root: the path
        # the root was opened by, and its realpath (e.g. /tmp vs /private/tmp).
        prefixes = {root.path.rstrip("/") or "/", os.path.realpath(root.path).rstrip("/") or "/"}
        self.prefixes = sorted(prefixes, key=len, reverse=True)

    def store(self, factory: Callable[[], T]) -> T:
        """The one ``factory()`` object of this toolbox (made on first use)."""
        with self._stores_guard:
            found = self._stores.get(factory)
            if found is None:
                found = self._stores[factory] = factory()
            return cast(T, found)

    def context(self, tool: str, *, seconds: float, cancel: Sequence[CancelToken] = (),
                progress: ProgressCallback | None = None, asks_host: bool = True
                ) -> "ToolContext":
        """The context of one call of ``tool``, due to end within ``seconds``."""
        return ToolContext(self, tool, seconds=seconds, cancel=tuple(cancel), progress=progress,
                           asks_host=asks_host)


class ToolContext:
    """What one call of a tool works with: the root, the limits, the host's
    policy, and the call's own deadline, cancel tokens and progress."""

    __slots__ = ("state", "root", "limits", "tool", "allow_hardlinks", "read_only", "seconds",
                 "_deadline", "_cancel", "_progress", "_asks_host")

    def __init__(self, state: ToolboxState, tool: str, *, seconds: float,
                 cancel: tuple[CancelToken, ...], progress: ProgressCallback | None,
                 asks_host: bool) -> None:
        self.state = state
        self.root = state.root
        self.limits = state.limits
        self.allow_hardlinks = state.allow_hardlinks
        self.read_only = state.read_only
        self.tool = tool
        self.seconds = seconds
        self._deadline = _now() + seconds
        self._cancel = cancel
        self._progress = progress
        self._asks_host = asks_host and state.authorizer is not None

    def probe(self, tool: str) -> "ToolContext":
        """A context for trying a suggested call of ``tool`` within this call:
        same deadline and tokens, no progress, and the host's ``authorize``
        left out (deny rules, read-only and limits still hold)."""
        other = ToolContext(self.state, tool, seconds=self.seconds, cancel=self._cancel,
                            progress=None, asks_host=False)
        other._deadline = self._deadline
        return other

    def store(self, factory: Callable[[], T]) -> T:
        """Per-toolbox state of a tool (e.g. what edit_file remembers)."""
        return self.state.store(factory)

    # -- bounds --------------------------------------------------------
    def checkpoint(self) -> None:
        """Raise ``DENIED`` (kind ``cancelled``) if the call was cancelled,
        ``TOO_LARGE`` (kind ``time_limit``) past its deadline.  Tools call it
        in every loop over model-sized input or files."""
        for token in self._cancel:
            if token.cancelled:
                raise cancelled(self.tool)
        if _now() > self._deadline:
            raise time_limit(self.tool, self.seconds)

    def past_deadline(self) -> bool:
        """Whether the deadline passed (for a search that stops and answers partly)."""
        return _now() > self._deadline

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
        over-long and outside-absolute paths.
        """
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
        text = value
        if text == "~" or text.startswith("~/"):
            raise outside_root(value, field, Kind.HOME)
        if text.startswith("/"):
            text = self._inside(value, field)
        parts = [p for p in text.split("/") if p not in ("", ".")]
        # "d/" and "d/." both mean "d, which must be a directory" (a link
        # followed): dropping the "/." would name the link d itself
        trailing = "/" in text and text.rsplit("/", 1)[1] in ("", ".") and bool(parts)
        clean = "/".join(parts) if parts else "."
        return clean + "/" if trailing else clean

    def _inside(self, value: str, field: str) -> str:
        """An absolute path inside the root, as a path relative to it."""
        for prefix in self.state.prefixes:
            if prefix == "/":
                return value.lstrip("/")
            if value == prefix or value.startswith(prefix + "/"):
                return value[len(prefix):].lstrip("/")
        raise outside_root(value, field, Kind.ABSOLUTE)

    def refuse_escape(self, rel: str) -> None:
        """Raise the core's escape error if ``rel``, resolved (links followed),
        leads outside the root.  For tools that refuse a path by its shape
        ('..' at the end, a trailing '/'): an escape must not hide behind a
        weaker answer.  Any other error is left to the caller's own check."""
        try:
            self.root.stat(rel)
        except EscapeError:
            raise
        except OSError:
            pass

    def outside(self, shown: str, field: str = "path", reason: str = "dotdot") -> Refusal:
        """The ``OUTSIDE_ROOT`` refusal for a path as the model wrote it."""
        return outside_root(shown, field, Kind(reason))

    @property
    def may_deny(self) -> bool:
        """Whether any rule could hide a path (when not, searches skip the checks)."""
        return self.state.deny is not None

    def is_denied(self, rel: str) -> bool:
        """Whether ``rel`` (as spelled) or an ancestor matches a deny pattern."""
        deny = self.state.deny
        if deny is None:
            return False
        parts = [p for p in rel.rstrip("/").split("/") if p not in ("", ".")]
        for i in range(1, len(parts) + 1):
            prefix = _fold("/".join(parts[:i]))
            if deny.match_file(prefix) or deny.match_file(prefix + "/"):
                return True
        return False

    def check_deny(self, rel: str, field: str = "path", *, resolved: bool = True) -> None:
        """Refuse ``rel`` if it or any ancestor matches a deny pattern; with
        ``resolved`` also check where it really leads (symlinks followed)."""
        if self.state.deny is None:
            return
        candidates = [rel]
        if resolved:
            real = self._leads_to(rel)
            if real is not None:
                candidates.append(real)
        for candidate in candidates:
            if self.is_denied(candidate):
                raise denied_rule(rel, field)

    def _leads_to(self, rel: str) -> str | None:
        """Where ``rel`` really leads: its real path, or for a path whose
        last directories do not exist yet (a write will create them), the
        real path of its deepest existing ancestor plus the rest as written.
        ``None`` if even that cannot be said (the call itself will fail)."""
        try:
            return self.root.realpath(rel, strict=False)
        except OSError:
            pass
        parts = [p for p in rel.rstrip("/").split("/") if p not in ("", ".")]
        for cut in range(len(parts) - 1, 0, -1):
            try:
                head = self.root.realpath("/".join(parts[:cut]))
            except OSError:
                continue
            names = [] if head == "." else head.split("/")
            for part in parts[cut:]:
                if part != "..":
                    names.append(part)
                elif names:
                    names.pop()
                else:
                    return None  # climbs out: the core refuses it
            return "/".join(names) or "."
        return None

    # -- host policy ---------------------------------------------------
    @property
    def asks_host(self) -> bool:
        """Whether :meth:`authorize` can refuse a read-only request (a host
        callback is set); without one, building the request is wasted work."""
        return self._asks_host

    def authorize(self, request: Request) -> None:
        """Ask the host; raise ``DENIED`` unless it answers ``None`` or ``True``.

        ``False`` denies with the default reason, :class:`Denied` with its
        own; any other answer denies and says the callback misbehaved; an
        exception from the callback is logged and fails closed (``INTERNAL``).
        """
        if self.read_only and request.mutates:
            raise read_only(request.operation, path=request.path, operation=request.operation)
        authorizer = self.state.authorizer
        if authorizer is None or not self._asks_host:
            return
        try:
            answer = authorizer(request)
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
    def identity(self, rel: str, *, follow: bool = True) -> Identity | None:
        """(dev, ino) of what ``rel`` names now, ``None`` if nothing."""
        try:
            info = self.root.stat(rel, follow_symlinks=follow)
        except FileNotFoundError:
            return None
        return (info.st_dev, info.st_ino)

    def ensure_same(self, rel: str, before: Identity | None, *, follow: bool = True,
                    mode: int | None = None) -> None:
        """Fail closed if ``rel`` is no longer what was authorized.  With
        ``mode`` (the ``st_mode`` seen then) the file type must match too: a
        file's inode number is reused at once on some filesystems (ext4), so
        a symlink put in its place can carry the old (dev, ino)."""
        try:
            info = self.root.stat(rel, follow_symlinks=follow)
        except FileNotFoundError:
            info = None
        now = None if info is None else (info.st_dev, info.st_ino)
        if now != before or (mode is not None and info is not None
                             and st.S_IFMT(info.st_mode) != st.S_IFMT(mode)):
            raise swapped(rel)

    def check_hardlink(self, rel: str, info: os.stat_result) -> None:
        if st.S_ISREG(info.st_mode) and info.st_nlink > 1 and not self.allow_hardlinks:
            raise hardlink(rel, info.st_nlink)

    @contextmanager
    def lock(self, rel: str) -> Iterator[None]:
        """Hold the per-path lock for read-decide-write of ``rel``."""
        key = self._leads_to(rel) or rel  # one file, one lock, however it is spelled
        if sys.platform == "darwin":
            key = _fold(key)
        with self.state.locks.hold(key):
            yield
