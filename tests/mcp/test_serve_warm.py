"""``corral serve`` answers ``initialize`` before it imports the tools'
modules: its toolboxes are made with ``defer_tools`` and the server's
``warm`` work loads them once that answer is written, before the next
message is handled (or before a first message that is not ``initialize``).
A deferred toolbox answers exactly as an eager one, loading itself at its
first call or listing if nothing loaded it before."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corral.mcp import StdioServer
from corral.tools import Toolbox, Workspace

_INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "1"}}}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _ids(data: bytes) -> list[Any]:
    return [json.loads(line).get("id") for line in data.splitlines()]


def _serve(tmp_path: Path, box: Toolbox, messages: list[dict[str, Any]],
           warm: Callable[[Path], None]) -> list[dict[str, Any]]:
    """Serve ``messages`` (one line each) to ``box``; ``warm`` gets the
    answers file (as written so far); the answers, in order."""
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(b"".join(_line(m) for m in messages))
    answers = tmp_path / "out.jsonl"
    server = StdioServer(Workspace({"root": box}), version="test", workers=1,
                         warm=lambda: warm(answers))
    out = os.open(answers, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with open(requests, "rb") as infile:
            server.serve(infile, out)
    finally:
        os.close(out)
        server.close()
    return [json.loads(line) for line in answers.read_bytes().splitlines()]


def _project(tmp_path: Path) -> Path:
    (tmp_path / "root" / "src").mkdir(parents=True)
    (tmp_path / "root" / "src" / "app.py").write_text("".join(f"v{i} = {i}\n" for i in range(30)))
    return tmp_path / "root"


def test_warm_runs_once_the_initialize_answer_is_written(
        make_root: Callable[..., Any], tmp_path: Path) -> None:
    written_before: list[list[Any]] = []
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    read = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "src/app.py"}}}
    with Toolbox(make_root(_project(tmp_path)), defer_tools=True) as box:
        answers = _serve(tmp_path, box, [_INITIALIZE, ping, read],
                         lambda out: (written_before.append(_ids(out.read_bytes())),
                                      box.load_tools()))
    assert written_before == [[0]]  # once: after the initialize answer, before the ping's
    assert [a["id"] for a in answers] == [0, 1, 2]
    assert answers[2]["result"]["structuredContent"]["totalLines"] == 30


def test_warm_runs_before_a_first_message_that_is_not_initialize(
        make_root: Callable[..., Any], tmp_path: Path) -> None:
    written_before: list[list[Any]] = []
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with Toolbox(make_root(_project(tmp_path)), defer_tools=True) as box:
        answers = _serve(tmp_path, box, [listing, _INITIALIZE],
                         lambda out: (written_before.append(_ids(out.read_bytes())),
                                      box.load_tools()))
        with Toolbox(box.root) as eager:
            names = eager.names
    assert written_before == [[]]
    assert [tool["name"] for tool in answers[0]["result"]["tools"]] == names
    assert answers[1]["id"] == 0 and "result" in answers[1]


def test_a_warm_that_fails_leaves_the_loading_to_the_first_call(
        make_root: Callable[..., Any], tmp_path: Path) -> None:
    def fails(out: Path) -> None:
        raise RuntimeError("warm failed")

    read = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "src/app.py"}}}
    with Toolbox(make_root(_project(tmp_path)), defer_tools=True) as box:
        answers = _serve(tmp_path, box, [_INITIALIZE, read], fails)
    (answer,) = [a for a in answers if a.get("id") == 1]  # (the failure is also logged)
    assert answer["result"]["structuredContent"]["totalLines"] == 30


def test_a_deferred_toolbox_answers_as_an_eager_one(
        make_root: Callable[..., Any], tmp_path: Path) -> None:
    root = make_root(_project(tmp_path))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "src/app.py", "offset": 3, "limit": 4}),
        ("no_such_tool", {}),
        ("write_file", {"path": "new.txt", "content": "x\n"}),
        ("list_directory", {"path": "."}),
    ]
    for read_only in (False, True):
        for editing in ("corral", "apply_patch"):
            eager = Toolbox(root, read_only=read_only, editing=editing)
            for first in range(len(calls)):  # each call once the first a deferred box hears
                deferred = Toolbox(root, read_only=read_only, editing=editing,
                                   defer_tools=True)
                order = calls[first:] + calls[:first]
                got = [deferred.call(name, dict(args)) for name, args in order]
                (tmp_path / "root" / "new.txt").unlink(missing_ok=True)
                want = [eager.call(name, dict(args)) for name, args in order]
                (tmp_path / "root" / "new.txt").unlink(missing_ok=True)
                assert got == want, (read_only, editing, first)
            listed = Toolbox(root, read_only=read_only, editing=editing, defer_tools=True)
            assert listed.names == eager.names
            assert listed.definitions() == eager.definitions()
            assert Toolbox(root, read_only=read_only, editing=editing,
                           defer_tools=True).spec("read_file") is eager.spec("read_file")


_CLI_SERVE = """
import json, sys
import corral.mcp
seen = {}
def tool_modules():
    return sorted(m for m in sys.modules if m.startswith("corral.tools._builtin."))
def serve(workspace, *, max_line_bytes, workers, warm):
    seen["before"] = tool_modules()
    warm()
    seen["after"] = tool_modules()
    seen["names"] = workspace.toolbox(workspace.roots[0]).names
corral.mcp.serve = serve
from corral import cli
seen["status"] = cli.main(["serve", sys.argv[1]])
print(json.dumps(seen))
"""


def test_corral_serve_imports_no_tool_before_it_serves(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = _project(tmp_path)
    done = subprocess.run([sys.executable, "-c", _CLI_SERVE, str(root)], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120, check=True)
    seen = json.loads(done.stdout)
    assert seen["status"] == 0
    assert seen["before"] == []  # nothing of a tool imported before the handshake
    assert "corral.tools._builtin.read_file" in seen["after"]
    assert seen["names"][:3] == ["read_file", "write_file", "edit_file"]
