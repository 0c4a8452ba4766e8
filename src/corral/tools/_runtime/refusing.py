"""The facts a refusal is made from, gathered through the call's view.

:func:`refusal_for` is the toolbox's boundary: it gathers, through the
policed view of the call (``ctx.view``), the :class:`Facts` an error makes
matter, then hands error and facts to the pure
:func:`~corral.tools._refusals.classify.classify`.  What is looked at is
decided here from the error alone, so a refusal that needs no close names
costs no directory read.
"""

from __future__ import annotations

import stat as st
from collections.abc import Mapping
from typing import Any

from ...contained import PathError
from .._refusals.catalogue import Refusal, appeared
from .._refusals.classify import (GONE_KINDS, Call, Facts, Seen, asks_for_close_names, classify,
                                  component_of, names_path)
from .._refusals.locator import close_paths, respelled
from .context import ToolContext

__all__ = ["refusal_for", "gather"]

_PATH_FIELDS = ("path", "source", "destination")
# a tool whose paths are named inside one argument: the field its refusals name
_PATCH_FIELD = {"apply_patch": "input"}


def refusal_for(exc: BaseException, call: Call, ctx: ToolContext) -> Refusal:
    """The refusal for ``exc`` raised while running ``call`` in ``ctx``."""
    facts = gather(exc, call, ctx)
    if facts.path is not None and facts.path.rstrip("/") in facts.close:
        return appeared(facts.path)  # missing when looked for, there when refused
    return classify(exc, call, facts)


def gather(exc: BaseException, call: Call, ctx: ToolContext) -> Facts:
    """What :func:`classify` needs to know of the tree to answer ``exc``."""
    view = ctx.view
    if isinstance(exc, Refusal):
        return Facts(root_gone=exc.kind in GONE_KINDS and view.root_gone())
    named = names_path(exc)
    if named is None:
        return Facts()
    if view.root_gone():
        return Facts(root_gone=True)
    field, path = _field_of(named, call.args, ctx)
    component = component_of(exc)
    # decided on where resolution stopped
    hidden = ctx.hidden(component, path, field or _PATCH_FIELD.get(call.tool)) \
        if component is not None else None
    if hidden is None and isinstance(exc, PathError) and exc.passed:
        hidden = ctx.hidden_on_the_way(exc, path, field or _PATCH_FIELD.get(call.tool))
    if hidden is not None or not asks_for_close_names(exc):
        return Facts(path=path, field=field, hidden=hidden)
    missing = component or named
    close = tuple(close_paths(path, missing, view))
    if not field:
        return Facts(path=path, close=close)
    found = respelled(view, path) if not close else None
    parent = missing.rstrip("/").rpartition("/")[0] or "."
    return Facts(path=path, field=field, close=close, found=found,
                 seen=_seen(ctx, found.paths if found else close),
                 parent_hidden=ctx.is_denied(parent), allow_hardlinks=ctx.allow_hardlinks)


def _seen(ctx: ToolContext, paths: tuple[str, ...]) -> dict[str, Seen]:
    """The kind and link count of each of ``paths`` that is a file or a directory."""
    out: dict[str, Seen] = {}
    for path in paths:
        try:
            info = ctx.view.stat(path)
        except OSError:
            continue
        if st.S_ISDIR(info.st_mode):
            out[path] = Seen("directory", info.st_nlink)
        elif st.S_ISREG(info.st_mode):
            out[path] = Seen("file", info.st_nlink)
    return out


def _field_of(named: str, args: Mapping[str, Any], ctx: ToolContext) -> tuple[str | None, str]:
    """Which path argument the error is about, and the path to speak of: the
    argument itself when the error names it or a directory above it (a write
    that creates parents fails on a parent; the model named the file)."""
    above = named.rstrip("/") + "/"
    for name in _PATH_FIELDS:
        value = args.get(name)
        if isinstance(value, str):
            try:
                rel = ctx.rel(value, name)
            except Refusal:
                continue
            if rel == named or (rel.endswith("/") and named.startswith(rel)):
                return name, named  # the path itself, or an entry moved into it
            if rel.startswith(above) and named not in (".", ""):
                return name, rel
    return None, named
