"""End-to-end helpers: ``corral serve`` as a subprocess, driven through the
official SDK's stdio client; ``corral`` commands run captured.

:class:`McpSession` runs the SDK ``Client`` on a background event loop (an
anyio blocking portal) so the tests themselves stay synchronous and one
server process can serve a whole module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from anyio.from_thread import start_blocking_portal

from corral.contained import available_backends, backend_by_name

REPO = Path(__file__).resolve().parents[2]
SERVE_TIMEOUT = 60  # seconds for one request; generous, CI machines are slow


def serve_command(root: Path | str, *options: str) -> list[str]:
    return [sys.executable, "-m", "corral.cli", "serve", str(root), *options]


def backend_env(name: str | None = None, fast: bool | None = None) -> dict[str, str]:
    """The environment for a server: this one, with a backend forced when given."""
    env = dict(os.environ)
    if name is not None:
        env["CORRAL_BACKEND"] = name
    if fast is not None:
        env["CORRAL_OPENAT2"] = "1" if fast else "0"
    return env


def backend_configs() -> list[tuple[str, bool]]:
    """(backend, fast path) pairs present here, as tests/conftest.py has them."""
    forced = os.environ.get("CORRAL_BACKEND", "").strip().lower()
    configs = []
    for name in [forced] if forced else available_backends():
        if backend_by_name(name).has_openat2:
            configs.append((name, True))
        configs.append((name, False))
    return configs


BACKEND_CONFIGS = backend_configs()
BACKEND_IDS = [f"{name}-{'openat2' if fast else 'walk'}" for name, fast in BACKEND_CONFIGS]


class McpSession:
    """A connected SDK ``Client`` over a ``corral serve`` subprocess, with
    blocking methods."""

    def __init__(self, command: list[str], *, env: dict[str, str] | None = None,
                 mode: str = "auto", cwd: str | None = None) -> None:
        from mcp import Client, StdioServerParameters

        self._stack = ExitStack()
        self.portal = self._stack.enter_context(start_blocking_portal(backend="asyncio"))
        params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
        client = Client(params, mode=mode, read_timeout_seconds=SERVE_TIMEOUT)
        try:
            self.client = self._stack.enter_context(self.portal.wrap_async_context_manager(client))
        except BaseException:
            self._stack.close()
            raise

    def list_tools(self) -> list[Any]:
        return self.portal.call(self._list_tools)

    async def _list_tools(self) -> list[Any]:
        return (await self.client.list_tools(cache_mode="refresh")).tools

    def call(self, name: str, arguments: Any = None) -> Any:
        """The raw ``CallToolResult``."""
        return self.portal.call(self.client.call_tool, name, arguments)

    def envelope(self, name: str, arguments: Any = None) -> dict[str, Any]:
        """Call, check the result's shape, and return the envelope it carries:
        one text block whose JSON equals the structured content, ``isError``
        exactly when the envelope is a refusal."""
        result = self.call(name, arguments)
        assert len(result.content) == 1 and result.content[0].type == "text", result
        envelope = json.loads(result.content[0].text)
        assert isinstance(envelope, dict) and isinstance(envelope.get("ok"), bool), envelope
        assert result.is_error is (not envelope["ok"]), (result.is_error, envelope)
        assert result.structured_content == envelope
        return envelope

    def close(self) -> None:
        self._stack.close()


def run_cli(*args: str, input: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m corral.cli ARGS``, captured."""
    return subprocess.run([sys.executable, "-m", "corral.cli", *args], capture_output=True,
                          text=True, input=input, env=env, timeout=timeout)
