"""The call runner's own rules, through real JSON: the deadline, panics, the
progress token and the client's name as a call's context and receipt see them."""

from __future__ import annotations

import functools
import logging
from datetime import timedelta
from typing import Annotated, Any

import attrs
import httpx
import pytest
import trio
import trio.testing
from support import META, VERSION, serving, wire

from trio_mcp import (
    Call,
    Elicit,
    Ending,
    Field,
    NeedsInput,
    Next,
    RateLimit,
    Receipt,
    ResourceNotFound,
    Sample,
    Secret,
    Server,
    ToolContext,
    prompt,
    resource,
    tool,
)
from trio_mcp.testing import McpTestClient, ProtocolError, ToolResult, check_message


@tool(timeout=0.05)
async def slow() -> str:
    """Never in time."""
    await trio.sleep(5)
    return "never"


@tool(timeout=30)
async def quick() -> str:
    """Well in time."""
    return "done"


@tool
def panics() -> str:
    """Exit the process, as argparse would."""
    raise SystemExit(2)


@tool
def token() -> str:
    """Say which progress token the call has."""
    return repr(ToolContext.current().progress_token)


@tool
def grouped() -> str:
    """Fail with a group that holds no cancellation."""
    raise ExceptionGroup("two failures", [ValueError("a"), KeyError("b")])


@tool
async def hang() -> str:
    """Wait until cancelled."""
    await trio.sleep(3600)
    return "never"


@tool
def login(user: str, token: Secret[str]) -> str:
    """Log in.

    Args:
        user: Who.
        token: Their token.
    """
    return user


@resource("vault://{name}")
def vault(name: str) -> str:
    """Open a vault entry: the name is a secret; a name of ``refused`` needs a
    capability nobody declared.

    Args:
        name: The entry.
    """
    Secret(name)
    if name == "refused":
        ToolContext.current().require("vault.open")
    raise ResourceNotFound(name)


@prompt
def greeting() -> str:
    """Say hello."""
    return "hello"


def make_server(receipts: list[Receipt]) -> Server:
    return Server(
        "runner",
        "1",
        tools=[slow, quick, panics, token, grouped, hang, login],
        prompts=[greeting],
        resources=[vault],
        receipts=receipts.append,
    )


async def test_a_call_past_its_timeout_is_cancelled_and_says_so(
    autojump_clock: trio.testing.MockClock,
) -> None:
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts)) as client:
        late = await client.exchange("tools/call", {"name": "slow", "arguments": {}})
        early = await client.exchange("tools/call", {"name": "quick", "arguments": {}})

    result = wire(late.reply)["result"]
    assert [
        {
            "type": "text",
            "text": "the call timed out after 0.05 seconds and was cancelled",
        }
    ] == result["content"]
    assert True is result["isError"]
    assert {"kind": "timeout", "seconds": 0.05} == result["_meta"]["dev.trio-mcp/error"]
    assert "complete" == result["resultType"]
    assert [{"type": "text", "text": "done"}] == wire(early.reply)["result"]["content"]
    assert [("timeout", "trio.TooSlowError"), ("ok", None)] == [
        (r.outcome, r.error_type) for r in receipts
    ]


async def _failed_then_quick(name: str) -> tuple[Any, ToolResult, list[Receipt]]:
    """Call ``name``, which fails, then ``quick``: the first reply's error, the
    second call's result, and the receipts."""
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts)) as client:
        exchange = await client.exchange("tools/call", {"name": name, "arguments": {}})
        after = await client.call_tool("quick", {})
    return wire(exchange.reply)["error"], after, receipts


async def test_a_panic_is_an_internal_error_with_a_reference_and_a_receipt() -> None:
    error, after, receipts = await _failed_then_quick("panics")

    (receipt, _) = receipts
    reference = receipt.error_ref
    assert isinstance(reference, str)
    assert len(reference) == 12
    assert {
        "code": -32603,
        "message": f"internal error (reference {reference}); the server's log has"
        " the details",
        "data": {"reference": reference},
    } == error
    assert ("internal", "builtins.SystemExit") == (
        receipt.outcome,
        receipt.error_type,
    )
    assert "done" == after.structured


async def test_only_a_string_or_an_integer_is_a_progress_token() -> None:
    async with McpTestClient(make_server([])) as client:
        seen = []
        for value in ["p-1", 7, True, 1.5, None]:
            result = await client.call_tool(
                "token", {}, meta=client.meta(progressToken=value)
            )
            seen.append(result.structured)

    assert ["'p-1'", "7", "None", "None", "None"] == seen


async def test_a_panic_is_logged_naming_the_declaration_under_its_reference(
    caplog: pytest.LogCaptureFixture,
) -> None:
    receipts: list[Receipt] = []
    with caplog.at_level(logging.ERROR, logger="trio_mcp"):
        async with McpTestClient(make_server(receipts)) as client:
            await client.exchange("tools/call", {"name": "panics", "arguments": {}})

    (receipt,) = receipts
    assert [
        f"tool 'panics' ({receipt.declaration}) failed; error reference"
        f" {receipt.error_ref}"
    ] == [r.getMessage() for r in caplog.records if r.name == "trio_mcp"]


async def test_an_exception_group_without_cancellation_is_an_internal_error() -> None:
    error, after, receipts = await _failed_then_quick("grouped")

    assert -32603 == error["code"]
    assert ("internal", "builtins.ExceptionGroup") == (
        receipts[0].outcome,
        receipts[0].error_type,
    )
    assert "done" == after.structured


async def test_the_receipt_names_the_client_only_from_a_client_info_object() -> None:
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts)) as client:
        bare = {k: v for k, v in META.items() if not k.endswith("/clientInfo")}
        for meta in [
            META,
            bare,
            {**bare, "io.modelcontextprotocol/clientInfo": "not an object"},
        ]:
            await client.exchange("tools/call", {"name": "quick", "_meta": meta})

    assert ["trio-mcp-tests", None, None] == [r.client for r in receipts]


async def test_every_receipt_is_logged_as_one_record_named_receipt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="trio_mcp.receipts"):
        async with McpTestClient(make_server([])) as client:
            await client.call_tool("quick", {})

    records = [r for r in caplog.records if r.name == "trio_mcp.receipts"]
    assert ["receipt"] == [r.getMessage() for r in records]
    assert "quick" == records[0].receipt["name"]  # type: ignore[attr-defined]


async def test_an_async_sink_gets_the_receipt_of_a_cancelled_call(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The receipt is delivered under a shield: the call's cancellation does not
    cancel the sink's own awaits."""
    delivered: list[Receipt] = []
    done = trio.Event()

    async def sink(receipt: Receipt) -> None:
        await trio.sleep(0.01)
        delivered.append(receipt)
        done.set()

    server = Server("runner", "1", tools=[hang], receipts=sink)
    async with McpTestClient(server) as client, trio.open_nursery() as nursery:
        nursery.start_soon(
            functools.partial(
                client.exchange, "tools/call", {"name": "hang"}, request_id="c-9"
            )
        )
        await trio.sleep(0.1)
        await client.notify("notifications/cancelled", {"requestId": "c-9"})
        with trio.fail_after(10):
            await done.wait()
        nursery.cancel_scope.cancel()

    assert [("cancelled", "c-9")] == [(r.outcome, r.request_id) for r in delivered]


async def test_prompt_arguments_that_are_not_an_object_are_refused() -> None:
    async with McpTestClient(make_server([])) as client:
        for arguments in [[1], "x"]:
            with pytest.raises(ProtocolError) as caught:
                await client.request(
                    "prompts/get", {"name": "greeting", "arguments": arguments}
                )
            assert -32602 == caught.value.code
            assert "arguments must be an object of strings" in caught.value.message
        fine = await client.get_prompt("greeting")

    assert "hello" == fine.text


async def test_an_error_reply_masks_the_calls_secrets_but_not_its_kind() -> None:
    """A JSON-RPC error that ends a read: its message and the string values of its
    data are masked with the call's secrets; ``data.kind`` is protocol, kept."""
    async with McpTestClient(make_server([])) as client:
        refused = await client.exchange("resources/read", {"uri": "vault://refused"})
        missing = await client.exchange("resources/read", {"uri": "vault://sk-9-zz"})

    assert {
        "code": -31403,
        "message": "**********: the handler asked for the capability 'vault.open'"
        " (ToolContext.require), which its declaration does not declare in caps=,"
        " so no grant allows it; this is the server's to fix (add it to the"
        " declaration's caps=), not the caller's",
        "data": {"kind": "refused", "capability": "vault.open", "declared": False},
    } == wire(refused.reply)["error"]
    assert {
        "code": -32602,
        "message": "resource not found: vault://**********",
        "data": {"uri": "vault://**********"},
    } == wire(missing.reply)["error"]


async def test_a_refusal_is_403_unless_the_step_says_otherwise() -> None:
    async def refuse(call: Call, next: Next) -> Ending:
        return Ending.refused("not today")

    server = Server("runner", "1", tools=[quick], middleware=[refuse])
    async with serving(server) as url, httpx.AsyncClient() as http:
        response = await _post(http, url, "quick")

    assert 403 == response.status_code
    check_message(response.json(), "tools/call")


async def test_a_spent_rate_limit_asks_to_retry_after_at_least_one_second() -> None:
    receipts: list[Receipt] = []
    server = Server("runner", "1", tools=[quick], receipts=receipts.append)
    limit = RateLimit(1, timedelta(seconds=0.9))
    async with (
        serving(server, rate_limit=limit) as url,
        httpx.AsyncClient() as http,
    ):
        first = await _post(http, url, "quick")
        second = await _post(http, url, "quick")

    assert (200, 429) == (first.status_code, second.status_code)
    assert "1" == second.headers["retry-after"]
    assert {
        "code": -32000,
        "message": "rate limited: this caller has used its calls for now;"
        " retry after 1 s",
        "data": {"retryable": True, "retryAfterSeconds": 1},
    } == second.json()["error"]
    assert ["ok", "refused"] == [r.outcome for r in receipts]
    assert "trio_mcp.RateLimit" == receipts[1].error_type


async def _post(http: httpx.AsyncClient, url: str, name: str) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": META, "name": name, "arguments": {}},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    with trio.fail_after(10):
        return await http.post(url + "/mcp", json=body, headers=headers)


async def test_a_sink_that_never_returns_holds_a_reply_five_seconds_at_most(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The sink gets five seconds (on Trio's clock, here a virtual one); then the
    reply goes out without it."""

    async def sink(receipt: Receipt) -> None:
        await trio.sleep_forever()

    server = Server("runner", "1", tools=[quick], receipts=sink)
    async with McpTestClient(server) as client:
        start = trio.current_time()
        result = await client.call_tool("quick", {})
        waited = trio.current_time() - start

    assert "done" == result.structured
    assert pytest.approx(5.0) == waited


async def test_a_call_naming_nothing_served_is_told_what_to_do() -> None:
    async with McpTestClient(make_server([])) as client:
        exchanges = [
            await client.exchange("tools/call", {"name": "nope", "arguments": {}}),
            await client.exchange("prompts/get", {"name": "nope"}),
            await client.exchange("resources/read", {}),
            await client.exchange("tools/call", {"name": "quick", "arguments": [1]}),
        ]

    assert [
        {
            "code": -32602,
            "message": "unknown tool 'nope'; call tools/list for the catalog",
        },
        {
            "code": -32602,
            "message": "unknown prompt 'nope'; call prompts/list for the catalog",
        },
        {"code": -32602, "message": "resources/read needs params.uri (a string)"},
        {"code": -32602, "message": "params.arguments must be an object"},
    ] == [wire(e.reply)["error"] for e in exchanges]


@tool
def routed(
    region: Annotated[str, Field(json_schema={"x-mcp-header": "Region"})],
) -> str:
    """Say where a call went; over HTTP its region is a header too.

    Args:
        region: The region.
    """
    return region


async def test_a_tool_with_header_parameters_runs_where_there_are_no_headers() -> None:
    """stdio and in-process callers send no HTTP headers: nothing to compare."""
    async with McpTestClient(Server("runner", "1", tools=[routed])) as client:
        result = await client.call_tool("routed", {"region": "eu"})

    assert "eu" == result.structured


@attrs.frozen
class Sure:
    ok: bool


@tool(name="ask")
def ask_tool() -> str | NeedsInput:
    """Ask before acting."""
    return NeedsInput({"sure": Elicit("Sure?", schema=Sure)}, state={"from": "tool"})


@prompt(name="ask")
def ask_prompt() -> str | NeedsInput:
    """Ask before writing."""
    state = ToolContext.current().state
    if isinstance(state, dict):
        return f"state from the {state['from']}"
    return NeedsInput({"sure": Elicit("Sure?", schema=Sure)}, state={"from": "prompt"})


async def test_a_tool_calls_request_state_does_not_open_a_prompt_of_its_name() -> None:
    """A round's state is bound to its method: replayed on ``prompts/get`` for a
    prompt of the same name, with the same arguments, it is refused."""
    server = Server("runner", "1", tools=[ask_tool], prompts=[ask_prompt])
    answer = {"sure": {"action": "accept", "content": {"ok": True}}}
    async with McpTestClient(server, {"elicitation": {}}) as client:
        asked = await client.exchange("tools/call", {"name": "ask", "arguments": {}})
        state = wire(asked.reply)["result"]["requestState"]
        replayed = await client.exchange(
            "prompts/get",
            {"name": "ask", "requestState": state, "inputResponses": answer},
        )

    error = wire(replayed.reply)["error"]
    assert (-32602, "invalid requestState: ") == (
        error["code"],
        error["message"][: len("invalid requestState: ")],
    )


@tool
def keyring(names: list[str], keys: list[Secret[str]]) -> list[str]:
    """Pair each name with the last character of its key.

    Args:
        names: Whose keys.
        keys: The keys, kept secret.
    """
    return [f"{n}:{k.reveal()[-1]}" for n, k in zip(names, keys, strict=True)]


async def test_secrets_in_a_list_reach_the_handler_as_secrets() -> None:
    async with McpTestClient(Server("runner", "1", tools=[keyring])) as client:
        result = await client.call_tool(
            "keyring", {"names": ["a", "b"], "keys": ["sk-1", "sk-2"]}
        )

    assert ["a:1", "b:2"] == result.structured


@tool
def needs_sampling() -> str:
    """Check that the client can sample before asking it."""
    ToolContext.current().require_client(Sample)
    return "can sample"


async def test_a_missing_client_capability_is_named_in_the_reply_and_receipt() -> None:
    receipts: list[Receipt] = []
    server = Server("runner", "1", tools=[needs_sampling], receipts=receipts.append)
    async with McpTestClient(server) as client:
        exchange = await client.exchange("tools/call", {"name": "needs_sampling"})

    assert -32021 == wire(exchange.reply)["error"]["code"]
    assert [("refused", "trio_mcp.MissingClientCapability")] == [
        (r.outcome, r.error_type) for r in receipts
    ]


@tool
def pair(inner: Secret[str], outer: Secret[str]) -> str:
    """Say both secrets.

    Args:
        inner: A secret that is part of the other.
        outer: A secret that holds the first.
    """
    return f"{inner.reveal()} in {outer.reveal()}"


async def test_the_longer_of_two_nested_secrets_is_masked_first() -> None:
    """``zz`` sorts after ``azzb`` but is shorter: masked first it would leave
    ``a**********b`` and tell the client where the short secret sits in the long."""
    async with McpTestClient(Server("runner", "1", tools=[pair])) as client:
        result = await client.call_tool("pair", {"inner": "zz", "outer": "azzb"})

    assert "********** in **********" == result.structured
