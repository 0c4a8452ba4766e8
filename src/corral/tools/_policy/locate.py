"""Where a path really leads, as the policy is told it.

A :class:`Location` is the canonical root-relative path of the entry, the
directories a call that creates parents would make, and the directories the
path enters and leaves again, all taken from what the core's one resolver
reached (the view makes them: :func:`corral.tools._runtime.view.locate`):
nothing here reads the spelling, and the policy decides on this value only.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Location"]


class Location(NamedTuple):
    """``path``: the canonical root-relative path of the entry (``"."``, the
    root); ``creates``: canonical directories that do not exist yet, outermost
    first; ``passed``: canonical directories entered and left on the way."""

    path: str
    creates: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()
