"""subscriptions/listen in-process through McpTestClient (every message schema-checked).

The test client validates every message the server emits against the 2026-07-28
schema, including the acknowledgement, the tagged notifications and the listen's
result (as ``SubscriptionsListenResult``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing
from listen_server import RESOURCES, URIS, extra, make_server
from support import wire
from support.tools import echo

from trio_mcp import DuplicateName, Limits, McpError, Server, resource, tool
from trio_mcp.testing import McpTestClient, ProtocolError, check_message

SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def tag(message: dict[str, Any]) -> Any:
    return message["params"]["_meta"][SUBSCRIPTION]


# -- the acknowledgement -------------------------------------------------------------
@pytest.mark.parametrize("request_id", ["listen-1", 41])
async def test_the_ack_comes_first_and_keeps_the_ids_json_type(
    request_id: str | int,
) -> None:
    """Spec §8: the first message is the acknowledgement, tagged with the listen id
    as sent (a string stays a string, a number a number)."""
    async with (
        McpTestClient(make_server()) as client,
        client.listen(tools_list_changed=True, request_id=request_id) as sub,
    ):
        ack = sub.acknowledgement

    assert ack is not None
    assert "notifications/subscriptions/acknowledged" == ack["method"]
    assert request_id == tag(ack)
    assert type(request_id) is type(tag(ack))
    assert {"toolsListChanged": True} == sub.honoured


async def test_the_ack_honours_only_what_the_server_can_send() -> None:
    """Spec §8: the ack lists the honoured subset; our choice: resource URIs are
    kept only when an updatable declaration serves them (static or template)."""
    async with (
        McpTestClient(make_server()) as client,
        client.listen(
            prompts_list_changed=True,
            resource_subscriptions=[
                "test://watched",
                "test://fixed",
                "ticket://7",
                "test://unknown",
                "test://watched",
            ],
        ) as sub,
    ):
        honoured = sub.honoured

    assert {
        "promptsListChanged": True,
        "resourceSubscriptions": ["test://watched", "ticket://7"],
    } == honoured


async def test_a_fixed_catalog_advertises_no_list_changes_and_honours_none() -> None:
    """Spec §8 and api.md: listChanged is false for a fixed catalog, so the filter
    drops toolsListChanged; without an updatable resource, subscribe is false."""
    server = Server("fixed", "1", tools=[echo], resources=[RESOURCES[2]])
    async with McpTestClient(server) as client:
        capabilities = (await client.discover())["capabilities"]
        async with client.listen(
            tools_list_changed=True,
            resources_list_changed=True,
            resource_subscriptions=["test://fixed"],
        ) as sub:
            honoured = sub.honoured

    assert {"listChanged": False} == wire(capabilities)["tools"]
    assert {"subscribe": False, "listChanged": False} == wire(capabilities)["resources"]
    assert {} == honoured


async def test_a_dynamic_server_advertises_list_changes_and_subscribe() -> None:
    """Our choice: dynamic=True advertises listChanged for every kind (all served)."""
    async with McpTestClient(make_server()) as client:
        capabilities = (await client.discover())["capabilities"]

    assert {"listChanged": True} == wire(capabilities)["tools"]
    assert {"listChanged": True} == wire(capabilities)["prompts"]
    assert {"subscribe": True, "listChanged": True} == wire(capabilities)["resources"]


@pytest.mark.parametrize(
    "notifications",
    [{"toolsListChanged": "yes"}, {"resourceSubscriptions": "test://watched"}],
)
async def test_a_malformed_filter_is_invalid_params(
    notifications: dict[str, Any],
) -> None:
    """Spec: params.notifications is a SubscriptionFilter; otherwise -32602."""
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as caught:
            async with client.listen(notifications=notifications):
                pass

    assert -32602 == caught.value.code


async def test_a_listen_without_a_filter_is_invalid_params() -> None:
    """Spec: params.notifications is required."""
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.request("subscriptions/listen", {})

    assert -32602 == caught.value.code


# -- list changes ----------------------------------------------------------------------
async def test_replace_announces_the_changed_kind_to_listeners_that_asked() -> None:
    """Spec §8: list_changed only to streams that requested it, tagged with their id."""
    async with (
        McpTestClient(make_server()) as client,
        client.listen(tools_list_changed=True, request_id="tools") as tools,
        client.listen(prompts_list_changed=True, request_id="prompts") as prompts,
    ):
        await client.call_tool("toggle_tool")
        note = await tools.next()
        await client.call_tool("toggle_prompt")
        prompt_note = await prompts.next()
        await trio.testing.wait_all_tasks_blocked()

    assert "notifications/tools/list_changed" == note["method"]
    assert "tools" == tag(note)
    assert "notifications/prompts/list_changed" == prompt_note["method"]
    assert [prompt_note] == prompts.received
    assert [note] == tools.received


async def test_the_new_catalog_is_served_after_replace() -> None:
    """Our choice: replace() swaps the catalog at once; lists and calls follow it."""
    async with McpTestClient(make_server()) as client:
        before = [t["name"] for t in await client.list_tools()]
        await client.call_tool("toggle_tool")
        after = [t["name"] for t in await client.list_tools()]
        called = await client.call_tool("extra")

    assert "extra" not in before
    assert [*before, "extra"] == after
    assert "extra" == called.structured


async def test_replace_announces_only_kinds_whose_listing_changed() -> None:
    """Our choice: replacing with an equal catalog announces nothing."""
    server = make_server()
    async with (
        McpTestClient(server) as client,
        client.listen(
            tools_list_changed=True,
            prompts_list_changed=True,
            resources_list_changed=True,
        ) as sub,
    ):
        server.replace(resources=RESOURCES)
        server.replace(resources=RESOURCES[:2])
        await sub.next()
        await trio.testing.wait_all_tasks_blocked()

    assert ["notifications/resources/list_changed"] == [
        m["method"] for m in sub.received
    ]


async def test_replace_validates_the_new_catalog_and_keeps_the_old_on_failure() -> None:
    """api.md: the same DuplicateName/InvalidDeclaration rules as the constructor."""
    server = make_server()
    async with McpTestClient(server) as client:
        with pytest.raises(DuplicateName):
            server.replace(tools=[echo, echo])
        names = [t["name"] for t in await client.list_tools()]

    assert ["echo", "block", "report", "toggle_tool", "toggle_prompt", "touch"] == names


async def test_replace_on_a_fixed_catalog_raises() -> None:
    """Our choice: without dynamic=True a catalog cannot change (listChanged: false)."""
    server = Server("fixed", "1", tools=[echo])

    with pytest.raises(McpError, match="dynamic=True"):
        server.replace(tools=[echo, extra])


async def test_a_dynamic_server_may_start_empty_and_gain_tools() -> None:
    """Our choice: a dynamic server serves tools/list even while it has no tools."""
    server = Server("empty", "1", dynamic=True)
    async with McpTestClient(server) as client:
        empty = await client.list_tools()
        async with client.listen(tools_list_changed=True) as sub:
            server.replace(tools=[echo])
            note = await sub.next()
        names = [t["name"] for t in await client.list_tools()]

    assert [] == empty
    assert "notifications/tools/list_changed" == note["method"]
    assert ["echo"] == names


# -- resource updates ----------------------------------------------------------------
async def test_updates_reach_only_the_listeners_of_that_uri() -> None:
    """Spec §8: resources/updated only for URIs in resourceSubscriptions."""
    async with (
        McpTestClient(make_server()) as client,
        client.listen(resource_subscriptions=["test://watched"]) as watched,
        client.listen(resource_subscriptions=["ticket://2", "test://other"]) as other,
        client.listen(tools_list_changed=True) as tools_only,
    ):
        await client.call_tool("touch", {"uri": "ticket://2"})
        await client.call_tool("touch", {"uri": "test://watched"})
        await client.call_tool("touch", {"uri": "ticket://3"})
        await trio.testing.wait_all_tasks_blocked()

    assert [{"_meta": {SUBSCRIPTION: watched.id}, "uri": "test://watched"}] == [
        m["params"] for m in watched.received
    ]
    assert [{"_meta": {SUBSCRIPTION: other.id}, "uri": "ticket://2"}] == [
        m["params"] for m in other.received
    ]
    assert [] == tools_only.received


async def test_notify_updated_refuses_a_uri_without_an_updatable_declaration() -> None:
    """Our choice: a typo or a non-updatable resource is a programming error."""
    server = make_server()

    with pytest.raises(ValueError, match="updatable"):
        await server.notify_updated("test://fixed")


async def test_a_lagging_listener_gets_each_updated_uri_again_with_bounded_memory() -> (
    None
):
    """Our choice: 10,000 updates over five URIs to a listener whose writes are stuck
    keep at most the buffer plus one pending entry per URI; once it drains, it has
    been told about every URI (never an invented one)."""
    server = make_server()
    release = trio.Event()
    messages: list[dict[str, Any]] = []
    send_in, receive_in = trio.open_memory_channel[str | bytes](10)

    async def slow_send(text: str) -> None:
        message = json.loads(text)
        check_message(message, "subscriptions/listen" if "id" in message else None)
        messages.append(message)
        if len(messages) == 2:  # the first update after the ack: stall here
            await release.wait()

    listen = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": {"resourceSubscriptions": URIS},
        },
    }
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.serve_messages, receive_in, slow_send)
        await send_in.send(json.dumps(listen))
        await trio.testing.wait_all_tasks_blocked()
        peaks = []
        for i in range(10_000):
            await server.notify_updated(URIS[i % len(URIS)])
            stats = server.broadcast.statistics()
            peaks.append((stats.buffered, stats.pending))
        release.set()
        await trio.testing.wait_all_tasks_blocked()
        stats = server.broadcast.statistics()
        await send_in.aclose()

    updates = [m["params"]["uri"] for m in messages[1:-1]]
    assert "notifications/subscriptions/acknowledged" == messages[0]["method"]
    assert max(b for b, _ in peaks) <= server.broadcast.buffer_size
    assert max(p for _, p in peaks) <= len(URIS)
    assert len(URIS) == stats.peak_pending
    assert set(URIS) == set(updates[-len(URIS) :])
    # At most three in flight past the buffer: the one the writer is stuck on,
    # one more it took into the same batch (it drains every waiting sender), and
    # the next, held by the listen task until the writer takes it.
    assert len(updates) <= 3 + server.broadcast.buffer_size + len(URIS)
    assert (0, 0) == (stats.buffered, stats.pending)
    assert {"resultType": "complete"} == {
        k: v for k, v in messages[-1]["result"].items() if k != "_meta"
    }


# -- living beside other traffic --------------------------------------------------------
async def test_listens_take_no_concurrency_slot_and_survive_tool_traffic() -> None:
    """Our choice: a long-lived listen holds no max_concurrent slot."""
    async with (
        McpTestClient(make_server(), limits=Limits(max_concurrent=1)) as client,
        client.listen(tools_list_changed=True) as first,
        client.listen(tools_list_changed=True) as second,
    ):
        async with trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(client.call_tool, "echo", {"text": str(i)})
        answered = await client.call_tool("echo", {"text": "still here"})
        await client.call_tool("toggle_tool")
        notes = [await first.next(), await second.next()]

    assert "still here" == answered.structured
    assert ["notifications/tools/list_changed"] * 2 == [n["method"] for n in notes]


async def test_progress_and_logs_never_travel_on_a_listen_stream() -> None:
    """Spec §8: progress and log notifications are request-scoped."""
    async with (
        McpTestClient(make_server()) as client,
        client.listen(tools_list_changed=True, resource_subscriptions=URIS) as sub,
    ):
        result = await client.call_tool(
            "report", {"steps": 2}, progress_token="p", log_level="debug"
        )
        await trio.testing.wait_all_tasks_blocked()

    assert ["notifications/progress"] * 2 + ["notifications/message"] == [
        n["method"] for n in result.notifications
    ]
    assert all(
        SUBSCRIPTION not in wire(n)["params"].get("_meta", {})
        for n in result.notifications
    )
    assert [] == sub.received


# -- ending ------------------------------------------------------------------------------
async def test_cancelling_a_listen_ends_its_subscription() -> None:
    """Spec §8: notifications/cancelled with the listen id ends it; nothing more is sent."""
    server = make_server()
    async with (
        McpTestClient(server) as client,
        client.listen(tools_list_changed=True) as sub,
    ):
        await sub.cancel()
        await trio.testing.wait_all_tasks_blocked()
        subscribers = server.broadcast.statistics().subscribers
        await client.call_tool("toggle_tool")
        await trio.testing.wait_all_tasks_blocked()

    assert 0 == subscribers
    assert [] == sub.received
    assert sub.result is None


async def test_shutdown_ends_each_listen_with_its_result() -> None:
    """Spec §8: on graceful teardown the server sends the listen's result, whose
    _meta carries the subscription id (checked as SubscriptionsListenResult)."""
    async with (
        McpTestClient(make_server()) as client,
        client.listen(tools_list_changed=True, request_id="a") as a,
        client.listen(prompts_list_changed=True, request_id=2) as b,
    ):
        await client.close()
        results = [await a.wait_result(), await b.wait_result()]

    assert ["a", 2] == [wire(r)["_meta"][SUBSCRIPTION] for r in results]
    assert ["complete", "complete"] == [r["resultType"] for r in results]
    assert {"name": "listen-test", "version": "1.0"} == wire(results)[0]["_meta"][
        "io.modelcontextprotocol/serverInfo"
    ]


# -- a template-served URI ---------------------------------------------------------------
@resource(uri="note://{note_id}", updatable=True)
def note(note_id: str) -> str:
    """One note.

    Args:
        note_id: The note's id.
    """
    return note_id


@tool
async def edit_note(note_id: str) -> str:
    """Pretend to edit a note.

    Args:
        note_id: The note's id.
    """
    return note_id


async def test_a_uri_served_by_an_updatable_template_can_be_watched() -> None:
    """Our choice: a subscription matches the exact URI a template serves."""
    server = Server("notes", "1", tools=[edit_note], resources=[note])
    async with (
        McpTestClient(server) as client,
        client.listen(resource_subscriptions=["note://a"]) as sub,
    ):
        await server.notify_updated("note://b")
        await server.notify_updated("note://a")
        received = await sub.next()

    assert "note://a" == wire(received)["params"]["uri"]
    assert [received] == sub.received


async def test_a_notification_crossing_the_clients_cancel_is_tolerated() -> None:
    """Spec §11: cancellation races are expected; a late notification is no error."""
    server = make_server()
    async with McpTestClient(server) as client:
        async with client.listen(tools_list_changed=True) as sub:
            pass
        server.replace(tools=[echo])
        await trio.testing.wait_all_tasks_blocked()
        after = await client.list_tools()

    assert [] == sub.received
    assert ["echo"] == [t["name"] for t in after]


async def test_closing_the_input_ends_a_listen_with_its_result() -> None:
    """Spec §8: when the stream closes, the server ends open listens with their result."""
    async with (
        McpTestClient(make_server()) as client,
        client.listen(tools_list_changed=True) as sub,
    ):
        await client.close()
        result = await sub.wait_result(timeout=10)

    assert {"resultType": "complete"} == {
        k: v for k, v in result.items() if k != "_meta"
    }
    assert result is sub.result


async def test_leaving_a_listen_right_after_close_raises_nothing() -> None:
    """Our choice: after close() the client cannot send; leaving the block before the
    result arrived must not try to (a ClosedResourceError would escape here)."""
    async with (
        McpTestClient(make_server()) as client,
        client.listen(tools_list_changed=True) as sub,
    ):
        await client.close()

    assert [] == sub.received
