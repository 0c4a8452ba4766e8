"""What a host holds while a call runs: a cancel token and progress reports.

``Toolbox.call(..., cancel=token, progress=callback)``: the tool stops at its
next checkpoint once ``token.cancel()`` was called (``DENIED``, kind
``cancelled``, nothing half-written), and reports :class:`Progress` through
``callback`` from the thread the call runs in.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import TypeVar

__all__ = ["CancelToken", "Progress", "ProgressCallback", "in_worker"]

T = TypeVar("T")


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


class _EitherToken(CancelToken):
    """Cancelled once either of two tokens is (an awaited call's own, set
    when its task is cancelled, and the host's)."""

    __slots__ = ("_own", "_other")

    def __init__(self, own: CancelToken, other: CancelToken) -> None:
        super().__init__()
        self._own = own
        self._other = other

    def cancel(self) -> None:
        self._own.cancel()

    @property
    def cancelled(self) -> bool:
        return self._own.cancelled or self._other.cancelled


async def in_worker(run: Callable[[CancelToken], T], cancel: CancelToken | None) -> T:
    """``run(token)`` in a worker thread, in the awaiting task's context (a
    call made from a host's ``authorize`` is known there as such: it must
    not wait on the call that asked).  ``token`` is cancelled by ``cancel``
    (the host's) and when the awaiting task is: then this waits for ``run``
    to stop at its next checkpoint (nothing is left half-done after the
    task ended) before re-raising ``CancelledError``."""
    import asyncio  # here: only embedders that await need it (a server starts sooner)
    import contextvars

    own = CancelToken()
    token = own if cancel is None else _EitherToken(own, cancel)
    future = asyncio.get_running_loop().run_in_executor(
        None, contextvars.copy_context().run, run, token)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        own.cancel()
        await asyncio.wait([future])
        raise
