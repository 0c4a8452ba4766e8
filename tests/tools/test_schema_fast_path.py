"""The argument checker's fast path agrees with the full check.

``check_arguments`` answers a flat, valid call from a checker made once per
schema and leaves everything else to the full check.  For every registered
tool's schema and arguments drawn near its edges (bounds, lengths, enums,
nulls, wrong types, unknown keys, non-ASCII text, NUL bytes), the fast path
either declines (``None``) or gives exactly what the full check gives, and a
call it declines is still answered (a result or a refusal) by the full check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.tools import Refusal, Toolbox
from corral.tools._runtime import schema as _schema

SPECS = {spec.name: spec for spec in Toolbox(Path(__file__).parent).specs()}
MAX_CHARS = 50


def edge_values(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    odd = st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() \
        | st.lists(st.integers(), max_size=2)
    if kind == "string":
        least = schema.get("minLength", 0)
        most = schema.get("maxLength", MAX_CHARS)
        sizes = sorted(n for n in {0, max(least - 1, 0), least, most, most + 1,
                                   MAX_CHARS, MAX_CHARS + 1} if n <= 5000)
        texts = st.sampled_from(sizes).flatmap(
            lambda n: st.text(alphabet=st.sampled_from("ab/.\x00é\udcff"), min_size=n,
                              max_size=n))
        choices = st.sampled_from(list(schema["enum"])) if "enum" in schema else st.nothing()
        return texts | choices | odd
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        edges = [v for b in (low, high) if b is not None for v in (b - 1, b, b + 1)]
        floats = st.sampled_from([float(v) for v in edges] or [1.0, 1.5])
        return (st.sampled_from(edges) if edges else st.integers()) | floats | odd
    return odd


def arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    props = schema.get("properties", {})
    fields = st.fixed_dictionaries({}, optional={key: edge_values(sub)
                                                 for key, sub in props.items()})
    return fields | fields.map(lambda a: {**a, "unknown": 1})


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_fast_path_declines_or_agrees(name):
    schema = SPECS[name].schema
    fast = _schema._fast_checker(schema)

    @settings(max_examples=300, deadline=None)
    @given(arguments(schema))
    def check(args):
        quick = fast(args, MAX_CHARS)
        try:
            full: Any = _schema._check_object(name, schema, args, "", MAX_CHARS)
        except Refusal as refusal:
            full = refusal
        if quick is not None:
            assert quick == full, (args, quick, full)
            assert list(quick) == list(full)  # the same order of fields, too
        answered = _schema.check_arguments(name, schema, args, max_chars=MAX_CHARS) \
            if not isinstance(full, Refusal) else None
        assert isinstance(full, Refusal) or answered == full

    check()


def test_a_valid_flat_call_takes_the_fast_path():
    """The common call is answered by the fast path (not only declined)."""
    schema = SPECS["read_file"].schema
    assert _schema._fast_checker(schema)({"path": "src/a.py"}, MAX_CHARS) == \
        {"path": "src/a.py", "offset": 1}
    assert _schema._fast_checker(schema) is _schema._fast_checker(schema)  # made once
