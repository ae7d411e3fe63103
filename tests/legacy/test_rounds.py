"""A handler's input requests reach a handshake-era client as real requests.

The handlers (``legacy_server``) return ``NeedsInput`` as they do for a modern
client; the edge sends ``elicitation/create``, ``sampling/createMessage`` and
``roots/list``, collects the answers, and completes the same rounds.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
from legacy_server import ALL_CAPS, make_server
from support.legacy import LegacyError, LegacyPeer

from trio_mcp import Limits, Server


async def answer_all(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A client that accepts every form as Ada, samples "Paris", has one root."""
    if method == "elicitation/create":
        if params.get("mode") == "url":
            return {"action": "accept"}
        return {"action": "accept", "content": {"name": "Ada"}}
    if method == "sampling/createMessage":
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "test-model",
            "stopReason": "endTurn",
        }
    assert "roots/list" == method
    return {"roots": [{"uri": "file:///work", "name": "work"}]}


async def _call(peer: LegacyPeer, name: str) -> dict[str, Any]:
    return await peer.request("tools/call", {"name": name, "arguments": {}})


@pytest.mark.parametrize(
    ("tool", "text", "methods"),
    [
        ("ask_name", "Hello, Ada!", ["elicitation/create"]),
        ("ask_model", "The model said: Paris", ["sampling/createMessage"]),
        ("ask_roots", "file:///work", ["roots/list"]),
        (
            "ask_all",
            "all three answered",
            ["elicitation/create", "roots/list", "sampling/createMessage"],
        ),
        ("ask_twice", "Ada: Paris", ["elicitation/create", "sampling/createMessage"]),
    ],
)
async def test_input_requests_become_server_requests(
    tool: str, text: str, methods: list[str]
) -> None:
    async with LegacyPeer(
        make_server(), capabilities=ALL_CAPS, answer=answer_all
    ) as peer:
        await peer.initialize()
        result = await _call(peer, tool)

    assert text == result["content"][0]["text"]
    assert methods == sorted(m["method"] for m in peer.asked) or methods == [
        m["method"] for m in peer.asked
    ]
    assert len({m["id"] for m in peer.asked}) == len(peer.asked)


async def test_the_form_is_the_handlers_and_a_decline_reaches_it() -> None:
    async def decline(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline", "_meta": {"client": "kept out"}}

    async with LegacyPeer(
        make_server(), capabilities={"elicitation": {}}, answer=decline
    ) as peer:
        await peer.initialize()
        result = await _call(peer, "ask_name")

    assert "no name (decline)" == result["content"][0]["text"]
    (asked,) = peer.asked
    assert {
        "mode": "form",
        "message": "What is your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    } == asked["params"]


async def test_2025_06_18_forms_carry_no_mode() -> None:
    async with LegacyPeer(
        make_server(),
        revision="2025-06-18",
        capabilities={"elicitation": {}},
        answer=answer_all,
    ) as peer:
        await peer.initialize()
        result = await _call(peer, "ask_name")

    assert "Hello, Ada!" == result["content"][0]["text"]
    assert "mode" not in peer.asked[0]["params"]


async def test_url_elicitation_gets_an_elicitation_id_in_2025_11_25() -> None:
    async with LegacyPeer(
        make_server(), capabilities=ALL_CAPS, answer=answer_all
    ) as peer:
        await peer.initialize()
        result = await _call(peer, "ask_url")

    assert "url accept" == result["content"][0]["text"]
    params = peer.asked[0]["params"]
    assert "url" == params["mode"]
    assert 32 == len(params["elicitationId"])


@pytest.mark.parametrize(
    ("revision", "capabilities", "tool", "needed"),
    [
        ("2025-11-25", {}, "ask_name", {"elicitation": {}}),
        ("2025-11-25", {"elicitation": {}}, "ask_model", {"sampling": {}}),
        ("2025-11-25", {"elicitation": {}}, "ask_url", {"elicitation": {"url": {}}}),
        ("2025-06-18", ALL_CAPS, "ask_url", {"elicitation": {"url": {}}}),
        ("2025-03-26", ALL_CAPS, "ask_name", {"elicitation": {}}),
    ],
)
async def test_without_the_capability_the_request_fails_and_nothing_is_asked(
    revision: str, capabilities: dict[str, Any], tool: str, needed: dict[str, Any]
) -> None:
    async with LegacyPeer(
        make_server(), revision=revision, capabilities=capabilities, answer=answer_all
    ) as peer:
        await peer.initialize()
        with pytest.raises(LegacyError) as caught:
            await _call(peer, tool)

    assert -32021 == caught.value.code
    assert {"requiredCapabilities": needed} == caught.value.data
    assert [] == peer.asked


async def test_a_client_error_ends_the_request_with_an_error() -> None:
    async def broken(method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise LegacyError({"code": -1, "message": "no model here"})

    async with LegacyPeer(make_server(), capabilities=ALL_CAPS, answer=broken) as peer:
        await peer.initialize()
        with pytest.raises(LegacyError) as caught:
            await _call(peer, "ask_model")
        after = await peer.request(
            "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}
        )

    assert -32603 == caught.value.code
    assert "no model here" in str(caught.value.message)
    assert {"result": 2} == after["structuredContent"]


async def test_a_malformed_answer_is_refused_like_a_modern_one() -> None:
    async def wrong(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": 42}}

    async with LegacyPeer(make_server(), capabilities=ALL_CAPS, answer=wrong) as peer:
        await peer.initialize()
        with pytest.raises(LegacyError) as caught:
            await _call(peer, "ask_name")

    assert -32602 == caught.value.code


async def test_cancelling_a_request_waiting_for_input_cancels_the_servers_request() -> (
    None
):
    never = trio.Event()

    async def stall(method: str, params: dict[str, Any]) -> dict[str, Any]:
        await never.wait()
        raise AssertionError("unreachable")

    async with LegacyPeer(make_server(), capabilities=ALL_CAPS, answer=stall) as peer:
        await peer.initialize()
        await peer.send_raw(
            {
                "jsonrpc": "2.0",
                "id": "waits",
                "method": "tools/call",
                "params": {"name": "ask_name", "arguments": {}},
            }
        )
        await peer.wait_asked(1)
        await peer.notify("notifications/cancelled", {"requestId": "waits"})
        cancelled = await peer.next_notification("notifications/cancelled")
        # A late answer to the abandoned request is dropped; the stream goes on.
        await peer.send_raw({"jsonrpc": "2.0", "id": peer.asked[0]["id"], "result": {}})
        await peer.request("ping")

    assert {"requestId": peer.asked[0]["id"]} == cancelled["params"]
    assert not [m for m in peer.messages if m.get("id") == "waits"]


async def test_answers_to_no_waiting_request_are_dropped() -> None:
    async with LegacyPeer(make_server()) as peer:
        for stray in (
            {"jsonrpc": "2.0", "id": 99, "result": {}},
            {"jsonrpc": "2.0", "id": "x", "error": {"code": 1, "message": "m"}},
        ):
            await peer.send_raw(stray)
        await peer.initialize()
        await peer.send_raw({"jsonrpc": "2.0", "id": 1, "result": {"action": "accept"}})
        pong = await peer.request("ping")

    assert {} == pong
    assert 2 == len(peer.messages)  # the initialize result and the pong


async def test_rounds_waiting_for_the_client_are_bounded() -> None:
    never = trio.Event()

    async def stall(method: str, params: dict[str, Any]) -> dict[str, Any]:
        await never.wait()
        raise AssertionError("unreachable")

    async with LegacyPeer(
        make_server(),
        capabilities=ALL_CAPS,
        answer=stall,
        limits=Limits(max_concurrent=1, max_waiting=1),
    ) as peer:
        await peer.initialize()
        for n in range(2):
            await peer.send_raw(
                {
                    "jsonrpc": "2.0",
                    "id": f"w{n}",
                    "method": "tools/call",
                    "params": {"name": "ask_name", "arguments": {}},
                }
            )
        await peer.wait_asked(2)
        with pytest.raises(LegacyError) as caught:
            await _call(peer, "ask_name")
        # Cancelling one makes room again.
        await peer.notify("notifications/cancelled", {"requestId": "w0"})
        await peer.next_notification("notifications/cancelled")
        await peer.send_raw(
            {
                "jsonrpc": "2.0",
                "id": "w2",
                "method": "tools/call",
                "params": {"name": "ask_name", "arguments": {}},
            }
        )
        await peer.wait_asked(3)

    assert -32000 == caught.value.code
    assert {"retryable": True} == caught.value.data


def test_the_default_server_has_no_legacy_edge() -> None:
    assert Server("s", "1").legacy is False


async def test_a_multi_select_form_needs_2025_11_25() -> None:
    async def pick(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"toppings": ["basil", "cheese"]}}

    async with LegacyPeer(make_server(), capabilities=ALL_CAPS, answer=pick) as peer:
        await peer.initialize()
        picked = await _call(peer, "ask_toppings")
    async with LegacyPeer(
        make_server(), revision="2025-06-18", capabilities=ALL_CAPS, answer=pick
    ) as old:
        await old.initialize()
        with pytest.raises(LegacyError) as caught:
            await _call(old, "ask_toppings")

    assert "basil, cheese" == picked["content"][0]["text"]
    assert (
        "array"
        == peer.asked[0]["params"]["requestedSchema"]["properties"]["toppings"]["type"]
    )
    assert -32603 == caught.value.code
    assert "2025-06-18 cannot show" in str(caught.value.message)
    assert [] == old.asked
