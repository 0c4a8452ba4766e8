"""apply_patch over MCP and the command line: ``corral serve --apply-patch ROOT`` lists it in place
of the tools that change files and applies a patch end to end over stdio;
without the flag it is not listed, yet a call to it is answered (every
Toolbox answers it).  Refusals arrive as the contract's envelope and change
nothing on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox, tool_definitions
from ..helpers import tree_snapshot
from .helpers import PipedServer, RawClient, envelope_of, run_cli, serve_command

CHANGERS = {"write_file", "edit_file", "move_file", "delete_file", "make_directory"}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("import os\n\n\ndef main():\n    return 1\n")
    (root / "notes.txt").write_text("one\ntwo\n")
    (root / ".env").write_text("KEY=1\n")
    return root


def _patch(*sections: str) -> str:
    return "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"


def _call(client: RawClient, name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    result = client.request("tools/call", {"name": name, "arguments": arguments})["result"]
    return bool(result.get("isError")), envelope_of(result, name)


def test_serve_with_the_flag_lists_apply_patch_and_applies_it(make_raw, tree: Path) -> None:
    client = make_raw(serve_command(tree, "--apply-patch"))
    client.initialize()
    listed = client.request("tools/list")["result"]["tools"]
    names = [tool["name"] for tool in listed]
    assert "apply_patch" in names and not CHANGERS & set(names)
    assert {"read_file", "grep", "glob"} <= set(names)
    with Toolbox(tree, editing="apply_patch") as box:
        assert listed == tool_definitions(box, "mcp")  # as `corral tools --apply-patch` prints
    is_error, out = _call(client, "apply_patch", {"input": _patch(
        "*** Update File: src/app.py\n@@ def main():\n-    return 1\n+    return 2\n",
        "*** Add File: docs/new.md\n+# New\n",
        "*** Update File: notes.txt\n*** Move to: docs/notes.txt\n@@\n one\n-two\n+2\n")})
    assert not is_error and out["ok"] is True, out
    assert [(f["path"], f["action"]) for f in out["files"]] == [
        ("src/app.py", "updated"), ("docs/new.md", "added"), ("notes.txt", "moved")]
    assert (tree / "src/app.py").read_text().endswith("    return 2\n")
    assert (tree / "docs/new.md").read_text() == "# New\n"
    assert (tree / "docs/notes.txt").read_text() == "one\n2\n"
    assert not (tree / "notes.txt").exists()


def test_serve_refusals_over_stdio_change_nothing(make_raw, tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("a\n")
    os.symlink(outside, tree / "out")
    client = make_raw(serve_command(tree, "--apply-patch"))
    client.initialize()
    before, outside_before = tree_snapshot(tree), tree_snapshot(outside)
    for section, code in [
        ("*** Update File: ../outside/secret.txt\n@@\n-a\n+b\n", "OUTSIDE_ROOT"),
        ("*** Update File: out/secret.txt\n@@\n-a\n+b\n", "OUTSIDE_ROOT"),
        ("*** Update File: notes.txt\n*** Move to: ../moved.txt\n@@\n-one\n+1\n",
         "OUTSIDE_ROOT"),
        ("*** Update File: .env\n@@\n-KEY=1\n+KEY=2\n", "DENIED"),
        ("*** Add File: notes.txt\n+over\n", "ALREADY_EXISTS"),
        ("*** Add File: fine.txt\n+x\n*** Update File: notes.txt\n@@\n-three\n+3\n",
         "NOT_FOUND"),
    ]:
        is_error, out = _call(client, "apply_patch", {"input": _patch(section)})
        assert is_error and out["ok"] is False and out["code"] == code, (section, out)
        assert out["message"] and out["hint"]
    assert tree_snapshot(tree) == before and tree_snapshot(outside) == outside_before


def test_serve_without_the_flag_does_not_list_it_but_answers_it(make_raw, tree: Path) -> None:
    client = make_raw(serve_command(tree))
    client.initialize()
    names = [tool["name"] for tool in client.request("tools/list")["result"]["tools"]]
    assert "apply_patch" not in names and "edit_file" in names
    is_error, out = _call(client, "apply_patch", {"input": _patch(
        "*** Update File: notes.txt\n@@\n-two\n+TWO\n")})
    assert not is_error and out["ok"] is True, out
    assert (tree / "notes.txt").read_text() == "one\nTWO\n"


def test_in_process_a_read_only_server_refuses_it(tree: Path) -> None:
    from corral.tools import Workspace

    with Toolbox(tree, read_only=True) as box:
        piped = PipedServer(Workspace({"root": box}))
        try:
            piped.request(0, "initialize", protocolVersion="2025-11-25", capabilities={})
            answer = piped.request(1, "tools/call", name="apply_patch", arguments={
                "input": _patch("*** Add File: x.txt\n+x\n")})
        finally:
            piped.close()
    envelope = envelope_of(answer["result"], "apply_patch")
    assert envelope["ok"] is False and envelope["code"] == "DENIED"
    assert envelope["details"]["kind"] == "read_only"
    assert not (tree / "x.txt").exists()


def test_corral_tools_lists_it_with_the_flag_only() -> None:
    with_flag = run_cli("tools", "--apply-patch", "--format", "mcp")
    without = run_cli("tools", "--format", "mcp")
    assert with_flag.returncode == 0 and without.returncode == 0, with_flag.stderr
    listed = [tool["name"] for tool in json.loads(with_flag.stdout)]
    assert "apply_patch" in listed and not CHANGERS & set(listed)
    assert "apply_patch" not in [tool["name"] for tool in json.loads(without.stdout)]


def test_corral_call_answers_it_with_or_without_the_flag(tree: Path) -> None:
    patch = _patch("*** Update File: notes.txt\n@@\n-two\n+TWO\n")
    done = run_cli("call", str(tree), "apply_patch", json.dumps({"input": patch}))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"][0]["action"] == "updated"
    assert (tree / "notes.txt").read_text() == "one\nTWO\n"
    again = run_cli("call", "--apply-patch", str(tree), "apply_patch",
                    json.dumps({"input": patch}))
    assert again.returncode == 1 and json.loads(again.stdout)["code"] == "NOT_FOUND"
    refused = run_cli("call", "--read-only", str(tree), "apply_patch",
                      json.dumps({"input": _patch("*** Delete File: notes.txt\n")}))
    assert refused.returncode == 1 and json.loads(refused.stdout)["code"] == "DENIED"
    assert (tree / "notes.txt").read_text() == "one\nTWO\n"
