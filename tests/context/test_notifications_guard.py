"""Progress and log notifications a handler sends fit the revision's schema, or the
handler's call fails where it sent them (api.md "The way out").

``ctx.progress("a")``, ``ctx.progress(True)``, a str ``total``, an int ``message`` or
an int ``logger=`` used to be written as given, so the client received a
``notifications/progress`` or ``notifications/message`` its schema refuses. Now the
call raises TypeError or ValueError in the handler (-32603 for that request, with
its receipt), and nothing malformed is sent. ``McpTestClient`` validates every
notification it receives.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from support.internal import fails_internally, quiet_client
from support.receipts import Sink

from trio_mcp import Receipt, Server, ToolContext, tool
from trio_mcp.testing import McpTestClient

Send = Callable[[ToolContext], Awaitable[None]]

BAD: dict[str, Send] = {
    "done_str": lambda ctx: ctx.progress("a"),  # type: ignore[arg-type]
    "done_bool": lambda ctx: ctx.progress(True),
    "done_nan": lambda ctx: ctx.progress(math.nan),
    "done_inf": lambda ctx: ctx.progress(math.inf),
    "total_str": lambda ctx: ctx.progress(1, total="x"),  # type: ignore[arg-type]
    "total_nan": lambda ctx: ctx.progress(1, total=math.nan),
    "message_int": lambda ctx: ctx.progress(1, message=5),  # type: ignore[arg-type]
    "logger_int": lambda ctx: ctx.log("info", "x", logger=5),  # type: ignore[arg-type]
}


def _sending(name: str, send: Send) -> Callable[[], Awaitable[str]]:
    async def handler() -> str:
        """Send one notification, then answer."""
        await send(ToolContext.current())
        return "sent"

    handler.__name__ = handler.__qualname__ = name
    return handler


@tool
async def good() -> str:
    """Send well-formed progress and a log message."""
    ctx = ToolContext.current()
    await ctx.progress(1, 2, "half")
    await ctx.progress(2.5, total=2.5)
    await ctx.log("info", {"n": 1}, logger="mine")
    return "sent"


def make_server(receipts: list[Receipt]) -> Server:
    tools = [tool(_sending(name, send)) for name, send in BAD.items()]
    return Server("notes", "1", tools=[*tools, good], receipts=receipts.append)


@pytest.fixture
async def client(sink: Sink) -> AsyncIterator[McpTestClient]:
    """The server's client; ``sink`` holds its receipts."""
    async with quiet_client(make_server(sink.receipts)) as client:
        yield client


@pytest.mark.parametrize("name", list(BAD))
async def test_a_malformed_notification_fails_its_call_and_is_never_sent(
    name: str, client: McpTestClient, sink: Sink
) -> None:
    await fails_internally(
        client.call_tool(name, {}, progress_token="p", log_level="debug")
    )
    after = await client.call_tool("good", {}, progress_token="q", log_level="debug")

    assert sink.receipts[0].outcome == "internal"
    assert sink.receipts[0].error_type in {"builtins.TypeError", "builtins.ValueError"}
    assert [n["method"] for n in client.notifications] == [
        "notifications/progress",
        "notifications/progress",
        "notifications/message",
    ]
    assert after.structured == "sent"


async def test_without_a_token_a_malformed_progress_still_fails(
    client: McpTestClient, sink: Sink
) -> None:
    """The check does not depend on what the client asked for, so tests find it."""
    await fails_internally(client.call_tool("done_str", {}))

    assert sink.receipts[0].error_type == "builtins.TypeError"
