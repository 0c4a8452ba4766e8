"""What hosts speak: their tool formats, envelopes as the text they carry,
and tool schemas in the shape a host's validator takes.

Shared by every front end and integration (``corral tools``, the MCP
server, :mod:`corral.integrations`) and by :func:`corral.tools.tool_definitions`,
which lists the tools in each format:

* ``mcp``: ``name``, ``title``, ``description``, ``inputSchema``,
  ``outputSchema`` (when the tool declares one) and ``annotations``.
* ``openai``: a function-calling tool.  With ``strict=True`` the schema is
  converted to OpenAI's strict mode (:func:`strict_schema`): every property
  required, optional ones nullable, every object closed, only keywords
  strict mode accepts.  corral takes ``null`` back as "not given".
* ``openai-responses``: the same function in the Responses API's flat shape
  (``type``, ``name``, ``description``, ``parameters``, ``strict`` on one
  level); ``strict`` as for ``openai``, and always said, since the
  Responses API takes a missing ``strict`` as true.
* ``anthropic``: ``name``, ``description``, ``input_schema``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any, Literal

__all__ = ["FORMATS", "HostFormat", "strict_schema", "published_schema", "output_schema",
           "envelope_text", "envelope_json", "json_string"]

HostFormat = Literal["mcp", "openai", "openai-responses", "anthropic"]
FORMATS: tuple[HostFormat, ...] = ("mcp", "openai", "openai-responses", "anthropic")

# Schema keywords a model does not need to call a tool well (corral still
# checks them, with a typed refusal): left out of what hosts are given.
_UNPUBLISHED = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum",
                          "pattern"})
# ... and of output schemas, which describe the envelope to programs: its
# required fields and their types are the contract, the rest is commentary.
_UNPUBLISHED_OUTPUT = frozenset({"description", "minLength", "maxLength", "minItems", "maxItems",
                                 "minimum", "maximum", "pattern", "contentEncoding", "title"})

# A refusal, as MCP clients check structured content against the output
# schema even in an error result: every output schema also admits this.
REFUSAL_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"const": False}, "code": {"type": "string"},
                   "message": {"type": "string"}},
    "required": ["ok", "code", "message"],
}

# Keywords OpenAI's strict mode accepts.  Others are dropped from the strict
# export (corral still enforces them on the way back, with a typed refusal).
_STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "description", "anyOf", "$ref", "$defs", "title", "pattern", "format", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
})


# -- envelopes as text ---------------------------------------------------------

def envelope_text(envelope: Any) -> tuple[str, bool]:
    """``envelope`` as one line of JSON, and whether that is the plain form.

    Non-ASCII text stays as it is (it is what a model reads).  A lone
    surrogate, which is how Python spells a non-UTF-8 file name, cannot be
    written as UTF-8, so such an envelope is escaped to ASCII instead
    (``\\udcff``): still exact JSON, never a crash; the flag is then false.
    """
    text = compact_json(envelope)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(envelope, separators=(",", ":")), False
    return text, True



# a string at least this long is worth :func:`json_string`'s fast path
_LONG_STRING = 1024


# the bytes JSON writes as they are (printable ASCII but quote and
# backslash), and those it escapes that most text holds
_PLAIN_OR_USUAL = bytes(c for c in range(0x20, 0x80) if c not in b'"\\') + b'\n\t"\\'
_escape: Callable[[str], str] = getattr(json.encoder, "c_encode_basestring", None) \
    or json.encoder.py_encode_basestring


def json_string(text: str) -> str:
    """``text`` as a JSON string, exactly as ``json.dumps(text,
    ensure_ascii=False)`` writes it.  Long ASCII text whose only characters
    to escape are line feeds, tabs, quotes and backslashes (most source code
    and files) is escaped by replacing bytes, in a half to three quarters of
    the time the json module's escaper takes, which writes every other text."""
    raw = _usual_escaped(text)
    return f'"{raw.decode("ascii")}"' if raw is not None else _escape(text)


def json_utf8(text: str) -> bytes:
    """:func:`json_string` of ``text`` (which holds no lone surrogate) as
    UTF-8, for a line to be written: the fast path's bytes are not decoded
    into text only to be encoded again."""
    raw = _usual_escaped(text)
    return b'"%b"' % raw if raw is not None else _escape(text).encode("utf-8")


def _usual_escaped(text: str) -> bytes | None:
    """:func:`json_string`'s fast path: long ASCII ``text`` whose only
    characters to escape are line feeds, tabs, quotes and backslashes,
    escaped (without its quotes); ``None`` for other text."""
    if len(text) >= _LONG_STRING and text.isascii():
        raw = text.encode("ascii")
        if usual_only(raw):
            return escaped_usual(raw)
    return None


def usual_only(raw: bytes) -> bool:
    """Whether ASCII ``raw`` holds no character JSON escapes but line
    feeds, tabs, quotes and backslashes (one pass, in C)."""
    return not raw.translate(None, _PLAIN_OR_USUAL)


def escaped_usual(raw: bytes) -> bytes:
    """``raw`` (:func:`usual_only`) escaped as a JSON string's inside."""
    if b"\\" in raw:  # first: the escapes below add backslashes
        raw = raw.replace(b"\\", b"\\\\")
    if b'"' in raw:
        raw = raw.replace(b'"', b'\\"')
    raw = raw.replace(b"\n", b"\\n")
    if b"\t" in raw:
        raw = raw.replace(b"\t", b"\\t")
    return raw


def _compact_encoder() -> Callable[[Any], str]:
    """``json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
    check_circular=False).encode``, what every envelope is written with.
    Its C encoder is made once here (``encode`` makes one on each call:
    half the time it takes to write a small object).  No check for cycles (a quarter
    of the time of a listing's envelope): an envelope is a tree the tools
    build, and one that were not would end in RecursionError, an exception
    like any other to the caller."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the json module's C part
        return encoder.encode
    chunks = make(None, encoder.default, _escape, None, ":", ",", False, False, True)

    def compact(value: Any) -> str:
        return "".join(chunks(value, 0))
    return compact


#: a value as compact JSON, as the json module writes it (see _compact_encoder)
compact_json = _compact_encoder()


def envelope_json(envelope: Any) -> str:
    """``envelope`` as one line of JSON (see :func:`envelope_text`)."""
    return envelope_text(envelope)[0]


# -- schemas -------------------------------------------------------------------

def published_schema(schema: Any) -> Any:
    """A copy of ``schema`` as a model is given it: without corral's own
    ``x-`` keywords (hints to the argument checker) and without the bounds
    a model does not need to call well (the checker still enforces them),
    nor a flag's ``"default": false`` (what a flag left out means)."""
    return _without(schema, _UNPUBLISHED, flags_off=True)


def output_schema(schema: Any) -> dict[str, Any]:
    """The ``outputSchema`` MCP lists for a tool whose success envelope
    ``schema`` describes: its shape and types without commentary, or a
    refusal (which an error result's structured content carries)."""
    success = _required_only(_without(schema, _UNPUBLISHED_OUTPUT))
    out: dict[str, Any] = {"type": "object", "anyOf": [success, REFUSAL_OUTPUT]}
    if "$defs" in success:  # "#/$defs/..." names the document's root
        out["$defs"] = success.pop("$defs")
    return out


def _required_only(schema: Any) -> Any:
    """``schema`` with each object's required properties only (the others
    may come and go: they are for the tool's description to say), no
    ``additionalProperties: true`` (the default) and no ``type`` beside a
    ``const``."""
    if isinstance(schema, list):
        return [_required_only(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _required_only(value) for key, value in schema.items()
           if not (key == "additionalProperties" and value is True)
           and not (key == "type" and "const" in schema) and key not in ("properties", "$defs")}
    if "$defs" in schema:
        out["$defs"] = {name: _required_only(sub) for name, sub in schema["$defs"].items()}
    if "properties" in schema:
        required = set(schema.get("required", ()))
        out["properties"] = {name: _required_only(sub) for name, sub in schema["properties"].items()
                             if name in required}
        if not out["properties"]:
            del out["properties"]
    return out


def _without(schema: Any, dropped: frozenset[str], flags_off: bool = False) -> Any:
    """``schema`` without the keywords in ``dropped`` and ``x-`` ones (the
    names in a ``properties`` or ``$defs`` map are names, not keywords);
    ``flags_off`` also drops a boolean's ``"default": false``."""
    if isinstance(schema, list):
        return [_without(v, dropped, flags_off) for v in schema]
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    flag = flags_off and schema.get("type") == "boolean" and schema.get("default") is False
    for key, value in schema.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _without(sub, dropped, flags_off) for name, sub in value.items()}
        elif flag and key == "default":
            continue
        elif not (isinstance(key, str) and (key.startswith("x-") or key in dropped)):
            out[key] = _without(value, dropped, flags_off)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts ``null`` (an optional argument left out)."""
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    elif kind is None:
        return {"anyOf": [out, {"type": "null"}]}
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _with_default_said(schema: dict[str, Any]) -> dict[str, Any]:
    """Strict mode has no ``default``: say it in the description instead."""
    if "default" not in schema:
        return schema
    out = {k: v for k, v in schema.items() if k != "default"}
    if "default" in str(out.get("description", "")).lower():
        return out  # the description says it already
    said = f"Default: {json.dumps(schema['default'])}."
    out["description"] = f"{out['description']} {said}" if out.get("description") else said
    return out


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` in OpenAI's strict mode: every object closed with every
    property required, optional ones nullable (``null`` means "not given"),
    defaults moved into descriptions, keywords strict mode rejects dropped."""
    converted: dict[str, Any] = _strict(_without(schema, frozenset()))  # x- keywords only
    return converted


def _strict(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = _with_default_said(schema)
    out = {k: v for k, v in schema.items() if k in _STRICT_KEYWORDS}
    for key in ("items", "anyOf"):
        if key in out:
            out[key] = _strict(out[key])
    if "$defs" in out:
        out["$defs"] = {name: _strict(sub) for name, sub in out["$defs"].items()}
    if out.get("type") == "object" or "properties" in out:
        required = set(out.get("required", ()))
        props = {}
        for name, sub in out.get("properties", {}).items():
            converted = _strict(sub)
            props[name] = converted if name in required else _nullable(converted)
        out.update(type="object", properties=props, required=list(props),
                   additionalProperties=False)
    return out
