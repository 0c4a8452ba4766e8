"""``Toolbox``: the tools of one root, callable with a model's JSON."""

from __future__ import annotations

import logging
from typing import Any, NamedTuple
from collections.abc import Callable, Iterable, Sequence

from .._refusals.classify import Call
from .context import PlainCall, ToolboxState, ToolContext
from .refusing import refusal_for
from .control import CancelToken, ProgressCallback, in_worker
from .definitions import PATH_CONTRACT, tool_definitions
from .limits import Limits
from .._policy.rules import Policy
from .._refusals.catalogue import Code, Kind, Refusal, read_only, root_closed
from .registry import OPTIONAL_TOOL_MODULES, Editing, ToolSpec, load_tools, read_only_tools
from .request_types import Authorizer
from .schema import check_arguments, fast_checker
from .view import RootLike, open_view

log = logging.getLogger("corral.tools")

__all__ = ["Toolbox", "PATH_CONTRACT"]

#: a tool's quick check of a call's arguments (:func:`fast_checker`)
_FastChecker = Callable[[dict[str, Any], int | None], dict[str, Any] | None]


class Toolbox:
    """Coding-agent file tools over one :class:`~corral.Root`.

    ``root`` is a ``Root`` (borrowed) or a path (opened here, closed by
    :meth:`close`).  ``authorize(request)`` is asked before every operation
    (see :mod:`corral.tools` requests).  ``policy`` (a
    :class:`~corral.tools.Policy`; default :meth:`Policy.default`: ``.git/``
    and host-run configuration read-only, secret files unreadable) says what
    the tools may touch; ``deny`` adds gitignore-style patterns refused
    outright, on every ancestor and in any case or Unicode spelling.  Every
    rule is decided on where a path really leads.  ``allow_hardlinks`` lets
    reads and edits use files with
    more than one link; ``read_only`` hides and refuses the mutating tools.
    ``tools`` replaces the registry's tools (specs, or module names that
    define ``TOOL``).  Every toolbox also answers ``apply_patch`` (the patch
    format GPT-5 and Codex models are trained on) without listing it;
    ``editing="apply_patch"`` lists it *instead of* the tools that change
    files, beside the read and search tools, so a model has one way to
    change files.  ``ValueError`` for another ``editing``.  ``defer_tools``
    leaves the import of the tools' modules to :meth:`load_tools` (or the
    first call or listing): a server answers its handshake meanwhile.

    :meth:`call` never raises for anything a model can send.
    """

    def __init__(self, root: RootLike, *, authorize: Authorizer | None = None,
                 limits: Limits | None = None, policy: Policy | None = None,
                 deny: Sequence[str] = (), allow_hardlinks: bool = False,
                 read_only: bool = False, tools: Iterable[ToolSpec | str] | None = None,
                 editing: Editing = "corral", defer_tools: bool = False) -> None:
        if editing not in ("corral", "apply_patch"):
            raise ValueError(f"editing must be 'corral' or 'apply_patch', not {editing!r}")
        self._view = open_view(root, Policy.default() if policy is None else policy, deny=deny)
        self.root = self._view.root  # the core's root, for the host (cli, the workspace)
        self.limits = limits or Limits()
        self._view.links_grace = self.limits.links_wait_seconds
        self.policy = self._view.policy
        self._state = ToolboxState(self._view, limits=self.limits, authorize=authorize,
                                   allow_hardlinks=allow_hardlinks, read_only=read_only)
        self.read_only = read_only
        self._state.runner = self._try
        self._state.caller = self._nested
        # the tables load_tools fills; until then a call finds nothing and loads them
        self._tools: dict[str, ToolSpec] = {}
        self._optional: dict[str, ToolSpec] = {}
        self._offered: dict[str, ToolSpec] = {}
        self._read_only_tools: frozenset[str] = frozenset()
        self._answered: dict[str, tuple[ToolSpec, _FastChecker]] = {}
        self._plain: dict[str, tuple[ToolSpec, _FastChecker]] = {}
        self._unloaded: _ToolChoice | None = _ToolChoice(tools, editing)
        if not defer_tools:
            self.load_tools()

    def load_tools(self) -> None:
        """Import the tools' modules and make the tables calls look in (done
        by the constructor unless ``defer_tools``; then by the first call or
        listing that needs them, if not before)."""
        choice = self._unloaded
        if choice is None:
            return
        tools = _specs(choice.tools)
        optional = load_tools(OPTIONAL_TOOL_MODULES)
        read_only = self.read_only
        listed = tools if choice.editing == "corral" else {
            **{name: spec for name, spec in tools.items() if not spec.mutates},
            **optional}
        offered = {name: spec for name, spec in listed.items()
                   if not (read_only and spec.mutates)}
        # answered beyond the list: the optional tools (never a mutating one when read-only)
        answered = {**offered, **{name: spec for name, spec in optional.items()
                                  if not (read_only and spec.mutates)}}
        self._tools = tools
        self._read_only_tools = frozenset(read_only_tools(tools.values()))
        self._optional = optional
        self._offered = offered
        # each answered tool's spec and the quick check of its arguments (made once)
        self._answered = {name: (spec, fast_checker(spec.schema))
                          for name, spec in answered.items()}
        # the tools with a plain run: tried first for a call nothing else hears
        self._plain = {name: (spec, quick) for name, (spec, quick) in self._answered.items()
                       if spec.plain is not None}
        self._unloaded = None

    @property
    def names(self) -> list[str]:
        """The tools offered (mutating ones left out when read-only)."""
        self.load_tools()
        return list(self._offered)

    def specs(self) -> list[ToolSpec]:
        """The specs of the tools offered, in order (host formats are built from these)."""
        self.load_tools()
        return list(self._offered.values())

    def spec(self, name: str) -> ToolSpec:
        self.load_tools()
        return self._tools[name]

    def definitions(self) -> list[dict[str, Any]]:
        """Each offered tool's ``name``, ``title``, ``description`` (with the
        path contract), strict ``inputSchema``, ``outputSchema`` and
        ``annotations``: the MCP shape of :func:`corral.tools.tool_definitions`."""
        return tool_definitions(self.specs(), "mcp")

    def call(self, name: Any, args: Any = None, *, timeout: float | None = None,
             cancel: CancelToken | None = None,
             progress: ProgressCallback | None = None) -> dict[str, Any]:
        """Run tool ``name`` with the JSON object ``args``: a success envelope
        ``{"ok": true, ...}`` or a refusal envelope (DESIGN.md's contract).

        ``timeout`` (seconds, default ``limits.call_seconds``) bounds the
        call: past it the tool stops at its next checkpoint (``TOO_LARGE``,
        kind ``time_limit``).  ``cancel`` stops it likewise (``DENIED``, kind
        ``cancelled``); ``progress`` receives :class:`Progress` reports.
        """
        seconds = self.limits.call_seconds if timeout is None else timeout
        tried = False
        # a token cancelled already: the general run says so where it would
        if progress is None and type(name) is str and type(args) is dict and \
                (cancel is None or not cancel.cancelled):
            found = self._plain.get(name)
            if found is not None:
                state = self._state
                if state.authorizer is None and not (state.read_only and found[0].mutates):
                    answer = self._plainly(name, found[0], found[1], args, seconds,
                                           () if cancel is None else (cancel,))
                    if type(answer) is dict:
                        return answer
                    tried = answer is True
        # what _call does, written out: every call of every tool passes here
        ctx = ToolContext(self._state, name if isinstance(name, str) else "the call",
                          seconds=seconds, cancel=(cancel,) if cancel else (), progress=progress,
                          asks_host=True)
        ctx.tried_plain = tried
        outcome = self._run(name, args, ctx)
        if isinstance(outcome, dict):
            return outcome
        return self._verified(outcome, ctx).envelope()

    async def acall(self, name: Any, args: Any = None, *, timeout: float | None = None,
                    cancel: CancelToken | None = None,
                    progress: ProgressCallback | None = None) -> dict[str, Any]:
        """:meth:`call` in a worker thread.  If the awaiting task is
        cancelled, the call is cancelled at its next checkpoint and this
        waits for it to stop (so nothing is left half-done) before
        re-raising ``CancelledError``.  ``progress`` is called from the
        worker thread."""
        return await in_worker(lambda token: self.call(name, args, timeout=timeout, cancel=token,
                                                       progress=progress), cancel)

    def _run(self, name: Any, args: Any, ctx: ToolContext) -> dict[str, Any] | Refusal:
        found = self._answered.get(name) if isinstance(name, str) else None
        if found is None:
            if self._unloaded is not None:  # deferred: the tables are made now
                self.load_tools()
                return self._run(name, args, ctx)
            return self._unknown(name)
        spec, quick = found
        checked: dict[str, Any] | None = None
        read_as: list[str] = []
        try:
            limit = self.limits.max_argument_chars
            if type(args) is dict:
                checked = quick(args, limit)
            if checked is None:
                checked = check_arguments(spec.name, spec.schema, args, max_chars=limit,
                                          notes=read_as)
            if spec.mutates:
                # cancelled (or out of time) before it begins: nothing is done (a search
                # goes on to its first checkpoint, which answers with its empty partial result)
                ctx.checkpoint()
            if ctx.tried_plain:  # taken in by the plain run of this call
                ctx.view.runs()
            else:
                ctx.view.ready(spec.mutates)  # what other programs changed taken in
            result = spec.run(ctx, checked)
        except Exception as exc:  # the boundary: everything becomes a refusal
            return self._refused(exc, spec, args, checked, ctx)
        if read_as:
            result = {**result, "argumentNotes": read_as}
        if ctx.notes:
            return {"ok": True, **result, "pathNotes": list(ctx.notes)}
        return {"ok": True, **result}

    def _refused(self, exc: Exception, spec: ToolSpec, args: Any,
                 checked: dict[str, Any] | None, ctx: ToolContext) -> Refusal:
        """The refusal for ``exc``, raised by ``spec``'s run in ``ctx``."""
        # only what the model sent (defaults left out), so a suggested
        # call repeats the model's own call with one thing changed
        if self._view.root.closed:
            # the host's mistake, not the tool's: said as such, whatever the
            # tool met first (the closed Root's EBADF, mostly)
            return root_closed(spec.name)
        sent = args if isinstance(args, dict) else {}
        given = {k: v for k, v in (checked or {}).items() if sent.get(k) is not None}
        try:
            refusal = refusal_for(exc, Call(spec.name, given, spec.suggests), ctx)
        except Refusal as late:  # the deadline or a cancel met while looking for the cause
            refusal = late
        except Exception as failed:  # default-deny, as for a cause with no case
            log.error("a refusal could not be worked out", exc_info=failed)
            refusal = Refusal.internal()
        # a value from here on: its traceback's frames (the tool's locals,
        # the arguments) would hold a cycle through the caller's frame,
        # kept (up to 16 MiB a call) until the garbage collector runs
        refusal.__traceback__ = refusal.__context__ = refusal.__cause__ = None
        return refusal

    def _plainly(self, name: str, spec: ToolSpec, quick: Any, args: dict[str, Any],
                 seconds: float, cancel: tuple[CancelToken, ...]) -> dict[str, Any] | bool:
        """``spec``'s plain run of a call nothing else hears (no progress,
        no ``authorize``, nor a read-only toolbox to refuse a change; its
        checkpoints look at the ``cancel`` tokens): its envelope,
        as :meth:`_run` would make it; else whether the plain run took in
        what changed and tried its plain step (the general run then does
        neither again)."""
        plain = spec.plain
        checked = quick(args, self.limits.max_argument_chars)
        if checked is None or plain is None or seconds <= 0:
            return False  # the general run's check (or checkpoint) says why
        call = PlainCall(self._state, name, seconds, cancel)
        try:
            result = plain(call, checked)
        except Exception as exc:  # the boundary, as in _run
            ctx = ToolContext(self._state, name, seconds=seconds, cancel=cancel, progress=None,
                              asks_host=True)
            ctx.deadline_of(call)
            ctx.view.runs()
            return self._verified(self._refused(exc, spec, args, checked, ctx), ctx).envelope()
        if result is None:
            return call.readied
        return {"ok": True, **result}

    def _nested(self, name: str, args: Any, ctx: ToolContext) -> dict[str, Any]:
        outcome = self._run(name, args, ctx)
        return outcome if isinstance(outcome, dict) else self._verified(outcome, ctx).envelope()

    def _try(self, name: str, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
        if name not in self._read_only_tools:
            return None
        outcome = self._run(name, args, ctx)
        return outcome if isinstance(outcome, dict) else None

    def _unknown(self, name: Any) -> Refusal:
        # a mutating tool (apply_patch included), read-only root
        if isinstance(name, str) and (name in self._tools or name in self._optional):
            if not self.read_only and "apply_patch" in self._offered:
                # a tool apply_patch stands in for: the root takes changes, through it
                return Refusal(Code.INVALID_ARGUMENT, f"{name} is not offered here: files "
                               "change through apply_patch",
                               "Send the change as an apply_patch call.",
                               details={"tool": name, "tools": self.names},
                               kind=Kind.UNKNOWN_TOOL)
            return read_only(name)
        shown = name if isinstance(name, str) and len(name) <= 64 else "that name"
        return Refusal(Code.INVALID_ARGUMENT, f"there is no tool called {shown}",
                       f"Use one of: {', '.join(self._offered)}.",
                       details={"tools": self.names}, kind=Kind.UNKNOWN_TOOL)

    def _verified(self, refusal: Refusal, ctx: ToolContext) -> Refusal:
        """Keep a suggested call only if it succeeds now (read-only tools
        only: a suggestion is tried, so it must not change anything).  The
        try runs under the deny rules, limits and the call's own deadline but
        does not ask the host's ``authorize``, which only ever hears of calls
        the model makes."""
        tool = refusal.suggested_tool
        if tool is None:
            return refusal
        args = dict(refusal.suggested_args or {})
        if tool not in self._read_only_tools:
            # a change is tried as its dry run, which writes nothing
            spec = self._offered.get(tool)
            if spec is None or "dryRun" not in spec.schema.get("properties", {}):
                return refusal.replace(suggest=None)
            args["dryRun"] = True
        works = isinstance(self._run(tool, args, ctx.probe(tool)), dict)
        return refusal if works else refusal.replace(suggest=None)

    def hold(self, where: str, other: Policy) -> None:
        """Hold ``other``'s rules too, on everything at or below the
        canonical directory ``where`` ("": the whole root), as
        :meth:`Policy.holding` says: what a workspace does for roots that
        lie inside one another, so no root reaches past another's rules."""
        self._take(self.policy.holding(where, other))

    def hold_only(self, holds: Sequence[tuple[str, Policy]]) -> None:
        """Hold exactly ``holds`` (each ``(where, other)`` as :meth:`hold`),
        dropping what was held before: a workspace's roots, placed again
        after one of their directories moved."""
        policy = self.policy.alone
        for where, other in holds:
            policy = policy.holding(where, other)
        if policy != self.policy:
            self._take(policy)

    def held_by(self, outers: Sequence[tuple[Toolbox, str]]) -> None:
        """Decide by the links of ``outers`` too, from now on: the
        Toolboxes of the roots this root lies inside, each with this root's
        canonical place there (a workspace's nesting; what was held before
        is dropped), so a protected or denied name there that is a link
        leading here rules what it leads to here as well."""
        self._view.nested_in = tuple((box._view, place) for box, place in outers
                                     if box is not self)

    def beside(self, others: Sequence[Toolbox]) -> None:
        """Decide by the links of ``others`` too (the other roots of a
        workspace): a protected or denied name there that is a link leading
        out of its root into this one rules what it leads to here."""
        self._view.beside = tuple(box._view for box in others if box is not self)

    def opened_beneath(self, outer: Toolbox, place: str) -> None:
        """This root was opened at the canonical ``place`` inside
        ``outer``'s (a client root below a server's): ``outer``'s links
        leading here rule here too, for as long as this Toolbox lives."""
        self._view.opened_beneath = ((outer._view, place),)

    def _take(self, policy: Policy) -> None:
        if policy is not self.policy:
            self._view.hold(policy)
            self.policy = self._state.policy = policy

    def shows(self, path: str, checkpoint: Callable[[], None] | None = None) -> bool:
        """Whether ``path`` names an entry here that a model may be told
        exists: it is there, and no deny or secret rule hides it (decided
        on the entry, where it leads, and every known name leading there).
        ``checkpoint`` (raising a :class:`Refusal` to stop) bounds the look;
        what it stops shows nothing."""
        return self._view.shows(path, checkpoint)

    def close(self) -> None:
        """Close the root if the toolbox opened it (given a path)."""
        self._view.close()

    def __enter__(self) -> Toolbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ToolChoice(NamedTuple):
    """The tools a toolbox was asked for, kept until :meth:`Toolbox.load_tools`."""

    tools: Iterable[ToolSpec | str] | None
    editing: Editing


def _specs(tools: Iterable[ToolSpec | str] | None) -> dict[str, ToolSpec]:
    if tools is None:
        return load_tools()
    out: dict[str, ToolSpec] = {}
    for item in tools:
        if isinstance(item, ToolSpec):
            out[item.name] = item
        else:
            out.update(load_tools((item,)))
    return out
