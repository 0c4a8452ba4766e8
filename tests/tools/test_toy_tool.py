"""A tool is one module plus a registry entry (so adding one is cheap and
the contract is checked for it like for the built-in ones).

This module *is* a tool module: it defines ``TOOL``, a small mutating tool
(``touch_file`` creates an empty file).  The test adds this module's name to
the registry and nothing else, and shows the tool listed, schema-checked,
authorized (and hidden from a read-only toolbox), classified, bounded, and
exported in every host format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from .helpers.envelope import assert_valid_envelope

import corral.tools._runtime.registry as registry
from corral.hosts import output_schema, published_schema
from corral.tools import Denied, Request, ToolSpec, Toolbox
from corral.tools._policy.rules import Op
from corral.tools._runtime.context import ToolContext
from corral.tools._runtime.registry import Suggests, success_schema


@dataclass(frozen=True)
class TouchRequest(Request):
    operation = "touch"


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rel = ctx.rel(args["path"])
    ctx.checkpoint()
    with ctx.view.pin(rel, Op.CREATE) as target:  # the tool's one handle: the policed view
        ctx.view.ask(TouchRequest(target.path), target)
        target.write(b"", exclusive=True, expect=None)
    return {"path": rel, "created": True}


TOOL = ToolSpec(
    name="touch_file", title="Touch file",
    description="Create an empty file (refused if it exists).",
    schema={"type": "object",
            "properties": {"path": {"type": "string", "minLength": 1,
                                    "description": "The file to create."}},
            "required": ["path"], "additionalProperties": False},
    output_schema=success_schema({"path": {"type": "string"}, "created": {"type": "boolean"}},
                                 ["path", "created"]),
    run=run, request=TouchRequest, mutates=True, idempotent=False, destructive=False,
    suggests=Suggests(read_instead=True))


@pytest.fixture
def registered(monkeypatch):
    """The registry entry: this module's name added to TOOL_MODULES."""
    monkeypatch.setattr(registry, "TOOL_MODULES", (*registry.TOOL_MODULES, __name__))


def test_listed_with_its_spec(tmp_path, registered):
    toolbox = Toolbox(tmp_path)
    assert toolbox.names[-1] == "touch_file"
    assert toolbox.specs()[-1] is TOOL
    (definition,) = [d for d in toolbox.definitions() if d["name"] == "touch_file"]
    assert definition["title"] == "Touch file"
    # as a model is given them: no bounds it does not need, the refusal shape beside success
    assert definition["inputSchema"] == published_schema(TOOL.schema)
    assert definition["inputSchema"]["properties"]["path"] == {
        "type": "string", "description": "The file to create."}
    assert definition["outputSchema"] == output_schema(TOOL.output_schema)
    assert definition["annotations"] == {"title": "Touch file", "readOnlyHint": False,
                                         "destructiveHint": False, "idempotentHint": False,
                                         "openWorldHint": False}


def test_runs_and_answers_by_its_output_schema(tmp_path, registered):
    jsonschema = pytest.importorskip("jsonschema")
    result = Toolbox(tmp_path).call("touch_file", {"path": "new.txt"})
    assert result == {"ok": True, "path": "new.txt", "created": True}
    jsonschema.validate(result, TOOL.output_schema)
    assert (tmp_path / "new.txt").read_bytes() == b""


def test_schema_checked(tmp_path, registered):
    result = Toolbox(tmp_path).call("touch_file", {"path": 3})
    assert_valid_envelope(result)
    assert result["message"] == "touch_file: argument 'path' must be a string, not an integer"
    extra = Toolbox(tmp_path).call("touch_file", {"path": "a", "mode": 7})
    assert extra["details"]["kind"] == "argument" and extra["details"]["field"] == "mode"


def test_authorized_and_mutating_by_its_spec(tmp_path, registered):
    asked: list[Request] = []

    def authorize(request: Request) -> bool:
        asked.append(request)
        return request.path != "no.txt"

    toolbox = Toolbox(tmp_path, authorize=authorize)
    assert toolbox.call("touch_file", {"path": "yes.txt"})["ok"] is True
    refused = toolbox.call("touch_file", {"path": "no.txt"})
    assert (refused["code"], refused["details"]["kind"]) == ("DENIED", "host")
    assert [(r.operation, r.path, r.mutates) for r in asked] == [
        ("touch", "yes.txt", True), ("touch", "no.txt", True)]
    assert not (tmp_path / "no.txt").exists()

    def deny(request: Request) -> bool:
        raise Denied("no touching today")
    denied = Toolbox(tmp_path, authorize=deny).call("touch_file", {"path": "x.txt"})
    assert denied["message"] == "the host refused to touch x.txt: no touching today"

    read_only = Toolbox(tmp_path, read_only=True)
    assert "touch_file" not in read_only.names
    hidden = read_only.call("touch_file", {"path": "z.txt"})
    assert (hidden["code"], hidden["details"]["kind"]) == ("DENIED", "read_only")


def test_classified_at_the_boundary(tmp_path, registered):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "util.py").write_text("x = 1\n")
    toolbox = Toolbox(tmp_path)
    exists = toolbox.call("touch_file", {"path": "src/util.py"})
    assert (exists["code"], exists["details"]["kind"]) == ("ALREADY_EXISTS", "exists")
    missing = toolbox.call("touch_file", {"path": "scr/new.py"})
    assert_valid_envelope(missing)
    assert missing["code"] == "NOT_FOUND" and missing["details"]["missing"] == "scr"
    outside = toolbox.call("touch_file", {"path": "../x.txt"})
    assert outside["code"] == "OUTSIDE_ROOT"
    assert not (tmp_path.parent / "x.txt").exists()


def test_bounded_by_the_call_deadline(tmp_path, registered):
    result = Toolbox(tmp_path).call("touch_file", {"path": "late.txt"}, timeout=0)
    assert (result["code"], result["details"]["kind"]) == ("TOO_LARGE", "time_limit")
    assert not (tmp_path / "late.txt").exists()


def test_exported_in_every_host_format(tmp_path, registered):
    from corral.hosts import FORMATS
    from corral.tools import tool_definitions

    toolbox = Toolbox(tmp_path)
    for fmt in FORMATS:
        for strict in (False, True):
            exported = tool_definitions(toolbox, fmt, strict=strict)
            (mine,) = [d for d in exported if "touch_file" in json.dumps(d)]
            assert "Create an empty file" in json.dumps(mine), fmt
        assert "touch_file" in json.dumps(tool_definitions(None, fmt)), fmt  # the registry
        assert "touch_file" not in json.dumps(tool_definitions(None, fmt, read_only=True))
