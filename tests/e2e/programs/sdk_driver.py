"""Drive an MCP server with the official Python SDK, one command per line.

Runs inside a conformance venv (``scripts/setup_conformance.sh`` makes one
with an ``mcp`` 1.x release and one with a 2.x release); the tests talk to
it over its stdin/stdout, one JSON object per line each way, so one test
module can drive both SDK lines the same way.  Every answer is
``{"ok": true, ...}`` or ``{"ok": false, "error": {...}}``; SDK objects are
sent as their JSON (``by_alias``), exactly what the SDK parsed.

Commands (``op``): ``connect``, ``list_tools``, ``call``, ``ping``,
``set_level``, ``logs``, ``ping_during``, ``cancel_during``,
``set_roots``, ``roots_asked``, ``close``.  ``call`` also validates
structured content against the tool's ``outputSchema`` with
``jsonschema`` (the SDKs do too; this says so explicitly).
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import Any

import anyio
import jsonschema
from importlib.metadata import version as dist_version

import mcp
from mcp import StdioServerParameters, types

SDK_MAJOR = int(dist_version("mcp").split(".")[0])


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def describe(exc: BaseException) -> dict[str, Any]:
    error = getattr(exc, "error", None)
    return {"type": type(exc).__name__, "message": str(exc)[:2000],
            "code": getattr(error, "code", None)}


class Driver:
    def __init__(self) -> None:
        self.stack = AsyncExitStack()
        self.client: Any = None
        self.session: Any = None
        self.roots: list[str] = []
        self.roots_asked = 0
        self.logs: list[dict[str, Any]] = []
        self.schemas: dict[str, Any] = {}

    # -- callbacks ---------------------------------------------------------------
    async def list_roots(self, context: Any) -> Any:
        self.roots_asked += 1
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in self.roots])

    async def on_log(self, params: Any) -> None:
        self.logs.append(dump(params))

    # -- commands ----------------------------------------------------------------
    async def connect(self, cmd: dict[str, Any]) -> dict[str, Any]:
        params = StdioServerParameters(command=cmd["command"][0], args=cmd["command"][1:],
                                       env=cmd.get("env"), cwd=cmd.get("cwd"))
        roots = cmd.get("roots")
        self.roots = list(roots or [])
        callback = self.list_roots if roots is not None else None
        version = cmd.get("protocol_version")
        if SDK_MAJOR >= 2:
            return await self._connect_v2(params, callback, version, cmd.get("mode", "auto"))
        return await self._connect_v1(params, callback, version)

    async def _connect_v1(self, params: Any, roots_cb: Any, version: str | None) -> dict[str, Any]:
        from mcp.client.stdio import stdio_client

        if version is not None:
            types.LATEST_PROTOCOL_VERSION = version  # what ClientSession.initialize offers
        read, write = await self.stack.enter_async_context(stdio_client(params))
        self.session = await self.stack.enter_async_context(mcp.ClientSession(
            read, write, read_timeout_seconds=timedelta(seconds=60),
            list_roots_callback=roots_cb, logging_callback=self.on_log))
        init = await self.session.initialize()
        return {"protocol_version": init.protocolVersion, "server_info": dump(init.serverInfo),
                "capabilities": dump(init.capabilities), "instructions": init.instructions}

    async def _connect_v2(self, params: Any, roots_cb: Any, version: str | None,
                          mode: str) -> dict[str, Any]:
        import mcp.client.session as client_session

        if version is not None:
            client_session.LATEST_HANDSHAKE_VERSION = version  # what initialize offers
            mode = "legacy"
        self.client = await self.stack.enter_async_context(mcp.Client(
            params, mode=mode, read_timeout_seconds=60, list_roots_callback=roots_cb,
            logging_callback=self.on_log))
        return {"protocol_version": self.client.protocol_version,
                "server_info": dump(self.client.server_info),
                "capabilities": dump(self.client.server_capabilities),
                "instructions": self.client.instructions}

    @property
    def peer(self) -> Any:
        return self.client if self.client is not None else self.session

    async def list_tools(self, cmd: dict[str, Any]) -> dict[str, Any]:
        tools = (await self.peer.list_tools()).tools
        self.schemas = {tool.name: dump(tool).get("outputSchema") for tool in tools}
        return {"tools": [dump(tool) for tool in tools]}

    async def call(self, cmd: dict[str, Any]) -> dict[str, Any]:
        progress: list[dict[str, Any]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append({"progress": done, "total": total, "message": message})

        timeout = cmd.get("timeout", 60)
        wait: Any = timedelta(seconds=timeout) if SDK_MAJOR < 2 else timeout
        result = await self.peer.call_tool(cmd["name"], cmd.get("arguments"), wait,
                                           on_progress if cmd.get("progress") else None)
        out = dump(result)
        return {"result": out, "progress": progress, "schema_errors": self.check(cmd["name"], out)}

    def check(self, name: str, result: dict[str, Any]) -> list[str] | None:
        """Structured content against the listed outputSchema: the errors
        (empty when valid), or None when there is nothing to check."""
        schema = self.schemas.get(name)
        if schema is None or result.get("isError") or "structuredContent" not in result:
            return None
        validator = jsonschema.Draft202012Validator(schema)
        return [e.message for e in validator.iter_errors(result["structuredContent"])]

    async def ping(self, cmd: dict[str, Any]) -> dict[str, Any]:
        started = time.monotonic()
        await self.peer.send_ping()
        return {"seconds": time.monotonic() - started}

    async def set_level(self, cmd: dict[str, Any]) -> dict[str, Any]:
        await self.peer.set_logging_level(cmd["level"])
        return {}

    async def logs_(self, cmd: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep(cmd.get("wait", 0))
        return {"logs": self.logs}

    async def ping_during(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Start a call, ping while it runs: was the ping answered first?"""
        done: dict[str, Any] = {}
        order: list[str] = []
        async with anyio.create_task_group() as group:
            async def run_call() -> None:
                started = time.monotonic()
                done["call"] = await self.call(cmd)
                done["call_seconds"] = time.monotonic() - started
                order.append("call")
            group.start_soon(run_call)
            await anyio.sleep(cmd.get("after", 0.5))
            started = time.monotonic()
            await self.peer.send_ping()
            done["ping_seconds"] = time.monotonic() - started
            order.append("ping")
        return {**done, "order": order}

    async def cancel_during(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Start a call and cancel it after ``after`` seconds (the SDK sends
        notifications/cancelled); the call must not come back."""
        outcome: dict[str, Any] = {"returned": False}
        # The 1.x client stops waiting but tells the server nothing; an
        # application on 1.x sends notifications/cancelled itself, with the
        # id the request went out with (the session's next one).
        request_id = self.session._request_id if self.session is not None else None
        with anyio.move_on_after(cmd.get("after", 0.5)) as scope:
            outcome["result"] = await self.call(cmd)
            outcome["returned"] = True
        outcome["cancelled"] = scope.cancelled_caught
        if request_id is not None and scope.cancelled_caught:
            await self.session.send_notification(types.ClientNotification(
                types.CancelledNotification(params=types.CancelledNotificationParams(
                    requestId=request_id, reason="cancelled by the test"))))
        await anyio.sleep(0.05)  # let the notification go out
        return outcome

    async def set_roots(self, cmd: dict[str, Any]) -> dict[str, Any]:
        self.roots = list(cmd["roots"])
        await self.peer.send_roots_list_changed()
        return {}

    async def roots_asked_(self, cmd: dict[str, Any]) -> dict[str, Any]:
        return {"count": self.roots_asked}


async def main() -> None:
    driver = Driver()
    handlers = {"connect": driver.connect, "list_tools": driver.list_tools, "call": driver.call,
                "ping": driver.ping, "set_level": driver.set_level, "logs": driver.logs_,
                "ping_during": driver.ping_during, "cancel_during": driver.cancel_during,
                "set_roots": driver.set_roots, "roots_asked": driver.roots_asked_}
    stdin = anyio.wrap_file(sys.stdin)
    try:
        async for line in stdin:
            cmd = json.loads(line)
            if cmd["op"] == "close":
                break
            try:
                answer = {"ok": True, **await handlers[cmd["op"]](cmd)}
            except Exception as exc:  # the test reads what went wrong
                answer = {"ok": False, "error": describe(exc)}
            print(json.dumps(answer), flush=True)
    finally:
        await driver.stack.aclose()
    print(json.dumps({"ok": True, "closed": True}), flush=True)


if __name__ == "__main__":
    anyio.run(main)
