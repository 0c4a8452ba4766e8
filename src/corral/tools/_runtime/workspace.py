"""``Workspace``: the tools of several roots behind one ``call``.

With one root a Workspace is that root's :class:`Toolbox`: paths, answers
and refusals are exactly the Toolbox's.  With several, each root has a name
(its directory's base name, made unique with ``-2``, ``-3``...) and every
path names its root in one of two ways:

* relative: the first component is the root's name, ``web/src/app.py``
  (the rest goes to that root's Toolbox as it was written, so
  ``web/../api/x`` climbs out of ``web`` and is refused ``OUTSIDE_ROOT``);
* absolute: a host path inside one root (the deepest, when roots nest).

A call goes to exactly one root's Toolbox, so containment and policy are
that Toolbox's; a call whose paths name two roots (``move_file`` from one to
another) is refused ``UNSUPPORTED`` (kind ``cross_root``) before anything is
touched.  Answers name paths the same way they were asked: every
root-relative path in an envelope (an :class:`AnswerPath` under any key, and a string
under the keys in :data:`PATH_KEYS` and
:data:`PATH_LIST_KEYS`, at any depth) gets its root's name in front.  The
sentences (``message``, ``hint``) stay root-relative.

Roots that lie inside one another (placed by their directories, links
resolved) hold each other's rules (:meth:`Toolbox.hold`): a path reached
through any root is decided by every root's deny, protected and secret
rules, and an inner root's directory is not moved, replaced or deleted
through an outer one.  A path not found under one root's name is offered in
the one other root where it is and may be shown.

Path arguments are recognised by name (:data:`PATH_FIELDS`): the tool
contract keeps ``path``, ``source``, ``destination`` and ``paths`` for paths
and nothing else.

:meth:`Workspace.narrowed` is the MCP roots protocol's intersection: a
client's directory equal to or above a root keeps that root; one below a
root is opened beneath it, through that root (never by host path
alone), as a root of its own.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ...contained import Root
from .control import CancelToken, ProgressCallback, in_worker
from ...hosts import file_uri_path, root_names
from .definitions import offered_specs
from .host_paths import root_prefixes, under
from .._policy.rules import Policy
from .._refusals.catalogue import Code, Kind, Refusal, cancelled, outside_root, time_limit
from .registry import ToolSpec
from .schema import ALIASES
from .answer import AnswerPath, naming_root
from .toolbox import Toolbox
from .view import nested_place, open_beneath, root_identity

log = logging.getLogger("corral.tools")

# Roots a client's list may open (each a Toolbox with its own look at the
# tree, and the workspace's nesting checks grow with their square).
MAX_CLIENT_ROOTS = 64

__all__ = ["Workspace", "Opener", "PATH_FIELDS", "PATH_KEYS", "PATH_LIST_KEYS",
           "policy_beneath"]

ProgressFn = ProgressCallback

#: Arguments that hold one path (strings) or several (``paths``: a list).
PATH_FIELDS = frozenset({"path", "source", "destination"})
# a patch's paths are in its text: the file headers name them
PATCH_TOOL, PATCH_FIELD = "apply_patch", "input"
PATH_LIST_FIELD = "paths"
#: Envelope keys whose string value is a root-relative path.
PATH_KEYS = frozenset({"path", "source", "destination", "missing", "target"})
#: Envelope keys whose value is a list of root-relative paths.
PATH_LIST_KEYS = frozenset({"paths", "createdDirectories", "didYouMean"})

#: ``opener(root, parent, base)``: a Toolbox over ``root``, which lies at
#: ``base`` (a canonical relative path) inside ``parent``'s root, with the
#: same options and ``policy_beneath(parent.policy, base)``; ``None`` when
#: that cannot be done (the client's root is then left out: narrower).
Opener = Callable[[Root, Toolbox, str], "Toolbox | None"]


def policy_beneath(policy: Policy, base: str) -> Policy:
    """``policy`` as it applies to a root opened at ``base`` inside its own
    (:meth:`Policy.beneath`: every decision is made on ``base/path``)."""
    return policy.beneath(base)


class _Routed(NamedTuple):
    """Where one call goes: the root's name and the arguments its Toolbox gets."""

    root: str
    args: Any


class Workspace:
    """The tools of several roots (``roots``: name -> Toolbox, in order).

    Same ``call``/``acall``/``names``/``definitions``/``spec`` as a
    :class:`Toolbox`; :meth:`call` never raises for anything a model can
    send.  The Toolboxes passed in are borrowed; those a :meth:`narrowed`
    Workspace opened itself are closed by its :meth:`close`.
    """

    def __init__(self, roots: Mapping[str, Toolbox], *, opener: Opener | None = None,
                 listing: Toolbox | None = None, around: Sequence[Toolbox] = ()) -> None:
        if not roots and listing is None:
            raise ValueError("a Workspace needs at least one root (or a listing Toolbox)")
        for name in roots:
            if not name or "/" in name or name in (".", ".."):
                raise ValueError(f"not a usable root name: {name!r}")
        self._roots = dict(roots)
        # roots not offered here whose rules still hold over the ones that
        # are (a narrowed workspace's: the server's roots around them)
        self._around = [box for box in around if box not in self._roots.values()]
        self._opener = opener
        self._listing = listing if listing is not None else next(iter(self._roots.values()))
        # the tools that change files, known at the first call (the tools load then)
        self._mutating: frozenset[str] | None = None
        self._owned: list[Toolbox] = []
        # host prefixes for absolute paths, deepest first
        prefixes = [(prefix, name) for name, box in self._roots.items()
                    for prefix in root_prefixes(box.root.path)]
        self._prefixes = sorted(prefixes, key=lambda item: len(item[0]), reverse=True)
        self._nestings: list[_Nesting] | None = None
        if len(self._roots) > 1 or self._around:
            self._hold_each_others_rules()
        if len(self._roots) > 1:
            for box in self._roots.values():
                box.beside(list(self._roots.values()))

    # -- what is offered -----------------------------------------------------
    @property
    def roots(self) -> list[str]:
        """The roots' names, in order."""
        return list(self._roots)

    def toolbox(self, name: str) -> Toolbox:
        return self._roots[name]

    @property
    def names(self) -> list[str]:
        """The tools offered."""
        return self._listing.names

    def spec(self, name: str) -> ToolSpec:
        return self._listing.spec(name)

    def specs(self) -> list[ToolSpec]:
        """The offered tools' specs, in order."""
        return offered_specs(self._listing)

    def mutates(self, name: Any) -> bool:
        """Whether tool ``name`` may change files (unknown names do not)."""
        mutating = self._mutating
        if mutating is None:
            mutating = self._mutating = frozenset(spec.name for spec in self._listing.specs()
                                                  if spec.mutates)
        return name in mutating if isinstance(name, str) else False

    def definitions(self) -> list[dict[str, Any]]:
        """Each tool's ``name``, ``description`` and ``inputSchema``; with
        several roots the description says how a path names its root."""
        items = self._listing.definitions()
        if len(self._roots) == 1:
            return items
        note = self.path_rule()
        return [{**item, "description": f"{item['description']}\n\n{note}"} for item in items]

    def path_rule(self) -> str:
        """One sentence on how paths name roots (empty with one root)."""
        if len(self._roots) == 1:
            return ""
        if not self._roots:
            return "No root is open: the client's roots share no directory with the server's."
        names = ", ".join(self._roots)
        first = next(iter(self._roots))
        return (f"This server has several roots ({names}): every path begins with a root's "
                f"name, e.g. \"{first}/src/main.py\" (\"{first}\" alone is that root); an "
                "absolute path inside a root works too. A call never spans two roots.")

    # -- calls -----------------------------------------------------------------
    def call(self, name: Any, args: Any = None, *, timeout: float | None = None,
             cancel: CancelToken | None = None,
             progress: ProgressFn | None = None) -> dict[str, Any]:
        """Route the call to its root's Toolbox; the envelope it answers,
        with paths named as they were asked."""
        if not self._roots:
            return _no_roots().envelope()
        if len(self._roots) > 1 or self._around:
            try:
                self._hold_each_others_rules()  # a root's directory may have moved since
            except ValueError:
                return _roots_moving().envelope()
        if len(self._roots) == 1:
            (box,) = self._roots.values()
            return _call(box, name, args, timeout, cancel, progress)
        bound = _Bound.of(timeout, cancel, self._roots.values())  # for the looks beside the call
        routed = self._route(name, args, bound)
        if isinstance(routed, Refusal):
            return routed.envelope()
        with naming_root(routed.root):  # its sentences name paths as the model spells them
            envelope = _call(self._roots[routed.root], name, routed.args, timeout, cancel,
                             progress)
        prefixed: dict[str, Any] = _prefixed(envelope, routed.root)
        return self._elsewhere(name, args, routed, prefixed, bound)

    def _elsewhere(self, tool: str, args: Any, routed: _Routed,
                   envelope: dict[str, Any], bound: _Bound) -> dict[str, Any]:
        """``envelope``, and when it says a path under one root's name is
        not there while that root offers nothing: the one other root where
        the same path is, and may be shown (never a denied or hidden one).
        A suggested call is offered only if it succeeds now, within what is
        left of the call (``bound``)."""
        details = envelope.get("details")
        if envelope.get("ok") is not False or envelope.get("code") != "NOT_FOUND" or \
                not isinstance(details, dict) or details.get("didYouMean"):
            return envelope
        field = details.get("field")
        sent, rest = (args.get(field) if isinstance(args, dict) else None,
                      routed.args.get(field) if isinstance(routed.args, dict) else None)
        if not isinstance(field, str) or field not in PATH_FIELDS or not isinstance(sent, str) \
                or not isinstance(rest, str) or rest in (".", "") or sent.startswith("/") \
                or rest.startswith("/"):
            return envelope
        holders = [name for name, box in self._roots.items()
                   if name != routed.root and box.shows(rest, bound.checkpoint)]
        if len(holders) != 1:
            return envelope
        offered = f"{holders[0]}/{rest}"
        out = {**envelope, "details": {**details, "didYouMean": [offered]},
               "hint": f"{rest} is in root {holders[0]}: \"{offered}\"."}
        proposed = {**args, field: offered}
        out.pop("suggestedTool", None)
        out.pop("suggestedArgs", None)
        if tool in _SUGGESTIBLE and self._succeeds(tool, proposed, bound):
            out["suggestedTool"], out["suggestedArgs"] = tool, proposed
        elif tool != "read_file" and field == "path" and \
                self._succeeds("read_file", {"path": offered}, bound):
            out["suggestedTool"], out["suggestedArgs"] = "read_file", {"path": offered}
        return out

    def _succeeds(self, tool: str, args: dict[str, Any], bound: _Bound) -> bool:
        """Whether ``tool(args)`` succeeds now, tried within what is left of
        the call it is suggested for (not tried once that is cancelled or
        past its deadline)."""
        left = bound.left()
        if left is None:
            return False
        return self.call(tool, args, timeout=left, cancel=bound.cancel).get("ok") is True

    async def acall(self, name: Any, args: Any = None, *, timeout: float | None = None,
                    cancel: CancelToken | None = None,
                    progress: ProgressFn | None = None) -> dict[str, Any]:
        """:meth:`call` in a worker thread, as :meth:`Toolbox.acall`: if the
        awaiting task is cancelled, the call is cancelled at its next
        checkpoint and this waits for it to stop (nothing is left half-done
        after the task ended) before re-raising ``CancelledError``;
        ``cancel`` (the host's token) stops it too."""
        return await in_worker(lambda token: self.call(name, args, timeout=timeout, cancel=token,
                                                       progress=progress), cancel)

    def _hold_each_others_rules(self) -> None:
        """Where roots lie inside one another, each holds the other's rules:
        the outer root the inner's beneath that place, the inner root the
        outer's as they apply beneath it.  Placed where the directories are
        now, before every call: a host or another process may move a root's
        directory after the workspace opened, and the rules follow the
        directory, not the path it had.  ``ValueError`` when a directory
        keeps moving while it is placed."""
        boxes = [*self._roots.values(), *self._around]  # the roots offered first
        nestings = _nestings(boxes)
        if nestings == self._nestings:
            return
        holds: list[list[tuple[str, Policy]]] = [[] for _ in boxes]
        outers: list[list[tuple[Toolbox, str]]] = [[] for _ in boxes]
        for nesting in nestings:
            outer, inner = boxes[nesting.outer], boxes[nesting.inner]
            if nesting.place != ".":
                holds[nesting.outer].append((nesting.place, inner.policy.alone))
            holds[nesting.inner].append(("", outer.policy.alone.beneath(nesting.place)))
            outers[nesting.inner].append((outer, nesting.place))
        for box, held, around in zip(self._roots.values(), holds, outers):  # offered only
            box.hold_only(held)
            box.held_by(around)
        self._nestings = nestings

    # -- routing ---------------------------------------------------------------
    def _route(self, tool: Any, args: Any, bound: _Bound) -> _Routed | Refusal:
        """Where the call goes, read in every form its Toolbox reads
        arguments in: an object, or a JSON text of one (routed by the
        object, and passed on as a text again, so the Toolbox still says
        it read one)."""
        if not isinstance(args, str):
            return self._route_object(tool, args, bound)
        try:
            sent = json.loads(args)
        except (ValueError, RecursionError):  # the Toolbox says what is wrong with it
            return _Routed(next(iter(self._roots)), args)
        if not isinstance(sent, dict):
            return _Routed(next(iter(self._roots)), args)
        routed = self._route_object(tool, sent, bound)
        if isinstance(routed, Refusal) or not isinstance(routed.args, dict):
            return routed
        return _Routed(routed.root, json.dumps(routed.args))

    def _route_object(self, tool: Any, args: Any, bound: _Bound) -> _Routed | Refusal:
        if args is None:
            args = {}
        if tool == PATCH_TOOL and isinstance(args, dict) and isinstance(args.get(PATCH_FIELD), str):
            return self._route_patch(tool, args, bound)
        if not isinstance(args, dict) or not isinstance(tool, str) or tool not in self.names:
            return _Routed(next(iter(self._roots)), args)  # the Toolbox refuses it
        fields = _path_fields(self.spec(tool).schema)
        chosen: dict[str, tuple[str, Any]] = {}  # key sent -> (root, value for that root)
        for field in fields:
            key = _sent_as(args, field)
            if key is None:
                if field in _defaults_to_root(self.spec(tool).schema):
                    return self._root_required(tool, args, field, bound)
                continue
            placed = self._place(tool, args, key, bound)
            if isinstance(placed, Refusal):
                return placed
            chosen[key] = placed
        roots = {root for root, _ in chosen.values()}
        if len(roots) > 1:
            return _cross_root(tool, {k: args[k] for k in chosen})
        if not roots:
            return _Routed(next(iter(self._roots)), args)
        return _Routed(roots.pop(), {**args, **{k: v for k, (_, v) in chosen.items()}})

    def _route_patch(self, tool: str, args: dict[str, Any], bound: _Bound) -> _Routed | Refusal:
        """A patch goes to the root its files' headers name, each header's
        path rewritten as that root's Toolbox reads it; a patch naming files
        in two roots is refused (one call acts in one root)."""
        from .._patch import file_header  # here: the patch code is apply_patch's, loaded with it

        lines = args[PATCH_FIELD].split("\n")
        roots: set[str] = set()
        for number, line in enumerate(lines):
            found = file_header(line)
            if found is None or not found[1]:
                continue  # not a header, or one the Toolbox refuses as it is
            placed = self._place_one(tool, args, PATCH_FIELD, found[1], bound)
            if isinstance(placed, Refusal):
                return placed
            root, value = placed
            roots.add(root)
            if isinstance(value, str):
                lines[number] = f"{found[0]} {value}" + ("\r" if line.endswith("\r") else "")
        if len(roots) > 1:
            return _cross_root(tool, {PATCH_FIELD: args[PATCH_FIELD]})
        if not roots:
            return _Routed(next(iter(self._roots)), args)  # the Toolbox says what is wrong
        return _Routed(roots.pop(), {**args, PATCH_FIELD: "\n".join(lines)})

    def _place(self, tool: str, args: dict[str, Any], field: str,
               bound: _Bound) -> tuple[str, Any] | Refusal:
        value = args[field]
        if field == PATH_LIST_FIELD:
            if not isinstance(value, list):
                return (next(iter(self._roots)), value)  # the schema check refuses it
            placed = [self._place_one(tool, args, field, item, bound) for item in value]
            for item in placed:
                if isinstance(item, Refusal):
                    return item
            roots = {root for root, _ in placed}  # type: ignore[misc]
            if len(roots) > 1:
                return _cross_root(tool, {field: value})
            root = roots.pop() if roots else next(iter(self._roots))
            return (root, [v for _, v in placed])  # type: ignore[misc]
        return self._place_one(tool, args, field, value, bound)

    def _place_one(self, tool: str, args: dict[str, Any], field: str, value: Any,
                   bound: _Bound) -> tuple[str, Any] | Refusal:
        """The root ``value`` names and what its Toolbox gets, read with the
        tools' own spelling rules (``ctx.rel``): ``//`` and ``/./`` collapse,
        a ``file://`` URI is its path, ``\\`` separates names unless the
        '/' reading names a root."""
        if not isinstance(value, str) or value == "" or "\x00" in value:
            return (next(iter(self._roots)), value)  # the Toolbox says what is wrong
        text = _uri_path(value)
        if text is None:
            return _outside("/", field)  # another host's URI, or C:/...
        if text.replace("\\", "/").startswith("/"):
            return self._place_absolute(value, text.replace("\\", "/"), field)
        if text == "~" or text.startswith("~/"):
            return _outside(value, field)
        separators = "/"
        parts = _names(text, separators)
        if "\\" in text and not (parts and parts[0] in self._roots):
            separators = "/\\"
            parts = _names(text, separators)
        if not parts:
            return self._root_required(tool, args, field, bound)
        head = parts[0]
        if head in self._roots:
            return (head, _after_head(text, head, separators) or ".")
        if head == "..":
            return _outside(value, field)
        return self._unknown_root(tool, args, field, value, bound)

    def _place_absolute(self, value: str, text: str, field: str) -> tuple[str, Any] | Refusal:
        collapsed = "/" + "/".join(_names(text, "/"))
        if text.endswith("/") and collapsed != "/":
            collapsed += "/"
        for candidate in (text, collapsed):
            for prefix, name in self._prefixes:
                if under(prefix, candidate):
                    # the Toolbox makes it root-relative (and notes a URI or '\\' it forgave)
                    return (name, value if candidate is text else collapsed)
        return _outside(value, field)

    # -- refusals that need the roots ----------------------------------------
    def _root_required(self, tool: str, args: dict[str, Any], field: str,
                       bound: _Bound) -> Refusal:
        first = next(iter(self._roots))
        names = ", ".join(self._roots)
        refusal = Refusal(Code.INVALID_ARGUMENT,
                          f"argument '{field}' names no root; this server has several: {names}",
                          f"Begin '{field}' with a root's name, e.g. \"{first}\".",
                          details={"field": field, "roots": self.roots}, kind=Kind.ROOT_REQUIRED)
        return self._suggest(refusal, tool, {**args, field: first}, bound)

    def _unknown_root(self, tool: str, args: dict[str, Any], field: str, value: str,
                      bound: _Bound) -> Refusal:
        names = ", ".join(self._roots)
        # only where the name may be shown: a denied or hidden name is never
        # said to exist in any root (the answer is the same either way)
        holders = [name for name, box in self._roots.items()
                   if box.shows(value, bound.checkpoint)]
        details: dict[str, Any] = {"field": field, "roots": self.roots, "path": value}
        example = f"{holders[0] if holders else next(iter(self._roots))}/{value}"
        if len(holders) == 1:
            details["didYouMean"] = [example]
            hint = f"Begin the path with its root's name: \"{example}\"."
        else:
            hint = f"Begin the path with a root's name ({names}), e.g. \"{example}\"."
        refusal = Refusal(Code.INVALID_ARGUMENT,
                          f"{value} does not begin with a root's name; the roots are: {names}",
                          hint, details=details, kind=Kind.UNKNOWN_ROOT)
        return self._suggest(refusal, tool, {**args, field: example}, bound) \
            if len(holders) == 1 \
            else refusal

    def _suggest(self, refusal: Refusal, tool: str, args: dict[str, Any],
                 bound: _Bound) -> Refusal:
        """``refusal`` with the call ``tool(args)`` suggested if that is a
        cheap read that succeeds now (suggestions are tried, never guessed),
        within what is left of the call (``bound``)."""
        if tool in _SUGGESTIBLE and tool in self.names and self._succeeds(tool, args, bound):
            return refusal.replace(suggest=(tool, args))
        return refusal

    # -- the roots protocol ----------------------------------------------------
    def narrowed(self, directories: Sequence[str]) -> Workspace:
        """The Workspace of what both the command line and a client allow:
        for each client directory, the roots it contains and, if it lies
        inside a root, that directory opened beneath the root.  Never wider
        than this Workspace; it may have no root at all.  Bounded: a
        directory named twice (by any spelling) gets one Toolbox, and at
        most :data:`MAX_CLIENT_ROOTS` roots are kept (the first ones named;
        the rest are logged and left out)."""
        chosen: dict[tuple[int, int], tuple[str, Toolbox, bool]] = {}
        dropped = 0
        for real in dict.fromkeys(os.path.realpath(d) for d in directories):
            for place in self._places(real):
                key = root_identity(place.root)
                if key in chosen or len(chosen) >= MAX_CLIENT_ROOTS:
                    dropped += key not in chosen
                    if place.box is None:
                        place.root.close()
                    continue
                box = place.box or self._open_beneath(place)
                if box is not None:
                    chosen[key] = (place.path, box, place.box is None)
        if dropped:
            log.warning("the client named %d roots more than the %d kept; they are left out",
                        dropped, MAX_CLIENT_ROOTS)
        names = root_names(path for path, _, _ in chosen.values())
        narrowed = Workspace({name: box for name, (_, box, _) in zip(names, chosen.values())},
                             opener=self._opener, listing=self._listing,
                             around=[*self._roots.values(), *self._around])
        narrowed._owned = [box for _, box, owned in chosen.values() if owned]
        return narrowed

    def _places(self, real: str) -> list[_ClientPlace]:
        """The places one client directory (its host real path) gives: each
        root it holds, and the directory itself opened beneath the root it
        lies in (a Root only: its Toolbox is made once it is kept)."""
        out: list[_ClientPlace] = []
        for box in self._roots.values():
            root_real = os.path.realpath(box.root.path)
            if _inside(real, root_real):  # the client's directory holds the whole root
                out.append(_ClientPlace(box.root.path, box.root, box, box, "."))
            elif _inside(root_real, real) and self._opener is not None:
                opened = open_beneath(box.root, os.path.relpath(real, root_real))
                if opened is not None:
                    sub, base = opened  # the policy base is where the open landed, not the spelling
                    out.append(_ClientPlace(os.path.join(box.root.path, base), sub, None, box,
                                            base))
        return out

    def _open_beneath(self, place: _ClientPlace) -> Toolbox | None:
        """The Toolbox of a client directory opened beneath ``place.parent``."""
        assert self._opener is not None  # a place beneath a root is found only with one
        made = self._opener(place.root, place.parent, place.base)
        if made is None:
            place.root.close()
            return None
        made.opened_beneath(place.parent, place.base)  # the server root's links lead here too
        return made

    def close(self) -> None:
        """Close the Toolboxes this Workspace opened (not the borrowed ones)."""
        owned, self._owned = self._owned, []
        for box in owned:
            box.close()
            box.root.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- helpers -------------------------------------------------------------------

# Suggested calls are tried before they are offered: only reads that cost little.
_SUGGESTIBLE = frozenset({"read_file", "list_directory", "file_info"})


class _Bound(NamedTuple):
    """What bounds one call of the Workspace: its deadline (on the
    monotonic clock) and the host's cancel token.  The looks made for the
    model's sake before or after the routed call (other roots asked about a
    path, suggested calls tried) run within what is left of it."""

    deadline: float
    cancel: CancelToken | None

    @classmethod
    def of(cls, timeout: float | None, cancel: CancelToken | None,
           boxes: Iterable[Toolbox]) -> _Bound:
        seconds = timeout if timeout is not None else \
            min(box.limits.call_seconds for box in boxes)
        return cls(time.monotonic() + seconds, cancel)

    def left(self) -> float | None:
        """The seconds left; ``None`` once cancelled or past the deadline."""
        if self.cancel is not None and self.cancel.cancelled:
            return None
        left = self.deadline - time.monotonic()
        return left if left > 0 else None

    def checkpoint(self) -> None:
        """Stop a look (a :class:`Refusal`) once cancelled or past the deadline."""
        if self.cancel is not None and self.cancel.cancelled:
            raise cancelled("the call")
        if self.deadline <= time.monotonic():
            raise time_limit("the call", 0.0)


def _call(box: Toolbox, name: Any, args: Any, timeout: float | None,
          cancel: CancelToken | None, progress: ProgressFn | None) -> dict[str, Any]:
    return box.call(name, args, timeout=timeout, cancel=cancel, progress=progress)


class _ClientPlace(NamedTuple):
    """A root a client directory gives: ``box`` the server's Toolbox of it,
    or None for a directory opened beneath the root of ``parent`` at
    ``base`` (``root``, closed by whoever drops it)."""

    path: str
    root: Root
    box: Toolbox | None
    parent: Toolbox
    base: str


class _Nesting(NamedTuple):
    """Root ``inner``'s directory lies at ``place`` inside root ``outer``
    (indexes in the workspace's order; ``place`` "." when both are one
    directory)."""

    outer: int
    inner: int
    place: str


def _nestings(boxes: list[Toolbox]) -> list[_Nesting]:
    """Where one root's directory lies inside another's, found on the
    directories themselves (links resolved, moves seen)."""
    found = []
    for o, outer in enumerate(boxes):
        for i, inner in enumerate(boxes):
            if i != o:
                place = nested_place(outer.root, inner.root)
                if place is not None:
                    found.append(_Nesting(o, i, place))
    return found


def _sent_as(args: dict[str, Any], field: str) -> str | None:
    """The key of ``args`` the Toolbox reads as path argument ``field``:
    the field itself, or, when it is missing or ``null``, the first of
    other tools' names for it that holds a value (as ``check_arguments``
    reads them); ``None`` when the call does not name it."""
    if args.get(field) is None:
        others = ALIASES.get(field, ())
        found = next((k for k, v in args.items() if k in others and v is not None), None)
        if found is not None:
            return found
    return field if field in args else None


def _path_fields(schema: Mapping[str, Any]) -> list[str]:
    props = schema.get("properties", {})
    return [f for f in props if f in PATH_FIELDS or f == PATH_LIST_FIELD]


def _defaults_to_root(schema: Mapping[str, Any]) -> set[str]:
    """Path arguments that, left out, mean the root itself."""
    props = schema.get("properties", {})
    return {f for f, sub in props.items()
            if f in PATH_FIELDS and isinstance(sub, dict) and sub.get("default") == "."}


def _prefixed(envelope: Any, root: str) -> Any:
    """``envelope`` with ``root/`` before every root-relative path."""
    if isinstance(envelope, list):
        return [_prefixed(item, root) for item in envelope]
    if not isinstance(envelope, dict):
        return envelope
    out: dict[str, Any] = {}
    for key, value in envelope.items():
        if isinstance(value, AnswerPath) or (key in PATH_KEYS and isinstance(value, str)):
            out[key] = _join(root, value)
        elif key in PATH_LIST_KEYS and isinstance(value, list):
            out[key] = [_join(root, v) if isinstance(v, str) else _prefixed(v, root)
                        for v in value]
        elif isinstance(value, list):
            out[key] = [_join(root, v) if isinstance(v, AnswerPath) else _prefixed(v, root)
                        for v in value]
        elif key == "diff" and isinstance(value, str):
            out[key] = _rooted_diff(value, envelope.get("path"), root)
        elif key == "suggestedArgs" and isinstance(value, dict):
            out[key] = {k: (_join(root, v) if k in PATH_FIELDS and isinstance(v, str) else
                            [_join(root, x) for x in v] if k == PATH_LIST_FIELD
                            and isinstance(v, list) else v) for k, v in value.items()}
        else:
            out[key] = _prefixed(value, root)
    return out


def _rooted_diff(diff: str, path: Any, root: str) -> str:
    """A unified diff whose ``--- a/`` and ``+++ b/`` header names the
    path ``root/...`` as the answer does: root-relative, it would name a
    file of that path in every root."""
    if isinstance(path, str):
        head = f"--- a/{path}\n+++ b/{path}\n"
        if diff.startswith(head) and not path.startswith("/"):
            rooted = _join(root, path)
            return f"--- a/{rooted}\n+++ b/{rooted}\n{diff[len(head):]}"
    if diff.startswith('--- "a/'):  # a name the header quotes (a JSON string a line)
        head, _, rest = diff.partition("\n")
        second, _, body = rest.partition("\n")
        try:
            old, new = json.loads(head[4:]), json.loads(second[4:])
        except ValueError:
            return diff
        if old[:2] != "a/" or new[:2] != "b/" or old[2:] != new[2:] or old[2:].startswith("/"):
            return diff
        rooted = _join(root, old[2:])
        return f"--- {json.dumps('a/' + rooted)}\n+++ {json.dumps('b/' + rooted)}\n{body}"
    found = _DIFF_HEAD.match(diff)
    if found is None or found.group(1).startswith("/"):
        return diff
    rooted = _join(root, found.group(1))
    return f"--- a/{rooted}\n+++ b/{rooted}\n{diff[found.end():]}"


# a diff's header naming one path on both lines (a name on one line)
_DIFF_HEAD = re.compile(r"--- a/([^\n]*)\n\+\+\+ b/\1\n")


def _join(root: str, rel: str) -> str:
    if rel.startswith("/"):
        return rel  # never a root-relative path (tools do not answer host paths)
    return root if rel in (".", "./") else f"{root}/{rel}"


def _inside(outer: str, inner: str) -> bool:
    """Whether host path ``inner`` is ``outer`` or lies below it."""
    return under(outer.rstrip("/") or "/", inner)


def _uri_path(value: str) -> str | None:
    """``value``, or the path of a ``file://`` URI (``None``: a URI of
    another host or without an absolute path), as ``ctx.rel`` reads it."""
    if value[:7].lower() != "file://":
        return value
    return file_uri_path(value)


def _names(text: str, separators: str) -> list[str]:
    """The names in ``text`` split at any of ``separators``, without the
    empty and ``.`` ones."""
    return [p for p in re.split(f"[{re.escape(separators)}]", text) if p not in ("", ".")]


def _after_head(text: str, head: str, separators: str) -> str:
    """What follows the first name ``head`` of ``text`` and the separators
    after it, as it was written (the root's Toolbox reads the rest with its
    own forgiveness, and notes it)."""
    sep = f"[{re.escape(separators)}]"
    found = re.match(rf"(?:{sep}|\.(?={sep}|\Z))*{re.escape(head)}(?:{sep}+|\Z)", text)
    return text[found.end():] if found else "/".join(_names(text, separators)[1:])


def _roots_moving() -> Refusal:
    return Refusal(Code.STALE, "a root's directory kept moving while the call was routed; "
                   "nothing was done", "Repeat the call once the roots stay in place.",
                   kind=Kind.SWAPPED)


def _no_roots() -> Refusal:
    return Refusal(Code.DENIED, "no root is open: the client's roots share no directory with "
                   "the directories this server was started with",
                   "Tell the user that the client's roots and the server's differ; do not retry.",
                   kind=Kind.NO_ROOTS)


def _outside(value: str, field: str) -> Refusal:
    return outside_root(value, field, kind=Kind.OUTSIDE_ROOTS).replace(
        hint="Begin the path with a root's name; '..' may not climb above a root.")


def _cross_root(tool: str, fields: dict[str, Any]) -> Refusal:
    return Refusal(Code.UNSUPPORTED,
                   f"{tool}'s paths are in different roots, and one call acts in one root only",
                   "Work in one root per call: to move a file to another root, read it, write it "
                   "there, then delete the original.",
                   details={"fields": sorted(fields)}, kind=Kind.CROSS_ROOT)
