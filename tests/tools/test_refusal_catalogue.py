"""The refusal catalogue: every registered tool has cases, and
every case's *serialized* envelope is asserted - code, the sentence inside
details, the exact hint, the details given, and the suggested call, which
must then succeed exactly as offered."""

from __future__ import annotations

import json

import pytest

from .helpers.catalogue import load_cases, run_case
from .helpers.envelope import assert_valid_envelope

from corral.tools import Code, Kind, Refusal, Toolbox

CASES = load_cases()


def test_every_registered_tool_has_a_refusal_case(tmp_path):
    names = Toolbox(tmp_path).names
    assert names, "no tool is registered"
    covered = {case.tool for case in CASES}
    missing = [name for name in names if name not in covered]
    assert not missing, f"registered tools without a refusal case: {missing}"


def test_cases_name_registered_tools_and_are_unique(tmp_path):
    names = set(Toolbox(tmp_path).names)
    seen = set()
    for case in CASES:
        assert case.tool in names, f"{case.tool}:{case.name} is for a tool that is not registered"
        key = (case.tool, case.name)
        assert key not in seen, f"duplicate case {key}"
        seen.add(key)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.tool}:{c.name}" for c in CASES])
def test_refusal_case(case, tmp_path, make_root):
    envelope, toolbox = run_case(case, tmp_path, make_root)
    wire = json.loads(json.dumps(envelope))
    assert wire.get("ok") is False, f"expected a refusal, got {wire}"
    assert_valid_envelope(wire)
    assert wire["code"] == case.code, wire
    assert wire["message"] == case.message
    assert wire["details"]["message"] == case.message
    assert wire["hint"] == case.hint
    if case.exact:
        assert wire["details"] == {**case.details, "message": case.message}, wire["details"]
    for key, value in case.details.items():
        assert key in wire["details"], f"details lack {key!r}: {wire['details']}"
        assert wire["details"][key] == value, (key, wire["details"][key], value)
    if case.suggested_tool is not None:
        assert wire.get("suggestedTool") == case.suggested_tool, wire
        if case.suggested_args is not None:
            assert wire["suggestedArgs"] == case.suggested_args
        follow = toolbox.call(wire["suggestedTool"], wire["suggestedArgs"])
        assert follow["ok"] is True, follow


@pytest.mark.parametrize("case", CASES, ids=[f"{c.tool}:{c.name}" for c in CASES])
def test_refusal_says_nothing_of_the_host(case, tmp_path):
    """No refusal names the host path of the root or what lies outside it."""
    envelope, _ = run_case(case, tmp_path)
    text = json.dumps(envelope)
    assert str(tmp_path) not in text
    assert "outside secret" not in text


def test_every_catalogued_kind_is_in_the_vocabulary(tmp_path):
    """Every refusal the catalogue produces carries a details.kind from
    corral.tools.Kind (INTERNAL alone carries nothing but its sentence)."""
    kinds = {kind.value for kind in Kind}
    for index, case in enumerate(CASES):
        base = tmp_path / str(index)
        base.mkdir()
        envelope, _ = run_case(case, base)
        if envelope["code"] == "INTERNAL":
            continue
        kind = envelope["details"].get("kind")
        assert kind in kinds, f"{case.tool}:{case.name}: kind {kind!r} is not a Kind member"


def test_a_kind_outside_the_vocabulary_cannot_be_built():
    with pytest.raises(ValueError):
        Refusal(Code.DENIED, "no", "Do not.", details={"kind": "made_up"})
    refusal = Refusal(Code.DENIED, "no", "Do not.", kind=Kind.HOST)
    with pytest.raises(AttributeError):
        refusal.hint = "patched"  # type: ignore[misc]
    with pytest.raises(TypeError):
        refusal.details["kind"] = "other"  # type: ignore[index]
    changed = refusal.replace(hint="Do something else.", details={"extra": 1})
    assert (changed.hint, changed.details["extra"], changed.details["kind"]) == (
        "Do something else.", 1, "host")
    assert refusal.hint == "Do not." and "extra" not in refusal.details
