"""A call the stream loop (stdio, WebSocket, ``serve_messages``) has no place for is
still a call: -32000 "server busy" at once, and a ``refused`` receipt naming busy."""

from __future__ import annotations

import json
from typing import Any

import trio
from support import META
from support.waiting import Held

from trio_mcp import Limits, Receipt, Server
from trio_mcp.testing import check_message


async def test_a_busy_answer_on_a_stream_leaves_a_receipt() -> None:
    held = Held("held")
    receipts: list[Receipt] = []
    server = Server("busy", "1", tools=[held.tool], receipts=receipts.append)
    send_in, receive_in = trio.open_memory_channel[str | bytes](4)
    replies: dict[int, dict[str, Any]] = {}

    async def collect(text: str) -> None:
        message = json.loads(text)
        replies[message["id"]] = message
        if message["id"] == 2:
            held.release.set()

    def call(number: int) -> str:
        params = {"name": "held", "arguments": {}, "_meta": META}
        return json.dumps(
            {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}
        )

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: server.serve_messages(
                    receive_in, collect, limits=Limits(max_concurrent=1, max_waiting=0)
                )
            )
            async with send_in:
                await send_in.send(call(1))
                await held.started.wait()
                await send_in.send(call(2))

    assert {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {
            "code": -32000,
            "message": "server busy: 1 calls are running and 0 are waiting; retry"
            " later",
            "data": {"retryable": True},
        },
    } == replies[2]
    check_message(replies[2], "tools/call")
    assert "done" == replies[1]["result"]["structuredContent"]
    assert [("refused", "trio_mcp.Busy"), ("ok", None)] == [
        (r.outcome, r.error_type) for r in receipts
    ]
