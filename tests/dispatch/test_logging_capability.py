"""F14 (issue 34): ``logging: {}`` is advertised when something can log.

Decided: every call's handler (and every middleware step) may send
``ToolContext.log`` (a deprecated feature the revision still serves, gated by the
request's ``logLevel``), so a server that answers any call (a tool, a prompt, a
resource, or a catalog that may gain them) advertises ``logging``; one that
answers none (an empty server) advertises nothing it cannot do.
"""

from __future__ import annotations

import pytest
from support import wire
from support.tools import echo

from trio_mcp import Server, ToolContext, prompt, resource, tool
from trio_mcp.testing import McpTestClient


@tool
async def chatty() -> str:
    """Log, then answer."""
    await ToolContext.current().log("info", "working")
    return "done"


@prompt
def hello() -> str:
    """Say hello."""
    return "hello"


@resource(uri="doc://one")
def one() -> str:
    """One document."""
    return "one"


async def capabilities(server: Server) -> dict[str, object]:
    async with McpTestClient(server) as client:
        found = wire(await client.discover())["capabilities"]
    assert isinstance(found, dict)
    return found


@pytest.mark.parametrize(
    "server",
    [
        Server("tools", "1", tools=[echo]),
        Server("prompts", "1", prompts=[hello]),
        Server("resources", "1", resources=[one]),
    ],
)
async def test_a_server_that_answers_calls_advertises_logging(server: Server) -> None:
    assert {} == (await capabilities(server))["logging"]


async def test_a_server_that_answers_no_call_advertises_no_logging() -> None:
    assert "logging" not in await capabilities(Server("empty", "1"))


async def test_what_is_advertised_is_what_a_handler_sends() -> None:
    server = Server("tools", "1", tools=[chatty])
    async with McpTestClient(server) as client:
        result = await client.call_tool("chatty", log_level="info")

    assert "done" == result.structured
    assert ["notifications/message"] == [n["method"] for n in result.notifications]
