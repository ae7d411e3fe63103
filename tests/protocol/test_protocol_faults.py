"""Every JSON-RPC error the core sends: its code, its data, and when (mcp §2.1, §4.2).

Each exchange goes through ``McpTestClient``, which validates every emitted message
against the official 2026-07-28 schema.
"""

from __future__ import annotations

import gc
import json
import logging
from typing import Any

import pytest
from support import wire
from support.tools import echo

from trio_mcp import Server, prompt, resource, tool
from trio_mcp.testing import McpTestClient, ProtocolError

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SUPPORTED = ["2026-07-28"]


@tool
def explode() -> str:
    """Fail in a way the model must not see."""
    raise RuntimeError("database password is hunter2")


@prompt
def greet(who: str, mood: str | None = None) -> str:
    """Greet someone.

    Args:
        who: Whom to greet.
        mood: The mood of the greeting.
    """
    return f"hello {who} ({mood})"


@resource("notes://{day}")
def notes(day: str) -> str:
    """The notes of one day."""
    return f"notes of {day}"


def make_server() -> Server:
    return Server(
        "faults", "1.0", tools=[echo, explode], resources=[notes], prompts=[greet]
    )


def meta(**extra: Any) -> dict[str, Any]:
    return {VERSION_KEY: "2026-07-28", CAPS_KEY: {}, **extra}


def raw(message: dict[str, Any]) -> str:
    return json.dumps(message)


async def request_error(
    client: McpTestClient, method: str, params: Any
) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        await client.request(method, params)
    return info.value


# -- -32700 and -32600: messages that are not requests --------------------------------


async def test_text_that_is_not_json_is_a_parse_error_without_an_id() -> None:
    """Spec-mandated (-32700); api.md: an unreadable id is omitted."""
    async with McpTestClient(make_server()) as client:
        replies = await client.send_raw('{"jsonrpc": "2.0", "id": 1, "method": ')

    assert 1 == len(replies)
    assert -32700 == wire(replies)[0]["error"]["code"]
    assert "id" not in replies[0]


async def test_a_batch_is_an_invalid_request() -> None:
    """Spec-mandated: batches were removed in 2025-06-18 (-32600)."""
    batch = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {"_meta": meta()},
        },
    ]
    async with McpTestClient(make_server()) as client:
        replies = await client.send_raw(json.dumps(batch))

    assert [
        {
            "jsonrpc": "2.0",
            "error": {
                "code": -32600,
                "message": "invalid request: batches are not supported; send one message",
            },
        }
    ] == replies


async def test_a_response_sent_by_the_client_is_an_invalid_request() -> None:
    """Spec-mandated: servers receive only requests and notifications (-32600)."""
    async with McpTestClient(make_server()) as client:
        replies = await client.send_raw(raw({"jsonrpc": "2.0", "id": 4, "result": {}}))

    assert -32600 == wire(replies)[0]["error"]["code"]
    assert 4 == replies[0]["id"]


async def test_a_message_that_is_not_an_object_is_an_invalid_request() -> None:
    """Spec-mandated (-32600)."""
    async with McpTestClient(make_server()) as client:
        replies = await client.send_raw('"server/discover"')

    assert [
        {
            "jsonrpc": "2.0",
            "error": {
                "code": -32600,
                "message": "invalid request: a message must be a JSON object",
            },
        }
    ] == replies


async def test_a_message_without_jsonrpc_2_0_is_an_invalid_request_echoing_its_id() -> (
    None
):
    """Spec-mandated (-32600); the id is echoed because it could be read."""
    message = {
        "jsonrpc": "1.0",
        "id": "x",
        "method": "server/discover",
        "params": {"_meta": meta()},
    }
    async with McpTestClient(make_server()) as client:
        replies = await client.send_raw(raw(message))

    assert -32600 == wire(replies)[0]["error"]["code"]
    assert "x" == replies[0]["id"]


@pytest.mark.parametrize("bad_id", [None, 1.5, True, [1], {"n": 1}])
async def test_a_request_id_that_is_not_a_string_or_integer_is_an_invalid_request(
    bad_id: object,
) -> None:
    """Spec-mandated: ids are strings or integers, never null (-32600, id omitted)."""
    message = {
        "jsonrpc": "2.0",
        "id": bad_id,
        "method": "server/discover",
        "params": {"_meta": meta()},
    }
    async with McpTestClient(make_server()) as client:
        replies = await client.send_raw(raw(message))

    assert -32600 == wire(replies)[0]["error"]["code"]
    assert "id" not in replies[0]


async def test_a_notification_gets_no_reply_even_when_unknown() -> None:
    """Spec-mandated: nothing is ever sent back for a notification."""
    async with McpTestClient(make_server()) as client:
        await client.notify("notifications/whatever", {})
        result = await client.discover()

    assert [] == client.notifications
    assert "complete" == result["resultType"]


# -- -32601: unknown and removed methods ------------------------------------------------


async def test_an_unknown_method_is_method_not_found() -> None:
    """Spec-mandated (-32601)."""
    async with McpTestClient(make_server()) as client:
        error = await request_error(client, "tools/frobnicate", {})

    assert -32601 == error.code


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ],
)
@pytest.mark.parametrize("with_meta", [True, False])
async def test_a_removed_method_is_method_not_found_naming_the_supported_versions(
    method: str, with_meta: bool
) -> None:
    """api.md precise shapes: -32601 with data.supported, with or without _meta."""
    params: dict[str, Any] = {"_meta": meta()} if with_meta else {}
    message = {"jsonrpc": "2.0", "id": 9, "method": method, "params": params}
    async with McpTestClient(make_server()) as client:
        replies = await client.send_raw(raw(message))

    error = replies[0]["error"]
    assert -32601 == wire(error)["code"]
    assert {"supported": SUPPORTED} == wire(error)["data"]
    assert "2026-07-28" in wire(error)["message"]
    assert 9 == replies[0]["id"]


async def test_a_list_method_without_its_capability_is_method_not_found() -> None:
    """Spec-mandated (mcp §6.1): no tools advertised, so tools/list is -32601."""
    server = Server("empty", "1", prompts=[greet])
    async with McpTestClient(server) as client:
        discovered = await client.discover()
        error = await request_error(client, "tools/list", {})

    assert "tools" not in wire(discovered)["capabilities"]
    assert -32601 == error.code


# -- -32602: _meta and parameters --------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"_meta": {}},
        {"_meta": {VERSION_KEY: "2026-07-28"}},
        {"_meta": {CAPS_KEY: {}}},
        {"_meta": {VERSION_KEY: "2026-07-28", CAPS_KEY: "none"}},
        {"_meta": "yes"},
    ],
    ids=[
        "no-params",
        "no-meta",
        "empty-meta",
        "no-capabilities",
        "no-version",
        "capabilities-not-object",
        "meta-not-object",
    ],
)
async def test_missing_or_partial_meta_is_invalid_params(params: Any) -> None:
    """Spec-mandated (mcp §3): protocolVersion and clientCapabilities are required."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 3, "method": "server/discover"}
    if params is not None:
        message["params"] = params
    async with McpTestClient(make_server()) as client:
        replies = await client.send_raw(raw(message))

    assert -32602 == wire(replies)[0]["error"]["code"]
    assert 3 == replies[0]["id"]


async def test_meta_is_checked_before_the_method_is_looked_up() -> None:
    """Inferred order (mcp §4.2): _meta (step 6) before method (step 10)."""
    message = {"jsonrpc": "2.0", "id": 3, "method": "no/such", "params": {}}
    async with McpTestClient(make_server()) as client:
        replies = await client.send_raw(raw(message))

    assert -32602 == wire(replies)[0]["error"]["code"]


async def test_calling_an_unknown_tool_is_invalid_params() -> None:
    """Spec-mandated (mcp §6.3)."""
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as info:
            await client.call_tool("no_such_tool", {})

    assert -32602 == info.value.code
    assert "no_such_tool" in info.value.message


async def test_getting_an_unknown_prompt_is_invalid_params() -> None:
    """Spec-mandated (mcp §6.6)."""
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as info:
            await client.get_prompt("no_such_prompt")

    assert -32602 == info.value.code


async def test_a_prompt_without_a_required_argument_is_invalid_params() -> None:
    """Spec-mandated (mcp §6.6): missing required prompt arguments."""
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as info:
            await client.get_prompt("greet", {"mood": "cheerful"})

    assert -32602 == info.value.code
    assert "who" in info.value.message


async def test_a_prompt_with_an_unknown_argument_is_invalid_params() -> None:
    """Our choice: prompt arguments are checked like tool arguments."""
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as info:
            await client.get_prompt("greet", {"who": "ana", "colour": "red"})

    assert -32602 == info.value.code
    assert "colour" in info.value.message


@pytest.mark.parametrize("cursor", ["not-a-cursor", "!!!", 7])
async def test_an_invalid_cursor_is_invalid_params(cursor: object) -> None:
    """Spec-mandated (mcp §10)."""
    async with McpTestClient(make_server()) as client:
        error = await request_error(client, "tools/list", {"cursor": cursor})

    assert -32602 == error.code


async def test_a_cursor_of_one_list_is_invalid_for_another() -> None:
    """Our choice: cursors name their list, so they are not interchangeable."""
    many = [_numbered_tool(i) for i in range(101)]
    async with McpTestClient(
        Server("many", "1", tools=many, prompts=[greet])
    ) as client:
        first = await client.request("tools/list", {})
        error = await request_error(
            client, "prompts/list", {"cursor": first["nextCursor"]}
        )

    assert -32602 == error.code


async def test_an_invalid_log_level_is_invalid_params() -> None:
    """Spec SHOULD (mcp §4.2 step 12)."""
    async with McpTestClient(make_server()) as client:
        error = await request_error(
            client, "tools/list", {"_meta": meta(**{LOG_LEVEL_KEY: "loud"})}
        )

    assert -32602 == error.code


async def test_reading_a_resource_nobody_serves_is_invalid_params_with_its_uri() -> (
    None
):
    """Spec-mandated (mcp §6.5): -32602 with data.uri, never empty contents."""
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as info:
            await client.read_resource("elsewhere://x")

    assert -32602 == info.value.code
    assert {"uri": "elsewhere://x"} == info.value.data


async def test_arguments_that_are_not_an_object_are_invalid_params() -> None:
    """Spec-mandated: the request fails the CallToolRequest schema (mcp §6.3)."""
    params = {"name": "echo", "arguments": ["hello"]}
    async with McpTestClient(make_server()) as client:
        error = await request_error(client, "tools/call", params)

    assert -32602 == error.code


# -- -32022: versions ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["server/discover", "tools/list", "tools/call"])
async def test_an_unsupported_version_names_the_supported_and_the_requested(
    method: str,
) -> None:
    """Spec-mandated (mcp §5): -32022 with data.supported and data.requested."""
    params = {"_meta": {VERSION_KEY: "2025-11-25", CAPS_KEY: {}}, "name": "echo"}
    async with McpTestClient(make_server()) as client:
        error = await request_error(client, method, params)

    assert -32022 == error.code
    assert {"supported": SUPPORTED, "requested": "2025-11-25"} == error.data


# -- -32603: failures the client must not see ---------------------------------------------


async def test_an_unexpected_exception_is_an_internal_error_with_only_a_reference(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """api.md: generic message, a reference; the traceback goes to the log only."""
    # Logs mask every living Secret; collect those earlier tests left in cycles.
    gc.collect()
    caplog.set_level(logging.ERROR, logger="trio_mcp")
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as info:
            await client.call_tool("explode", {})

    error = info.value
    reference = wire(error.data)["reference"]
    assert -32603 == error.code
    assert reference in error.message
    assert "hunter2" not in json.dumps([error.message, error.data])
    assert "Traceback" not in error.message
    assert "RuntimeError" not in json.dumps([error.message, error.data])
    # The traceback is in the record: as exc_info, or as redacted exc_text when a
    # living Secret's value (another test may hold Secret("hunter2")) appears in it.
    assert any(
        reference in r.getMessage() and (r.exc_info or r.exc_text)
        for r in caplog.records
    )


async def test_the_server_goes_on_after_an_internal_error() -> None:
    """api.md: a failing handler never ends the server."""
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("explode", {})
        result = await client.call_tool("echo", {"text": "still here"})

    assert -32603 == caught.value.code
    assert "still here" == result.structured


def _numbered_tool(i: int) -> Any:
    def handler() -> int:
        return i

    handler.__name__ = f"tool_{i:03d}"
    handler.__qualname__ = handler.__name__
    handler.__doc__ = f"Return {i}."
    return tool(handler)
