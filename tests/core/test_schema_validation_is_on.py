"""McpTestClient validates every emitted message against the official schema; these
tests make sure that check stays switched on and actually bites: first the checker
alone, then through the client, where an invalid message a server emits must raise
``SchemaViolation`` out of the ``async with``."""

from __future__ import annotations

from typing import Any

import pytest

from trio_mcp import Server, ToolContext, tool
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

#: Values of the wrong JSON type, smuggled past the annotations on purpose.
NOT_A_NUMBER: Any = "lots"
NOT_A_STRING: Any = 12


@tool
async def bad_progress() -> int:
    """Report progress whose total is not a number."""
    await ToolContext.current().progress(1, total=NOT_A_NUMBER)
    return 1


@tool
async def bad_progress_value() -> int:
    """Report progress that is not a number."""
    await ToolContext.current().progress(NOT_A_NUMBER)
    return 1


async def test_an_invalid_notification_raises_through_the_client() -> None:
    """notifications/progress requires a numeric total: the client must refuse it."""
    with pytest.raises(SchemaViolation, match="notifications/progress") as caught:
        async with McpTestClient(Server("s", "1", tools=[bad_progress])) as client:
            await client.call_tool("bad_progress", progress_token="t")

    assert '"total": "lots"' in str(caught.value)


async def test_a_progress_that_is_not_a_number_raises_through_the_client() -> None:
    with pytest.raises(SchemaViolation, match='"progress": "lots"'):
        async with McpTestClient(
            Server("s", "1", tools=[bad_progress_value])
        ) as client:
            await client.call_tool("bad_progress_value", progress_token="t")


async def test_an_invalid_result_raises_through_the_client() -> None:
    """DiscoverResult.instructions must be a string."""
    server = Server("s", "1", instructions=NOT_A_STRING)

    with pytest.raises(SchemaViolation, match="instructions"):
        async with McpTestClient(server) as client:
            await client.discover()


async def test_valid_messages_pass_through_the_client() -> None:
    """The counterpart: the same tools with valid values raise nothing."""
    async with McpTestClient(Server("s", "1", tools=[bad_progress])) as client:
        result = await client.call_tool("bad_progress")

    assert 1 == result.structured
