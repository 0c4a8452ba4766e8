"""JSON-RPC 2.0 framing for MCP's stdio transport, free of I/O.

One message is one line of UTF-8 JSON.  :func:`decode` turns a line into a
:class:`Request`, :class:`Notification`, :class:`Response` or
:class:`Invalid` (the error answer to send, with the request's id whenever
it can be known), or a :class:`Batch` of those (a JSON array; whether the
session takes one is the session's to say); it never raises for anything a
client can send.
:func:`encode` turns a message into one line, always valid UTF-8.

Lone surrogates: ``"\\udcff"`` is valid JSON syntax but not Unicode text.
A request that carries one in its params is answered ``-32602`` (with its
id, and a pointer to the string), one that carries one in its method or id
``-32600``.  Raw bytes that are not UTF-8 count the same (they are decoded
with ``surrogateescape`` so the id can still be read).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR",
    "RequestId", "Request", "Notification", "Response", "Invalid", "Batch", "Message",
    "Incoming",
    "decode", "encode", "error", "result", "oversized", "id_of_oversized", "request_id",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = int | str

# A backslash-u escape of a surrogate (D800-DFFF): only lines containing one
# need the (slower) check of every string.  A pair that is really one
# character also matches; the check then finds nothing.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any]
    size: int = field(default=0, compare=False)  # bytes of its line: what its params cost


class Notification(NamedTuple):
    method: str
    params: dict[str, Any]


class Response(NamedTuple):
    """An answer from the client to a request this server sent."""

    id: RequestId
    result: Any
    error: dict[str, Any] | None


class Invalid(NamedTuple):
    """A line that is not a valid message: ``reply`` is the error to send,
    or ``None`` when nothing may be answered (a broken notification or
    response, which JSON-RPC says to ignore)."""

    reply: dict[str, Any] | None
    reason: str


Message = Request | Notification | Response | Invalid


class Batch(NamedTuple):
    """A JSON-RPC batch: a non-empty array on one line, each member decoded
    as a line of its own would be (one that is not an object is
    :class:`Invalid`; an array inside is not a batch again).  Each member's
    ``size`` is the whole line's (what its params may cost, at most)."""

    members: tuple[Message, ...]


Incoming = Message | Batch


def error(request_id: RequestId | None, code: int, message: str,
          data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def result(request_id: RequestId, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def request_id(value: Any) -> RequestId | None:
    """``value`` if it can be a request's id, else ``None``.  The one check
    of every id the client sends (a message's ``id``, the ``requestId`` of
    a cancel, a ``progressToken``): MCP ids are strings or integers (never
    null, bool, a fraction, an array or an object), so what passes here is
    hashable and can be echoed back as it came."""
    if isinstance(value, str):
        return None if _has_surrogate(value) else value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _has_surrogate(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _surrogate_at(value: Any, where: str) -> str | None:
    """Where in ``value`` the first string with a lone surrogate is (a
    dotted path such as ``params.arguments.path``), or ``None``."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return at
        elif isinstance(item, dict):
            for key, sub in item.items():
                if _has_surrogate(key):
                    return f"{at} (a key)"
                stack.append((sub, f"{at}.{key}"))
        elif isinstance(item, list):
            stack.extend((sub, f"{at}[{i}]") for i, sub in enumerate(item))
    return None


def decode(line: bytes | bytearray) -> Incoming:
    """One line (without its newline) as a message.  A ``bytearray`` (how
    the server holds a large line) is emptied once it is decoded to text,
    so its bytes are not held while the text is parsed."""
    size = len(line)
    try:
        text = line.decode("utf-8")
        suspicious = _SURROGATE_ESCAPE.search(line) is not None
    except UnicodeDecodeError:
        text = line.decode("utf-8", "surrogateescape")
        suspicious = True
    if isinstance(line, bytearray):
        line.clear()
    text = text.removeprefix("\ufeff")  # a UTF-8 byte order mark (Windows clients)
    try:
        message = _parse(text)
    except (ValueError, RecursionError) as exc:
        return Invalid(error(_leading_id(text), PARSE_ERROR, "Parse error: the line is not JSON",
                             {"reason": str(exc)[:200]}), "parse error")
    if isinstance(message, list):
        if not message:
            return Invalid(error(None, INVALID_REQUEST,
                                 "Invalid Request: the message is an empty batch (array)"),
                           "empty batch")
        return Batch(tuple(_member(item, suspicious, size) for item in message))
    return _member(message, suspicious, size)


# the json module's own scanner, called as json.loads calls it (one value,
# and nothing after it) without the two whitespace matches and three frames
# around it: a message is an object with no space before or after it
_scan: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]


def _parse(text: str) -> Any:
    """``json.loads(text)``: the same value, or the same exception."""
    if text[-1:] == "}":
        try:
            value, end = _scan(text, 0)
        except StopIteration:  # (json.loads says why: a JSONDecodeError)
            pass
        else:
            if end == len(text):
                return value
    return json.loads(text)


def _member(message: Any, suspicious: bool, size: int) -> Message:
    if not isinstance(message, dict):
        return Invalid(error(None, INVALID_REQUEST,
                             "Invalid Request: the message is not a JSON object"),
                       "not an object")
    return _classify(message, suspicious, size)


def _leading_id(text: str) -> RequestId | None:
    """The id of a whole object at the start of a line that goes on with
    something else (``{...}\\r{...}``, ``{...}\\x00``): the error names it."""
    try:
        first, _ = json.JSONDecoder().raw_decode(text.lstrip())
    except (ValueError, RecursionError):
        return None
    return request_id(first.get("id")) if isinstance(first, dict) else None


def _classify(message: dict[str, Any], suspicious: bool, size: int) -> Message:
    has_id = "id" in message
    raw_id = message.get("id")
    known_id = request_id(raw_id) if has_id else None
    if "method" not in message:  # an answer to the server: never answered back
        return _response(message, known_id)
    if message.get("jsonrpc") != "2.0":
        return _invalid(known_id, has_id, 'Invalid Request: "jsonrpc" must be "2.0"')
    method = message["method"]
    if not isinstance(method, str) or _has_surrogate(method):
        return _invalid(known_id, has_id, 'Invalid Request: "method" must be a string')
    if has_id and known_id is None:
        return _invalid(None, True, 'Invalid Request: "id" must be a string or an integer')
    params = message.get("params", {})
    if not isinstance(params, dict):
        return _invalid(known_id, has_id, 'Invalid params: "params" must be an object',
                        code=INVALID_PARAMS)
    if suspicious:
        where = _surrogate_at(params, "params")
        if where is not None:
            return _invalid(known_id, has_id,
                            f"Invalid params: {where} holds a lone surrogate, which is not "
                            "Unicode text", code=INVALID_PARAMS, data={"field": where})
    if known_id is None:
        return Notification(method, params)
    return Request(known_id, method, params, size)


def _response(message: dict[str, Any], known_id: RequestId | None) -> Message:
    if not ({"id", "result", "error"} & message.keys()):  # {}: no answer can be without an id
        return Invalid(error(None, INVALID_REQUEST, 'Invalid Request: no "method" (nor the '
                             '"id" and "result" or "error" of an answer)'),
                       "neither request nor answer")
    if message.get("jsonrpc") != "2.0" or known_id is None \
            or ("result" in message) == ("error" in message):
        return Invalid(None, "a response that is not valid")
    err = message.get("error")
    if "error" in message and not isinstance(err, dict):
        return Invalid(None, "a response whose error is not an object")
    return Response(known_id, message.get("result"), err)


def _invalid(known_id: RequestId | None, has_id: bool, message: str, *,
             code: int = INVALID_REQUEST, data: Any = None) -> Invalid:
    # A notification (no id) is never answered, even when broken.
    if not has_id:
        return Invalid(None, message)
    return Invalid(error(known_id, code, message, data), message)


# -- lines over the cap ----------------------------------------------------

_ID_VALUE = rb'(-?\d{1,18}|"[^"\\\x00-\x1f]{0,200}")'
_SIMPLE_MEMBER = rb'\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]{0,200}"\s*'
# the id among the top-level members before the (large) params...
_HEAD_ID = re.compile(rb'\A\s*\{(?:' + _SIMPLE_MEMBER + rb',)*\s*"id"\s*:\s*' + _ID_VALUE)
# ...or after it: only simple members may follow it, then the final brace
_TAIL_ID = re.compile(rb'(?<!\\)"id"\s*:\s*' + _ID_VALUE + rb'\s*(?:,' + _SIMPLE_MEMBER
                      + rb')*\}\s*\Z')


def id_of_oversized(head: bytes, tail: bytes) -> RequestId | None:
    """The id of a line too long to parse, read from its first and last
    bytes when it sits among the simple top-level members; else ``None``."""
    for pattern, chunk in ((_HEAD_ID, head), (_TAIL_ID, tail)):
        found = pattern.search(chunk)
        if found:
            value = request_id(json.loads(found.group(1)))
            if value is not None:
                return value
    return None


def oversized(request_id: RequestId | None, size: int, limit: int) -> dict[str, Any]:
    return error(request_id, INVALID_REQUEST,
                 f"Invalid Request: the message is over {limit} bytes, the server's line limit",
                 {"limit": limit, "size": size})


# -- output ----------------------------------------------------------------

def encode(message: dict[str, Any]) -> bytes:
    """``message`` as one line of UTF-8 JSON with its newline.  Strings
    that are not Unicode text (lone surrogates) are spelled as their escape
    (:func:`scrub`), so the line is always valid UTF-8 and every client's
    parser accepts it."""
    text = _compact(message)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return _compact(scrub(message)).encode("utf-8") + b"\n"


# built once (json.dumps with options builds one per call); messages are
# trees this module and the session build, so no check for cycles
_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                            check_circular=False).encode


def scrub(value: Any) -> Any:
    """``value`` with every lone surrogate written as its escape (the six
    characters ``\\udcff``), as the envelope's JSON text shows it."""
    if isinstance(value, str):
        if not _has_surrogate(value):
            return value
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value
