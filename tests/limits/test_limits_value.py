"""``Limits``: one frozen value, checked when built, honoured by every transport
(api.md "Calls as values"), with the separate keyword arguments still overriding.

Each transport is tested for real: stdio in a subprocess, ``mount`` and
``serve_http`` on Hypercorn at 127.0.0.1, ``serve_websocket`` with
trio-websocket's client, ``serve_messages`` through the test client.
"""

from __future__ import annotations

import datetime
import json
import math
import sys
from functools import partial
from typing import Any

import attrs
import httpx
import pytest
import trio
from support import serving, serving_app
from support.tools import echo
from support.wayout_peer import META, ROOT
from support.wayout_server import make_server
from trio_websocket import open_websocket_url

from trio_mcp import InvalidArgument, Limits, Server
from trio_mcp.testing import McpTestClient, check_message

WAIT = 30.0
INVALID_REQUEST = -32600
PARSE_ERROR = -32700


# -- the value --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_message_bytes", 0),
        ("max_depth", 0),
        ("max_concurrent", 0),
        ("max_concurrent", -3),
        ("max_concurrent", True),
        ("max_concurrent", 2.5),
        ("max_waiting", -1),
        ("max_listens", 0),
        ("grace_period", -1),
        ("grace_period", math.nan),
        ("keepalive_interval", 0),
        ("keepalive_interval", -0.5),
        ("keepalive_interval", math.nan),
    ],
)
def test_an_out_of_range_limit_is_a_value_error_naming_its_field(
    field: str, value: object
) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["5", None, [1]])
def test_a_duration_of_the_wrong_type_is_a_type_error_naming_its_field(
    value: object,
) -> None:
    with pytest.raises(TypeError, match="grace_period"):
        Limits(grace_period=value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="keepalive_interval"):
        Limits(keepalive_interval=value)  # type: ignore[arg-type]


def test_limits_take_timedeltas_zero_waiting_and_infinite_grace() -> None:
    limits = Limits(
        grace_period=datetime.timedelta(milliseconds=1500),
        keepalive_interval=datetime.timedelta(seconds=2),
        max_waiting=0,
    )
    forever = Limits(grace_period=math.inf)

    assert (limits.grace_period, limits.keepalive_interval) == (1.5, 2.0)
    assert limits.max_waiting == 0
    assert forever.grace_period == math.inf


def test_limits_are_frozen_and_keyword_only() -> None:
    limits = Limits()

    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        limits.max_concurrent = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        Limits(1)  # type: ignore[call-arg]


def test_fields_given_as_keywords_apply_on_top_of_limits() -> None:
    base = Limits(max_depth=10, max_concurrent=2)

    assert Limits.of(base) is base
    assert Limits.of(None) == Limits()
    assert Limits.of(base, {"max_concurrent": 5}) == Limits(
        max_depth=10, max_concurrent=5
    )
    with pytest.raises(ValueError, match="max_concurrent"):
        Limits.of(base, {"max_concurrent": 0})
    with pytest.raises(InvalidArgument, match="limits=Limits"):
        Limits.of(base, {"body_timeout": 3})  # type: ignore[arg-type]


async def test_every_serve_method_takes_the_same_spellings() -> None:
    """api.md "Calls as values": the separate keyword arguments keep working, as
    spellings of the one ``Limits`` (``LimitFields``); on the serve methods they are
    deprecated (api.md "The house, round two")."""
    server = Server("spelled", "1.0", tools=[echo])
    with pytest.warns(DeprecationWarning, match=r"limits=Limits\(max_concurrent="):
        app = server.mount(max_concurrent=3, limits=Limits(max_depth=9))
    assert (3, 9) == (app.limits.max_concurrent, app.limits.max_depth)
    async with McpTestClient(server, max_concurrent=2) as client:
        assert 2 == client.limits.max_concurrent
        assert "hi" == (await client.call_tool("echo", {"text": "hi"})).structured


# -- stdio --------------------------------------------------------------------------------
STDIO_SERVER = """
import sys, trio
sys.path.insert(0, "tests")
from support.wayout_server import make_server
from trio_mcp import Limits
async def main():
    limits = Limits(max_message_bytes=400)
    extra = {} if len(sys.argv) < 2 else {"max_message_bytes": int(sys.argv[1])}
    await make_server().serve_stdio(limits=limits, **extra)
trio.run(main)
"""


async def stdio_codes(*args: str) -> list[int | None]:
    """Send a 1,000-byte call then a short one; return each reply's error code."""
    big = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x" * 1000}, "_meta": META},
    }
    small = {**big, "id": 2, "params": {**big["params"], "arguments": {"text": "x"}}}  # type: ignore[dict-item]
    data = b"".join(json.dumps(m).encode() + b"\n" for m in (big, small))
    with trio.fail_after(WAIT):
        done = await trio.run_process(
            [sys.executable, "-c", STDIO_SERVER, *args],
            stdin=data,
            capture_stdout=True,
            capture_stderr=True,
            cwd=ROOT,
        )
    replies = [json.loads(line.decode("utf-8")) for line in done.stdout.splitlines()]
    for reply in replies:
        check_message(reply, "tools/call" if "id" in reply else None)
    return [r["error"]["code"] if "error" in r else None for r in replies]


async def test_serve_stdio_honours_limits_and_the_keyword_overrides_it() -> None:
    limited = await stdio_codes()
    overridden = await stdio_codes("5000")

    assert limited == [INVALID_REQUEST, None]
    assert overridden == [None, None]


# -- HTTP -----------------------------------------------------------------------------------
async def post_echo(base: str, size: int) -> int:
    """POST a call whose body is a little over ``size`` bytes; return the status."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x" * size}, "_meta": META},
    }
    async with httpx.AsyncClient() as client:
        with trio.fail_after(WAIT):
            response = await client.post(
                base + "/mcp",
                content=json.dumps(body).encode(),
                headers={
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": "2026-07-28",
                    "mcp-method": "tools/call",
                    "mcp-name": "echo",
                },
            )
    if response.status_code == 200:
        check_message(response.json(), "tools/call")
    return response.status_code


async def test_mount_honours_limits() -> None:
    server = make_server()

    async with serving_app(server.mount(limits=Limits(max_message_bytes=500))) as base:
        limited = [await post_echo(base, 100), await post_echo(base, 1000)]
    async with serving_app(server.mount(limits=Limits(max_message_bytes=5000))) as base:
        larger = await post_echo(base, 1000)

    assert limited == [200, 413]
    assert larger == 200


async def test_serve_http_honours_limits() -> None:
    async with serving(make_server(), limits=Limits(max_message_bytes=500)) as base:
        limited = await post_echo(base, 1000)

    assert limited == 413


@pytest.mark.parametrize("field", ["body_timeout", "idle_timeout", "max_listens"])
def test_a_limit_that_is_no_spelling_says_to_put_it_in_limits(field: str) -> None:
    """Beside ``mount``'s ``LimitFields``, a ``Limits`` field is refused with the
    spelling that takes it."""
    options: Any = {field: 2}
    with pytest.raises(InvalidArgument) as refused:
        make_server().mount(**options)

    assert (
        f"{field} of mount/serve_http are fields of Limits: give "
        f"limits=Limits({field}=...)"
    ) == str(refused.value)


# -- WebSocket ------------------------------------------------------------------------------
async def ws_code(size: int, **options: Any) -> int | None:
    """One call with a ``size``-character argument over WebSocket; its error code."""
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(make_server().serve_websocket, port=0, **options)
        )
        async with open_websocket_url(
            f"ws://127.0.0.1:{port}/mcp", subprotocols=["mcp"]
        ) as ws:
            await ws.send_message(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/call",
                        "params": {
                            "name": "echo",
                            "arguments": {"text": "x" * size},
                            "_meta": META,
                        },
                    }
                )
            )
            with trio.fail_after(WAIT):
                reply = json.loads(await ws.get_message())
        nursery.cancel_scope.cancel()
    check_message(reply, "tools/call" if "id" in reply else None)
    return reply["error"]["code"] if "error" in reply else None


async def test_serve_websocket_honours_limits() -> None:
    limits = Limits(max_message_bytes=800)

    limited = await ws_code(1000, limits=limits)
    small = await ws_code(10, limits=limits)
    larger = await ws_code(1000, limits=Limits(max_message_bytes=5000))

    assert (limited, small, larger) == (INVALID_REQUEST, None, None)


# -- serve_messages (custom transports, the test client) -----------------------------------
async def test_serve_messages_honours_limits() -> None:
    deep = {"text": "x", "nested": [[[[[["deep"]]]]]]}
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": deep, "_meta": META},
        }
    )
    server = make_server()

    async def replies(**options: Any) -> list[dict[str, Any]]:
        send_in, receive_in = trio.open_memory_channel[str | bytes](1)
        out: list[dict[str, Any]] = []

        async def collect(text: str) -> None:
            out.append(json.loads(text))

        async with send_in:
            await send_in.send(line)
        with trio.fail_after(WAIT):
            await server.serve_messages(receive_in, collect, **options)
        return out

    (too_deep,) = await replies(limits=Limits(max_depth=4))
    (read,) = await replies(limits=Limits(max_depth=20))

    assert too_deep["error"]["code"] == PARSE_ERROR
    # Deep enough to be read: the tool's schema then refuses the unknown argument.
    assert read["result"]["isError"] is True
    assert "nested" in read["result"]["content"][0]["text"]


async def test_the_test_client_serves_with_the_default_limits() -> None:
    async with McpTestClient(make_server()) as client:
        echoed = await client.call_tool("echo", {"text": "y" * 100_000})

    assert echoed.structured == "y" * 100_000
