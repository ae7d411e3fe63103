"""``resources/subscribe`` and list changes for a handshake-era client.

Updates come from the same broadcast as ``subscriptions/listen``: the edge holds one
internal listen with the session's filter.
"""

from __future__ import annotations

import pytest
from legacy_server import counter, echo, make_server
from support import META
from support.legacy import LegacyError, LegacyPeer

from trio_mcp import Server


async def test_a_subscribed_uri_gets_updates_until_unsubscribed() -> None:
    server = make_server()
    async with LegacyPeer(server) as peer:
        await peer.initialize()
        assert {} == await peer.request(
            "resources/subscribe", {"uri": "watch://counter"}
        )
        await server.notify_updated("watch://counter")
        updated = await peer.next_notification("notifications/resources/updated")
        assert {} == await peer.request(
            "resources/unsubscribe", {"uri": "watch://counter"}
        )
        seen = len(peer.notifications)
        await server.notify_updated("watch://counter")
        # A ping after the update: its answer comes after anything the update sent.
        await peer.request("ping")

    assert {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "watch://counter"},
    } == updated
    assert seen == len(peer.notifications)


async def test_subscribing_twice_and_to_unknown_uris_is_answered() -> None:
    server = make_server()
    async with LegacyPeer(server) as peer:
        await peer.initialize()
        for uri in ("watch://counter", "watch://counter", "note://static", "x://y"):
            assert {} == await peer.request("resources/subscribe", {"uri": uri})
        assert {} == await peer.request("resources/unsubscribe", {"uri": "never://was"})
        with pytest.raises(LegacyError) as caught:
            await peer.request("resources/subscribe", {})
        await server.notify_updated("watch://counter")
        await peer.next_notification("notifications/resources/updated")

    assert -32602 == caught.value.code


async def test_without_updatable_resources_subscribe_is_not_served() -> None:
    server = Server("plain", "1", tools=[echo], legacy=True)
    async with LegacyPeer(server) as peer:
        result = await peer.initialize()
        with pytest.raises(LegacyError) as caught:
            await peer.request("resources/subscribe", {"uri": "watch://counter"})

    assert "resources" not in result["capabilities"]
    assert -32601 == caught.value.code


async def test_list_changes_reach_a_session_of_a_dynamic_server() -> None:
    server = make_server(dynamic=True)
    async with LegacyPeer(server) as peer:
        result = await peer.initialize()
        # The internal listen is open once a subscription is answered.
        await peer.request("resources/subscribe", {"uri": "watch://counter"})
        server.replace(tools=[echo])
        changed = await peer.next_notification("notifications/tools/list_changed")
        server.replace(resources=[counter])
        await peer.next_notification("notifications/resources/list_changed")
        listed = await peer.request("tools/list")

    assert {"listChanged": True} == result["capabilities"]["tools"]
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} == changed
    assert ["echo"] == [t["name"] for t in listed["tools"]]


async def test_modern_listens_on_the_same_stream_keep_their_tags() -> None:
    server = make_server()
    async with LegacyPeer(server) as peer:
        await peer.initialize()
        await peer.request("resources/subscribe", {"uri": "watch://counter"})
        await peer.send_raw(
            {
                "jsonrpc": "2.0",
                "id": "modern-listen",
                "method": "subscriptions/listen",
                "params": {
                    "_meta": META,
                    "notifications": {"resourceSubscriptions": ["watch://counter"]},
                },
            }
        )
        await peer.next_notification("notifications/subscriptions/acknowledged")
        await server.notify_updated("watch://counter")
        updates = await peer.wait_notifications("notifications/resources/updated", 2)
        await peer.notify("notifications/cancelled", {"requestId": "modern-listen"})

    tagged = [n for n in updates if "_meta" in n["params"]]
    assert [{"io.modelcontextprotocol/subscriptionId": "modern-listen"}] == [
        n["params"]["_meta"] for n in tagged
    ]
    assert [{"uri": "watch://counter"}] == [
        n["params"] for n in updates if "_meta" not in n["params"]
    ]
