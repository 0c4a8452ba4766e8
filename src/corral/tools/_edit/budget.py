"""How much work one edit_file or write_file call may do on what a model sent.

Every loop over model-sized input counts its steps on a :class:`Work`,
which calls the call's checkpoint (``ToolContext.checkpoint``: the deadline
and cancellation) every :data:`STRIDE` steps, so a stopped call stops soon
and a cheap step costs no clock read.  Work whose cost could grow faster
than its input (aligning lines, fuzzy similarity, tolerant matching) also
draws on a :class:`Budget`, a cap proportional to the input's size: when it
runs out the caller degrades its answer (fewer candidates, a coarser diff)
and says so, instead of running long.

Checkpoints are only ever reached before anything is written: a stopped
call leaves the file as it was.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["STRIDE", "Budget", "Checkpoint", "Work", "proportional"]

Checkpoint = Callable[[], None]
STRIDE = 2048  # steps between two checkpoints


def _never() -> None:
    """The checkpoint of work that cannot be stopped (pure logic in tests)."""


class Work:
    """The steps of one call so far; the checkpoint runs every STRIDE steps."""

    def __init__(self, checkpoint: Checkpoint = _never) -> None:
        self._checkpoint = checkpoint
        self._until = STRIDE

    def step(self, units: int = 1) -> None:
        """Count ``units`` steps; run the checkpoint when a stride is full
        (it raises the call's time_limit or cancelled refusal)."""
        self._until -= units
        if self._until <= 0:
            self._until = STRIDE
            self._checkpoint()

    def read(self, size: int) -> None:
        """Count the steps of reading ``size`` bytes, one a 4 KiB page begun
        (:meth:`step` written out: a file read is counted on every call)."""
        self._until -= size // 4096 + 1
        if self._until <= 0:
            self._until = STRIDE
            self._checkpoint()

    def check(self) -> None:
        """Run the checkpoint now (before a costly step of unknown size)."""
        self._until = STRIDE
        self._checkpoint()

    def budget(self, units: int) -> Budget:
        return Budget(self, units)


class Budget:
    """A cap of ``units`` steps on one piece of work (counted on ``work`` too)."""

    def __init__(self, work: Work, units: int) -> None:
        self.work = work
        self.left = units
        self.cut = False  # True once a spend was refused: the answer is degraded

    def spend(self, units: int) -> bool:
        """Take ``units`` steps if the cap allows; ``False`` (and :attr:`cut`)
        when it does not, and the caller must settle for less."""
        if units > self.left:
            self.cut = True
            return False
        self.left -= units
        self.work.step(units)
        return True


def proportional(*sizes: int, per: int = 16, floor: int = 200_000) -> int:
    """A cap in steps: ``per`` steps for every unit of input, never below ``floor``."""
    return floor + per * sum(sizes)
