"""What the tool-level security tests share: a hostile world, a bounded call,
and the "no escape" checks of THREATS.md.

A :class:`World` is one temporary directory ``base`` holding

* ``base/ws``: the root the tools serve (a small tree, plus what a test adds);
* ``base/ws-evil``: a sibling sharing the root's name as a prefix, whose
  files are named like the root's own (``a.txt``, ``sub/b.txt``);
* ``base/far-q7``: the directory hostile symlinks point at (a file, a
  sub-directory);
* ``base/secret.txt``.

Every outside file holds :data:`MARKER`.  "Escape" is checked as THREATS.md
defines it, after every call (:meth:`World.check`):

* no content from outside: the marker is in no result or refusal;
* no host path: neither ``base`` (as given or as ``realpath``) nor the name of
  the link-target directory appears in the JSON, unless the model sent that
  very text (what a model wrote may be echoed back to it);
* nothing outside created, changed or deleted: a snapshot of everything
  under ``base`` but the root (which covers ``ws-evil`` and ``far-q7``);
* no call blocks: every call runs in a thread that must finish within
  :data:`CALL_TIMEOUT` seconds.

Backend configurations come from the core harness
(:func:`helpers.harness.corral_configs`): every backend present, with and
without the openat2 fast path.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterable

from corral.testing import changes, snapshot
from corral.tools import Toolbox
from ...helpers import make_repository
from .harness import Config, corral_configs

__all__ = ["MARKER", "FAR", "EVIL", "CALL_TIMEOUT", "CONFIGS", "CONFIG_IDS", "World",
           "make_repository",
           "call_bounded", "assert_contract", "temp_files", "string_values"]

MARKER = "CORRAL-OUTSIDE-MARK-5b0e"
FAR = "far-q7"  # where hostile links point; its name must never be echoed
EVIL = "ws-evil"
# seconds: THREATS.md's "a call that blocks for more than a few seconds" (a
# FIFO opened blocking blocks for ever); an order of magnitude over what the
# slowest call here takes on a loaded 2-core machine (1.2 s at a load of 17)
CALL_TIMEOUT = 15.0
ERRNO_TEXTS = ("[Errno", "No such file", "Permission denied", "Input/output error",
               "No space left", "Invalid cross-device", "Operation not permitted",
               "Directory not empty", "Not a directory")

CONFIGS: list[Config] = corral_configs()
CONFIG_IDS = [config.label for config in CONFIGS]


def call_bounded(fn: Callable[[], Any], timeout: float = CALL_TIMEOUT, what: str = "call") -> Any:
    """``fn()`` run in a daemon thread; fails the test if it has not returned
    within ``timeout`` seconds (a FIFO opened blocking would hang forever:
    the thread is left behind, the test reports it)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name=f"corral-bounded-{what}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AssertionError(f"BLOCKED: {what} did not return within {timeout} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def string_values(value: Any) -> Iterable[str]:
    """Every string inside a JSON-like value (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from string_values(key)
            yield from string_values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from string_values(item)


def assert_contract(envelope: Any) -> str:
    """The tool contract's shape (DESIGN.md); returns the envelope's JSON."""
    assert isinstance(envelope, dict), envelope
    text = json.dumps(envelope, allow_nan=False)
    assert json.loads(text) == envelope, "the envelope does not survive a JSON round trip"
    if envelope.get("ok") is True:
        return text
    assert envelope.get("ok") is False, envelope
    assert set(envelope) <= {"ok", "code", "message", "details", "hint", "suggestedTool",
                             "suggestedArgs"}, envelope
    assert isinstance(envelope["message"], str) and envelope["message"]
    assert envelope["details"].get("message") == envelope["message"]
    if envelope["code"] == "INTERNAL":
        # default-deny: no path, no errno text, nothing of the host
        assert set(envelope["details"]) == {"message"}, envelope
        assert "suggestedTool" not in envelope, envelope
        for piece in ERRNO_TEXTS:
            assert piece not in text, (piece, envelope)
    return text


def temp_files(top: str | os.PathLike[str]) -> list[str]:
    """Leftover temporary files of an atomic write anywhere below ``top``."""
    found = []
    for dirpath, _dirs, files in os.walk(top):
        found += [os.path.join(dirpath, f) for f in files if f.endswith(".corral-tmp")]
    return found


class World:
    """The temporary world of one case (module docstring)."""

    def __init__(self, base: Path, *, extra: Callable[["World"], None] | None = None) -> None:
        self.base = Path(base)
        self.base.mkdir(parents=True, exist_ok=True)
        self.root = self.base / "ws"
        self.far = self.base / FAR
        self.evil = self.base / EVIL
        for d in (self.root, self.root / "a", self.root / "sub", self.far, self.far / "dir",
                  self.evil, self.evil / "sub"):
            d.mkdir()
        (self.root / "a.txt").write_text("inside a\n")
        (self.root / "sub" / "b.txt").write_text("inside b\n")
        for f in (self.far / "secret.txt", self.far / "dir" / "inner.txt", self.evil / "a.txt",
                  self.evil / "sub" / "b.txt", self.base / "secret.txt"):
            f.write_text(f"{MARKER} {f.name}\n")
        if extra is not None:
            extra(self)
        self.forbidden = [str(self.base), os.path.realpath(self.base), FAR]
        self.outside_before = self.outside()
        self.toolboxes: list[Toolbox] = []

    # -- building --------------------------------------------------------
    def link(self, name: str, target: str) -> None:
        """A symlink in the root; ``@BASE@`` in ``target`` is the world's base."""
        os.symlink(target.replace("@BASE@", str(self.base)), self.root / name)

    def abs(self, text: str) -> str:
        return text.replace("@BASE@", str(self.base))

    def toolbox(self, config: Config, **options: Any) -> Toolbox:
        toolbox = Toolbox(config.factory(str(self.root)), **options)
        self.toolboxes.append(toolbox)
        return toolbox

    def close(self) -> None:
        for toolbox in self.toolboxes:
            toolbox.root.close()
        self.toolboxes.clear()

    # -- checking --------------------------------------------------------
    def outside(self) -> dict[str, tuple]:
        return snapshot(self.base, exclude=("ws",))

    def inside(self) -> dict[str, tuple]:
        return snapshot(self.root)

    def call(self, toolbox: Toolbox, tool: str, args: dict[str, Any], *,
             marker_ok: bool = False) -> dict[str, Any]:
        """One bounded call, checked for every kind of escape."""
        envelope = call_bounded(lambda: toolbox.call(tool, args), what=f"{tool} {args!r:.200}")
        self.check(envelope, args, where=f"{tool} {args!r:.300}", marker_ok=marker_ok)
        return envelope

    def check(self, envelope: dict[str, Any], args: Any, *, where: str = "",
              marker_ok: bool = False) -> None:
        text = assert_contract(envelope)
        # What the model sent may be echoed back to it (an absolute path inside
        # the root, an oldText): take out the sent strings that hold a watched
        # piece, and only those (taking out "/" would hide every path).
        # The link-target directory's name, when the model wrote it itself,
        # may come back in another spelling (root-relative, say): not a leak.
        sent_strings = set(string_values(args))
        watched = [MARKER, *self.forbidden]
        for sent in sorted(sent_strings, key=len, reverse=True):
            if any(piece in sent for piece in watched):
                text = text.replace(json.dumps(sent)[1:-1], "")
        if not marker_ok:
            assert MARKER not in text, f"ESCAPE: outside content in {where}: {envelope}"
        for piece in self.forbidden:
            if piece == FAR and any(FAR in sent for sent in sent_strings):
                continue
            assert piece not in text, f"ESCAPE: host path {piece!r} named by {where}: {envelope}"
        diff = changes(self.outside_before, self.outside())
        assert not diff, f"ESCAPE: {where} changed the outside: {diff[:5]}"
