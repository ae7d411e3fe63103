"""Every configured limit, at its boundary, on every transport.

The limits are ``max_depth`` (nesting of arrays and objects; deeper is -32700),
``max_message_bytes`` (a longer stdio line or WebSocket frame is -32600, a larger HTTP
body 413) and ``max_concurrent`` (handlers running at once; more wait). Each is
configured to a value other than its default and probed one step either side of
it: an off-by-one, a limit that is ignored, or a kind of nesting that is not counted
fails here. The transports are the real ones: a stdio subprocess, Hypercorn on
127.0.0.1, a WebSocket listener, and the in-process test client.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import httpx
import pytest
import trio
from support import META, VERSION, serving, serving_websocket, wire
from support.stdio_probe import spawn
from support.ws_peer import connected

from trio_mcp import Limits, Server, tool
from trio_mcp.testing import McpTestClient, check_message

WAIT = 30.0
Transport = Literal["client", "stdio", "http", "websocket"]
TRANSPORTS: list[Transport] = ["client", "stdio", "http", "websocket"]
#: Transports with a byte limit (the in-process client passes text, not bytes).
BYTE_TRANSPORTS: list[Transport] = ["stdio", "http", "websocket"]

#: A raw message in, the server's one reply (and the HTTP status, or None) out.
Exchange = Callable[[str], Awaitable[tuple[dict[str, Any], int | None]]]

_running = 0
_most = 0


@tool
async def nap(seconds: float) -> int:
    """
    Sleep; return the most naps that ran at the same time so far.

    Args:
        seconds: How long to sleep.
    """
    global _running, _most  # counts across the calls of one test
    _running += 1
    _most = max(_most, _running)
    try:
        await trio.sleep(seconds)
    finally:
        _running -= 1
    return _most


def make_server() -> Server:
    return Server("limits", "1.0", tools=[nap])


@pytest.fixture(autouse=True)
def _reset_nap_count() -> None:
    global _running, _most  # the module's nap counters start at zero per test
    _running = _most = 0


# -- messages of an exact depth or size ----------------------------------------------


def nested(kind: str, depth: int) -> Any:
    """A value whose arrays and objects nest exactly ``depth`` levels."""
    value: Any = "leaf"
    for level in range(depth):
        as_array = kind == "array" or (kind == "mixed" and level % 2 == 0)
        value = [value] if as_array else {"k": value}
    return value


def discover(request_id: int, **extra: Any) -> dict[str, Any]:
    """A ``server/discover`` request; ``extra`` params are ignored by the server."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "server/discover",
        "params": {"_meta": META, **extra},
    }


def of_depth(kind: str, depth: int, request_id: int = 1, brackets: int = 0) -> str:
    """A discover request nesting exactly ``depth`` levels in all.

    The message is level 1 and ``params`` level 2, so the nested value adds
    ``depth - 2``; ``brackets`` opening brackets inside a string count for nothing.
    """
    message = discover(request_id, x=nested(kind, depth - 2))
    if brackets:
        message["params"]["s"] = "[{" * (brackets // 2)
    return json.dumps(message)


def of_size(size: int, request_id: int = 1) -> str:
    """A discover request of exactly ``size`` bytes of UTF-8."""
    bare = json.dumps(discover(request_id, pad=""))
    text = json.dumps(discover(request_id, pad="p" * (size - len(bare.encode()))))
    assert size == len(text.encode())
    return text


# -- one exchange per transport -------------------------------------------------------


@asynccontextmanager
async def exchanging(transport: Transport, **limits: Any) -> AsyncIterator[Exchange]:
    """Serve ``make_server()`` (the probe server on stdio) with ``limits``."""
    if transport == "client":
        async with McpTestClient(make_server(), limits=Limits(**limits)) as client:

            async def over_client(text: str) -> tuple[dict[str, Any], int | None]:
                replies = await client.send_raw(text)
                assert 1 == len(replies), replies
                return replies[0], None

            yield over_client
    elif transport == "stdio":
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in limits.items()]
        async with spawn(*flags) as peer:

            async def over_stdio(text: str) -> tuple[dict[str, Any], int | None]:
                seen = len(peer.messages)
                await peer.write(text.encode() + b"\n")
                await peer.wait_for(lambda: len(peer.messages) > seen)
                return peer.messages[seen], None

            yield over_stdio
    elif transport == "http":
        async with (
            serving(make_server(), limits=Limits(**limits)) as url,
            httpx.AsyncClient(timeout=WAIT) as http,
        ):

            async def over_http(text: str) -> tuple[dict[str, Any], int | None]:
                response = await http.post(
                    f"{url}/mcp",
                    content=text.encode(),
                    headers={
                        "content-type": "application/json",
                        "accept": "application/json, text/event-stream",
                        "mcp-protocol-version": VERSION,
                        "mcp-method": json.loads(text)["method"],
                    },
                )
                reply: dict[str, Any] = response.json()
                check_message(reply, "server/discover")
                return reply, response.status_code

            yield over_http
    else:
        async with (
            serving_websocket(make_server(), limits=Limits(**limits)) as port,
            connected(port) as ws_peer,
        ):

            async def over_websocket(text: str) -> tuple[dict[str, Any], int | None]:
                seen = len(ws_peer.messages)
                await ws_peer.ws.send_message(text)
                with trio.fail_after(WAIT):
                    while len(ws_peer.messages) <= seen:
                        await ws_peer._changed.wait()
                return ws_peer.messages[seen], None

            yield over_websocket


def assert_answered(reply: dict[str, Any], request_id: int) -> None:
    assert request_id == reply.get("id"), reply
    assert ["2026-07-28"] == reply["result"]["supportedVersions"]


def assert_refused(reply: dict[str, Any], code: int) -> None:
    assert "id" not in reply, reply
    assert code == reply["error"]["code"]


# -- depth ---------------------------------------------------------------------------

KINDS = ["array", "object", "mixed"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("brackets", [0, 400])
async def test_the_default_depth_128_is_accepted_and_129_refused(
    kind: str, brackets: int
) -> None:
    """docs/limits.md: at most 128 levels; brackets inside strings do not count."""
    async with exchanging("client") as send:
        at, _ = await send(of_depth(kind, 128, 1, brackets))
        over, _ = await send(of_depth(kind, 129, 2, brackets))

    assert_answered(at, 1)
    assert_refused(over, -32700)
    assert "128" in over["error"]["message"]


async def test_brackets_inside_strings_alone_are_not_depth() -> None:
    """Many brackets, all inside a string: the message is shallow and answered."""
    async with exchanging("client") as send:
        reply, _ = await send(of_depth("array", 3, 1, brackets=1000))

    assert_answered(reply, 1)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("kind", KINDS)
async def test_a_configured_max_depth_is_honoured(
    transport: Transport, kind: str
) -> None:
    """max_depth=8: 8 levels are answered, 9 are -32700 (HTTP 400), on every transport."""
    async with exchanging(transport, max_depth=8) as send:
        at, at_status = await send(of_depth(kind, 8, 1))
        over, over_status = await send(of_depth(kind, 9, 2))

    assert_answered(at, 1)
    assert_refused(over, -32700)
    assert "deeper than 8 levels" in over["error"]["message"]
    if transport == "http":
        assert (200, 400) == (at_status, over_status)


# -- size ----------------------------------------------------------------------------


@pytest.mark.parametrize("transport", BYTE_TRANSPORTS)
async def test_a_configured_max_message_bytes_is_honoured(transport: Transport) -> None:
    """max_message_bytes=2000: 2000 bytes are answered, 2001 are refused; the
    connection goes on serving."""
    async with exchanging(transport, max_message_bytes=2000) as send:
        at, at_status = await send(of_size(2000, 1))
        over, over_status = await send(of_size(2001, 2))
        after, _ = await send(of_size(1000, 3))

    assert_answered(at, 1)
    assert_refused(over, -32600)
    assert "2000" in over["error"]["message"]
    assert_answered(after, 3)
    if transport == "http":
        assert (200, 413) == (at_status, over_status)


async def test_a_websocket_frame_counts_utf8_bytes_not_characters() -> None:
    """1000 two-byte characters are 2000 bytes: over a limit of 1999."""
    async with exchanging("websocket", max_message_bytes=1999) as send:
        over, _ = await send(
            json.dumps(discover(1, pad="é" * 1000), ensure_ascii=False)
        )

    assert_refused(over, -32600)


# -- NaN and Infinity ----------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_are_parse_errors(
    transport: Transport, constant: str
) -> None:
    """RFC 8259 §6: they are not JSON numbers, so the message is not JSON (-32700)."""
    text = json.dumps(discover(1)).replace('"params":', f'"n":{constant},"params":')
    async with exchanging(transport) as send:
        reply, status = await send(text)
        after, _ = await send(json.dumps(discover(2)))

    assert_refused(reply, -32700)
    assert_answered(after, 2)
    if transport == "http":
        assert 400 == status


# -- concurrency ---------------------------------------------------------------------


def _most_of(replies: list[dict[str, Any]]) -> int:
    assert 4 == len(replies), replies
    return max(int(r["result"]["structuredContent"]) for r in replies)


@pytest.mark.parametrize("limit", [1, 3])
async def test_the_test_clients_max_concurrent_is_honoured(limit: int) -> None:
    """Four naps at once: exactly ``limit`` run together, the others wait."""
    async with McpTestClient(
        make_server(), limits=Limits(max_concurrent=limit)
    ) as client:
        results: list[int] = []

        async def one() -> None:
            result = await client.call_tool("nap", {"seconds": 0.3})
            results.append(int(wire(result.structured)))

        async with trio.open_nursery() as nursery:
            for _ in range(4):
                nursery.start_soon(one)

    assert limit == max(results)


@pytest.mark.parametrize("limit", [1, 3])
async def test_stdios_max_concurrent_is_honoured(limit: int) -> None:
    async with spawn(f"--max-concurrent={limit}") as peer:
        for n in range(1, 5):
            await peer.call(n, "nap", seconds=0.3)
        await peer.wait_for(lambda: all(peer.find(n) for n in range(1, 5)))
        replies = [peer.find(n) for n in range(1, 5)]

    assert limit == _most_of([r for r in replies if r is not None])


@pytest.mark.parametrize("limit", [1, 3])
async def test_https_max_concurrent_is_honoured(limit: int) -> None:
    replies: list[dict[str, Any]] = []
    async with (
        serving(make_server(), limits=Limits(max_concurrent=limit)) as url,
        httpx.AsyncClient(timeout=WAIT) as http,
    ):

        async def one(n: int) -> None:
            response = await http.post(
                f"{url}/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {
                        "_meta": META,
                        "name": "nap",
                        "arguments": {"seconds": 0.3},
                    },
                },
                headers={
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": VERSION,
                    "mcp-method": "tools/call",
                    "mcp-name": "nap",
                },
            )
            replies.append(response.json())

        async with trio.open_nursery() as nursery:
            for n in range(1, 5):
                nursery.start_soon(one, n)

    assert limit == _most_of(replies)


@pytest.mark.parametrize("limit", [1, 3])
async def test_websockets_max_concurrent_is_honoured(limit: int) -> None:
    async with (
        serving_websocket(make_server(), limits=Limits(max_concurrent=limit)) as port,
        connected(port) as peer,
    ):
        for n in range(1, 5):
            await peer.call(n, "nap", seconds=0.3)
        await peer.reply(1, 2, 3, 4)
        replies = [peer.find(n) for n in range(1, 5)]

    assert limit == _most_of([r for r in replies if r is not None])
