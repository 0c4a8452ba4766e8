"""What the refusal helpers may look at: the policed view of one call.

The helpers that find the name a model meant (:mod:`.locator`, :mod:`.names`)
look at the tree only through this protocol, which the call's view
(``ctx.view``) answers under its deny and secret rules.  Classifying an
error looks at nothing: it is a function of the error and the facts
gathered before (:mod:`.classify`).
"""

from __future__ import annotations

from typing import Protocol

from ...contained import DirEntry

__all__ = ["Looking"]


class Looking(Protocol):
    """The call's view, as far as a refusal helper needs it."""

    def checkpoint(self) -> None:
        """Raise the call's refusal once it is cancelled or past its deadline."""

    def entries(self, rel: str) -> list[DirEntry]:
        """The entries of the directory ``rel`` (unsorted)."""

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` names an entry (links followed)."""

    def hides(self, rel: str) -> bool:
        """Whether a deny or secret rule hides ``rel`` (resolved when it can be)."""

    def shown(self, rel: str) -> bool:
        """Whether ``rel`` names an entry (links followed) that a model may
        be told of: no rule hides it, nor where it leads."""
