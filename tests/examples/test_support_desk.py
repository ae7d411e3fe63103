"""The support-desk example of api.md (examples/support_desk.py) runs and behaves."""

from __future__ import annotations

import json
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest
from support import wire
from support.example_loader import EXAMPLES, load

from trio_mcp import Server
from trio_mcp.testing import McpTestClient, ProtocolError

EXAMPLE = EXAMPLES / "support_desk.py"
ERROR_KEY = "dev.trio-mcp/error"


@pytest.fixture
def example() -> ModuleType:
    """A fresh copy of the example (its store is module state)."""
    return load("support_desk")


def test_importing_the_example_builds_a_server_and_serves_nothing(
    example: ModuleType,
) -> None:
    """The module exposes `server` for `trio-mcp run examples.support_desk:server`."""
    assert isinstance(example.server, Server)
    assert [
        "search_tickets",
        "close_ticket",
        "read_ticket",
        "draft_reply",
    ] == [s.name for s in example.server.catalog()]


async def test_the_catalog_lists_the_tools_the_template_and_the_prompt(
    example: ModuleType,
) -> None:
    async with McpTestClient(example.server) as client:
        tools = await client.list_tools()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
        discovered = await client.discover()

    search, close = tools
    assert "Search open support tickets." == search["description"]
    assert {"query", "limit"} == set(wire(search)["inputSchema"]["properties"])
    assert ["query"] == wire(search)["inputSchema"]["required"]
    assert wire(search)["annotations"]["readOnlyHint"] is True
    assert (
        "Why it is being closed."
        == (wire(close)["inputSchema"]["properties"]["note"]["description"])
    )
    assert ["ticket://{ticket_id}"] == [t["uriTemplate"] for t in templates]
    assert ["draft_reply"] == [p["name"] for p in prompts]
    assert {"tools", "resources", "prompts"} <= set(wire(discovered)["capabilities"])


async def test_searching_returns_matching_open_tickets(example: ModuleType) -> None:
    async with McpTestClient(example.server) as client:
        result = await client.call_tool("search_tickets", {"query": "refund"})
        limited = await client.call_tool(
            "search_tickets", {"query": "refund", "limit": 1}
        )

    assert [
        {"id": "T-1", "title": "Refund for a double charge"},
        {"id": "T-3", "title": "Refund request: late delivery"},
    ] == result.structured
    assert json.loads(result.text) == result.structured
    assert 1 == len(wire(limited.structured))


async def test_closing_without_the_desk_write_grant_is_refused(
    example: ModuleType,
) -> None:
    async with McpTestClient(example.server) as client:
        result = await client.call_tool(
            "close_ticket", {"ticket_id": "T-1", "note": "x"}
        )
        still_open = await client.call_tool("search_tickets", {"query": "double"})

    assert result.is_error
    assert "desk_write" in result.text
    assert 1 == len(wire(still_open.structured))


async def test_closing_with_the_grant_records_who_closed_it(
    example: ModuleType,
) -> None:
    async with McpTestClient(
        example.server, principal="agent-7", allow=[example.desk_write]
    ) as client:
        closed = await client.call_tool(
            "close_ticket", {"ticket_id": "T-1", "note": "refunded"}
        )
        read = await client.read_resource("ticket://T-1")
        search = await client.call_tool("search_tickets", {"query": "refund"})

    ticket = json.loads(wire(read)["contents"][0]["text"])
    assert {"id": "T-1", "title": "Refund for a double charge"} == closed.structured
    assert ("closed", "refunded", "agent-7") == (
        ticket["status"],
        ticket["resolution"],
        ticket["closed_by"],
    )
    assert ["T-3"] == [t["id"] for t in wire(search.structured)]


async def test_closing_twice_is_a_desk_error_the_model_can_read(
    example: ModuleType,
) -> None:
    async with McpTestClient(example.server, allow=[example.desk_write]) as client:
        await client.call_tool("close_ticket", {"ticket_id": "T-2", "note": "reset"})
        again = await client.call_tool(
            "close_ticket", {"ticket_id": "T-2", "note": "x"}
        )
        missing = await client.call_tool(
            "close_ticket", {"ticket_id": "T-9", "note": "x"}
        )

    assert again.is_error
    assert "ticket 'T-2' is already closed" == again.text
    assert "DeskError" == wire(again.meta)[ERROR_KEY]["type"]
    assert missing.is_error
    assert "there is no ticket 'T-9'" == missing.text


async def test_bad_arguments_list_every_problem(example: ModuleType) -> None:
    async with McpTestClient(example.server) as client:
        result = await client.call_tool(
            "search_tickets", {"limit": "many", "sort": "newest"}
        )

    assert result.is_error
    assert {"query", "limit", "sort"} == {
        wire(p)["path"] for p in wire(result.meta)[ERROR_KEY]["problems"]
    }


async def test_the_ticket_resource_is_json_and_private(example: ModuleType) -> None:
    async with McpTestClient(example.server) as client:
        read = await client.read_resource("ticket://T-3")

    (contents,) = wire(read)["contents"]
    assert "ticket://T-3" == wire(contents)["uri"]
    assert "application/json" == wire(contents)["mimeType"]
    assert "cy" == json.loads(wire(contents)["text"])["customer"]
    assert ("private", 0) == (read["cacheScope"], read["ttlMs"])


async def assert_not_found(example: ModuleType, uri: str) -> None:
    """Reading ``uri`` is -32602 with ``data.uri``."""
    async with McpTestClient(example.server) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.read_resource(uri)

    assert -32602 == caught.value.code
    assert {"uri": uri} == caught.value.data


async def test_a_uri_outside_the_template_is_not_found(example: ModuleType) -> None:
    await assert_not_found(example, "tickets://T-1")


async def test_a_missing_ticket_is_a_missing_resource(example: ModuleType) -> None:
    """Spec: a resource that does not exist is -32602 with data.uri."""
    await assert_not_found(example, "ticket://T-404")


async def test_the_prompt_drafts_a_reply_for_a_ticket(example: ModuleType) -> None:
    async with McpTestClient(example.server) as client:
        plain = await client.get_prompt("draft_reply", {"ticket_id": "T-2"})
        formal = await client.get_prompt(
            "draft_reply", {"ticket_id": "T-2", "tone": "formal"}
        )

    (message,) = wire(plain)["messages"]
    assert "user" == wire(message)["role"]
    assert "bo" in wire(message)["content"]["text"]
    assert "in a formal tone" in wire(formal)["messages"][0]["content"]["text"]


async def test_the_desk_methods_stay_directly_callable(example: ModuleType) -> None:
    """api.md: desk.search_tickets("refund", limit=5) returns what the method returns."""
    desk = example.desk

    found = desk.search_tickets("refund", limit=5)
    closed = await desk.close_ticket("T-3", "late parcel refunded")

    assert [example.TicketSummary("T-1", "Refund for a double charge")] == found[:1]
    assert example.TicketSummary("T-3", "Refund request: late delivery") == closed
    assert desk.read_ticket("T-3").closed_by is None


def _line(request_id: int, method: str, params: dict[str, Any]) -> str:
    params = {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
        **params,
    }
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message) + "\n"


def test_running_the_example_serves_over_stdio_and_exits_when_stdin_closes() -> None:
    """`python examples/support_desk.py` serves stdio with desk_write granted."""
    stdin = _line(1, "server/discover", {}) + _line(
        2,
        "tools/call",
        {"name": "close_ticket", "arguments": {"ticket_id": "T-1", "note": "done"}},
    )
    completed = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    replies = {m["id"]: m for m in map(json.loads, completed.stdout.splitlines())}
    assert 0 == completed.returncode, completed.stderr
    assert ["2026-07-28"] == replies[1]["result"]["supportedVersions"]
    assert replies[2]["result"]["isError"] is False
    assert "T-1" == replies[2]["result"]["structuredContent"]["id"]
