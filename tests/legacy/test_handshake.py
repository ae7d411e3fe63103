"""``initialize`` and the session's own methods on a dual-era stream.

Every message the server emits is validated against the negotiated revision's
official schema by ``LegacyPeer``.
"""

from __future__ import annotations

from typing import Any

import pytest
from legacy_server import make_server
from support import META
from support.legacy import LegacyError, LegacyPeer, initialize_params
from support.legacy_schema import REVISIONS

from trio_mcp.testing import McpTestClient, ProtocolError


@pytest.mark.parametrize("revision", REVISIONS)
async def test_initialize_answers_the_requested_revision_with_the_catalog(
    revision: str,
) -> None:
    async with LegacyPeer(make_server(), revision=revision) as peer:
        result = await peer.initialize()

    assert {
        "protocolVersion": revision,
        "capabilities": {
            "logging": {},
            "tools": {"listChanged": False},
            "resources": {"subscribe": True, "listChanged": False},
            "prompts": {"listChanged": False},
            "completions": {},
        },
        "serverInfo": {"name": "legacy-test", "version": "1.0.0"},
        "instructions": "A server for the legacy edge's tests.",
    } == result


@pytest.mark.parametrize("requested", ["2024-11-05", "2026-07-28", "1.0", ""])
async def test_an_unserved_revision_is_answered_with_the_latest(requested: str) -> None:
    """Lifecycle, version negotiation: the server offers another version it supports."""
    async with LegacyPeer(make_server()) as peer:
        result = await peer.initialize(requested)

    assert "2025-11-25" == result["protocolVersion"]


async def test_a_second_initialize_is_an_invalid_request_and_changes_nothing() -> None:
    async with LegacyPeer(make_server(), revision="2025-06-18") as peer:
        await peer.initialize()
        for _ in range(50):  # a flood: each answered, nothing kept
            with pytest.raises(LegacyError) as caught:
                await peer.initialize("2025-11-25")
            assert -32600 == caught.value.code
        listed = await peer.request("tools/list")

    assert "already initialized" in str(caught.value.message)
    assert "outputSchema" in next(t for t in listed["tools"] if t["name"] == "add")
    assert "2025-06-18" == peer.revision


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        {},
        {"protocolVersion": 20251125, "capabilities": {}, "clientInfo": {}},
        {"protocolVersion": "2025-11-25", "capabilities": [], "clientInfo": {}},
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "x"},
        },
    ],
)
async def test_malformed_initialize_params_are_invalid_params(params: Any) -> None:
    async with LegacyPeer(make_server()) as peer:
        reply = await peer.exchange("initialize", params)
        # Nothing was opened: a proper initialize still works.
        result = await peer.initialize()

    assert -32602 == reply["error"]["code"]
    assert "2025-11-25" == result["protocolVersion"]


async def test_requests_before_initialize_are_refused_but_ping_is_answered() -> None:
    async with LegacyPeer(make_server()) as peer:
        pong = await peer.request("ping")
        with pytest.raises(LegacyError) as caught:
            await peer.request("tools/list")
        await peer.initialize()
        listed = await peer.request("tools/list")

    assert {} == pong
    assert -32602 == caught.value.code
    assert "send initialize first" in str(caught.value.message)
    assert listed["tools"]


async def test_ping_and_unknown_methods_after_initialize() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        pong = await peer.request("ping", {})
        with pytest.raises(LegacyError) as unknown:
            await peer.request("tasks/list")
        with pytest.raises(LegacyError) as modern_only:
            await peer.request("server/discover")

    assert {} == pong
    assert -32601 == unknown.value.code
    assert -32601 == modern_only.value.code


async def test_set_level_takes_a_level_of_the_protocol() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        ok = await peer.request("logging/setLevel", {"level": "warning"})
        with pytest.raises(LegacyError) as caught:
            await peer.request("logging/setLevel", {"level": "loud"})

    assert {} == ok
    assert -32602 == caught.value.code


async def test_without_the_option_initialize_names_the_supported_versions() -> None:
    """RFC 156 keeps the default: a modern-only server refuses the handshake."""
    async with McpTestClient(make_server(legacy=False)) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.request(
                "initialize",
                initialize_params(),
            )
        discovered = await client.discover()

    assert -32601 == caught.value.code
    assert {"supported": ["2026-07-28"]} == caught.value.data
    assert ["2026-07-28"] == discovered["supportedVersions"]


async def test_discover_lists_every_revision_and_initialize_follows_it() -> None:
    """Some hosts probe with server/discover and then send initialize on one stream."""
    async with LegacyPeer(make_server()) as peer:
        discovered = await peer.exchange("server/discover", {"_meta": META})
        result = await peer.initialize()

    assert ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"] == discovered[
        "result"
    ]["supportedVersions"]
    assert "2025-11-25" == result["protocolVersion"]


async def test_modern_requests_are_served_statelessly_beside_a_session() -> None:
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        modern = await peer.exchange(
            "tools/call",
            {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": META},
            request_id="modern-1",
        )
        legacy = await peer.request(
            "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}
        )

    assert {"resultType", "content", "structuredContent", "_meta"} <= set(
        modern["result"]
    )
    assert 3 == modern["result"]["structuredContent"]
    assert {"result": 3} == legacy["structuredContent"]
    assert "resultType" not in legacy
