"""Every exception trio_mcp raises to its user is an ``McpError`` (issue 24): one
``except McpError`` catches them, and each keeps its builtin base too."""

from __future__ import annotations

import inspect

import pytest

import trio_mcp
from trio_mcp import McpError, Server, json_schema, tool


def test_every_exported_exception_is_an_mcp_error() -> None:
    outside = [
        name
        for name in trio_mcp.__all__
        if inspect.isclass(obj := getattr(trio_mcp, name))
        and issubclass(obj, BaseException)
        and not issubclass(obj, McpError)
    ]

    assert [] == outside


def test_an_unsupported_type_is_an_mcp_error_and_a_type_error() -> None:
    with pytest.raises(McpError) as caught:
        json_schema(complex)

    assert isinstance(caught.value, TypeError)


@tool
def ping() -> str:
    """Answer."""
    return "pong"


SERVER = Server("tree", "1", tools=[ping])


async def test_workers_without_a_shared_state_key_is_an_mcp_error_and_a_value_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRIO_MCP_STATE_KEY", raising=False)
    with pytest.raises(McpError) as caught:
        await SERVER.serve_http(port=0, workers=2)

    assert isinstance(caught.value, ValueError)
    assert "TRIO_MCP_STATE_KEY" in str(caught.value)
