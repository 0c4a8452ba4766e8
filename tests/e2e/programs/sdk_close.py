"""Close an official Python SDK client (1.x or 2.x, whichever this venv
has) while a tool call is in flight, as an application shutting down does.

    python sdk_close.py SECONDS COMMAND...

Connects to the server ``COMMAND`` starts, starts a ``wait`` call of
``SECONDS``, and after half a second leaves the client's context with the
call still outstanding (the SDK then closes the server's stdin, waits for it
to exit and signals it if it does not).  Prints one JSON line:
``{"closed_in": seconds}``.  An exception anywhere, the SDK's reader
included, ends the process non-zero with its traceback on stderr.
"""

from __future__ import annotations

import json
import sys
import time
from importlib.metadata import version as dist_version
from typing import Any

import anyio

import mcp
from mcp import StdioServerParameters

SDK_MAJOR = int(dist_version("mcp").split(".")[0])


async def call_forever(peer: Any, seconds: float) -> None:
    try:
        await peer.call_tool("wait", {"seconds": seconds})
    except Exception:  # the session went away under it: expected, not a crash
        pass


async def main(seconds: float, command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with anyio.create_task_group() as calls:
        if SDK_MAJOR >= 2:
            async with mcp.Client(params, read_timeout_seconds=60) as client:
                calls.start_soon(call_forever, client, seconds)
                await anyio.sleep(0.5)
                started = time.monotonic()
        else:
            from mcp.client.stdio import stdio_client

            async with stdio_client(params) as (read, write):
                async with mcp.ClientSession(read, write) as session:
                    await session.initialize()
                    calls.start_soon(call_forever, session, seconds)
                    await anyio.sleep(0.5)
                    started = time.monotonic()
        closed_in = time.monotonic() - started
        calls.cancel_scope.cancel()
    print(json.dumps({"closed_in": closed_in}), flush=True)


if __name__ == "__main__":
    anyio.run(main, float(sys.argv[1]), sys.argv[2:])
