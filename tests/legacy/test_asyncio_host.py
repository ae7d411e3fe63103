"""A dual-era server mounted in an asyncio host (``trio_mcp.asyncio.mount`` under uvicorn).

The handshake era holds there too: the official Python client in ``mode="legacy"``
opens a session, answers an elicitation on the call's stream with a POST, gets a
resource update on the session's ``GET`` stream, and ends the session. The server runs
on Trio as the guest of uvicorn's loop; every recorded server message is checked
against the 2025-11-25 schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import pytest
import uvicorn
from legacy_server import make_server
from mcp import Client
from mcp import types as mcp_types
from support.asgi import Recorder
from support.legacy_http import check_recorded
from support.sdk import elicit

from trio_mcp.asyncio import mount

pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"
)


def test_a_handshake_era_session_under_uvicorn() -> None:
    server = make_server()
    app = mount(server, path="/")
    recorder = Recorder(app)

    async def main() -> tuple[Any, ...]:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(recorder, log_config=None, lifespan="off")
        host = uvicorn.Server(config)
        serving = asyncio.create_task(host.serve(sockets=[sock]))
        updated = asyncio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, mcp_types.ResourceUpdatedNotification):
                updated.set()

        try:
            while not host.started:
                if serving.done():
                    serving.result()  # uvicorn's failure, raised
                await asyncio.sleep(0.01)
            async with (
                asyncio.timeout(30),
                Client(
                    f"http://127.0.0.1:{port}/",
                    mode="legacy",
                    elicitation_callback=elicit,
                    message_handler=on_message,
                ) as client,
            ):
                version = client.protocol_version
                greeted = await client.call_tool("ask_name", {})
                await client.subscribe_resource("watch://counter")
                while not updated.is_set():
                    await client.call_tool("touch", {})
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(updated.wait(), 0.2)
        finally:
            host.should_exit = True
            await serving
            sock.close()
        return version, greeted

    version, greeted = asyncio.run(main())

    assert "2025-11-25" == version
    assert "Hello, Ada!" == greeted.content[0].text
    methods = [(e.method, e.status) for e in recorder.exchanges]
    assert ("GET", 200) in methods
    assert ("DELETE", 200) == methods[-1]
    assert check_recorded(recorder) > 5
