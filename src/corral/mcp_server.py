"""The MCP front end: one :class:`~corral.tools.Toolbox`, served over stdio
with the official ``mcp`` SDK (the extra ``corral[mcp]``).

It uses the SDK's low-level ``Server`` so the tools are listed with the
toolbox's own descriptions and JSON Schemas, verbatim.  Every ``tools/call``
goes to :meth:`Toolbox.call` and its envelope comes back as JSON text and as
structured content; a refusal is an error result (``isError``).  The server
offers tools and nothing else: no resources, prompts or roots, so nothing
reaches the filesystem except through ``Toolbox.call``.

Two choices made for speed, both through the SDK's public surface:

* stdin and stdout are asyncio pipes handed to ``stdio_server`` (the SDK's
  default reads and writes each line through a worker thread, which costs
  about half of a small call); anything that is not a pipe or socket, such
  as a terminal, keeps the SDK's own streams.
* the SDK's OpenTelemetry span middleware is left out unless a tracer
  provider is configured: without one it records nothing and costs about a
  quarter of a small call.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from . import __version__
from .cli import envelope_text, tool_definitions
from .tools import Refusal

__all__ = ["build_server", "serve", "call_result"]

logger = logging.getLogger("corral.mcp")

EOF_QUIET = 0.05  # seconds without output that mean "all answered" after stdin closed
EOF_GRACE = 10.0  # at most this long

INSTRUCTIONS = (
    "File tools confined to one directory tree (the root). Paths are relative to the root. "
    "A refused call returns a JSON object with a code, a message, details and a hint saying "
    "what to do next; some also carry suggestedTool and suggestedArgs, a call that works."
)


def call_result(envelope: dict[str, Any]) -> types.CallToolResult:
    """The MCP result for one envelope: its JSON as text (and as structured
    content), ``isError`` when it is a refusal."""
    text, plain = envelope_text(envelope)
    # A non-UTF-8 file name (a lone surrogate) cannot go into structured
    # content, which the SDK encodes as UTF-8; the escaped text still has it.
    # The tools declare an outputSchema, so a success must carry structured
    # content: there a lone surrogate is spelled as its escape (\udcff).
    structured = envelope if plain else _spelled(envelope)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=structured,
                                is_error=envelope.get("ok") is not True)


def _spelled(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings written as its escape."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_spelled(k): _spelled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_spelled(v) for v in value]
    return value


def build_server(toolbox: Any) -> Server[Any]:
    """A low-level SDK ``Server`` offering exactly ``toolbox``'s tools, as
    ``corral tools --format mcp`` prints them."""
    tools = [types.Tool.model_validate(item) for item in tool_definitions(toolbox, "mcp")]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Run inline: a call is bounded by the toolbox's limits and never
        # blocks on a FIFO or device, and requests are then served in the
        # order they arrive.
        try:
            envelope = toolbox.call(params.name, params.arguments)
        except Exception:  # Toolbox.call should never raise; if it does, say nothing of why
            logger.exception("corral: Toolbox.call raised")
            envelope = Refusal.internal().envelope()
        return call_result(envelope)

    server: Server[Any] = Server("corral", version=__version__, instructions=INSTRUCTIONS,
                                 on_list_tools=list_tools, on_call_tool=call_tool)
    if not _tracing_configured():
        server.middleware = [m for m in server.middleware
                             if type(m).__name__ != "OpenTelemetryMiddleware"]
    return server


def _tracing_configured() -> bool:
    try:
        from opentelemetry import trace
    except ImportError:
        return False
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def serve(toolbox: Any) -> None:
    """Serve ``toolbox`` on this process's stdin and stdout until stdin closes."""
    server = build_server(toolbox)
    try:
        anyio.run(_serve, server, backend="asyncio")
    except* (BrokenPipeError, ConnectionResetError):
        pass  # the client went away: nothing left to answer


async def _serve(server: Server[Any]) -> None:
    options = server.create_initialization_options()
    if _is_pipe(0) and _is_pipe(1):
        async with _pipes() as (lines, out), stdio_server(lines, out) as (read, write):
            await server.run(read, write, options)
    else:
        async with stdio_server() as (read, write):
            await server.run(read, write, options)


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _Lines:
    """Lines of text from an asyncio reader: what ``stdio_server`` iterates."""

    def __init__(self, reader: asyncio.StreamReader, out: "_Out") -> None:
        self._reader = reader
        self._out = out

    def __aiter__(self) -> "_Lines":
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            await self._quiet()
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")

    async def _quiet(self) -> None:
        """At end of input, let requests already read be answered (a
        client may send its last request and close stdin at once): wait
        until nothing has been written for a moment.  Tool calls run inline,
        so a pending one finishes before the pause ends."""
        deadline = asyncio.get_running_loop().time() + EOF_GRACE
        while asyncio.get_running_loop().time() < deadline:
            written = self._out.writes
            await asyncio.sleep(EOF_QUIET)
            if self._out.writes == written:
                return


class _Out:
    """What ``stdio_server`` writes to: text in, UTF-8 down the pipe."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self.writes = 0

    async def write(self, text: str) -> None:
        self.writes += 1
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@asynccontextmanager
async def _pipes() -> AsyncIterator[tuple[_Lines, _Out]]:
    """The wire on private copies of fds 0 and 1; fd 0 reads /dev/null and fd
    1 goes to stderr meanwhile, so a stray print cannot corrupt the protocol
    (the SDK's own stdio does the same)."""
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    try:
        # No line limit beyond memory, as with the SDK's own reader; each
        # string argument is capped by the toolbox anyway.
        reader = asyncio.StreamReader(limit=sys.maxsize)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                     os.fdopen(wire_in, "rb", buffering=0))
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0))
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        out = _Out(writer)
        try:
            yield _Lines(reader, out), out
        finally:
            transport.close()
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
