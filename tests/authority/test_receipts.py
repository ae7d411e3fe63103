"""Receipts (api.md "Authority and evidence", "Precise shapes" -> Receipts).

Every ``tools/call``, ``prompts/get`` and ``resources/read`` that reaches a
declaration leaves exactly one receipt, however it ends; it carries no argument
values. Requests that never reach a declaration (an unknown tool, prompt or URI,
a malformed ``params``) are protocol errors and leave none: there is no
declaration to account for.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import time
from typing import TYPE_CHECKING

import pytest
import trio
from support import wire
from support.tools import add, greet

from trio_mcp import Capability, Receipt, Server, ToolError, resource, tool
from trio_mcp.testing import McpTestClient, ProtocolError

if TYPE_CHECKING:
    from support.receipts import Sink

admin = Capability("admin", description="Administer")
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


class Declined(ToolError):
    """A failure the model may read."""


@tool
def decline(reason: str) -> int:
    """
    Fail with a tool error.

    Args:
        reason: Why.
    """
    raise Declined(reason)


@tool
def crash() -> int:
    """Fail with an internal error."""
    raise KeyError("boom")


@tool(timeout=0.01)
async def slow() -> int:
    """Take longer than the deadline."""
    await trio.sleep(10)
    return 1


started = trio.Event()


@pytest.fixture(autouse=True)
def _fresh_started() -> None:
    """A trio.Event set by an earlier run (a second import, a rerun) must not leak."""
    global started  # hang() reads the module's current event
    started = trio.Event()


@tool
async def hang() -> int:
    """Wait until cancelled."""
    started.set()
    await trio.sleep_forever()
    raise AssertionError  # pragma: no cover


@tool(caps=[admin])
def wipe() -> int:
    """Needs admin."""
    return 0


@resource(uri="note://{note_id}")
def note(note_id: str) -> str:
    """
    A note.

    Args:
        note_id: Which note.
    """
    return f"note {note_id}"


def make_server(sink: object) -> Server:
    return Server(
        "receipts",
        "1",
        tools=[add, decline, crash, slow, hang, wipe],
        prompts=[greet],
        resources=[note],
        receipts=sink,  # type: ignore[arg-type]
    )


async def test_an_ok_call_leaves_a_receipt_with_every_field(sink: Sink) -> None:
    """api.md Receipts: kind, declaration, name, required, granted, outcome, ..."""
    before = time.time()
    async with McpTestClient(
        make_server(sink),
        principal={"id": "user-1"},
        allow=[admin],
        client_info={"name": "inspector", "version": "2"},
    ) as client:
        await client.call_tool(
            "add", {"a": 1, "b": 2}, meta={"traceparent": TRACEPARENT}
        )

    receipt = sink.only
    assert "tool" == receipt.kind
    assert "support.tools:add" == receipt.declaration
    assert "add" == receipt.name
    assert frozenset() == receipt.required
    assert frozenset({"admin"}) == receipt.granted
    assert "ok" == receipt.outcome
    assert receipt.error_type is None
    assert "user-1" == receipt.principal_id
    assert "inspector" == receipt.client
    assert 1 == receipt.request_id
    assert before <= receipt.started <= time.time()
    assert 0 <= receipt.duration < 5
    assert TRACE_ID == receipt.trace_id


async def test_a_receipt_names_the_replica_and_worker_that_served_it(
    sink: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: behind a load balancer, a receipt says which process served it:
    ``TRIO_MCP_INSTANCE`` (else the host name) and the worker's process id."""
    monkeypatch.setenv("TRIO_MCP_INSTANCE", "replica-b")
    async with McpTestClient(make_server(sink)) as client:
        await client.call_tool("add", {"a": 1, "b": 2})

    assert f"replica-b:{os.getpid()}" == sink.only.instance
    assert f"replica-b:{os.getpid()}" == sink.only.as_record()["instance"]


async def test_without_a_replica_name_the_host_name_stands_in(
    sink: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRIO_MCP_INSTANCE", raising=False)
    async with McpTestClient(make_server(sink)) as client:
        await client.call_tool("add", {"a": 1, "b": 2})

    assert f"{socket.gethostname()}:{os.getpid()}" == sink.only.instance


async def test_a_receipt_never_holds_argument_values(sink: Sink) -> None:
    """api.md: receipts carry no argument values."""
    async with McpTestClient(make_server(sink)) as client:
        await client.call_tool("decline", {"reason": "marker-9c1f"})

    assert "marker-9c1f" not in repr(sink.only)
    assert "marker-9c1f" not in repr(sink.only.as_record())


@pytest.mark.parametrize(
    ("tool_name", "arguments", "outcome", "error_type"),
    [
        ("decline", {"reason": "no"}, "error", "test_receipts.Declined"),
        ("add", {"a": "one", "b": 2}, "invalid", "trio_mcp.DecodeError"),
        ("wipe", {}, "refused", "trio_mcp.Refusal"),
        ("slow", {}, "timeout", "trio.TooSlowError"),
    ],
)
async def test_each_failing_call_leaves_one_receipt_with_its_outcome(
    sink: Sink,
    tool_name: str,
    arguments: dict[str, object],
    outcome: str,
    error_type: str | None,
) -> None:
    """api.md: one receipt also for invalid arguments, refusals, errors and timeouts."""
    async with McpTestClient(make_server(sink)) as client:
        result = await client.call_tool(tool_name, arguments)

    assert result.is_error
    assert outcome == sink.only.outcome
    assert error_type == sink.only.error_type


async def test_an_internal_error_leaves_a_receipt_with_its_reference(
    sink: Sink,
) -> None:
    """api.md: internal errors leave a receipt; error_type is the qualified class."""
    async with McpTestClient(make_server(sink)) as client:
        with pytest.raises(ProtocolError) as info:
            await client.call_tool("crash")

    assert -32603 == info.value.code
    assert ("internal", "builtins.KeyError") == (
        sink.only.outcome,
        sink.only.error_type,
    )
    assert wire(info.value.data)["reference"] == sink.only.error_ref


async def test_a_cancelled_call_leaves_a_cancelled_receipt(sink: Sink) -> None:
    """api.md: cancellations leave a receipt too."""
    delivered = trio.Event()

    def sink_and_signal(receipt: Receipt) -> None:
        sink(receipt)
        delivered.set()

    server = make_server(sink_and_signal)
    async with McpTestClient(server) as client, trio.open_nursery() as nursery:
        nursery.start_soon(
            functools.partial(
                client.exchange, "tools/call", {"name": "hang"}, request_id="c-1"
            )
        )
        with trio.fail_after(10):
            await started.wait()
        await client.notify("notifications/cancelled", {"requestId": "c-1"})
        with trio.fail_after(10):
            await delivered.wait()
        nursery.cancel_scope.cancel()

    assert ("cancelled", "c-1") == (sink.only.outcome, sink.only.request_id)


async def test_prompts_and_reads_leave_receipts(sink: Sink) -> None:
    """api.md: every prompts/get and resources/read leaves one."""
    async with McpTestClient(make_server(sink)) as client:
        await client.get_prompt("greet", {"name": "ada"})
        await client.read_resource("note://n1")

    assert [("prompt", "greet", "ok"), ("resource", "note://n1", "ok")] == [
        (r.kind, r.name, r.outcome) for r in sink.receipts
    ]


async def test_invalid_prompt_arguments_leave_an_invalid_receipt(sink: Sink) -> None:
    """api.md: one receipt also for invalid arguments (prompts: a -32602 error)."""
    async with McpTestClient(make_server(sink)) as client:
        with pytest.raises(ProtocolError) as info:
            await client.get_prompt("greet", {})

    assert -32602 == info.value.code
    assert ("prompt", "invalid") == (sink.only.kind, sink.only.outcome)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "no_such_tool"}),
        ("tools/call", {"name": 5}),
        ("tools/call", {"name": "add", "arguments": [1, 2]}),
        ("prompts/get", {"name": "no_such_prompt"}),
        ("resources/read", {"uri": "nothing://here"}),
    ],
)
async def test_requests_that_reach_no_declaration_leave_no_receipt(
    sink: Sink, method: str, params: dict[str, object]
) -> None:
    """Our choice: a receipt accounts for a declaration; these never reach one."""
    async with McpTestClient(make_server(sink)) as client:
        with pytest.raises(ProtocolError) as info:
            await client.request(method, params)

    assert -32602 == info.value.code
    assert [] == sink.receipts


async def test_an_async_sink_receives_receipts() -> None:
    """api.md: receipts= is a callable, sync or async."""
    got: list[Receipt] = []

    async def sink(receipt: Receipt) -> None:
        await trio.lowlevel.checkpoint()
        got.append(receipt)

    async with McpTestClient(make_server(sink)) as client:
        await client.call_tool("add", {"a": 1, "b": 1})

    assert ["add"] == [r.name for r in got]


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("error", [RuntimeError, SystemExit, KeyboardInterrupt])
async def test_a_failing_sink_never_fails_the_call(
    kind: str, error: type[BaseException], caplog: pytest.LogCaptureFixture
) -> None:
    """Our choice: evidence delivery must not change the result the caller sees; a
    sink that raises ``SystemExit`` (or a ``KeyboardInterrupt`` it raised itself, not
    a signal) is contained like a handler's panic, and the server goes on."""

    def sync_sink(receipt: Receipt) -> None:
        raise error("sink down")

    async def async_sink(receipt: Receipt) -> None:
        await trio.lowlevel.checkpoint()
        raise error("sink down")

    server = make_server(sync_sink if kind == "sync" else async_sink)
    with caplog.at_level(logging.ERROR, logger="trio_mcp"):
        async with McpTestClient(server) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
            again = await client.call_tool("add", {"a": 1, "b": 1})

    assert (5, 2) == (result.structured, again.structured)
    assert 2 * ["the receipts sink failed; the call's result is unaffected"] == [
        r.getMessage() for r in caplog.records if "sink" in r.getMessage()
    ]


async def test_receipts_are_structured_records_on_the_receipts_logger(
    sink: Sink, caplog: pytest.LogCaptureFixture
) -> None:
    """api.md: receipts also go to the ``trio_mcp.receipts`` logger."""
    with caplog.at_level(logging.INFO, logger="trio_mcp.receipts"):
        async with McpTestClient(make_server(sink)) as client:
            await client.call_tool("add", {"a": 1, "b": 2})

    records = [r for r in caplog.records if r.name == "trio_mcp.receipts"]
    assert 1 == len(records)
    record = records[0].receipt  # type: ignore[attr-defined]
    assert ("add", "ok", [], []) == (
        record["name"],
        record["outcome"],
        record["required"],
        record["granted"],
    )


async def test_a_missing_or_malformed_traceparent_gives_no_trace_id(sink: Sink) -> None:
    """W3C trace context: an invalid traceparent is ignored, not an error."""
    async with McpTestClient(make_server(sink)) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("add", {"a": 1, "b": 2}, meta={"traceparent": "garbage"})
        await client.call_tool(
            "add",
            {"a": 1, "b": 2},
            meta={"traceparent": f"00-{'0' * 32}-00f067aa0ba902b7-01"},
        )

    assert [None, None, None] == [r.trace_id for r in sink.receipts]
