"""An independent red-team pass over arguments sent as JSON text: some
clients pass the model's text on as it is (an MCP ``arguments`` string, the
OpenAI Agents SDK's ``arguments`` when it is not an object,
``Toolbox.call(name, text)``), and the Toolbox reads it.  A text Python's
JSON reader cannot take though it is JSON (an integer of more than 4,300
digits, arrays nested past the recursion limit) must be a typed refusal
naming the arguments, never ``INTERNAL`` (a Python traceback in the log);
so must a notebook edit whose result is such JSON (it is JSON: never
called broken), and nothing is changed by a refused call.  Through
``Toolbox.call`` on every backend config, and through ``corral serve``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox

from ..e2e.helpers import RawClient, backend_env, serve_command
from ..helpers import BACKEND_CONFIGS, BACKEND_IDS

BIG = "9" * 5000  # past Python's 4,300-digit limit for reading an integer
DEEP = 5000       # past the recursion limit json.loads follows

TEXTS = {
    "huge_integer": '{"path": "a.txt", "offset": ' + BIG + "}",
    "huge_integer_in_an_extra_field": '{"path": "a.txt", "x": [' + BIG + "]}",
    "deep_top": "[" * DEEP + "]" * DEEP,
    "deep_object": '{"a": ' * DEEP + "1" + "}" * DEEP,
    "deep_field": '{"path": "a.txt", "x": ' + "[" * DEEP + "]" * DEEP + "}",
    "deep_and_cut_off": '{"path": "a.txt", "x": ' + "[" * DEEP,
}


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("hi\n")
    (root / "n.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4,
                                              "nbformat_minor": 5}, indent=1))
    return root


@pytest.mark.parametrize("text", list(TEXTS.values()), ids=list(TEXTS))
@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file", "grep"])
def test_arguments_text_python_cannot_read_is_refused_as_arguments(tmp_path, make_root, tool,
                                                                  text):
    root = _project(tmp_path)
    toolbox = Toolbox(make_root(str(root)))
    answer = toolbox.call(tool, text)
    assert answer["ok"] is False, answer
    assert answer["code"] == "INVALID_ARGUMENT", answer
    assert answer["details"].get("field") is not None, answer
    assert (root / "a.txt").read_text() == "hi\n"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "n.ipynb"]


@pytest.mark.parametrize("value", ["[" * DEEP + "]" * DEEP, BIG], ids=["deep", "huge_integer"])
def test_a_notebook_edited_into_json_python_cannot_read_is_answered(tmp_path, make_root, value):
    root = _project(tmp_path)
    toolbox = Toolbox(make_root(str(root)))
    answer = toolbox.call("edit_file", {"path": "n.ipynb", "oldText": '"metadata": {}',
                                        "newText": f'"metadata": {value}'})
    assert answer["ok"] is True, answer  # it is JSON; Python's reader is not the judge
    assert (root / "n.ipynb").read_text().count(value) == 1


@pytest.mark.parametrize("backend,fast", BACKEND_CONFIGS, ids=BACKEND_IDS)
def test_serve_answers_an_arguments_text_it_cannot_read(tmp_path, backend, fast):
    root = _project(tmp_path)
    client = RawClient(serve_command(root), env=backend_env(backend, fast))
    try:
        client.initialize()
        answers: list[dict[str, Any]] = []
        for text in TEXTS.values():
            answer = client.request("tools/call", {"name": "read_file", "arguments": text})
            answers.append(answer["result"])
        alive = client.request("tools/call", {"name": "read_file",
                                              "arguments": {"path": "a.txt"}})
    finally:
        client.close()
    assert [a["structuredContent"]["code"] for a in answers] == \
        ["INVALID_ARGUMENT"] * len(TEXTS), answers
    assert alive["result"]["isError"] is False
    assert b"Traceback" not in b"".join(client.stderr)
