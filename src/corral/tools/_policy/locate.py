"""Where a path really leads, for the policy: what the core's one resolver reached.

A :class:`Location` is the canonical root-relative path of the entry, the
directories a call that creates parents would make, and the directories the
path enters and leaves again, all taken from a
:class:`~corral.contained.Target` or :class:`~corral.contained.Handle`
(what the one resolver reached, so the policy judges the entry the call will
act on): nothing here reads the spelling.  A location that cannot be
established raises the core's error, so the call is refused (fail closed).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...contained import Root, Target

__all__ = ["Location", "locate", "of_target"]


@dataclass(frozen=True)
class Location:
    """``path``: the canonical root-relative path of the entry (``"."``, the
    root); ``creates``: canonical directories that do not exist yet, outermost
    first; ``passed``: canonical directories entered and left on the way."""

    path: str
    creates: tuple[str, ...] = ()
    passed: tuple[str, ...] = ()


def locate(root: Root, rel: str, *, follow: bool = True) -> Location:
    """Where ``rel`` leads, as the core's resolver reached it (a
    :class:`~corral.contained.Target` planning the directories it would
    create): with ``follow`` a final symlink is followed (a read), else the
    entry itself is meant (a move, a delete, a write that refuses links)."""
    with root.target(rel, follow_final=follow, create_parents=True) as target:
        return of_target(target)


def of_target(target: Target) -> Location:
    return Location(target.path, target.creates, target.passed)
