"""McpTestClient validates every emitted message against the official schema; these
tests make sure that check stays switched on and actually bites."""

from __future__ import annotations

import pytest

from trio_mcp.testing import SchemaViolation, check_message


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
