"""MCP Apps for handshake-era hosts: the extension was born there (SEP-1865 declares it
in ``initialize``), and a dual-era server serves them the same views."""

from __future__ import annotations

import pytest
from support.apps import APPS_CLIENT, MIME, check_listed_tools, check_view_read
from support.legacy import LegacyPeer
from support.legacy_schema import REVISIONS

from trio_mcp import Server, ToolContext, View, tool

BOARD = View("ui://desk/board", "<p>board</p>", prefers_border=True)


@tool(view=BOARD, visibility=("model", "app"))
def show_board(team: str) -> str:
    """Show a team's board.

    Args:
        team: The team.
    """
    return f"{team}: {'board' if ToolContext.current().renders_views else 'text'}"


def desk() -> Server:
    return Server("desk", "1.0", tools=[show_board], legacy=True)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_handshake_era_host_lists_and_reads_the_view(revision: str) -> None:
    async with LegacyPeer(desk(), revision=revision, capabilities=APPS_CLIENT) as peer:
        await peer.initialize()
        tools = (await peer.request("tools/list"))["tools"]
        [listed] = (await peer.request("resources/list"))["resources"]
        read = await peer.request("resources/read", {"uri": "ui://desk/board"})

    check_listed_tools(tools)
    assert {"resourceUri": "ui://desk/board", "visibility": ["model", "app"]} == (
        tools[0]["_meta"]["ui"]
    )
    assert ("ui://desk/board", MIME) == (listed["uri"], listed["mimeType"])
    contents = check_view_read(read, "ui://desk/board")
    assert {"ui": {"prefersBorder": True}} == contents["_meta"]


@pytest.mark.parametrize(
    ("capabilities", "shown"), [(APPS_CLIENT, "board"), ({}, "text")]
)
async def test_the_context_reads_what_initialize_declared(
    capabilities: dict[str, object], shown: str
) -> None:
    async with LegacyPeer(desk(), capabilities=capabilities) as peer:
        await peer.initialize()
        result = await peer.request(
            "tools/call", {"name": "show_board", "arguments": {"team": "web"}}
        )

    assert f"web: {shown}" == result["content"][0]["text"]
