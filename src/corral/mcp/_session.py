"""The MCP session as a state machine, free of I/O (h11's model).

:meth:`Session.receive` takes one decoded message and returns what to do:
:class:`Send` a message now, start a :class:`ToolCall` off the reading loop,
:class:`Cancel` one, apply the client's :class:`RootsListed`.  The server
turns a finished call into its answer with :meth:`Session.call_result`,
which says ``None`` for a call the client cancelled (the spec: no answer).
Progress and log notifications are shaped (and filtered) here too.

Rules kept here:

* every request with an id is answered exactly once (a cancelled call is
  the one exception the specification makes);
* an id already in flight is refused (``-32600``) rather than confused;
* when the client declares ``roots``, tool calls wait for its first
  ``roots/list`` answer (so no call ever runs wider than the client allows),
  or for :meth:`Session.roots_unanswered` when it never comes;
* a batch (a JSON array) is taken in the one protocol version that has
  them (2025-03-26: added there, removed in 2025-06-18), and answered with
  one array once its last request is answered (:class:`SendLine`); it
  carries at most :data:`BATCH_MEMBERS` messages, and its answers are held
  within :data:`BATCH_BYTES`.  In any other version, or before initialize,
  a batch is one ``-32600``.

Not thread-safe: the server serialises calls into one Session.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from collections.abc import Callable

from . import _memory, _wire
from ._catalog import Catalog, call_result, negotiate
from ._wire import RequestId

__all__ = ["Session", "Send", "SendLine", "ToolCall", "Cancel", "RootsListed", "Action",
           "LOG_LEVELS", "SERVER_NAME", "internal_error", "is_own_request"]

SERVER_NAME = "corral"

#: syslog severities, least severe first (MCP's logging levels)
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

_ROOTS_REQUEST_PREFIX = "corral-roots-"
SERVER_BUSY = -32000
#: calls held for the client's first roots/list answer: at most this many,
#: and this many bytes (as the server's queue: ``Scheduler``'s defaults)
HELD_CALLS = 64
HELD_BYTES = 64 << 20
#: the protocol versions that have JSON-RPC batches
BATCH_VERSIONS = frozenset({"2025-03-26"})
#: messages one batch may carry (more: the batch is refused whole, -32600)
BATCH_MEMBERS = 1000
#: bytes of answers one batch may hold until its last is in; an answer past
#: them is "server busy" instead (the request was carried out; sent on a
#: line of its own, it is answered)
BATCH_BYTES = 16 << 20

log = logging.getLogger("corral.mcp")


class Send(NamedTuple):
    message: dict[str, Any]


class SendLine(NamedTuple):
    """A line made here, whole (a batch's answers, as one array)."""

    line: bytes


@dataclass(frozen=True)
class ToolCall:
    """One ``tools/call`` to run; ``progress_token`` is the client's, if any."""

    id: RequestId
    name: Any
    arguments: Any
    progress_token: RequestId | None
    size: int = field(default=0, compare=False)  # bytes of the request's line


class Cancel(NamedTuple):
    id: RequestId


class RootsListed(NamedTuple):
    """The client's roots as ``file:`` URIs; ``None`` when it did not say
    (an error answer, or none in time): the command line's roots apply."""

    uris: tuple[str, ...] | None


Action = Send | SendLine | ToolCall | Cancel | RootsListed


@dataclass
class _Batch:
    """A batch whose answers are not all in: the ids still unanswered, and
    the answers so far (each one encoded, without its newline)."""

    waiting: set[RequestId] = field(default_factory=set)
    answers: list[bytes] = field(default_factory=list)
    size: int = 0
    building: bool = True  # its members are still being read: it cannot be complete


@dataclass
class _Progress:
    last: float = -1.0
    sent_at: float = float("-inf")


@dataclass
class _InFlight:
    # the id only, never the call: its arguments (up to a line's 16 MiB) are
    # the worker's to drop once it has run, while the answer may still wait
    id: RequestId
    cancelled: bool = False
    progress: _Progress = field(default_factory=_Progress)


class Session:
    """One client connection's protocol state."""

    def __init__(self, catalog: Catalog, *, version: str, progress_interval: float = 0.1) -> None:
        self.catalog = catalog
        self._server_version = version
        self.protocol_version: str | None = None  # set by initialize
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self.log_level = "warning"  # until logging/setLevel
        self._inflight: dict[RequestId, _InFlight] = {}
        self._held: list[ToolCall] = []  # calls waiting for the client's first roots answer
        self._held_weights: dict[RequestId, int] = {}  # their bytes, by id
        self._initialized = False  # notifications/initialized came
        self._roots_known = True
        self._roots_request: str | None = None  # id of our roots/list in flight
        self._roots_again = False
        self._roots_overdue = False  # it timed out: its answer still applies if it comes
        self._requests_sent = 0
        self._progress_interval = progress_interval
        self._batch_of: dict[RequestId, _Batch] = {}  # a batch's unanswered requests
        self._handlers: dict[str, Callable[[_wire.Request], list[Action]]] = {
            "initialize": self._initialize,
            "ping": lambda req: [Send(_wire.result(req.id, {}))],
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "logging/setLevel": self._set_level,
        }

    @property
    def version(self) -> str:
        """The negotiated protocol version (the newest before initialize)."""
        return self.protocol_version or negotiate("")

    @property
    def waiting_for_roots(self) -> bool:
        return not self._roots_known

    # -- input -----------------------------------------------------------------
    def receive(self, message: _wire.Incoming) -> list[Action]:
        if isinstance(message, _wire.Batch):
            return self._batch(message)
        if isinstance(message, _wire.Invalid):
            if message.reply is None or is_own_request(message.reply["id"]):
                return []  # nothing to answer, or a broken answer to this server
            return [Send(message.reply)]
        if isinstance(message, _wire.Response):
            return self._response(message)
        if isinstance(message, _wire.Notification):
            return self._notification(message)
        if message.id in self._inflight or message.id in self._held_weights:
            return [Send(_wire.error(message.id, _wire.INVALID_REQUEST,
                                     "Invalid Request: this id is already in use by a request "
                                     "in progress"))]
        handler = self._handlers.get(message.method)
        if handler is None:
            return [Send(_wire.error(message.id, _wire.METHOD_NOT_FOUND,
                                     f"Method not found: {message.method[:100]}"))]
        return handler(message)

    def _batch(self, batch: _wire.Batch) -> list[Action]:
        """Each member as if it came alone; their answers held, to go as
        one array when the last is in (now, if no call of it runs)."""
        if self.protocol_version not in BATCH_VERSIONS:
            spoken = self.protocol_version or "none yet (initialize is never in a batch)"
            return [Send(_wire.error(None, _wire.INVALID_REQUEST,
                                     "Invalid Request: the message is a batch (array), which "
                                     f"only protocol version {min(BATCH_VERSIONS)} has (this "
                                     f"session's: {spoken}); send one object per line"))]
        if len(batch.members) > BATCH_MEMBERS:
            return [Send(_wire.error(None, _wire.INVALID_REQUEST,
                                     f"Invalid Request: a batch of {len(batch.members)} messages "
                                     f"is over the {BATCH_MEMBERS} this server takes in one; "
                                     "send smaller batches"))]
        group = _Batch()
        actions: list[Action] = []
        for member in batch.members:
            # a call of this member's, not yet answered: before, its id was free;
            # after, it runs or waits for the roots (a client's roots answer in
            # the batch may release calls of other lines: those are not its)
            call_id = member.id if isinstance(member, _wire.Request) and \
                member.method == "tools/call" and member.id not in self._inflight and \
                member.id not in self._held_weights else None
            for action in self.receive(member):
                if isinstance(action, Send) and _is_answer(action.message):
                    self._keep(group, action.message["id"], _wire.encode(action.message))
                else:
                    actions.append(action)
            if call_id is not None and (call_id in self._inflight or
                                        call_id in self._held_weights):
                # its own now, so a later member (a cancel of it) settles it here
                group.waiting.add(call_id)
                self._batch_of[call_id] = group
        group.building = False
        line = None if group.waiting else _batch_line(group)
        return actions if line is None else [*actions, SendLine(line)]

    def _keep(self, group: _Batch, request_id: RequestId | None, line: bytes) -> None:
        """``line`` (an answer) into ``group``'s array, unless that would
        hold more than :data:`BATCH_BYTES`: then an error saying it was left
        out instead."""
        if group.size + len(line) > BATCH_BYTES:
            line = _wire.encode(_wire.error(
                request_id, SERVER_BUSY, f"Answer left out: this batch's answers are over "
                f"{BATCH_BYTES >> 20} MiB. The request was carried out: a read may be sent "
                "again on a line of its own; a change (a write, edit, move, delete) must not "
                "be, check what it did instead"))
        group.answers.append(line[:-1])
        group.size += len(line)

    def _settle(self, request_id: RequestId, line: bytes | None) -> bytes | None:
        """What goes out for the answer ``line`` to ``request_id`` (``None``:
        it is not answered): the line itself, or, for a batch's member, the
        batch's array once its last answer is in."""
        group = self._batch_of.pop(request_id, None)
        if group is None:
            return line
        group.waiting.discard(request_id)
        if line is not None:
            self._keep(group, request_id, line)
        return None if group.waiting or group.building else _batch_line(group)

    def _initialize(self, req: _wire.Request) -> list[Action]:
        if self.protocol_version is not None:
            return [Send(_wire.error(req.id, _wire.INVALID_REQUEST,
                                     "Invalid Request: the session is already initialized"))]
        requested = req.params.get("protocolVersion")
        capabilities = req.params.get("capabilities", {})
        if not isinstance(requested, str) or not isinstance(capabilities, dict):
            return [Send(_wire.error(req.id, _wire.INVALID_PARAMS,
                                     "Invalid params: initialize needs a protocolVersion string "
                                     "and a capabilities object"))]
        self.protocol_version = negotiate(requested)
        self.client_capabilities = capabilities
        info = req.params.get("clientInfo")
        self.client_info = info if isinstance(info, dict) else {}
        return [Send(_wire.result(req.id, {
            "protocolVersion": self.protocol_version,
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "serverInfo": {"name": SERVER_NAME, "version": self._server_version},
            "instructions": self.catalog.instructions(),
        }))]

    def _tools_list(self, req: _wire.Request) -> list[Action]:
        if req.params.get("cursor") is not None:
            return [Send(_wire.error(req.id, _wire.INVALID_PARAMS,
                                     "Invalid params: unknown cursor (the list has one page)"))]
        return [Send(_wire.result(req.id, {"tools": self.catalog.tools(self.version)}))]

    def _tools_call(self, req: _wire.Request) -> list[Action]:
        name = req.params.get("name")
        if not isinstance(name, str):
            return [Send(_wire.error(req.id, _wire.INVALID_PARAMS,
                                     "Invalid params: tools/call needs a tool name (a string)"))]
        meta = req.params.get("_meta")
        token = _wire.request_id(meta.get("progressToken")) if isinstance(meta, dict) else None
        call = ToolCall(req.id, name, req.params.get("arguments"), token, req.size)
        if not self._roots_known:
            return self._hold(call)
        self._inflight[call.id] = _InFlight(call.id)
        return [call]

    def _hold(self, call: ToolCall) -> list[Action]:
        """Keep ``call`` until the roots are known, within the same bounds as
        the server's queue (calls, and bytes by what the arguments hold);
        past them it is answered "server busy" at once."""
        weight = _memory.weight(call.size, call.arguments)
        held = sum(self._held_weights.values())
        if len(self._held) >= HELD_CALLS or (self._held and held + weight > HELD_BYTES):
            return [Send(_wire.error(call.id, SERVER_BUSY,
                                     f"Server busy: {len(self._held)} calls wait for the "
                                     "client's roots/list answer; wait for their answers, "
                                     "then retry"))]
        self._held.append(call)
        self._held_weights[call.id] = weight
        return []

    def _unhold(self, request_id: RequestId) -> None:
        self._held = [call for call in self._held if call.id != request_id]
        self._held_weights.pop(request_id, None)

    def _set_level(self, req: _wire.Request) -> list[Action]:
        level = req.params.get("level")
        if level not in LOG_LEVELS:
            return [Send(_wire.error(req.id, _wire.INVALID_PARAMS,
                                     f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}"
                                     ))]
        self.log_level = level
        return [Send(_wire.result(req.id, {}))]

    def _notification(self, note: _wire.Notification) -> list[Action]:
        if note.method == "notifications/initialized":
            if self.protocol_version is None or self._initialized:
                return []  # only the first, after initialize, counts
            self._initialized = True
            if isinstance(self.client_capabilities.get("roots"), dict):
                self._roots_known = False  # hold calls until the client says
                return self._ask_roots()
        elif note.method == "notifications/cancelled":
            return self._cancel(note.params.get("requestId"))
        elif note.method == "notifications/roots/list_changed":
            if not self._initialized:
                return []  # initialized asks anyway
            if self._roots_request is not None and not self._roots_overdue:
                self._roots_again = True
                return []
            if isinstance(self.client_capabilities.get("roots"), dict):
                return self._ask_roots()
        return []  # other notifications (progress, unknown ones) need nothing

    def _cancel(self, raw_id: Any) -> list[Action]:
        request_id = _wire.request_id(raw_id)
        if request_id is None:
            log.info("notifications/cancelled names no valid request id; ignored")
            return []
        if request_id in self._held_weights:
            self._unhold(request_id)
            line = self._settle(request_id, None)
            return [] if line is None else [SendLine(line)]
        entry = self._inflight.get(request_id)
        if entry is None or entry.cancelled:
            return []  # unknown or finished: ignored, as the spec says
        entry.cancelled = True
        return [Cancel(entry.id)]

    # -- roots -----------------------------------------------------------------
    def _ask_roots(self) -> list[Action]:
        self._requests_sent += 1
        self._roots_request = f"{_ROOTS_REQUEST_PREFIX}{self._requests_sent}"
        self._roots_overdue = False
        return [Send({"jsonrpc": "2.0", "id": self._roots_request, "method": "roots/list"})]

    def _response(self, response: _wire.Response) -> list[Action]:
        if response.id != self._roots_request:
            return []  # not an answer to anything outstanding
        self._roots_request, self._roots_overdue = None, False
        listed = RootsListed(_root_uris(response.result) if response.error is None else None)
        actions: list[Action] = [listed]
        if self._roots_again:
            self._roots_again = False
            actions += self._ask_roots()
        return actions + self._release()

    def roots_unanswered(self) -> list[Action]:
        """The client did not answer ``roots/list`` in time: the command
        line's roots apply, and held calls start.  Its answer, should it
        come late, still applies from then on (it can only narrow)."""
        self._roots_overdue = self._roots_request is not None  # a change asks anew
        if self._roots_known:
            return []
        return [RootsListed(None), *self._release()]

    def _release(self) -> list[Action]:
        self._roots_known = True
        held, self._held = self._held, []
        self._held_weights.clear()
        for call in held:
            self._inflight[call.id] = _InFlight(call.id)
        return list(held)

    # -- output ----------------------------------------------------------------
    def call_result(self, call: ToolCall, envelope: dict[str, Any]) -> bytes | None:
        """The line to write for a finished call: its answer, or its
        batch's once that is complete; ``None`` if nothing goes out now (it
        was cancelled, or its batch waits for others)."""
        entry = self._inflight.pop(call.id, None)
        if entry is None:
            return None
        line: bytes | None = None
        if not entry.cancelled:
            try:
                line = call_result(call.id, envelope, self.version, call.name)
            except Exception:  # never expected; the call is still answered, once
                log.exception("the answer to a tool call could not be built")
                line = _wire.encode(internal_error(call.id))
        return self._settle(call.id, line)

    def dropped(self, request_id: RequestId) -> bytes | None:
        """A call taken off the queue before it ran (cancelled): never
        answered; the line to write, if that completes its batch."""
        self._inflight.pop(request_id, None)
        return self._settle(request_id, None)

    def refused(self, request_id: RequestId, code: int, message: str) -> bytes | None:
        """A call the server cannot take (its queue is full) answered with
        this error: the line to write (the batch's, for a member of one,
        once complete)."""
        self._inflight.pop(request_id, None)
        return self._settle(request_id, _wire.encode(_wire.error(request_id, code, message)))

    def abandon(self, request_id: RequestId) -> bytes | None:
        """A request whose handling failed, answered :func:`internal_error`
        and nothing else: the line to write."""
        self._inflight.pop(request_id, None)
        self._unhold(request_id)
        return self._settle(request_id, _wire.encode(internal_error(request_id)))

    def progress(self, call: ToolCall, done: float, total: float | None, message: str,
                 now: float) -> dict[str, Any] | None:
        """A progress notification for ``call``, or ``None``: no token, the
        call is over or cancelled, the value did not grow, or one was sent
        less than ``progress_interval`` seconds ago (rate limit)."""
        entry = self._inflight.get(call.id)
        if call.progress_token is None or entry is None or entry.cancelled:
            return None
        state = entry.progress
        final = total is not None and done >= total
        if done <= state.last or (now - state.sent_at < self._progress_interval and not final):
            return None
        state.last, state.sent_at = done, now
        params: dict[str, Any] = {"progressToken": call.progress_token, "progress": done}
        if total is not None:
            params["total"] = total
        if message:
            params["message"] = message
        return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}

    def log(self, level: str, logger: str, data: Any) -> dict[str, Any] | None:
        """A ``notifications/message`` if ``level`` is at or above the
        client's chosen level, else ``None``."""
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(self.log_level):
            return None
        return {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": level, "logger": logger, "data": data}}

    def tools_changed(self) -> dict[str, Any] | None:
        """``notifications/tools/list_changed`` (after the roots changed the
        descriptions), once the client is initialized."""
        if self.protocol_version is None:
            return None
        return {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


def is_own_request(request_id: Any) -> bool:
    """Whether ``request_id`` is one this server gave a request of its own
    (``roots/list``): a message with it is an answer, never answered back."""
    return isinstance(request_id, str) and request_id.startswith(_ROOTS_REQUEST_PREFIX)


def internal_error(request_id: RequestId) -> dict[str, Any]:
    """The answer to a request whose handling failed inside the server (the
    reason goes to the log, never to the client)."""
    return _wire.error(request_id, _wire.INTERNAL_ERROR,
                       "Internal error: the server could not handle this request")


# a root of a client's answer that names no directory corral can read (an
# entry without a text ``uri``, an answer without a list): a URI no path
# comes from, as an https:// one is, so it narrows rather than leaves the
# command line's roots open
_UNREADABLE_ROOT = ""


def _root_uris(result: Any) -> tuple[str, ...]:
    """The text URIs of a ``roots/list`` result (other entries left out);
    a result with roots none of which is readable, or with no list, is
    :data:`_UNREADABLE_ROOT` alone.  An empty list is the client's word
    that it names none."""
    roots = result.get("roots") if isinstance(result, dict) else None
    if not isinstance(roots, list):
        return (_UNREADABLE_ROOT,)
    uris = tuple(item["uri"] for item in roots
                 if isinstance(item, dict) and isinstance(item.get("uri"), str))
    return uris if uris or not roots else (_UNREADABLE_ROOT,)


def _is_answer(message: dict[str, Any]) -> bool:
    """Whether ``message`` answers a request (rather than asking or telling)."""
    return "method" not in message and "id" in message


def _batch_line(group: _Batch) -> bytes | None:
    """The batch's answers as one array line (``None``: nothing to answer,
    as when every member was a notification)."""
    if not group.answers:
        return None
    return b"[" + b",".join(group.answers) + b"]\n"
