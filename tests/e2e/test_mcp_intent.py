"""The answers that keep a model from writing what it did not mean, and
that name the file it meant, through the MCP server in-process (one case
per class, read from the structured content)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox, Workspace
from .helpers import PipedServer


@pytest.fixture
def piped(tmp_path: Path):
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "f.py").write_text("def f():\n    if x:\n        return 1\n")
    (root / "src" / "util.py").write_text("u = 1\n")
    (root / "app" / "[id]").mkdir(parents=True)
    (root / "app" / "[id]" / "page.tsx").write_text("p\n")
    (root / "a.py").write_text("caf\u00e9 = 1\n")
    with Toolbox(root) as box:
        server = PipedServer(Workspace({"root": box}))
        server.request(0, "initialize", protocolVersion="2025-11-25", capabilities={})
        try:
            yield server, root
        finally:
            server.close()


def _call(server: PipedServer, name: str, arguments: Any, ident: int = 1) -> dict[str, Any]:
    answer = server.request(ident, "tools/call", name=name, arguments=arguments)["result"]
    envelope = answer["structuredContent"]
    assert envelope["ok"] is not answer.get("isError", False)
    if not envelope["ok"]:  # the text says the refusal's sentence and hint too
        assert envelope["message"] in answer["content"][0]["text"]
    return envelope


def test_indentation_is_never_applied_twice(piped):
    server, root = piped
    result = _call(server, "edit_file", {"path": "src/f.py", "oldText": "if x:\n    return 1",
                                         "newText": "    if x:\n        return 2"})
    assert result["ok"] is True
    assert (root / "src" / "f.py").read_text() == "def f():\n    if x:\n        return 2\n"


def test_a_name_with_a_newline_is_refused_with_the_name_meant(piped):
    server, root = piped
    refusal = _call(server, "write_file", {"path": "src/new.py\n", "content": "x = 1\n"})
    assert refusal["code"] == "INVALID_ARGUMENT"
    assert refusal["suggestedArgs"] == {"path": "src/new.py", "content": "x = 1\n"}
    assert not any(p.name.startswith("new.py") for p in (root / "src").iterdir())


def test_a_cut_off_write_says_so(piped):
    server, _ = piped
    refusal = _call(server, "write_file", {"path": "src/big.py"})
    assert refusal["details"]["kind"] == "cut_off"


def test_claude_codes_argument_names_are_read(piped):
    server, root = piped
    result = _call(server, "edit_file", {"file_path": "src/util.py", "old_string": "u = 1",
                                         "new_string": "u = 2"})
    assert result["ok"] is True and result["argumentNotes"]
    assert (root / "src" / "util.py").read_text() == "u = 2\n"


def test_a_path_without_its_leading_folder_is_offered(piped):
    server, _ = piped
    refusal = _call(server, "read_file", {"path": "util.py"})
    assert refusal["details"]["didYouMean"] == ["src/util.py"]
    assert refusal["suggestedArgs"] == {"path": "src/util.py"}


def test_a_normal_form_miss_is_named(piped):
    server, _ = piped
    refusal = _call(server, "edit_file", {"path": "a.py", "oldText": "cafe\u0301 = 1",
                                          "newText": "x"})
    assert refusal["details"]["differences"][0]["kind"] == "normalization"


def test_a_route_folder_is_globbed_literally(piped):
    server, _ = piped
    result = _call(server, "glob", {"pattern": "app/[id]/page.tsx"})
    assert result["paths"] == ["app/[id]/page.tsx"] and result["literal"] is True
