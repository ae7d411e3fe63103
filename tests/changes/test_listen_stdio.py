"""subscriptions/listen over stdio: a real subprocess (listen_server.py), real pipes.

Every line the server writes is decoded and validated against the 2026-07-28 schema
as it arrives (listen results as ``SubscriptionsListenResult``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from support.stdio_kinds import stdio_kind  # noqa: F401 - the fixture
from support.stdio_peer import WAIT, StdioPeer, request_message, running

#: Every test runs with FdStreams and with the thread-backed streams (support.stdio_kinds).
pytestmark = pytest.mark.usefixtures("stdio_kind")

SERVER = Path(__file__).with_name("listen_server.py")
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


class Peer(StdioPeer):
    """The client side of the server subprocess."""

    async def request(self, request_id: Any, method: str, **params: Any) -> None:
        await self.send(request_message(request_id, method, params))

    async def call(self, request_id: Any, name: str, **arguments: Any) -> None:
        await self.request(request_id, "tools/call", name=name, arguments=arguments)

    async def listen(self, request_id: Any, **notifications: Any) -> None:
        await self.request(
            request_id, "subscriptions/listen", notifications=notifications
        )

    def tagged(self, subscription_id: Any) -> list[dict[str, Any]]:
        """Messages of one subscription, with the id's JSON type compared too."""
        return [
            m
            for m in self.messages
            if "method" in m
            and json.dumps(m["params"].get("_meta", {}).get(SUBSCRIPTION))
            == json.dumps(subscription_id)
        ]


@asynccontextmanager
async def spawn() -> AsyncIterator[Peer]:
    async with running(Peer, [str(SERVER)], stderr=False) as peer:
        yield peer


async def test_listen_over_stdio_interleaves_with_calls_and_ends_on_cancel_and_eof() -> (
    None
):
    """Spec §8/§13: each stream's ack comes first, notifications carry its id (type
    kept), only requested types arrive, notifications/cancelled ends one stream,
    and end of stdin ends the rest with their result."""
    async with spawn() as peer:
        await peer.listen("tools", toolsListChanged=True)
        await peer.listen(7, resourceSubscriptions=["test://watched"])
        await peer.wait_for(
            lambda: len(peer.tagged("tools")) == 1 == len(peer.tagged(7))
        )
        await peer.call(1, "block")
        await peer.call(2, "toggle_tool")
        await peer.call(3, "touch", uri="test://watched")
        await peer.wait_for(
            lambda: len(peer.tagged("tools")) == 2 == len(peer.tagged(7))
        )
        await peer.cancel("tools")
        await peer.cancel(1)
        await peer.call(4, "toggle_tool")
        await peer.call(5, "touch", uri="test://watched")
        await peer.wait_for(
            lambda: (
                len(peer.tagged(7)) == 3 and None not in (peer.find(4), peer.find(5))
            )
        )
        assert peer.process.stdin is not None
        await peer.process.stdin.aclose()
        with trio.fail_after(WAIT):
            code = await peer.process.wait()
        await peer.wait_for(lambda: peer.find(7) is not None)

    assert 0 == code
    assert [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ] == [m["method"] for m in peer.tagged("tools")]
    assert [
        "notifications/subscriptions/acknowledged",
        "notifications/resources/updated",
        "notifications/resources/updated",
    ] == [m["method"] for m in peer.tagged(7)]
    assert {"toolsListChanged": True} == peer.tagged("tools")[0]["params"][
        "notifications"
    ]
    assert peer.find("tools") is None
    assert peer.find(1) is None
    result = peer.find(7)
    assert result is not None
    assert {SUBSCRIPTION: 7} == {
        k: v for k, v in result["result"]["_meta"].items() if k == SUBSCRIPTION
    }
    assert result is peer.messages[-1]
