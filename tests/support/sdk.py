"""The official Python SDK's client (``mcp``) as the interop tests drive it.

The client runs on anyio, so the same steps serve a test under Trio (Hypercorn) and
one under asyncio (uvicorn beside FastAPI).
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
from mcp import Client
from mcp import types as mcp_types
from mcp.client.session import ClientRequestContext

__all__ = [
    "Progress",
    "check_handshake_tour",
    "check_list_and_call",
    "elicit",
    "handshake_tour",
    "roots",
    "sample",
    "sdk_streams_left_open",
]

# mcp 2.3.0's streamable HTTP client leaves its SSE reader with ``break`` once the
# reply arrives (mcp/client/streamable_http.py, ``async for sse in event_source``),
# never closing the async generators under it (its own, httpx2's and httpcore2's).
# Trio's finalizer reports each as a ResourceWarning; asyncio stays silent.
_SDK_GENERATORS = (
    r"(EventSource\.__aiter__|PoolByteStream\.__aiter__|Response\.aiter_(bytes|text)"
    r"|HTTP11ConnectionByteStream\.__aiter__)"
)

#: For a test under Trio that runs the SDK's client: only those generators' reports
#: are ignored.
sdk_streams_left_open = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object "
    + _SDK_GENERATORS
    + ":pytest.PytestUnraisableExceptionWarning"
)


class Progress:
    """A ``progress_callback`` that keeps every progress value it is given."""

    def __init__(self) -> None:
        self.seen: list[float] = []

    async def __call__(
        self, progress: float, total: float | None, message: str | None
    ) -> None:
        self.seen.append(progress)


async def check_list_and_call(client: Client, tools: list[str]) -> None:
    """The interop round of a server with ``add`` and ``steps`` (support.tools):
    the client adopted 2026-07-28, the server lists ``tools`` in order, ``add``
    sums, and ``steps`` reports each step's progress before its result."""
    assert "2026-07-28" == client.protocol_version
    listed = await client.list_tools()
    assert tools == [t.name for t in listed.tools]
    summed = await client.call_tool("add", {"a": 2, "b": 40})
    assert (False, 42) == (summed.is_error, summed.structured_content)
    progress = Progress()
    stepped = await client.call_tool("steps", {"count": 3}, progress_callback=progress)
    assert "3 steps" == stepped.structured_content
    assert [1, 2, 3] == progress.seen


# -- the handshake-era tour (revision 2025-11-25, ``Client(mode="legacy")``) ------------


async def elicit(
    context: ClientRequestContext, params: mcp_types.ElicitRequestParams
) -> mcp_types.ElicitResult:
    """The client's elicitation callback: the user accepts, named Ada."""
    return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})


async def sample(
    context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
) -> mcp_types.CreateMessageResult:
    """The client's sampling callback: the model says Paris."""
    return mcp_types.CreateMessageResult(
        role="assistant",
        content=mcp_types.TextContent(type="text", text="Paris"),
        model="test-model",
        stop_reason="endTurn",
    )


async def roots(context: ClientRequestContext) -> mcp_types.ListRootsResult:
    """The client's roots callback: one root, ``file:///work``."""
    return mcp_types.ListRootsResult(
        roots=[mcp_types.Root.model_validate({"uri": "file:///work", "name": "work"})]
    )


async def handshake_tour(target: Any, wait: float = 30.0) -> dict[str, Any]:
    """Drive the legacy test server (tests/legacy/legacy_server.py) at ``target``
    (a URL or stdio parameters) with the official client in its handshake mode:
    lists, calls answered through the elicitation, sampling and roots callbacks,
    progress and logs, a read, a prompt, an update after ``resources/subscribe``,
    a cancelled call, a ping. Returns what each step gave, by name."""
    seen: dict[str, Any] = {"logs": [], "progress": Progress()}
    waiting, updated = trio.Event(), trio.Event()

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        seen["logs"].append((params.level, params.data))
        if params.data == "waiting":
            waiting.set()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            updated.set()

    with trio.fail_after(wait):
        async with Client(
            target,
            mode="legacy",
            elicitation_callback=elicit,
            sampling_callback=sample,
            list_roots_callback=roots,
            logging_callback=on_log,
            message_handler=on_message,
        ) as client:
            seen["version"] = client.protocol_version
            seen["info"] = client.server_info
            seen["tools"] = await client.list_tools()
            seen["added"] = await client.call_tool("add", {"a": 2, "b": 3})
            for name in ("ask_name", "ask_model", "ask_roots", "ask_twice"):
                seen[name] = await client.call_tool(name, {})
            await client.set_logging_level("info")
            seen["slow"] = await client.call_tool(
                "slow", {"steps": 3}, progress_callback=seen["progress"]
            )
            seen["read"] = await client.read_resource("note://alpha")
            seen["prompt"] = await client.get_prompt("greet", {"name": "Ada"})
            await client.subscribe_resource("watch://counter")
            while not updated.is_set():
                # Over HTTP the client opens its GET stream on its own schedule: touch
                # until an update arrives (a repeated update is harmless).
                await client.call_tool("touch", {})
                with trio.move_on_after(0.2):
                    await updated.wait()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "forever", {})
                await waiting.wait()
                nursery.cancel_scope.cancel()
            seen["pong"] = await client.send_ping()
            seen["after"] = await client.call_tool("echo", {"text": "still here"})
    return seen


def check_handshake_tour(seen: dict[str, Any]) -> None:
    """What ``handshake_tour`` must have seen, whatever the transport."""

    def text(result: Any) -> str:
        return str(result.content[0].text)

    assert "2025-11-25" == seen["version"]
    assert "legacy-test" == seen["info"].name
    assert "ask_name" in {t.name for t in seen["tools"].tools}
    assert {"result": 5} == seen["added"].structured_content
    assert "Hello, Ada!" == text(seen["ask_name"])
    assert "The model said: Paris" == text(seen["ask_model"])
    assert "file:///work" == text(seen["ask_roots"])
    assert "Ada: Paris" == text(seen["ask_twice"])
    assert "done after 3 steps" == text(seen["slow"])
    assert [1, 2, 3] == seen["progress"].seen
    assert [("info", f"step {i}") for i in (1, 2, 3)] == seen["logs"][:3]
    assert "first note" == seen["read"].contents[0].text
    assert "Hello, Ada" == seen["prompt"].messages[0].content.text
    assert seen["pong"] is not None
    assert "still here" == text(seen["after"])
