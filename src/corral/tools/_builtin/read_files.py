"""read_files: several files in one call, each answered as read_file would.

Each path is read by read_file itself (same window, same refusals, naming
the item of 'paths' sent where read_file names its 'path', same
authorization request per file), in order; the answers go into ``files``
in the order the paths were given.  The call is bounded twice: at most
``Limits.read_files_paths`` paths, and at most ``Limits.read_files_bytes``
of content (text, or an image's base64 data) in all.  A file whose answer
would take the call past that budget is answered with a ``TOO_LARGE``
refusal (kind ``batch_budget``) that offers the read_file call returning it
(which has just succeeded); later files that still fit are returned.  Past
the call's deadline the remaining files are answered with the time_limit
refusal, unread; a cancelled call is cancelled as a whole.
"""

from __future__ import annotations

from typing import Any, TypedDict

from . import read_file
from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._refusals.catalogue import (Code, Kind, Refusal, cancelled, invalid_argument,
                                   root_closed, time_limit)
from .._runtime.registry import ToolSpec, success_schema
from .._runtime.request_types import ReadRequest

DESCRIPTION = (
    "Read several files (at most 50, about 1 MB in all) as read_file does, with one offset "
    "and limit; one that fails does not stop the others."
)

MAX_PATHS = 50  # the schema's bound; Limits.read_files_paths may lower it

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "paths": {"type": "array", "minItems": 1, "maxItems": MAX_PATHS,
                  "items": {"type": "string", "minLength": 1, "maxLength": 4096}},
        # read_file's own window, for every file
        "offset": read_file.SCHEMA["properties"]["offset"],
        "limit": read_file.SCHEMA["properties"]["limit"],
    },
    "required": ["paths"],
    "additionalProperties": False,
}


class ReadFilesResult(TypedDict):
    files: list[dict[str, Any]]  # read_file's envelope (or refusal) per path
    read: int
    refused: int
    bytes: int
    budget: int


def run(ctx: ToolContext, args: dict[str, Any]) -> ReadFilesResult:
    paths: list[str] = args["paths"]
    most = min(ctx.limits.read_files_paths, MAX_PATHS)
    if len(paths) > most:
        raise invalid_argument("read_files", "paths", f"has {len(paths)} items, over the limit "
                               f"of {most}", f"Pass at most {most} paths; read the rest in "
                               "another call.", limit=most)
    window = {"offset": args["offset"]}
    if args.get("limit") is not None:
        window["limit"] = args["limit"]
    budget = ctx.limits.read_files_bytes
    used = 0
    files: list[dict[str, Any]] = []
    for index, path in enumerate(paths):
        ctx.progress(index, len(paths), path)
        if ctx.past_deadline():
            files.append(time_limit("read_files", ctx.seconds).replace(
                hint="Read the files not yet answered in another call.",
                details={"path": path}).envelope())
            continue
        ctx.checkpoint()  # a cancelled call stops here, as a whole
        envelope = _as_sent(_read_one(ctx, {"path": path, **window}), f"paths[{index}]")
        cost = _cost(envelope)
        if used + cost > budget:
            envelope = _over_budget(envelope["path"], cost, budget, used, window).envelope()
        else:
            used += cost
        files.append(envelope)
    answered = sum(1 for item in files if item["ok"])
    return {"files": files, "read": answered, "refused": len(files) - answered, "bytes": used,
            "budget": budget}


def _read_one(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """read_file's envelope for ``args``, through the toolbox's boundary
    (``ctx.call``: the host asked, a suggested call tried).  A cancelled
    call is cancelled as a whole, one on a Root the host closed is refused
    as a whole, and a root that vanished fails the whole call
    (``INTERNAL``), not each file."""
    envelope = ctx.call("read_file", args)
    if envelope["ok"]:
        return envelope
    kind = envelope["details"].get("kind")
    if kind == Kind.CANCELLED.value:
        raise cancelled("read_files")
    if kind == Kind.ROOT_CLOSED.value:  # the host's mistake: the whole call's, as a cancel
        raise root_closed("read_files")
    if envelope["code"] == Code.INTERNAL.value:
        ctx.view.stat(".")  # raises RootVanishedError if the root is gone
    return envelope


_ARGUMENT = "'path'"  # read_file's argument as its sentences name it
_NOTED = "path was read as "  # how a note on a forgiven path begins


def _as_sent(envelope: dict[str, Any], item: str) -> dict[str, Any]:
    """read_file's answer for the path the model sent as ``item``
    (``paths[2]``).  read_file names its argument 'path', which read_files
    does not have: a model told "argument 'path' is an absolute path" has
    nothing to fix.  A refusal naming it (``details.field``, and the
    sentences that begin "argument 'path' ...", whose hints carry no path
    of the model's) and a note on how a forgiven path was read name
    ``item`` instead; a sentence naming a path the model sent keeps it
    as sent."""
    notes = envelope.get("pathNotes")
    if notes:
        envelope["pathNotes"] = [item + " was read as " + note[len(_NOTED):]
                                 if note.startswith(_NOTED) else note for note in notes]
    details = envelope.get("details")
    if envelope["ok"] or not isinstance(details, dict) or details.get("field") != "path":
        return envelope
    message, hint = envelope["message"], envelope["hint"]
    said = f"argument {_ARGUMENT} "
    if message.startswith(said):
        message = f"argument '{item}' " + message[len(said):]
        hint = hint.replace(_ARGUMENT, f"'{item}'")
    return {**envelope, "message": message, "hint": hint,
            "details": {**details, "field": item, "message": message}}


def _cost(envelope: dict[str, Any]) -> int:
    """Bytes of what an answer returns (text content or image data)."""
    text = envelope.get("content")
    if not isinstance(text, str):
        text = envelope.get("data")
    if not isinstance(text, str):
        return 0  # a refusal: a few hundred bytes at most
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _over_budget(path: str, cost: int, budget: int, used: int,
                 window: dict[str, Any]) -> Refusal:
    args = {"path": path, **{k: v for k, v in window.items() if k != "offset" or v != 1}}
    return Refusal(Code.TOO_LARGE, f"{_said(path)} was not returned: its {cost} bytes would take "
                   f"read_files past its budget of {budget} bytes for one call ({used} used by "
                   "the files before it)", "Read this file separately with read_file.",
                   details={"path": path, "bytes": cost, "budget": budget, "used": used},
                   kind=Kind.BATCH_BUDGET, suggested_tool="read_file", suggested_args=args)


_REFUSAL_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "const": False},
        "code": {"type": "string", "enum": [code.value for code in Code]},
        "message": {"type": "string"}, "hint": {"type": "string"},
        "details": {"type": "object", "properties": {"message": {"type": "string"}},
                    "required": ["message"]},
        "suggestedTool": {"type": "string"}, "suggestedArgs": {"type": "object"},
    },
    "required": ["ok", "code", "message", "details", "hint"],
}

OUTPUT_SCHEMA = success_schema({
    "files": {"type": "array", "description": "One answer per path, in order.",
              "items": {"anyOf": [read_file.TOOL.output_schema, _REFUSAL_OUTPUT]}},
    "read": {"type": "integer", "minimum": 0}, "refused": {"type": "integer", "minimum": 0},
    "bytes": {"type": "integer", "minimum": 0}, "budget": {"type": "integer", "minimum": 0},
}, ["files", "read", "refused", "bytes", "budget"])

TOOL = ToolSpec(name="read_files", title="Read several files", description=DESCRIPTION,
                schema=SCHEMA, output_schema=OUTPUT_SCHEMA, run=run, request=ReadRequest)
