"""Calls of a handshake-era HTTP session: rounds, progress, logs, cancellation, streams.

A handler's input requests reach the client as real requests on the call's POST
stream, answered by POSTs (202); progress and log messages precede the reply on the
same stream; ``notifications/cancelled`` ends a call without a reply; the session's
``GET`` stream carries resource updates and list changes. Every server message is
validated against the session's revision.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio
from legacy_server import ALL_CAPS, make_server
from support import serving
from support.host_auth import user_from_header
from support.legacy import LegacyError
from support.legacy_http import LegacyHttpPeer, session_stream
from support.mcp_http import headers_for, post

from trio_mcp import Limits


async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "elicitation/create":
        return {"action": "accept", "content": {"name": "Ada"}}
    if method == "sampling/createMessage":
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "test-model",
            "stopReason": "endTurn",
        }
    return {"roots": [{"uri": "file:///work", "name": "work"}]}


async def test_input_requests_are_asked_on_the_post_stream_and_answered_by_posts() -> (
    None
):
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(
            client, base + "/mcp", capabilities=ALL_CAPS, answer=answer
        )
        await peer.initialize()
        greeted = await peer.request(
            "tools/call", {"name": "ask_name", "arguments": {}}
        )
        everything = await peer.request(
            "tools/call", {"name": "ask_all", "arguments": {}}
        )
        twice = await peer.request("tools/call", {"name": "ask_twice", "arguments": {}})

    assert "Hello, Ada!" == greeted["content"][0]["text"]
    assert "all three answered" == everything["content"][0]["text"]
    assert "Ada: Paris" == twice["content"][0]["text"]
    methods = [m["method"] for m in peer.asked]
    assert "elicitation/create" == methods[0]
    assert {"elicitation/create", "sampling/createMessage", "roots/list"} == set(
        methods[1:4]
    )
    assert 6 == len(methods)
    assert [202] * 6 == peer.answered
    assert len({m["id"] for m in peer.asked}) == 6


async def test_a_client_error_or_an_undeclared_capability_ends_the_call() -> None:
    async def refuse(method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise LegacyError({"code": -1, "message": "the user closed the dialog"})

    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        refusing = LegacyHttpPeer(
            client, base + "/mcp", capabilities=ALL_CAPS, answer=refuse
        )
        await refusing.initialize()
        with pytest.raises(LegacyError) as refused:
            await refusing.request("tools/call", {"name": "ask_name", "arguments": {}})
        bare = LegacyHttpPeer(client, base + "/mcp")
        await bare.initialize()
        with pytest.raises(LegacyError) as undeclared:
            await bare.request("tools/call", {"name": "ask_model", "arguments": {}})

    assert -32603 == refused.value.code
    assert "the user closed the dialog" in str(refused.value.message)
    assert -32021 == undeclared.value.code
    assert [] == bare.asked


async def test_progress_and_logs_precede_the_reply_after_set_level() -> None:
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, base + "/mcp")
        await peer.initialize()
        quiet = await peer.request(
            "tools/call", {"name": "slow", "arguments": {"steps": 2}}
        )
        assert [] == peer.notifications
        assert {} == await peer.request("logging/setLevel", {"level": "info"})
        slow = await peer.request(
            "tools/call",
            {
                "name": "slow",
                "arguments": {"steps": 3},
                "_meta": {"progressToken": "p"},
            },
        )

    assert "done after 2 steps" == quiet["content"][0]["text"]
    assert "done after 3 steps" == slow["content"][0]["text"]
    logs = [
        n["params"]
        for n in peer.notifications
        if n["method"] == "notifications/message"
    ]
    progress = [
        n["params"]["progress"]
        for n in peer.notifications
        if n["method"] == "notifications/progress"
    ]
    assert [("info", f"step {i}") for i in (1, 2, 3)] == [
        (log["level"], log["data"]) for log in logs
    ]
    assert [1, 2, 3] == progress


async def test_notifications_cancelled_ends_the_call_without_a_reply() -> None:
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, base + "/mcp")
        await peer.initialize()
        await peer.request("logging/setLevel", {"level": "info"})
        replies: list[dict[str, Any] | None] = []

        async def call() -> None:
            replies.append(
                await peer.exchange(
                    "tools/call", {"name": "forever", "arguments": {}}, request_id="f"
                )
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            await peer.next_notification("notifications/message")  # it runs
            status = await peer.notify("notifications/cancelled", {"requestId": "f"})
        after = await peer.request(
            "tools/call", {"name": "echo", "arguments": {"text": "hi"}}
        )

    assert 202 == status
    assert [None] == replies
    assert "hi" == after["content"][0]["text"]


async def test_an_answer_after_its_call_was_cancelled_is_refused() -> None:
    asked, cancelled = trio.Event(), trio.Event()

    async def late(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        await cancelled.wait()
        return {"action": "cancel"}

    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, base + "/mcp", capabilities=ALL_CAPS, answer=late)
        await peer.initialize()
        replies: list[dict[str, Any] | None] = []

        async def call() -> None:
            replies.append(
                await peer.exchange(
                    "tools/call", {"name": "ask_name", "arguments": {}}, request_id=5
                )
            )

        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call)
                await asked.wait()
                await peer.notify("notifications/cancelled", {"requestId": 5})
                cancelled.set()
        after = await peer.request(
            "tools/call", {"name": "echo", "arguments": {"text": "on"}}
        )

    assert [None] == replies
    assert [400] == peer.answered  # nothing waits for it any more
    assert "on" == after["content"][0]["text"]


async def test_too_many_waiting_rounds_are_answered_busy() -> None:
    waiting = trio.Event()

    async def slowly(method: str, params: dict[str, Any]) -> dict[str, Any]:
        waiting.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    limits = Limits(max_concurrent=1, max_waiting=0)
    async with (
        serving(make_server(), limits=limits) as base,
        httpx.AsyncClient() as client,
    ):
        peer = LegacyHttpPeer(
            client, base + "/mcp", capabilities=ALL_CAPS, answer=slowly
        )
        await peer.initialize()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                peer.exchange, "tools/call", {"name": "ask_name", "arguments": {}}
            )
            with trio.fail_after(10):
                await waiting.wait()
            with pytest.raises(LegacyError) as busy:
                await peer.request("tools/call", {"name": "ask_model", "arguments": {}})
            nursery.cancel_scope.cancel()

    assert -32000 == busy.value.code
    assert {"retryable": True} == busy.value.data


async def test_the_get_stream_carries_updates_of_subscribed_resources() -> None:
    server = make_server(dynamic=True)
    async with serving(server) as base, httpx.AsyncClient() as client:
        url = base + "/mcp"
        peer = LegacyHttpPeer(client, url)
        await peer.initialize()
        assert peer.sid is not None
        async with session_stream(url, peer.sid) as stream:
            assert 200 == stream.status
            assert "text/event-stream" == stream.headers["content-type"]
            async with session_stream(url, peer.sid) as second:
                assert 409 == second.status
            assert {} == await peer.request(
                "resources/subscribe", {"uri": "watch://counter"}
            )
            await peer.request("tools/call", {"name": "touch", "arguments": {}})
            updated = await stream.next_message()
            server.replace(tools=[])
            changed = await stream.next_message()
            assert {} == await peer.request(
                "resources/unsubscribe", {"uri": "watch://counter"}
            )
            closed = await client.delete(url, headers=peer.headers())
            end = await stream.next_or_end()

    assert {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "watch://counter"},
    } == updated
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} == changed
    assert 200 == closed.status_code
    assert end is None  # the session ended, and so did its stream


async def test_subscribe_needs_an_updatable_resource_and_is_bounded() -> None:
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, base + "/mcp")
        await peer.initialize()
        with pytest.raises(LegacyError) as no_uri:
            await peer.request("resources/subscribe", {})
        many = [
            await peer.exchange("resources/subscribe", {"uri": f"watch://{i}"})
            for i in range(1025)
        ]

    assert -32602 == no_uri.value.code
    assert all(m is not None and "result" in m for m in many[:1024])
    assert many[-1] is not None
    assert -32602 == many[-1]["error"]["code"]


async def test_a_get_stream_needs_a_session_and_an_event_stream_accept() -> None:
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        url = base + "/mcp"
        peer = LegacyHttpPeer(client, url)
        await peer.initialize()
        assert peer.sid is not None
        async with session_stream(url, "nobody") as unknown:
            missing = (unknown.status, json.loads(await unknown.body()))
        async with session_stream(
            url, peer.sid, extra={"accept": "application/json"}
        ) as wrong:
            not_acceptable = wrong.status

    assert 404 == missing[0]
    assert "error" in missing[1]
    assert 406 == not_acceptable


async def test_get_streams_count_against_the_listen_bounds() -> None:
    """A session's ``GET`` stream is a listen stream: at most ``max_listens`` per
    caller and ``max_listens_total`` per app (503, ``Retry-After``), counted with the
    caller's modern listens, and its slot is free again once it ends."""
    limits = Limits(max_listens=1, max_listens_total=2)
    async with (
        serving(make_server(), limits=limits, principal=user_from_header) as base,
        httpx.AsyncClient() as client,
    ):
        url = base + "/mcp"
        peers: dict[str, str] = {}
        for name in ("alice", "alice-again", "bob", "carol"):
            peer = LegacyHttpPeer(client, url, headers={"x-user": name[:5]})
            await peer.initialize()
            assert peer.sid is not None
            peers[name] = peer.sid
        statuses: dict[str, int] = {}
        alice = {"x-user": "alice"}
        async with session_stream(url, peers["alice"], extra=alice) as first:
            statuses["alice"] = first.status
            async with session_stream(url, peers["alice-again"], extra=alice) as two:
                statuses["alice, a second stream"] = two.status
                retry_after = two.headers.get("retry-after")
            listen = "subscriptions/listen"
            modern = await post(
                client,
                base,
                listen,
                {"notifications": {}},
                headers=headers_for(listen, **alice),
            )
            statuses["alice, a modern listen"] = modern.status_code
            bob = {"x-user": "bob"}
            async with session_stream(url, peers["bob"], extra=bob) as other:
                statuses["bob"] = other.status
                carol = {"x-user": "carol"}
                async with session_stream(url, peers["carol"], extra=carol) as third:
                    statuses["carol, past the app's bound"] = third.status
        async with session_stream(url, peers["alice-again"], extra=alice) as freed:
            statuses["alice, once her stream ended"] = freed.status

    assert {
        "alice": 200,
        "alice, a second stream": 503,
        "alice, a modern listen": 503,
        "bob": 200,
        "carol, past the app's bound": 503,
        "alice, once her stream ended": 200,
    } == statuses
    assert "1" == retry_after
