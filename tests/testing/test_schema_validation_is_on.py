"""McpTestClient validates every emitted message against the official schema; these
tests make sure that check stays switched on and actually bites: first the checker
alone, then through the client, where an invalid message a server emits must raise
``SchemaViolation`` out of the ``async with``."""

from __future__ import annotations

from typing import Any, cast

import pytest

from trio_mcp import Server, tool
from trio_mcp.testing import McpTestClient, SchemaViolation, check_message


def test_a_result_missing_a_required_field_is_a_violation() -> None:
    """The official ListToolsResult requires tools, ttlMs and cacheScope."""
    message = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}

    with pytest.raises(SchemaViolation):
        check_message(message, "tools/list")


def test_an_error_with_a_null_id_is_a_violation() -> None:
    """The revision's schema does not allow id: null (api.md: omit it instead)."""
    message = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}

    with pytest.raises(SchemaViolation):
        check_message(message, None)


def test_a_call_result_with_a_bad_content_block_is_a_violation() -> None:
    result = {"resultType": "complete", "content": [{"type": "text"}]}

    with pytest.raises(SchemaViolation):
        check_message({"jsonrpc": "2.0", "id": 1, "result": result}, "tools/call")


def test_a_valid_call_result_passes() -> None:
    result = {
        "resultType": "complete",
        "content": [{"type": "text", "text": "ok"}],
        "structuredContent": None,
    }

    check_message({"jsonrpc": "2.0", "id": 1, "result": result}, "tools/call")


# -- through the client: what a server emits is checked as it is emitted ---------------
#
# The server checks every value it is handed (its name, version and instructions,
# progress, log levels, declarations), so an invalid message has to come from state
# corrupted after construction: these tests stand in for a server bug that puts a
# value of the wrong type on the wire.


def _corrupted(server: Server, **changes: object) -> Server:
    """Overwrite what the dispatcher sends as given, past every check."""
    dispatcher = server._dispatcher
    for key, value in changes.items():
        if key == "instructions":
            dispatcher.instructions = cast(Any, value)
        else:
            dispatcher.server_info[key] = cast(Any, value)
    return server


@tool
def answer() -> int:
    """Return 42."""
    return 42


async def test_an_invalid_result_raises_through_the_client() -> None:
    """DiscoverResult.instructions must be a string."""
    server = _corrupted(Server("s", "1"), instructions=12)

    with pytest.raises(SchemaViolation, match="instructions"):
        async with McpTestClient(server) as client:
            await client.discover()


@pytest.mark.parametrize("method", ["server/discover", "tools/list"])
async def test_an_invalid_server_version_raises_on_any_result(method: str) -> None:
    """Every result carries serverInfo in _meta; its version must be a string."""
    server = _corrupted(Server("s", "1", tools=[answer]), version=12)

    with pytest.raises(SchemaViolation, match='"version": 12'):
        async with McpTestClient(server) as client:
            await client.request(method)


async def test_valid_messages_pass_through_the_client() -> None:
    """The counterpart: the same server with a valid version raises nothing."""
    async with McpTestClient(Server("s", "1", tools=[answer])) as client:
        result = await client.call_tool("answer")

    assert 42 == result.structured
