"""Paths in answers, as a typed value.

A tool puts every root-relative path it answers that is not under one of
the contract's path keys as an :class:`AnswerPath`: a ``str`` (so an
envelope stays plain JSON for programs) that says "this is a canonical
path in this call's root".  A front end with several roots names the root
of every such value, whatever key holds it, never by guessing from the key.
A refusal names the part of a path that failed as one too, so it lives
with the refusals, below the runtime that renders them.
"""

from __future__ import annotations

__all__ = ["AnswerPath"]


class AnswerPath(str):
    """A canonical root-relative path in an answer (rendered by the front end)."""

    __slots__ = ()
