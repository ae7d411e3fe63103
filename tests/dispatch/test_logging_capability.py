"""F14: ``logging: {}`` is advertised only when a declaration logs (issue 44).

Issue 34 advertised it for any server that answers a call; the contract now asks
for it only when something served can send ``notifications/message``: a tool,
prompt or resource whose handler calls ``.log(...)`` (itself, in a nested function,
or in a helper of its module it calls), a hand-written adopter whose method does, a
middleware step that does, and a dynamic catalog (which may gain one).
"""

from __future__ import annotations

import pytest
from support import wire
from support.tools import echo

from trio_mcp import (
    Call,
    Ending,
    Next,
    Server,
    ToolCall,
    ToolContext,
    ToolReply,
    ToolSpec,
    prompt,
    resource,
    tool,
)
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


async def _say(message: str) -> None:
    await ToolContext.current().log("info", message)


@tool
async def through_a_helper() -> str:
    """Log through a helper of this module."""
    await _say("working")
    return "done"


@prompt
async def chatty_prompt() -> str:
    """Log, then say hello."""
    await ToolContext.current().log("debug", "prompting")
    return "hello"


@resource(uri="doc://chatty")
async def chatty_doc() -> str:
    """Log, then read."""
    await ToolContext.current().log("debug", "reading")
    return "one"


class HandLogger:
    """A hand-written tool whose dispatch logs."""

    def spec(self) -> ToolSpec:
        return ToolSpec("hand", "Log by hand.", {"type": "object"})

    async def dispatch(self, call: ToolCall) -> ToolReply:
        await ToolContext.current().log("info", "by hand")
        return ToolReply.ok("done")


async def logging_step(call: Call, next: Next) -> Ending:
    await ToolContext.current().log("debug", "a step")
    return await next(call)


@pytest.mark.parametrize(
    "server",
    [
        Server("tools", "1", tools=[echo, chatty]),
        Server("helper", "1", tools=[through_a_helper]),
        Server("prompts", "1", prompts=[hello, chatty_prompt]),
        Server("resources", "1", resources=[one, chatty_doc]),
        Server("adopter", "1", tools=[HandLogger()]),
        Server("middleware", "1", tools=[echo], middleware=[logging_step]),
        Server("dynamic", "1", tools=[echo], dynamic=True),
    ],
    ids=lambda server: server.name,
)
async def test_a_server_with_something_that_logs_advertises_logging(
    server: Server,
) -> None:
    assert {} == (await capabilities(server))["logging"]


@pytest.mark.parametrize(
    "server",
    [
        Server("empty", "1"),
        Server("quiet", "1", tools=[echo], prompts=[hello], resources=[one]),
    ],
    ids=lambda server: server.name,
)
async def test_a_server_where_nothing_logs_advertises_no_logging(
    server: Server,
) -> None:
    assert "logging" not in await capabilities(server)


async def test_what_is_advertised_is_what_a_handler_sends() -> None:
    server = Server("tools", "1", tools=[chatty])
    async with McpTestClient(server) as client:
        result = await client.call_tool("chatty", log_level="info")

    assert "done" == result.structured
    assert ["notifications/message"] == [n["method"] for n in result.notifications]
