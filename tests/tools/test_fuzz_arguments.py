"""Whatever a model sends, ``Toolbox.call`` returns a valid envelope, and
malformed input is never ``INTERNAL``.

Two sources of input for every registered tool: arbitrary JSON (as the
arguments, and as the tool name), and arguments generated from the tool's
own schema (well-typed, so they reach the filesystem code), with paths drawn
from names that exist in the tree, climb out of it, or are odd.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers.envelope import assert_valid_envelope

from corral.tools import Toolbox

NAMES = Toolbox(Path(__file__).parent).names

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12),
                                                                        children, max_size=4),
    max_leaves=20)

COMPONENTS = ["src", "src/a.py", "a.py", "docs", "dir", "link", "out", "pipe", "hard", "..", ".",
              "", "~", "é", "e\u0301", "A.PY", "x" * 300, "new", "a b", "\\", ".env", "*", "**"]
PATHS = st.one_of(
    st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=5).map("/".join),
    st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=3).map(lambda p: "/" + "/".join(p)),
    st.text(max_size=40),
)
PATH_FIELDS = {"path", "source", "destination"}


def from_schema(schema: dict[str, Any], name: str = "") -> st.SearchStrategy[Any]:
    """Values fitting ``schema`` (the subset the tools use), a few off-type."""
    kind = schema.get("type")
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    if kind == "string":
        if name in PATH_FIELDS:
            return PATHS
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True) | st.text(max_size=70)
        return st.text(min_size=schema.get("minLength", 0), max_size=40)
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum")) \
            | st.integers()
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {})), min_size=schema.get("minItems", 0),
                        max_size=min(schema.get("maxItems", 4), 4))
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {k: from_schema(v, k) for k, v in props.items() if k in required},
            optional={k: from_schema(v, k) for k, v in props.items() if k not in required})
    return JSON


def schema_calls() -> st.SearchStrategy[tuple[str, Any]]:
    schemas = {d["name"]: d["inputSchema"] for d in Toolbox(Path(__file__).parent).definitions()}
    return st.one_of([st.tuples(st.just(name), from_schema(schema))
                      for name, schema in schemas.items()])


def make_tree(base: Path) -> Path:
    root = base / "root"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "a.py").write_text("def f():\n    return 1\n")
    (root / "docs" / "index.md").write_text("# docs\r\nmore\r\n")
    (root / ".env").write_text("KEY=1\n")
    (root / "bin.dat").write_bytes(b"\x00\x01\x02")
    (root / "latin.txt").write_bytes(b"caf\xe9\n")
    os.symlink("src", root / "link")
    os.symlink("../outside", root / "out")
    os.mkfifo(root / "pipe")
    os.link(root / "src" / "a.py", root / "hard")
    (base / "outside").mkdir()
    (base / "outside" / "secret.txt").write_text("outside secret\n")
    return root


def run(name: Any, args: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as base:
        with Toolbox(make_tree(Path(base)), deny=[".env"]) as toolbox:
            result = toolbox.call(name, args)
            assert "outside secret" not in str(result)
            assert base not in str(result)
            return assert_valid_envelope(result)


SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(name=st.sampled_from(NAMES), args=JSON)
def test_arbitrary_json_arguments(name, args):
    result = run(name, args)
    assert result.get("code") != "INTERNAL", result


@SETTINGS
@given(name=JSON, args=JSON)
def test_arbitrary_json_tool_name(name, args):
    result = run(name, args)
    assert result.get("code") != "INTERNAL", result


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(call=schema_calls())
def test_arguments_from_each_tools_schema(call):
    name, args = call
    result = run(name, args)
    assert result.get("code") != "INTERNAL", (name, args, result)
