"""The MCP server built in-process (the SDK's in-memory client): what the
subprocess tests cannot arrange, such as a toolbox that raises."""

from __future__ import annotations

import json

from anyio.from_thread import start_blocking_portal

from corral.cli import tool_definitions
from corral.tools import Refusal, Toolbox


class _RaisingToolbox(Toolbox):
    def call(self, name, args=None):
        raise OSError(2, "No such file or directory", "/host/secret/path")


def _call(server, name, args):
    from mcp import Client

    async def go():
        async with Client(server) as client:
            return await client.list_tools(), await client.call_tool(name, args)

    with start_blocking_portal(backend="asyncio") as portal:
        return portal.call(go)


def test_a_toolbox_that_raises_gives_internal_and_no_detail(tmp_path):
    from corral.mcp_server import build_server

    with _RaisingToolbox(tmp_path) as box:
        listed, result = _call(build_server(box), "read_file", {"path": "x"})
    assert result.is_error is True
    assert json.loads(result.content[0].text) == Refusal.internal().envelope()
    assert "/host/secret" not in result.content[0].text
    assert [t.name for t in listed.tools] == box.names


def test_listing_is_the_mcp_format(tmp_path):
    from corral.mcp_server import build_server

    with Toolbox(tmp_path) as box:
        listed, _ = _call(build_server(box), "list_directory", {})
        expected = tool_definitions(box, "mcp")
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools] == expected
