"""What a tool gets to work with: the root, the limits, the host's policy.

Tools never see host paths.  :meth:`ToolContext.rel` turns what a model wrote
into a root-relative path (or a refusal); :meth:`ToolContext.authorize` asks
the host; :meth:`ToolContext.lock` serialises read-decide-write on one file.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import stat as st
import sys
import threading
import unicodedata
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import pathspec

from ..contained import EscapeError, Root
from ._limits import Limits
from ._refusal import Code, Refusal
from ._requests import Authorizer, Denied, Request

__all__ = ["ToolContext", "sha256_hex", "Identity"]

log = logging.getLogger("corral.tools")

Identity = tuple[int, int]  # (st_dev, st_ino)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fold(text: str) -> str:
    """One spelling for names a case-insensitive or normalising filesystem
    treats as one (``.ENV`` = ``.env``, NFD = NFC)."""
    return unicodedata.normalize("NFC", text).casefold()


def _spec(lines: list[str]) -> pathspec.PathSpec:
    # "gitignore" is the name pathspec >= 1.0 wants; older releases know
    # the same patterns as "gitwildmatch".  The "simple" backend: with
    # google-re2 installed pathspec would pick re2, which cannot take a name
    # that is not UTF-8 (a lone surrogate) and would fail the call.
    try:
        return pathspec.PathSpec.from_lines("gitignore", lines, backend="simple")
    except TypeError:  # pathspec < 1.0: no backends (re only)
        return pathspec.PathSpec.from_lines("gitwildmatch", lines)
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


class ToolContext:
    """Shared state of one :class:`~corral.tools.Toolbox` (thread-safe)."""

    def __init__(self, root: Root, *, limits: Limits, authorize: Authorizer | None,
                 deny: Sequence[str], allow_hardlinks: bool, read_only: bool) -> None:
        self.root = root
        self.limits = limits
        self.allow_hardlinks = allow_hardlinks
        self.read_only = read_only
        self._authorize = authorize
        self._deny_patterns = list(deny)
        self._deny = _spec([_fold(p) for p in deny]) if deny else None
        self._locks = _PathLocks()
        # Absolute paths a model may use for files inside the root: the path
        # the root was opened by, and its realpath (e.g. /tmp vs /private/tmp).
        prefixes = {root.path.rstrip("/") or "/", os.path.realpath(root.path).rstrip("/") or "/"}
        self._prefixes = sorted(prefixes, key=len, reverse=True)

    def without_host(self) -> "ToolContext":
        """This context with the host's ``authorize`` left out (deny rules,
        read-only and limits still hold): for trying a suggested call."""
        other = copy.copy(self)
        other._authorize = None
        return other

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
                          f"Pass a path relative to the root, such as \".\" or \"src/main.py\".",
                          details={"field": field, "kind": "path"})
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > self.limits.max_path_bytes:
            raise Refusal(Code.INVALID_ARGUMENT,
                          f"argument '{field}' is {size} bytes, over the limit of "
                          f"{self.limits.max_path_bytes}",
                          "Pass a shorter path relative to the root.",
                          details={"field": field, "kind": "path_too_long",
                                   "limit": self.limits.max_path_bytes})
        text = value
        if text == "~" or text.startswith("~/"):
            raise self.outside(value, field, "home")
        if text.startswith("/"):
            for prefix in self._prefixes:
                if prefix == "/":
                    text = text.lstrip("/")
                    break
                if text == prefix or text.startswith(prefix + "/"):
                    text = text[len(prefix):].lstrip("/")
                    break
            else:
                raise self.outside(value, field, "absolute")
        parts = [p for p in text.split("/") if p not in ("", ".")]
        # "d/" and "d/." both mean "d, which must be a directory" (a link
        # followed): dropping the "/." would name the link d itself
        trailing = "/" in text and text.rsplit("/", 1)[1] in ("", ".") and bool(parts)
        clean = "/".join(parts) if parts else "."
        return clean + "/" if trailing else clean

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
        """The ``OUTSIDE_ROOT`` refusal for a path as the model wrote it.
        Never a symlink's target, and never an absolute path (it would name
        host directories)."""
        details: dict[str, Any] = {"field": field, "kind": reason}
        if shown.startswith("/"):
            message = f"argument '{field}' is an absolute path outside the root"
        else:
            message = f"{shown} is outside the root"
            details["path"] = shown
        return Refusal(Code.OUTSIDE_ROOT, message,
                       "Use a path relative to the root (\".\" is the root itself); '..' may not "
                       "climb above it and symlinks that lead out are not followed.",
                       details=details)

    def is_denied(self, rel: str) -> bool:
        """Whether ``rel`` (as spelled) or an ancestor matches a deny pattern."""
        if self._deny is None:
            return False
        parts = [p for p in rel.rstrip("/").split("/") if p not in ("", ".")]
        for i in range(1, len(parts) + 1):
            prefix = _fold("/".join(parts[:i]))
            if self._deny.match_file(prefix) or self._deny.match_file(prefix + "/"):
                return True
        return False

    def check_deny(self, rel: str, field: str = "path", *, resolved: bool = True) -> None:
        """Refuse ``rel`` if it or any ancestor matches a deny pattern; with
        ``resolved`` also check where it really leads (symlinks followed)."""
        if self._deny is None:
            return
        candidates = [rel]
        if resolved:
            real = self._leads_to(rel)
            if real is not None:
                candidates.append(real)
        for candidate in candidates:
            if self.is_denied(candidate):
                raise Refusal(Code.DENIED, f"{rel} is in a path the host does not allow",
                              "Do not use this path; work with other files.",
                              details={"path": rel, "field": field, "kind": "deny_rule"})

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
        return self._authorize is not None

    def authorize(self, request: Request) -> None:
        """Ask the host; raise ``DENIED`` with its reason on refusal."""
        if self.read_only and request.mutates:
            raise Refusal(Code.DENIED, f"this root is read-only: {request.operation} is not allowed",
                          "Do not try to change files here; read them instead.",
                          details={"path": request.path, "kind": "read_only",
                                   "operation": request.operation})
        if self._authorize is None:
            return
        try:
            allowed = self._authorize(request)
        except Denied as denied:
            reason = str(denied.reason)[:1000]
            raise Refusal(Code.DENIED, f"the host refused to {request.operation} {request.path}: "
                          f"{reason}", "Do not repeat this call; ask the user or do something else.",
                          details={"path": request.path, "operation": request.operation,
                                   "reason": reason, "kind": "host"}) from None
        except Exception:
            log.exception("authorize callback failed; refusing (fail closed)")
            raise Refusal.internal() from None
        if allowed is False:
            raise Refusal(Code.DENIED, f"the host refused to {request.operation} {request.path}",
                          "Do not repeat this call; ask the user or do something else.",
                          details={"path": request.path, "operation": request.operation,
                                   "reason": "refused by the host", "kind": "host"})

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
            raise Refusal(Code.STALE, f"{rel} changed while the call was being authorized; "
                          "nothing was done", "Read the file again, then repeat the call.",
                          details={"path": rel, "kind": "swapped"})

    def check_hardlink(self, rel: str, info: os.stat_result) -> None:
        if st.S_ISREG(info.st_mode) and info.st_nlink > 1 and not self.allow_hardlinks:
            raise Refusal(Code.UNSUPPORTED, f"{rel} is a hard-linked file ({info.st_nlink} links), "
                          "which these tools do not read or edit in place",
                          "Use a file that is not hard-linked, or ask the host to allow hard links.",
                          details={"path": rel, "kind": "hardlink", "links": info.st_nlink})

    @contextmanager
    def lock(self, rel: str) -> Iterator[None]:
        """Hold the per-path lock for read-decide-write of ``rel``."""
        key = self._leads_to(rel) or rel  # one file, one lock, however it is spelled
        if sys.platform == "darwin":
            key = _fold(key)
        with self._locks.hold(key):
            yield


def public_args(args: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """Arguments for a suggested call: ``args`` with ``changes``, defaults dropped."""
    return {k: v for k, v in {**args, **changes}.items() if v is not None}
