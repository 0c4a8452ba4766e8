"""The Toolbox boundary: definitions, unknown tools, argument limits, and the
classification boundary's default-deny."""

from __future__ import annotations

import json

import pytest

from .helpers.envelope import assert_valid_envelope

from corral.tools import Limits, Toolbox
from corral.tools._refusals.classify import Call
from corral.tools._runtime.refusing import refusal_for
from corral.tools._runtime.toolbox import PATH_CONTRACT


def _context(toolbox):
    return toolbox._state.context("read_file", seconds=30)


def test_definitions_are_strict_and_state_the_path_contract(tmp_path):
    toolbox = Toolbox(tmp_path)
    definitions = toolbox.definitions()
    assert [d["name"] for d in definitions] == toolbox.names
    for definition in definitions:
        assert PATH_CONTRACT in definition["description"]
        schema = definition["inputSchema"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        json.dumps(definition)
        assert not [k for k in _keys(schema) if k.startswith("x-")]  # checker hints stay ours
    definitions[0]["inputSchema"]["properties"].clear()  # a copy: the tool is unchanged
    assert toolbox.definitions()[0]["inputSchema"]["properties"]


def _keys(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def test_read_file_description_explains_its_output(tmp_path):
    """It explains what a model is shown (the rendering: the first, last and
    every tenth line, fewer in a long read, none in a short one, after its
    number and a tab, and a footer, where to go on); the envelope's fields
    are the output schema's to describe."""
    (definition,) = [d for d in Toolbox(tmp_path).definitions() if d["name"] == "read_file"]
    for word in ("first, last and every tenth line", "hundredth in a read of over 1000 lines",
                 "none under 10", "number and a tab", "as they are",
                 "footer", "the total", "go on at the last plus one", "sha256",
                 "expectedSha256", "never copy those into oldText"):
        assert word in definition["description"]


@pytest.mark.parametrize("name", [None, 5, "", "nope", "x" * 1000, ["read_file"], "READ_FILE"])
def test_unknown_tool(tmp_path, name):
    result = Toolbox(tmp_path).call(name, {"path": "."})
    assert_valid_envelope(result)
    assert result["code"] == "INVALID_ARGUMENT" and result["details"]["kind"] == "unknown_tool"
    assert "x" * 100 not in json.dumps(result)


def test_argument_size_backstop(tmp_path):
    toolbox = Toolbox(tmp_path, limits=Limits(max_argument_chars=100))
    result = toolbox.call("write_file", {"path": "a.txt", "content": "x" * 101})
    assert result["code"] == "INVALID_ARGUMENT"
    assert result["message"] == "write_file: argument 'content' is 101 characters, over the limit of 100"
    assert not (tmp_path / "a.txt").exists()


def test_lone_surrogate_is_refused_naming_the_field(tmp_path):
    result = Toolbox(tmp_path).call("write_file", {"path": "a.txt", "content": "\ud800"})
    assert result["code"] == "INVALID_ARGUMENT" and result["details"]["field"] == "content"


def test_none_arguments_mean_an_empty_object(tmp_path):
    result = Toolbox(tmp_path).call("list_directory", None)
    assert result["ok"] is True and result["path"] == "."


def test_unclassified_errors_are_internal_and_scrubbed(tmp_path):
    ctx = _context(Toolbox(tmp_path))
    host = str(tmp_path / "private")
    for exc in (RuntimeError(host), OSError(5, "Input/output error", host),
                OSError(5, "Input/output error", "src/a.py"), KeyError(host), MemoryError()):
        refusal = refusal_for(exc, Call("read_file", {"path": "src/a.py"}), ctx)
        envelope = refusal.envelope()
        assert envelope["code"] == "INTERNAL" and set(envelope["details"]) == {"message"}
        text = json.dumps(envelope)
        assert host not in text and "src/a.py" not in text and "Input/output" not in text


@pytest.mark.parametrize("name", ["a" * 40, "d/" * 150 + "f"])
def test_a_path_known_clean_is_still_held_to_each_toolboxs_limit(tmp_path, name):
    """Clean paths are remembered across calls and toolboxes (a model names
    the same few again and again): each toolbox still holds every path to
    its own limit, however often another took it."""
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text("x\n")
    with Toolbox(tmp_path) as roomy, \
            Toolbox(tmp_path, limits=Limits(max_path_bytes=16)) as strict:
        for _ in range(2):
            assert assert_valid_envelope(roomy.call("read_file", {"path": name}))["ok"] is True
            refused = assert_valid_envelope(strict.call("read_file", {"path": name}))
            assert refused["code"] == "INVALID_ARGUMENT", refused
            assert refused["details"]["kind"] == "path_too_long", refused
            assert refused["details"]["limit"] == 16
