"""The pytest plugin: ``mcp_client`` is built from the module's ``mcp_server`` fixture.

The plugin is loaded through the ``pytest11`` entry point of the installed package,
as it is for users; nothing here imports it.
"""

from __future__ import annotations

import pytest
from support.tools import echo

from trio_mcp import Server
from trio_mcp.testing import McpTestClient


@pytest.fixture
def mcp_server() -> Server:
    return Server("plugin-test", "1.0", tools=[echo])


async def test_mcp_client_is_a_test_client_for_mcp_server(
    mcp_client: McpTestClient,
) -> None:
    result = await mcp_client.call_tool("echo", {"text": "Ada"})

    assert isinstance(mcp_client, McpTestClient)
    assert result.structured == "Ada"


async def test_mcp_client_lists_the_servers_catalog(mcp_client: McpTestClient) -> None:
    tools = await mcp_client.list_tools()

    assert [t["name"] for t in tools] == ["echo"]
