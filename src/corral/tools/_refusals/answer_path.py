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

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["AnswerPath", "naming_root", "sentence_path"]

# the name of the root a front end with several roots runs this call in
_ROOT_NAME: ContextVar[str] = ContextVar("corral_root_name", default="")


class AnswerPath(str):
    """A canonical root-relative path in an answer (rendered by the front end)."""

    __slots__ = ()


def sentence_path(rel: str) -> str:
    """``rel`` (a root-relative path) as a message or hint names it: as the
    model spells it, so with its root's name first while a front end with
    several roots runs the call (:func:`naming_root`).  An absolute path is
    the model's own spelling and stays as it is."""
    root = _ROOT_NAME.get()
    if not root or rel.startswith("/"):
        return rel
    return root if rel in ("", ".", "./") else f"{root}/{rel}"


@contextmanager
def naming_root(name: str) -> Iterator[None]:
    """Within this block, sentences name paths under the root ``name``."""
    token = _ROOT_NAME.set(name)
    try:
        yield
    finally:
        _ROOT_NAME.reset(token)
