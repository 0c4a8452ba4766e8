"""``Toolbox``: the tools of one root, callable with a model's JSON."""

from __future__ import annotations

import copy
import os
from typing import Any, Sequence

from ..contained import Root
from ._classify import READ_ONLY_TOOLS, classify
from ._context import ToolContext
from ._limits import Limits
from ._refusal import Code, Refusal
from ._registry import ToolSpec, load_tools
from ._requests import Authorizer
from ._schema import check_arguments

__all__ = ["Toolbox"]

PATH_CONTRACT = ("Paths are relative to the root (\".\" is the root itself); an absolute path "
                 "inside the root is accepted and answered root-relative. '..' may not climb "
                 "above the root and symlinks leading outside are not followed.")


def _published(schema: Any) -> Any:
    """A copy of ``schema`` without our own ``x-`` keywords (hints to the
    argument checker, not for a model or a provider's schema validator)."""
    if isinstance(schema, dict):
        return {k: _published(v) for k, v in schema.items()
                if not (isinstance(k, str) and k.startswith("x-"))}
    if isinstance(schema, list):
        return [_published(v) for v in schema]
    return copy.deepcopy(schema)


class Toolbox:
    """Coding-agent file tools over one :class:`~corral.Root`.

    ``root`` is a ``Root`` (borrowed) or a path (opened here, closed by
    :meth:`close`).  ``authorize(request)`` is asked before every operation
    (see :mod:`corral.tools` requests); ``deny`` are gitignore-style patterns
    (``.env``, ``.git/**``) refused on every ancestor and in any case or
    Unicode spelling; ``allow_hardlinks`` lets reads and edits use files with
    more than one link; ``read_only`` hides and refuses the mutating tools.

    :meth:`call` never raises for anything a model can send.
    """

    def __init__(self, root: Root | str | os.PathLike[str], *, authorize: Authorizer | None = None,
                 limits: Limits | None = None, deny: Sequence[str] = (),
                 allow_hardlinks: bool = False, read_only: bool = False) -> None:
        self._owns_root = not isinstance(root, Root)
        self.root = Root(root) if self._owns_root else root  # type: ignore[arg-type]
        self.limits = limits or Limits()
        self._ctx = ToolContext(self.root, limits=self.limits, authorize=authorize,
                                deny=tuple(deny), allow_hardlinks=allow_hardlinks,
                                read_only=read_only)
        # Suggested calls are tried without asking the host: trying one must
        # not put a question to a person or a policy the model never asked.
        self._probe_ctx = self._ctx.without_host()
        self._tools = load_tools()
        self.read_only = read_only
        self._names = [name for name, spec in self._tools.items()
                       if not (read_only and spec.mutates)]
        self._offered = {name: self._tools[name] for name in self._names}

    @property
    def names(self) -> list[str]:
        """The tools offered (mutating ones left out when read-only)."""
        return list(self._names)

    def definitions(self) -> list[dict[str, Any]]:
        """Each tool's ``name``, ``description`` and strict ``inputSchema``."""
        return [{"name": spec.name, "description": f"{spec.description}\n\n{PATH_CONTRACT}",
                 "inputSchema": _published(spec.schema)}
                for spec in self._tools.values() if spec.name in self.names]

    def call(self, name: Any, args: Any = None) -> dict[str, Any]:
        """Run tool ``name`` with the JSON object ``args``: a success envelope
        ``{"ok": true, ...}`` or a refusal envelope (DESIGN.md's contract)."""
        refusal = self._run(name, args)
        if isinstance(refusal, dict):
            return refusal
        return self._verified(refusal).envelope()

    def _run(self, name: Any, args: Any, ctx: ToolContext | None = None
             ) -> dict[str, Any] | Refusal:
        spec = self._offered.get(name) if isinstance(name, str) else None
        if spec is None:
            if isinstance(name, str) and name in self._tools:  # a mutating tool, read-only root
                return Refusal(Code.DENIED, f"this root is read-only: {name} is not available",
                               "Do not try to change files here; read them instead.",
                               details={"kind": "read_only", "tool": name})
            shown = name if isinstance(name, str) and len(name) <= 64 else "that name"
            return Refusal(Code.INVALID_ARGUMENT, f"there is no tool called {shown}",
                           f"Use one of: {', '.join(self._names)}.",
                           details={"kind": "unknown_tool", "tools": self.names})
        ctx = ctx or self._ctx
        checked: dict[str, Any] = {}
        try:
            checked = check_arguments(spec.name, spec.schema, args,
                                      max_chars=self.limits.max_argument_chars)
            result = spec.run(ctx, checked)
        except Exception as exc:  # the boundary: everything becomes a refusal
            # only what the model sent (defaults left out), so a suggested
            # call repeats the model's own call with one thing changed
            sent = args if isinstance(args, dict) else {}
            given = {k: v for k, v in checked.items() if k in sent}
            return classify(exc, tool=spec.name, args=given, ctx=ctx)
        return {"ok": True, **result}

    def _verified(self, refusal: Refusal) -> Refusal:
        """Keep a suggested call only if it succeeds now (read-only tools
        only: a suggestion is tried, so it must not change anything).  The
        try runs under the deny rules and limits but does not ask the host's
        ``authorize``, which only ever hears of calls the model makes."""
        if refusal.suggested_tool is None:
            return refusal
        tool = refusal.suggested_tool
        works = tool in READ_ONLY_TOOLS and isinstance(
            self._run(tool, refusal.suggested_args, self._probe_ctx), dict)
        if not works:
            refusal.suggested_tool = None
            refusal.suggested_args = None
        return refusal

    def close(self) -> None:
        if self._owns_root:
            self.root.close()

    def __enter__(self) -> "Toolbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def spec(self, name: str) -> ToolSpec:
        return self._tools[name]
