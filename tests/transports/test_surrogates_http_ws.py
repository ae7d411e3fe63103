"""Lone surrogates on Streamable HTTP (JSON and SSE) and WebSocket (api.md "The way
out": the same choice on every transport).

JSON may carry ``"\\ud800"``; Python decodes it into a ``str`` UTF-8 cannot encode.
Our choice (docs/errors.md) is to escape on the way out: the reply carries the same
JSON value as ``\\uXXXX`` escapes, in valid UTF-8. Each test reads the raw bytes (a
body, every SSE ``data:`` line, every text frame), decodes them as strict UTF-8 and
validates every message against the revision's schema; a request after the hostile
one must still be answered.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import httpx
import trio
from support import serving
from support.sse import sse_frames
from support.wayout_peer import META
from support.wayout_server import make_server
from trio_websocket import open_websocket_url

from trio_mcp.testing import check_message

HOSTILE = "lone \ud800 high, lone \udfff low, a pair \ud83d\ude00"
#: What HOSTILE means as JSON: the escaped pair is one character, the lone ones stay.
VALUE = "lone \ud800 high, lone \udfff low, a pair \U0001f600"
WAIT = 30.0


async def post_call(
    client: httpx.AsyncClient,
    url: str,
    name: str,
    arguments: dict[str, Any],
    **meta: Any,
) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {**META, **meta}},
    }
    with trio.fail_after(WAIT):
        return await client.post(
            url,
            # ASCII JSON: the surrogates travel as escapes, as a client may send them.
            content=json.dumps(body).encode("ascii"),
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": name,
            },
        )


def strict(data: bytes) -> dict[str, Any]:
    """One message from raw bytes: strict UTF-8, JSON, valid for ``tools/call``."""
    message = json.loads(data.decode("utf-8"))
    check_message(message, "tools/call")
    assert isinstance(message, dict)
    return message


async def test_http_json_reply_escapes_surrogates_and_the_next_call_is_answered() -> (
    None
):
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        url = f"{base}/mcp"
        hostile = await post_call(client, url, "echo", {"text": HOSTILE})
        after = await post_call(client, url, "add", {"a": 1, "b": 2})

    assert hostile.status_code == 200
    assert hostile.headers["content-type"] == "application/json"
    assert strict(hostile.content)["result"]["structuredContent"] == VALUE
    assert strict(after.content)["result"]["structuredContent"] == 3


async def test_http_sse_escapes_surrogates_in_progress_and_in_the_reply() -> None:
    """A tool that reports progress first turns the reply into an SSE stream."""
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        url = f"{base}/mcp"
        response = await post_call(
            client, url, "echo_after_progress", {"text": HOSTILE}, progressToken="p"
        )
        after = await post_call(client, url, "add", {"a": 2, "b": 2})

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    progress, reply = (strict(frame) for frame in sse_frames(response.content))
    assert progress["method"] == "notifications/progress"
    assert progress["params"]["message"] == VALUE
    assert reply["result"]["structuredContent"] == VALUE
    assert strict(after.content)["result"]["structuredContent"] == 4


async def test_websocket_frames_escape_surrogates_and_the_next_call_is_answered() -> (
    None
):
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(make_server().serve_websocket, port=0))
        async with open_websocket_url(
            f"ws://127.0.0.1:{port}/mcp", subprotocols=["mcp"]
        ) as ws:
            for request_id, (name, arguments) in enumerate(
                [("echo", {"text": HOSTILE}), ("add", {"a": 3, "b": 3})], start=1
            ):
                await ws.send_message(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": request_id,
                            "method": "tools/call",
                            "params": {
                                "name": name,
                                "arguments": arguments,
                                "_meta": META,
                            },
                        }
                    )
                )
            with trio.fail_after(WAIT):
                frames = [await ws.get_message() for _ in range(2)]
        nursery.cancel_scope.cancel()

    # A text frame is a str; encoding it strictly proves it holds no lone surrogate.
    replies = {m["id"]: m for m in (strict(f.encode("utf-8")) for f in frames)}  # type: ignore[union-attr]
    assert replies[1]["result"]["structuredContent"] == VALUE
    assert replies[2]["result"]["structuredContent"] == 6
