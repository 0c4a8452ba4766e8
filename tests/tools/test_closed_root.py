"""A call on a Toolbox whose Root the host closed (the host's mistake: the
Toolbox borrows the Root, and the host closed it while the Toolbox was
still offered to a model) is refused by a typed refusal that says what the
host must do (``DENIED``, kind ``root_closed``), never ``INTERNAL``; for
every tool, on every backend config, and through ``corral serve``."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corral.mcp import StdioServer
from corral.tools import Toolbox, Workspace

PATCH = "*** Begin Patch\n*** Add File: added.txt\n+added\n*** End Patch\n"

# one call of each tool that succeeds on the tree below while the Root is open
CALLS: dict[str, dict[str, Any]] = {
    "read_file": {"path": "a.txt"},
    "read_files": {"paths": ["a.txt"]},
    "write_file": {"path": "new.txt", "content": "new\n"},
    "edit_file": {"path": "a.txt", "oldText": "alpha", "newText": "beta"},
    "list_directory": {"path": "."},
    "glob": {"pattern": "*.txt"},
    "grep": {"pattern": "alpha"},
    "move_file": {"source": "b.txt", "destination": "c.txt"},
    "delete_file": {"path": "b.txt"},
    "file_info": {"path": "a.txt"},
    "make_directory": {"path": "made"},
    "apply_patch": {"input": PATCH},
}


def _tree(base: Path) -> Path:
    base.mkdir()
    (base / "a.txt").write_text("alpha\n")
    (base / "b.txt").write_text("bravo\n")
    return base


def _closed_root_refusal(answer: dict[str, Any], tool: str) -> None:
    assert answer["ok"] is False, (tool, answer)
    assert answer["code"] == "DENIED", (tool, answer)
    assert answer["details"]["kind"] == "root_closed", (tool, answer)
    assert "closed" in answer["message"], (tool, answer)
    assert "host" in answer["message"], (tool, answer)


def test_every_tool_on_a_closed_root_answers_root_closed(
        make_root: Callable[..., Any], tmp_path: Path) -> None:
    base = _tree(tmp_path / "root")
    root = make_root(base)
    with Toolbox(root, tools=list(CALLS)) as box:
        assert sorted(box.names) == sorted(CALLS)  # every tool, a new one added here too
        assert box.call("read_file", {"path": "a.txt"})["ok"]  # open: it answers
        root.close()  # the host's mistake: the Toolbox borrowed it
        for tool, args in CALLS.items():
            _closed_root_refusal(box.call(tool, args), tool)
    # nothing was done on the tree
    assert sorted(os.listdir(base)) == ["a.txt", "b.txt"]
    assert (base / "a.txt").read_text() == "alpha\n"


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_corral_serve_answers_root_closed(make_root: Callable[..., Any], tmp_path: Path) -> None:
    base = _tree(tmp_path / "root")
    root = make_root(base)
    requests = tmp_path / "in.jsonl"
    lines = [_line({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "test", "version": "1"}}}),
             _line({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    tools = ["read_file", "write_file", "move_file"]
    for number, tool in enumerate(tools, start=1):
        lines.append(_line({"jsonrpc": "2.0", "id": number, "method": "tools/call",
                            "params": {"name": tool, "arguments": CALLS[tool]}}))
    requests.write_bytes(b"".join(lines))
    answers_path = tmp_path / "out.jsonl"
    with Toolbox(root) as box:
        server = StdioServer(Workspace({"root": box}), version="test", workers=1)
        root.close()
        out = os.open(answers_path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            with open(requests, "rb") as infile:
                server.serve(infile, out)
        finally:
            os.close(out)
            server.close()
    answers = {item["id"]: item for item in map(json.loads, answers_path.read_bytes().splitlines())
               if "id" in item}
    for number, tool in enumerate(tools, start=1):
        result = answers[number]["result"]
        assert result["isError"] is True, (tool, result)
        _closed_root_refusal(result["structuredContent"], tool)
        assert result["content"][0]["text"].startswith("DENIED: "), (tool, result)
