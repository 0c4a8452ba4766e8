"""Tried as a hostile model would, and kept cheap: ``corral serve`` with two
roots driven by the MCP Python SDK's own client, one turn's calls sent at
once (``asyncio.gather``) in random orders: writes and moves aimed at
``.vscode/tasks.json`` through a folder moved into place, at a denied folder
and at the other root: nothing protected lands, nothing denied moves or is
read, every call is answered, on every backend config.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROUNDS = 12

_REPO = Path(__file__).resolve().parents[2]


def _calls() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("write_file", {"path": "web/y/tasks.json", "content": '{"x": 1}', "overwrite": True}),
        ("move_file", {"source": "web/y", "destination": "web/.vscode"}),
        ("write_file", {"path": "web/.vscode/tasks.json", "content": "{}"}),
        ("make_directory", {"path": "web/y"}),
        ("move_file", {"source": "web/.vscode", "destination": "web/y"}),
        ("move_file", {"source": "web/y", "destination": "api/.vscode"}),
        ("read_file", {"path": "api/secrets/k.txt"}),
        ("read_file", {"path": "secrets/k.txt"}),
        ("move_file", {"source": "api/secrets", "destination": "api/z"}),
        ("delete_file", {"path": "api/secrets/k.txt"}),
        ("grep", {"pattern": "hunter2"}),
    ]


async def _battery(base: Path, env: dict[str, str]) -> list[str]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "corral", "serve", str(base / "web"), str(base / "api"),
              "--deny", "api/secrets/**"], env=env)
    seen: list[str] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for _ in range(ROUNDS):
            calls = random.sample(_calls(), len(_calls()))
            results = await asyncio.wait_for(
                asyncio.gather(*[session.call_tool(name, args) for name, args in calls]), 60)
            seen += [json.dumps(r.model_dump(mode="json")) for r in results]
            assert not (base / "web" / ".vscode" / "tasks.json").exists(), calls
            assert not (base / "api" / ".vscode" / "tasks.json").exists(), calls
            assert (base / "api" / "secrets" / "k.txt").read_text() == "hunter2\n"
    return seen


def test_calls_sent_at_once_through_serve_by_the_sdk_client(tmp_path, make_root):
    for name in ("web", "api"):
        (tmp_path / name / "y").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path / "web")], check=True)
    (tmp_path / "api" / "secrets").mkdir()
    (tmp_path / "api" / "secrets" / "k.txt").write_text("hunter2\n")
    env = {**os.environ, "PYTHONPATH": str(_REPO / "src"),
           "CORRAL_BACKEND": make_root.backend_name,
           "CORRAL_OPENAT2": "1" if make_root.fast_path else "0"}
    random.seed(23)
    seen = asyncio.run(_battery(tmp_path, env))
    assert len(seen) == ROUNDS * len(_calls())
    assert not [s for s in seen if "hunter2" in s and '"isError": false' in s
                and '"matches": [{' in s], "the denied file was searched"
    assert not [s for s in seen if '"content": "1\\thunter2' in s]
