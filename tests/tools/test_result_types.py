"""Each tool's output schema says what its result type says.

A tool's ``run`` is annotated with the TypedDict of its success fields (a
union of them when a tool answers in more than one shape); its
``output_schema`` is written for hosts, with descriptions and bounds.  The
two are compared here field by field: the same names, the same required
ones, and the same JSON type for each (a ``Literal`` the same values as the
schema's ``enum`` or ``const``; nested TypedDicts and lists all the way
down), so neither can change without the other.
"""

from __future__ import annotations

import importlib
import types
import typing
from collections.abc import Mapping
from typing import (Any, Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints,
                    is_typeddict)

import pytest

from corral.tools import TOOL_NAMES
from corral.tools._runtime.registry import load_tools

SPECS = load_tools()
SCALARS = {str: "string", bool: "boolean", int: "integer", float: "number"}


def _result_type(name: str) -> Any:
    run = SPECS[name].run
    module = importlib.import_module(run.__module__)
    return get_type_hints(run, vars(module), include_extras=False)["return"]


def _alternatives(kind: Any) -> list[Any]:
    if get_origin(kind) in (Union, types.UnionType):
        return list(get_args(kind))
    return [kind]


def _resolve(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    assert ref.startswith("#/$defs/"), ref
    return root["$defs"][ref.removeprefix("#/$defs/")]


def _mismatches(kind: Any, node: Mapping[str, Any], root: Mapping[str, Any], where: str,
                seen: set[tuple[int, int]]) -> list[str]:
    """Where the annotation ``kind`` and the schema ``node`` disagree."""
    node = _resolve(node, root)
    if (id(kind), id(node)) in seen:  # a recursive type met again
        return []
    seen = seen | {(id(kind), id(node))}
    if kind is Any:
        return [f"{where}: typed Any"]
    if is_typeddict(kind):
        return _object_mismatches(kind, node, root, where, seen)
    origin, args = get_origin(kind), get_args(kind)
    if origin is Literal:
        allowed = node.get("enum", [node["const"]] if "const" in node else None)
        if allowed is None:  # the schema says only the type: each value must be of it
            wrong = [value for value in args if SCALARS.get(type(value)) != node.get("type")]
            return [f"{where}: Literal{wrong} but the schema says {node.get('type')}"] if wrong \
                else []
        if sorted(map(repr, args)) != sorted(map(repr, allowed)):
            return [f"{where}: Literal{list(args)} but the schema allows {allowed}"]
        return []
    if origin is list:
        if node.get("type") != "array":
            return [f"{where}: a list but the schema says {node.get('type')}"]
        items = node.get("items")
        return [] if items is None else _mismatches(args[0], items, root, f"{where}[]", seen)
    if origin is dict or kind is dict:  # an object whose fields are not typed here
        shapes = [_resolve(option, root) for option in node.get("anyOf", [node])]
        if all(shape.get("type") == "object" for shape in shapes):
            return []
        return [f"{where}: a dict but the schema says {node}"]
    if kind in SCALARS:
        if node.get("type") != SCALARS[kind]:
            return [f"{where}: {kind.__name__} but the schema says {node.get('type')}"]
        return []
    if origin in (Union, types.UnionType) and "anyOf" in node:
        options = node["anyOf"]
        if len(options) != len(args):
            return [f"{where}: {len(args)} alternatives, the schema {len(options)}"]
        return [m for arg, option in zip(args, options)
                for m in _mismatches(arg, option, root, where, seen)]
    return [f"{where}: cannot compare {kind!r}"]


def _object_mismatches(kind: Any, node: Mapping[str, Any], root: Mapping[str, Any], where: str,
                       seen: set[tuple[int, int]]) -> list[str]:
    if node.get("type") != "object":
        return [f"{where}: a {kind.__name__} but the schema says {node.get('type')}"]
    extras = get_type_hints(kind, vars(importlib.import_module(kind.__module__)),
                            include_extras=True)
    hints = {key: _bare(hint) for key, hint in extras.items()}
    # read here, not from __required_keys__: with postponed annotations the
    # class cannot tell NotRequired apart when it is made
    required_keys = {key for key, hint in extras.items() if get_origin(hint) is not NotRequired}
    properties = {k: v for k, v in node.get("properties", {}).items() if k != "ok"}
    required = set(node.get("required", ())) - {"ok"}
    out = []
    if set(hints) != set(properties):
        out.append(f"{where}: {kind.__name__} has {sorted(set(hints) - set(properties))} "
                   f"more and {sorted(set(properties) - set(hints))} fewer than the schema")
    if required_keys != required:
        out.append(f"{where}: {kind.__name__} requires {sorted(required_keys)}, "
                   f"the schema {sorted(required)}")
    for key in sorted(set(hints) & set(properties)):
        out.extend(_mismatches(hints[key], properties[key], root, f"{where}.{key}", seen))
    return out


def _bare(hint: Any) -> Any:
    return get_args(hint)[0] if get_origin(hint) in (NotRequired, Required) else hint


def _top_level(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(schema["anyOf"]) if "anyOf" in schema else [schema]


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_the_output_schema_is_the_result_type(name):
    spec = SPECS[name]
    kinds = _alternatives(_result_type(name))
    shapes = _top_level(spec.output_schema)
    assert all(is_typeddict(kind) for kind in kinds), kinds
    assert len(kinds) == len(shapes)
    problems = [m for kind, shape in zip(kinds, shapes)
                for m in _mismatches(kind, shape, spec.output_schema, name, set())]
    assert problems == []


def test_the_comparison_catches_a_difference():
    class Answer(typing.TypedDict):
        path: str
        size: int

    schema = {"type": "object", "properties": {"path": {"type": "string"},
                                               "size": {"type": "string"}},
              "required": ["path"]}
    assert _mismatches(Answer, schema, schema, "answer", set()) == [
        "answer: Answer requires ['path', 'size'], the schema ['path']",
        "answer.size: int but the schema says string"]
