"""Strict checking of a model's arguments against a tool's JSON Schema.

The schemas are ours and use a small subset (object, string, integer,
boolean, array, enum, bounds), so this checks exactly that subset rather than
pulling a general validator into the core.  Every failure is an
``INVALID_ARGUMENT`` refusal naming the field, the expected type and what was
sent; nothing a model can send makes it raise anything else.

An optional argument given as ``null`` counts as not given (OpenAI's strict
function calling and openai-agents send ``null`` for every optional
argument the model leaves out).
"""

from __future__ import annotations

import difflib
import json
import re
from functools import lru_cache
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from .._refusals.catalogue import Code, Kind, Refusal, invalid_argument

__all__ = ["check_arguments", "cut_off", "MAX_INTEGER"]

# The largest integer argument taken, either way: JSON's safe integers (what
# every client can send exactly); far past any line number, count or size.
MAX_INTEGER = 2**53 - 1
_DIGITS = re.compile(r"[+-]?[0-9]{1,16}")

_JSON_TYPES = {"string": "a string", "integer": "an integer", "boolean": "true or false",
               "object": "an object", "array": "an array", "number": "a number"}


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


_invalid = invalid_argument  # ``wrong`` completes the sentence; facts may carry a "problem"


def check_arguments(tool: str, schema: Mapping[str, Any], args: Any, *,
                    max_chars: int | None = None,
                    notes: list[str] | None = None) -> dict[str, Any]:
    """Return ``args`` with defaults filled in, or raise a :class:`Refusal`.

    ``max_chars`` caps every string that has no ``maxLength`` of its own.
    Other tools' well-known names for an argument are read as ours, each
    with a sentence in ``notes`` (see :data:`ALIASES`)."""
    if args is None:
        args = {}
    if isinstance(args, str):
        args = _arguments_text(tool, args, notes)
    if not isinstance(args, dict):
        raise Refusal(Code.INVALID_ARGUMENT,
                      f"{tool}: the arguments must be a JSON object, not {_kind_of(args)}",
                      "Pass the arguments as an object of named fields.",
                      details={"field": ""}, kind=Kind.ARGUMENT)
    fast = _fast_checker(schema)(args, max_chars)
    if fast is not None:
        return fast
    args = _dialect(tool, schema, args, notes)
    _cut_off(tool, schema, args)
    return _check_object(tool, schema, args, "", max_chars)


def fast_checker(schema: Mapping[str, Any]) -> Callable[[dict[str, Any], int | None],
                                                          dict[str, Any] | None]:
    """:func:`check_arguments` of a call whose arguments are a dict, for the
    calls the fast path below answers (``None`` for the rest: then
    :func:`check_arguments` answers them).  Made once per schema: a caller
    keeps it beside the schema."""
    return _fast_checker(schema)


# -- other tools' dialects, calls cut off -------------------------------------------
#
# Anthropic's text editor tool (command, path, old_str, new_str, file_text),
# Claude Code's (file_path, old_string, new_string, replace_all), and
# snake_case spellings of ours: read as our names when ours is not given too.

ALIASES: dict[str, tuple[str, ...]] = {
    "path": ("file_path", "filePath", "filepath", "target_file", "file", "filename",
             "dir_path", "directory", "absolute_path"),
    "oldText": ("old_str", "old_string", "oldString", "old_text", "search"),
    "newText": ("new_str", "new_string", "newString", "new_text", "replace"),
    "content": ("file_text", "contents", "file_content", "fileContent", "text"),
}
# Anthropic's text editor names the operation; these are edit_file's and write_file's
_COMMANDS = {"edit_file": ("str_replace",), "write_file": ("create",), "read_file": ("view",)}
_COMMAND_TOOLS = {"str_replace": "edit_file", "create": "write_file", "view": "read_file",
                  "insert": "edit_file"}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _dialect(tool: str, schema: Mapping[str, Any], args: dict[str, Any],
             notes: list[str] | None) -> dict[str, Any]:
    """``args`` with other tools' names for our arguments read as ours."""
    props: Mapping[str, Any] = schema.get("properties", {})
    read: list[str] = []
    globs = args.get("include")
    if props.get("include", {}).get("type") == "string" and isinstance(globs, list) and globs \
            and all(isinstance(g, str) and g and not any(c in g for c in "{},") for g in globs):
        # a list of globs: the one glob that matches any of them
        args = {**args, "include": globs[0] if len(globs) == 1 else "{" + ",".join(globs) + "}"}
        read.append(f"'include' as {args['include']!r} (one glob for the list)")
    unknown = [k for k in args if isinstance(k, str) and k not in props]
    if not unknown:
        if read and notes is not None:
            notes.append(f"{tool} read {', '.join(read)}; next time pass one glob")
        return args
    out = dict(args)
    for key in unknown:
        ours = next((name for name, others in ALIASES.items() if key in others), None)
        if ours is None and "_" in key:
            ours = _camel(key)
        if ours is None or ours not in props or out.get(ours) is not None:
            continue
        out[ours] = out.pop(key)
        read.append(f"'{key}' as '{ours}'")
    command = out.get("command")
    if "command" not in props and isinstance(command, str):
        if command in _COMMANDS.get(tool, ()):
            del out["command"]
            read.append(f"command '{command}' as this tool")
        else:
            meant = _COMMAND_TOOLS.get(command)
            hint = (f"Call {meant} for '{command}' (no 'command' argument)." if meant
                    else "Leave out 'command': each operation is its own tool.")
            raise _invalid(tool, "command", f"'{command}' is not an operation of this tool",
                           hint, kind=Kind.ARGUMENT)
    if read and notes is not None:
        notes.append(f"{tool} read {', '.join(read)} (another tool's names); "
                     f"next time use this tool's names")
    return out


def _arguments_text(tool: str, text: str, notes: list[str] | None) -> Any:
    """Arguments sent as a JSON text (some clients pass the model's text on):
    read when it is a JSON object; a text cut off is said to be."""
    try:
        value = json.loads(text)
    except RecursionError:  # JSON nested deeper than the reader follows
        raise Refusal(Code.INVALID_ARGUMENT, f"{tool}: the arguments are nested too deeply to "
                      "read as JSON", "Pass the arguments as one flat JSON object, as the "
                      "tool's schema shows.", details={"field": ""}, kind=Kind.ARGUMENT) from None
    except json.JSONDecodeError as exc:
        if not text.lstrip().startswith("{"):
            return text
        if exc.msg.startswith("Unterminated") or exc.pos >= len(text.rstrip()) - 1:
            raise cut_off(tool, f"the arguments are JSON that stops before its end (at "
                          f"character {len(text)}, inside an unfinished value)",
                          {"field": ""}) from None
        raise Refusal(Code.INVALID_ARGUMENT, f"{tool}: the arguments are not valid JSON "
                      f"({exc.msg} at character {exc.pos})",
                      "Pass the arguments as a JSON object.", details={"field": ""},
                      kind=Kind.ARGUMENT) from None
    except ValueError:  # JSON all the same: an integer longer than the reader converts
        raise Refusal(Code.INVALID_ARGUMENT, f"{tool}: the arguments hold a number too long to "
                      "read", "Pass numbers of at most a few digits, as the tool's schema shows.",
                      details={"field": ""}, kind=Kind.ARGUMENT) from None
    if isinstance(value, dict) and notes is not None:
        notes.append(f"{tool} read its arguments from a JSON text; pass them as an object")
    return value


def cut_off(tool: str, what: str, facts: dict[str, Any]) -> Refusal:
    split = ("Write a large file in parts: write_file with the first part, then edit_file "
             "calls that each add the next part after the last lines written.")
    return Refusal(Code.INVALID_ARGUMENT,
                   f"{tool}: {what}; this is how a call looks when the answer ran out of "
                   "output before the call was complete, so nothing was done",
                   split if tool in ("write_file", "edit_file") else
                   "Send the call again, complete and smaller.",
                   details=facts, kind=Kind.CUT_OFF)


def _cut_off(tool: str, schema: Mapping[str, Any], args: dict[str, Any]) -> None:
    """A call whose text to write is missing, where what comes before it in
    the call is there: cut off, not forgotten."""
    required = schema.get("required", ())
    if tool == "write_file" and "content" in required and args.get("content") is None \
            and isinstance(args.get("path"), str):
        raise cut_off(tool, "argument 'content' is missing", {"field": "content",
                                                                      "path": args["path"]})


# -- the fast path: a checker made once per schema -------------------------------
#
# A model's call is almost always valid and flat (strings, integers, booleans).
# For such a schema a checker made once answers those calls with a few tests
# per field, or ``None`` for anything else: then the full check above runs,
# which gives the same result for a valid call and the refusal for the rest.

_FastCheck = Callable[[dict[str, Any], "int | None"], "dict[str, Any] | None"]
_FieldCheck = Callable[[Any, "int | None"], bool]
_fast: dict[int, tuple[Mapping[str, Any], _FastCheck]] = {}
_Shape = tuple[dict[str, Any], tuple[_FieldCheck, ...]]


def _fast_checker(schema: Mapping[str, Any]) -> _FastCheck:
    found = _fast.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    check = _make_fast(schema)
    if len(_fast) < 256:  # the registry's schemas, and a host's few own
        _fast[id(schema)] = (schema, check)  # the schema is kept: its id stays its own
    return check


def _make_fast(schema: Mapping[str, Any]) -> _FastCheck:
    props: Mapping[str, Any] = schema.get("properties", {})
    required = frozenset(schema.get("required", ()))
    fields: list[tuple[str, _FieldCheck | None, bool, Any]] = []
    for key, sub in props.items():
        fields.append((key, _field_check(sub), "default" in sub, sub.get("default")))
    tests = {key: test for key, test, _, _ in fields}
    defaults = {key: default for key, _, has_default, default in fields if has_default}
    # each shape of call seen (its keys, in the order sent): the answer's
    # layout (the fields sent or defaulted, in the schema's order, each with
    # its default: the answer is a copy with the values sent put in their
    # places) and each key's test, in the call's order; ``None`` for a shape
    # left to the full check (a key that is no argument, or one this path
    # does not test; a required one missing)
    shapes: dict[tuple[str, ...], _Shape | None] = {}

    def shape_of(keys: tuple[str, ...]) -> _Shape | None:
        key_tests = tuple(tests.get(key) for key in keys)
        if not required.issubset(keys):
            return None
        checks = tuple(test for test in key_tests if test is not None)
        if len(checks) < len(keys):
            return None
        layout = {key: defaults.get(key) for key in props if key in keys or key in defaults}
        return layout, checks

    def check(args: dict[str, Any], max_chars: int | None) -> dict[str, Any] | None:
        keys = tuple(args)
        shape = shapes.get(keys)
        if shape is None:
            if keys in shapes:
                return None
            shape = shape_of(keys)
            if len(shapes) < 64:  # a few shapes per tool; a model sending more pays for them
                shapes[keys] = shape
            if shape is None:
                return None
        layout, checks = shape
        for test, value in zip(checks, args.values()):
            if not test(value, max_chars):
                # a null counts as not sent: the field by field check says what it means
                return check_each(args, max_chars) if value is None else None
        out = layout.copy()
        out.update(args)
        return out

    def check_each(args: dict[str, Any], max_chars: int | None) -> dict[str, Any] | None:
        out: dict[str, Any] = {}
        for key, test, has_default, default in fields:
            value = args.get(key)
            if value is None:
                if key in required:
                    return None
                if has_default:
                    out[key] = default
                continue
            if test is None or not test(value, max_chars):
                return None
            out[key] = value
        return out
    return check


def _field_check(schema: Mapping[str, Any]) -> _FieldCheck | None:
    """A test that ``value`` is valid for ``schema`` (False means "let the
    full check say"), or ``None`` for a schema the fast path leaves alone."""
    kind = schema.get("type")
    choices = schema.get("enum")
    if kind == "string" and "pattern" not in schema:
        least, most = schema.get("minLength", 0), schema.get("maxLength")
        nul_ok = bool(schema.get("x-allowNul", False))
        if most is not None and choices is None and not nul_ok:  # the commonest string
            def bounded(value: Any, max_chars: int | None) -> bool:
                return (type(value) is str and least <= len(value) <= most
                        and "\x00" not in value and (value.isascii() or _encodes(value)))
            return bounded

        if most is None and not least and nul_ok and choices is None:  # a file's content
            def text(value: Any, max_chars: int | None) -> bool:
                return (type(value) is str and (max_chars is None or len(value) <= max_chars)
                        and (value.isascii() or _encodes(value)))
            return text

        def string(value: Any, max_chars: int | None) -> bool:
            limit = most if most is not None else max_chars
            return (type(value) is str and len(value) >= least
                    and (limit is None or len(value) <= limit)
                    and (nul_ok or "\x00" not in value)
                    and (value.isascii() or _encodes(value))
                    and (choices is None or value in choices))
        return string
    if kind == "integer" and choices is None:
        low, high = schema.get("minimum"), schema.get("maximum")

        def integer(value: Any, max_chars: int | None) -> bool:
            return (type(value) is int and -MAX_INTEGER <= value <= MAX_INTEGER
                    and (low is None or value >= low) and (high is None or value <= high))
        return integer
    if kind == "boolean" and choices is None:
        return lambda value, max_chars: type(value) is bool
    return None


def _encodes(text: str) -> bool:
    """Whether ``text`` is valid Unicode (no lone surrogate): what the full
    check asks of a string that is not ASCII."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_object(tool: str, schema: Mapping[str, Any], value: dict[str, Any],
                  prefix: str, max_chars: int | None = None) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    unknown = [prefix + str(key)[:64] for key in value
               if not isinstance(key, str) or key not in props]
    if unknown:
        raise _unknown(tool, unknown, props, prefix, value)
    out: dict[str, Any] = {}
    required = schema.get("required", ())
    for key, sub in props.items():
        if value.get(key) is None and (key not in value or key not in required):
            if key in required:
                field = prefix + key
                raise _invalid(tool, field, "is required", f"Pass '{field}' ({_describe(sub)}).")
            if "default" in sub:
                out[key] = sub["default"]
            continue
        out[key] = _check_value(tool, sub, value[key], prefix + key, max_chars)
    return out


def _unknown(tool: str, unknown: list[str], props: Mapping[str, Any], prefix: str,
             value: dict[Any, Any]) -> Refusal:
    """Every unknown argument at once, each with the name probably meant."""
    allowed = ", ".join(sorted(props)) or "none"
    meant: dict[str, str] = {}
    for name in unknown[:32]:
        bare = name[len(prefix):]
        close = difflib.get_close_matches(bare, list(props), n=1, cutoff=0.7) or \
            [p for p in props if p.lower() == bare.lower().replace("_", "")]
        if close and close[0] not in value:
            meant[name] = prefix + close[0]
    facts: dict[str, Any] = {"allowed": sorted(props)}
    if meant:
        facts["didYouMean"] = meant
    fixes = ", ".join(f"'{meant[n]}' for '{n}'" for n in unknown if n in meant)
    others = "" if len(meant) == len(unknown) else ", and remove the others"
    suggestion: dict[str, Any] = {}
    targets = list(meant.values())
    if not prefix and len(meant) == len(unknown) and len(set(targets)) == len(targets) and \
            not any(t in value for t in targets):
        renamed = {meant.get(str(k), str(k)): v for k, v in value.items()}
        suggestion = {"suggested_tool": tool, "suggested_args": renamed}
    if len(unknown) == 1:
        name = unknown[0]
        hint = (f"Use {fixes}; the arguments are: {allowed}." if fixes else
                f"Remove '{name}'; the arguments are: {allowed}.")
        refusal = _invalid(tool, name, "is not an argument of this tool", hint, **facts)
        return refusal.replace(suggest=(tool, suggestion["suggested_args"])) if suggestion \
            else refusal
    names = ", ".join(f"'{n}'" for n in unknown[:32])
    hint = (f"Use {fixes}{others}; the arguments are: {allowed}." if fixes
            else f"Remove them; the arguments are: {allowed}.")
    return Refusal(Code.INVALID_ARGUMENT,
                   f"{tool}: arguments {names} are not arguments of this tool", hint,
                   details={"field": unknown[0], "unknown": unknown[:32], **facts},
                   kind=Kind.ARGUMENT, **suggestion)


def _describe(schema: Mapping[str, Any]) -> str:
    return _JSON_TYPES.get(schema.get("type", ""), "a value")


# one test per JSON type (bool is an int in Python, but not in JSON)
_TYPE_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, (list, tuple)),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class _Where(NamedTuple):
    """The call and field a value belongs to (for the refusal's sentence)."""

    tool: str
    field: str
    max_chars: int | None


def _check_value(tool: str, schema: Mapping[str, Any], value: Any, field: str,
                 max_chars: int | None = None) -> Any:
    expected: str = schema.get("type", "")
    check = _TYPE_CHECKS.get(expected)
    ok = True if check is None else check(value)
    if expected == "integer" and isinstance(value, float) and value.is_integer():
        value, ok = int(value), True  # JSON has one number type; 3.0 is 3
    elif expected == "integer" and isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        value, ok = int(value), True  # "3": a model quoted a number; its meaning is plain
    if not ok:
        raise _invalid(tool, field, f"must be {_JSON_TYPES.get(expected, expected)}, "
                                    f"not {_kind_of(value)}",
                       f"Pass '{field}' as {_JSON_TYPES.get(expected, expected)}.",
                       expected=expected)
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(repr(c) for c in schema["enum"])
        raise _invalid(tool, field, f"must be one of {choices}", f"Pass one of {choices}.",
                       allowed=list(schema["enum"]))
    by_type = _BY_TYPE.get(expected)
    return value if by_type is None else by_type(_Where(tool, field, max_chars), schema, value)


def _check_string(at: _Where, schema: Mapping[str, Any], value: str) -> str:
    tool, field = at.tool, at.field
    least = schema.get("minLength", 0)
    if len(value) < least:
        if not value or least == 1:
            raise _invalid(tool, field, "must not be empty", f"Pass a non-empty '{field}'.")
        raise _invalid(tool, field, f"is {len(value)} characters, fewer than {least}",
                       f"Pass at least {least} characters in '{field}'.", minLength=least,
                       length=len(value))
    limit = schema.get("maxLength", at.max_chars)
    if limit is not None and len(value) > limit:
        raise _invalid(tool, field, f"is {len(value)} characters, over the limit of {limit}",
                       f"Pass a shorter '{field}'.", limit=limit, length=len(value))
    if "\x00" in value and not schema.get("x-allowNul", False):
        raise _invalid(tool, field, "contains a NUL byte",
                       f"Remove the NUL character from '{field}'.", problem="nul")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _invalid(tool, field, "is not valid Unicode text (it has a lone surrogate)",
                           f"Pass '{field}' as valid UTF-8 text.", problem="encoding") from None
    pattern = schema.get("pattern")
    if pattern is not None and not _compiled(pattern).search(value):
        # "x-format" says in words what the pattern wants, for the model
        wanted = schema.get("x-format", f"text matching {pattern}")
        raise _invalid(tool, field, f"must be {wanted}", f"Pass '{field}' as {wanted}.",
                       pattern=pattern)
    return value


def _check_integer(at: _Where, schema: Mapping[str, Any], value: int) -> int:
    if abs(value) > MAX_INTEGER:  # 1e308, 10**40: no count or line number is that large
        raise _invalid(at.tool, at.field, f"is too large (at most {MAX_INTEGER} either way)",
                       f"Pass a smaller '{at.field}'.", maximum=MAX_INTEGER)
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and value < low:
        raise _invalid(at.tool, at.field, f"must be at least {low}",
                       f"Pass '{at.field}' >= {low}.", minimum=low)
    if high is not None and value > high:
        raise _invalid(at.tool, at.field, f"must be at most {high}",
                       f"Pass '{at.field}' <= {high}.", maximum=high)
    return value


def _check_array(at: _Where, schema: Mapping[str, Any], value: Any) -> list[Any]:
    tool, field = at.tool, at.field
    items = list(value)
    if len(items) < schema.get("minItems", 0):
        raise _invalid(tool, field, f"needs at least {schema['minItems']} item(s)",
                       f"Pass at least {schema['minItems']} item(s) in '{field}'.")
    limit = schema.get("maxItems")
    if limit is not None and len(items) > limit:
        raise _invalid(tool, field, f"has {len(items)} items, over the limit of {limit}",
                       f"Pass at most {limit} items in '{field}'.", limit=limit)
    item_schema = schema.get("items", {})
    return [_check_value(tool, item_schema, item, f"{field}[{i}]", at.max_chars)
            for i, item in enumerate(items)]


def _check_nested(at: _Where, schema: Mapping[str, Any], value: dict[str, Any]
                  ) -> dict[str, Any]:
    return _check_object(at.tool, schema, value, at.field + ".", at.max_chars)


_BY_TYPE: dict[str, Callable[[_Where, Mapping[str, Any], Any], Any]] = {
    "string": _check_string, "integer": _check_integer, "array": _check_array,
    "object": _check_nested,
}
