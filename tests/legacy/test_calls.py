"""Lists, calls, reads, prompts and completions for a handshake-era client.

Each reply is the modern one in the negotiated revision's shapes; ``LegacyPeer``
validates every message against that revision's official schema.
"""

from __future__ import annotations

from typing import Any

import pytest
from legacy_server import make_server
from support.legacy import LegacyError, LegacyPeer
from support.legacy_schema import REVISIONS


async def _call(peer: LegacyPeer, name: str, **arguments: Any) -> dict[str, Any]:
    return await peer.request("tools/call", {"name": name, "arguments": arguments})


@pytest.mark.parametrize("revision", REVISIONS)
async def test_lists_carry_no_modern_fields(revision: str) -> None:
    async with LegacyPeer(make_server(), revision=revision) as peer:
        await peer.initialize()
        results = [
            await peer.request(method)
            for method in (
                "tools/list",
                "resources/list",
                "resources/templates/list",
                "prompts/list",
            )
        ]

    for result in results:
        assert not {"resultType", "ttlMs", "cacheScope", "_meta"} & set(result)
    assert ["note://static", "watch://counter"] == [
        r["uri"] for r in results[1]["resources"]
    ]
    assert ["note://{name}"] == [
        t["uriTemplate"] for t in results[2]["resourceTemplates"]
    ]


async def test_output_schemas_that_are_not_objects_are_wrapped() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        tools = {t["name"]: t for t in (await peer.request("tools/list"))["tools"]}

    assert {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    } == tools["add"]["outputSchema"]
    assert "object" == tools["summary"]["outputSchema"]["type"]
    assert "result" not in tools["summary"]["outputSchema"]["properties"]
    assert ["result"] == tools["maybe"]["outputSchema"]["required"]


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-06-18"])
async def test_structured_values_are_wrapped_like_their_schemas(revision: str) -> None:
    async with LegacyPeer(make_server(), revision=revision) as peer:
        await peer.initialize()
        added = await _call(peer, "add", a=2, b=3)
        summary = await _call(peer, "summary")
        nothing = await _call(peer, "maybe", found=False)
        found = await _call(peer, "maybe", found=True)
        echoed = await _call(peer, "echo", text="hi")

    assert {"result": 5} == added["structuredContent"]
    assert [{"type": "text", "text": "5"}] == added["content"]
    assert {"title": "tickets", "count": 3} == summary["structuredContent"]
    assert {"result": None} == nothing["structuredContent"]
    assert {"result": {"title": "found", "count": 1}} == found["structuredContent"]
    assert {"result": "hi"} == echoed["structuredContent"]
    assert [{"type": "text", "text": "hi"}] == echoed["content"]


async def test_2025_03_26_gets_no_structured_output_and_no_resource_links() -> None:
    async with LegacyPeer(make_server(), revision="2025-03-26") as peer:
        await peer.initialize()
        tools = (await peer.request("tools/list"))["tools"]
        added = await _call(peer, "add", a=2, b=3)
        linked = await _call(peer, "link")
        prompt = await peer.request("prompts/get", {"name": "linked"})

    assert not [t for t in tools if "outputSchema" in t]
    assert "structuredContent" not in added
    assert [{"type": "text", "text": "5"}] == added["content"]
    assert [
        {"type": "text", "text": "see the note"},
        {"type": "text", "text": "alpha: note://alpha"},
    ] == linked["content"]
    assert {"type": "text", "text": "alpha: note://alpha"} == prompt["messages"][0][
        "content"
    ]


async def test_newer_revisions_keep_resource_links() -> None:
    async with LegacyPeer(make_server(), revision="2025-06-18") as peer:
        await peer.initialize()
        linked = await _call(peer, "link")

    assert "resource_link" == linked["content"][1]["type"]


async def test_tool_errors_stay_results_and_unknown_tools_stay_errors() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        failed = await _call(peer, "fail")
        with pytest.raises(LegacyError) as unknown:
            await _call(peer, "no_such_tool")
        invalid = await _call(peer, "add", a="two", b=3)

    assert failed["isError"] is True
    assert "this tool always fails" in failed["content"][0]["text"]
    assert -32602 == unknown.value.code
    assert invalid["isError"] is True


async def test_reads_and_the_legacy_resource_not_found_code() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        static = await peer.request("resources/read", {"uri": "note://static"})
        templated = await peer.request("resources/read", {"uri": "note://alpha"})
        with pytest.raises(LegacyError) as missing:
            await peer.request("resources/read", {"uri": "note://gamma"})
        with pytest.raises(LegacyError) as unserved:
            await peer.request("resources/read", {"uri": "elsewhere://x"})
        with pytest.raises(LegacyError) as no_uri:
            await peer.request("resources/read", {})

    assert [
        {"uri": "note://static", "mimeType": "text/plain", "text": "static"}
    ] == static["contents"]
    assert "first note" == templated["contents"][0]["text"]
    assert (-32002, {"uri": "note://gamma"}) == (missing.value.code, missing.value.data)
    assert (-32002, {"uri": "elsewhere://x"}) == (
        unserved.value.code,
        unserved.value.data,
    )
    assert -32602 == no_uri.value.code


async def test_prompts_and_completions() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        prompt = await peer.request(
            "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}
        )
        completed = await peer.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "name", "value": "A"},
            },
        )

    assert "Hello, Ada" == prompt["messages"][0]["content"]["text"]
    assert ["Ada", "Alan"] == completed["completion"]["values"]


async def test_progress_and_logging_follow_the_sessions_level() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        quiet = await peer.request(
            "tools/call",
            {
                "name": "slow",
                "arguments": {"steps": 2},
                "_meta": {"progressToken": "p1"},
            },
        )
        quiet_notes = list(peer.notifications)
        await peer.request("logging/setLevel", {"level": "info"})
        loud = await peer.request(
            "tools/call",
            {"name": "slow", "arguments": {"steps": 3}, "_meta": {"progressToken": 7}},
        )
        loud_notes = peer.notifications[len(quiet_notes) :]

    assert "done after 2 steps" == quiet["content"][0]["text"]
    assert ["notifications/progress"] * 2 == [n["method"] for n in quiet_notes]
    assert ["p1", "p1"] == [n["params"]["progressToken"] for n in quiet_notes]
    assert "done after 3 steps" == loud["content"][0]["text"]
    logs = [n["params"] for n in loud_notes if n["method"] == "notifications/message"]
    assert [{"level": "info", "data": f"step {i}"} for i in (1, 2, 3)] == logs
    progress = [
        n["params"] for n in loud_notes if n["method"] == "notifications/progress"
    ]
    assert [1, 2, 3] == [p["progress"] for p in progress]
    assert {7} == {p["progressToken"] for p in progress}


async def test_a_cancelled_call_gets_no_reply_and_frees_its_id() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        await peer.request("logging/setLevel", {"level": "info"})
        await peer.send_raw(
            {
                "jsonrpc": "2.0",
                "id": "call-1",
                "method": "tools/call",
                "params": {"name": "forever", "arguments": {}},
            }
        )
        await peer.next_notification("notifications/message")
        await peer.notify(
            "notifications/cancelled", {"requestId": "call-1", "reason": "test"}
        )
        # The same id may be used again at once, and is answered.
        again = await peer.request(
            "tools/call",
            {"name": "echo", "arguments": {"text": "x"}},
            request_id="call-1",
        )
        await peer.request("ping")

    assert "x" == again["content"][0]["text"]
    replies = [m for m in peer.messages if m.get("id") == "call-1"]
    assert [again] == [r["result"] for r in replies]


async def test_ids_are_preserved_whatever_their_type() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        for request_id in ("a", 0, -5, "legacy-0-1", 2**53):
            reply = await peer.exchange("tools/list", request_id=request_id)
            assert request_id == reply["id"]
