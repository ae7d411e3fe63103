"""The official Python SDK's client (``mcp`` 2.3.0) in its handshake mode over HTTP.

``Client(url, mode="legacy")`` sends ``initialize`` to a dual-era server on
Hypercorn and speaks revision 2025-11-25 with a session: lists, calls with
progress, logging after ``logging/setLevel``, elicitation, sampling and roots
through the client's callbacks (server-to-client requests on each call's stream,
answered by the client's POSTs), a cancelled call, and resource updates on the
session's ``GET`` stream after ``resources/subscribe``. A recording layer keeps
every response; each message the server sent is validated against 2025-11-25.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
from legacy_server import make_server
from mcp import Client
from mcp import types as mcp_types
from support import serving_app
from support.asgi import Recorder
from support.legacy_http import check_recorded
from support.sdk import Progress, sdk_streams_left_open
from test_python_client import elicit, roots, sample

#: The client warns on each handshake-era method (removed or deprecated by
#: 2026-07-28): its opinion of the era this test exercises on purpose.
pytestmark = [
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
    sdk_streams_left_open,
]

WAIT = 30.0


async def test_the_python_client_in_handshake_mode_over_http() -> None:
    server = make_server()
    recorder = Recorder(server.mount())
    logs: list[tuple[str, Any]] = []
    waiting = trio.Event()
    updated = trio.Event()

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))
        if params.data == "waiting":
            waiting.set()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            updated.set()

    progress = Progress()
    async with serving_app(recorder) as url:
        with trio.fail_after(WAIT):
            async with Client(
                url + "/mcp",
                mode="legacy",
                elicitation_callback=elicit,
                sampling_callback=sample,
                list_roots_callback=roots,
                logging_callback=on_log,
                message_handler=on_message,
            ) as client:
                version = client.protocol_version
                tools = await client.list_tools()
                added = await client.call_tool("add", {"a": 2, "b": 3})
                greeted = await client.call_tool("ask_name", {})
                modelled = await client.call_tool("ask_model", {})
                rooted = await client.call_tool("ask_roots", {})
                both = await client.call_tool("ask_twice", {})
                await client.set_logging_level("info")
                slow = await client.call_tool(
                    "slow", {"steps": 3}, progress_callback=progress
                )
                read = await client.read_resource("note://alpha")
                prompt = await client.get_prompt("greet", {"name": "Ada"})
                await client.subscribe_resource("watch://counter")
                while not updated.is_set():
                    # The client opens its GET stream on its own schedule: touch
                    # until an update arrives (a repeated update is harmless).
                    await client.call_tool("touch", {})
                    with trio.move_on_after(0.2):
                        await updated.wait()
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(client.call_tool, "forever", {})
                    await waiting.wait()
                    nursery.cancel_scope.cancel()
                pong = await client.send_ping()
                after = await client.call_tool("echo", {"text": "still here"})

    assert "2025-11-25" == version
    assert "ask_name" in {t.name for t in tools.tools}
    assert {"result": 5} == added.structured_content
    assert "Hello, Ada!" == greeted.content[0].text  # type: ignore[union-attr]
    assert "The model said: Paris" == modelled.content[0].text  # type: ignore[union-attr]
    assert "file:///work" == rooted.content[0].text  # type: ignore[union-attr]
    assert "Ada: Paris" == both.content[0].text  # type: ignore[union-attr]
    assert "done after 3 steps" == slow.content[0].text  # type: ignore[union-attr]
    assert [1, 2, 3] == progress.seen
    assert [("info", f"step {i}") for i in (1, 2, 3)] == logs[:3]
    assert "first note" == read.contents[0].text  # type: ignore[union-attr]
    assert "Hello, Ada" == prompt.messages[0].content.text  # type: ignore[union-attr]
    assert pong is not None
    assert "still here" == after.content[0].text  # type: ignore[union-attr]
    methods = [(e.method, e.status) for e in recorder.exchanges]
    assert ("GET", 200) in methods  # the session's stream
    assert ("DELETE", 200) == methods[-1]  # the client ends its session
    assert check_recorded(recorder) > 20
