"""The refusal: a typed outcome a model can act on, and its envelope.

A refusal carries its own sentence (``message``, always copied into
``details`` so structured details can never displace it), one imperative
``hint``, and optionally a call that would succeed as things stand
(``suggested_tool`` / ``suggested_args``).  The JSON shape is the stable
contract in DESIGN.md.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["Code", "Refusal", "INTERNAL_MESSAGE"]


class Code(str, enum.Enum):
    """The refusal codes of the tool contract.  ``details["kind"]`` gives a
    finer reason (``directory``, ``binary``, ``symlink``, ``hardlink``...)."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"  # the call itself is wrong: fix the arguments
    NOT_FOUND = "NOT_FOUND"  # a path, or an edit's oldText, is not there
    OUTSIDE_ROOT = "OUTSIDE_ROOT"  # the path leads outside the root
    ALREADY_EXISTS = "ALREADY_EXISTS"  # a create or move would replace something
    AMBIGUOUS = "AMBIGUOUS"  # an edit's oldText matches more than once
    STALE = "STALE"  # the file is not what the caller last saw
    TOO_LARGE = "TOO_LARGE"  # over a limit (or the disk is full)
    UNSUPPORTED = "UNSUPPORTED"  # a kind of file these tools do not handle
    DENIED = "DENIED"  # the host, a deny rule or the filesystem said no
    INTERNAL = "INTERNAL"  # corral's own failure; says nothing more

    def __str__(self) -> str:
        return self.value


INTERNAL_MESSAGE = ("the tool failed for an internal reason (the cause is in the host's log, "
                    "not here)")


class Refusal(Exception):
    """A refusal.  Raised inside tools; :meth:`envelope` is what a model sees.

    ``details`` holds facts (root-relative paths, counts, digests); its
    ``message`` key is always the refusal's sentence.
    """

    def __init__(self, code: Code, message: str, hint: str, *, details: dict[str, Any] | None = None,
                 suggested_tool: str | None = None,
                 suggested_args: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = Code(code)
        self.message = message
        self.hint = hint
        self.details = {**(details or {}), "message": message}
        self.suggested_tool = suggested_tool
        self.suggested_args = suggested_args

    def envelope(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": False, "code": self.code.value, "message": self.message,
                               "details": self.details, "hint": self.hint}
        if self.suggested_tool is not None:
            out["suggestedTool"] = self.suggested_tool
            out["suggestedArgs"] = self.suggested_args or {}
        return out

    def __repr__(self) -> str:
        return f"Refusal({self.code.value}, {self.message!r})"

    @classmethod
    def internal(cls) -> "Refusal":
        """The default-deny answer: no path, no errno text, nothing of the host."""
        return cls(Code.INTERNAL, INTERNAL_MESSAGE,
                   "Do not retry this call unchanged; tell the user the tool failed.")
