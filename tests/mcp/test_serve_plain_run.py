"""``corral serve`` runs a read with no progress token by the tool's plain
run (the server passes a cancel token with every call), and a read with a
progress token by the general run, which reports progress; both answer
alike, on every backend config."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.mcp import StdioServer
from corral.tools import Toolbox, Workspace
from corral.tools._runtime import toolbox as toolbox_module


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _read(request_id: int, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "read_file", "arguments": {"path": "src/app.py"}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_a_read_without_a_progress_token_takes_the_plain_run(
        make_root: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "root" / "src").mkdir(parents=True)
    (tmp_path / "root" / "src" / "app.py").write_text("".join(f"v{i} = {i}\n" for i in range(30)))
    ran: list[str] = []
    real = toolbox_module.Toolbox._run

    def spy(self: Toolbox, name: Any, args: Any, ctx: Any) -> Any:
        ran.append(name)
        return real(self, name, args, ctx)

    monkeypatch.setattr(toolbox_module.Toolbox, "_run", spy)
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(
        _line({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "1"}}})
        + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + _line(_read(1)) + _line(_read(2, progressToken="p")))
    answers_path = tmp_path / "out.jsonl"
    with Toolbox(make_root(tmp_path / "root")) as box:
        server = StdioServer(Workspace({"root": box}), version="test", workers=1)
        out = os.open(answers_path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            with open(requests, "rb") as infile:
                server.serve(infile, out)
        finally:
            os.close(out)
            server.close()
    answers = {item["id"]: item for item in map(json.loads, answers_path.read_bytes().splitlines())
               if "id" in item}
    plain, general = answers[1]["result"], answers[2]["result"]
    assert not plain.get("isError") and plain == general, (plain, general)
    assert ran == ["read_file"]  # the call with a progress token alone
