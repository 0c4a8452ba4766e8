"""What a host holds while a call runs: a cancel token and progress reports.

``Toolbox.call(..., cancel=token, progress=callback)``: the tool stops at its
next checkpoint once ``token.cancel()`` was called (``DENIED``, kind
``cancelled``, nothing half-written), and reports :class:`Progress` through
``callback`` from the thread the call runs in.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

__all__ = ["CancelToken", "Progress", "ProgressCallback"]


class CancelToken:
    """Set once, from any thread; a call checks it at its checkpoints (a
    plain flag: setting and reading one attribute is atomic in Python)."""

    __slots__ = ("_set",)

    def __init__(self) -> None:
        self._set = False

    def cancel(self) -> None:
        self._set = True

    @property
    def cancelled(self) -> bool:
        return self._set

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled})"


@dataclass(frozen=True)
class Progress:
    """How far a call is: ``done`` of ``total`` units (``None``: not known)."""

    done: int
    total: int | None
    message: str


ProgressCallback = Callable[[Progress], None]
