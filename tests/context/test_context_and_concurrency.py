"""ToolContext inside and outside a call, deadlines, worker threads, grants, receipts."""

from __future__ import annotations

import datetime
import json
import threading
from collections.abc import Iterable
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from support import wire

from trio_mcp import Capability, Receipt, Server, ToolContext, tool
from trio_mcp.testing import McpTestClient, ProtocolError

ERROR_KEY = "dev.trio-mcp/error"
write = Capability("write", description="Write things")
audit = Capability("audit", description="Read the audit log")


@attrs.frozen
class Seen:
    request_id: str | None
    principal: str | None
    client_name: str | None
    client_capabilities: str
    seconds_left: float | None


def _seen(ctx: ToolContext, *, in_thread: bool = False) -> Seen:
    seconds_left = None
    if ctx.deadline is not None:
        # trio.current_time() needs the Trio thread; a worker only sees it is set.
        seconds_left = 0.0 if in_thread else ctx.deadline - trio.current_time()
    return Seen(
        request_id=None if ctx.request_id is None else str(ctx.request_id),
        principal=None if ctx.principal is None else str(ctx.principal),
        client_name=None if ctx.client is None else str(ctx.client.get("name")),
        client_capabilities=json.dumps(ctx.client_capabilities, sort_keys=True),
        seconds_left=seconds_left,
    )


@tool(timeout=30)
async def inspect_async() -> Seen:
    """Report what the context says."""
    return _seen(ToolContext.current())


@tool(timeout=datetime.timedelta(minutes=1))
def inspect_sync() -> Seen:
    """Report what the context says, from a worker thread."""
    return _seen(ToolContext.current(), in_thread=True)


@tool
async def no_deadline() -> bool:
    """Report whether there is a deadline."""
    return ToolContext.current().deadline is None


@tool(timeout=2)
async def sleepy() -> str:
    """Sleep far longer than allowed."""
    await trio.sleep(3600)
    return "woke"


# -- outside a call ---------------------------------------------------------------------


async def test_outside_a_call_the_context_is_empty() -> None:
    """api.md: current() outside a call gives an empty context."""
    ctx = ToolContext.current()

    assert (None, None, None, {}, None) == (
        ctx.request_id,
        ctx.principal,
        ctx.client,
        ctx.client_capabilities,
        ctx.deadline,
    )
    assert not ctx.cancel.cancelled


async def test_outside_a_call_the_context_methods_do_nothing_harmful() -> None:
    """api.md: its methods are harmless no-ops, so direct calls work in tests."""
    ctx = ToolContext.current()

    await ctx.progress(1, 10, "a tenth")
    await ctx.log("error", {"what": "nothing"})
    ctx.require(write)
    ctx.require("anything")
    ctx.cancel.cancel()

    assert {} == dict(ctx.input_responses)


async def test_a_direct_call_of_a_tool_sees_the_empty_context() -> None:
    """api.md: direct calls work without a server."""
    seen = await inspect_async()

    assert Seen(None, None, None, "{}", None) == seen


# -- inside a call ----------------------------------------------------------------------


async def test_inside_a_call_the_context_describes_the_request() -> None:
    """api.md: request_id, principal, client (display only), capabilities, deadline."""
    server = Server("ctx", "1", tools=[inspect_async])
    async with McpTestClient(
        server,
        client_capabilities={"elicitation": {}},
        principal="user-42",
        client_info={"name": "probe", "version": "9"},
    ) as client:
        pending = await client.exchange(
            "tools/call",
            {"name": "inspect_async", "_meta": client.meta()},
            request_id="req-7",
        )

    structured = wire(pending.reply)["result"]["structuredContent"]
    assert "req-7" == wire(structured)["request_id"]
    assert "user-42" == wire(structured)["principal"]
    assert "probe" == wire(structured)["client_name"]
    assert '{"elicitation": {}}' == wire(structured)["client_capabilities"]
    assert 29 < wire(structured)["seconds_left"] <= 30


async def test_a_sync_handler_sees_its_context_in_the_worker_thread() -> None:
    """api.md: the context is the same for sync handlers."""
    server = Server("ctx", "1", tools=[inspect_sync])
    async with McpTestClient(server, principal="user-1") as client:
        result = await client.call_tool("inspect_sync")

    assert "user-1" == wire(result.structured)["principal"]
    assert 0.0 == wire(result.structured)["seconds_left"]
    assert wire(result.structured)["request_id"] is not None


async def test_without_timeout_there_is_no_deadline() -> None:
    """api.md: deadline is None without timeout=."""
    async with McpTestClient(Server("ctx", "1", tools=[no_deadline])) as client:
        result = await client.call_tool("no_deadline")

    assert result.structured is True


async def test_a_call_past_its_timeout_is_an_error_result_saying_so(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """api.md: timeout= is the deadline; expiry is reported to the model."""
    async with McpTestClient(Server("t", "1", tools=[sleepy])) as client:
        started = trio.current_time()
        result = await client.call_tool("sleepy")
        elapsed = trio.current_time() - started

    assert result.is_error
    assert "timed out" in result.text
    assert "timeout" == wire(result.meta)[ERROR_KEY]["kind"]
    assert 2 <= elapsed < 3


async def test_a_sync_call_past_its_timeout_is_an_error_result_too() -> None:
    """api.md: the deadline applies to worker threads; the thread is abandoned."""
    release = threading.Event()

    @tool(timeout=0.2)
    def stuck() -> str:
        """Block until released."""
        release.wait(10)
        return "released"

    try:
        async with McpTestClient(Server("t", "1", tools=[stuck])) as client:
            result = await client.call_tool("stuck")
    finally:
        release.set()

    assert result.is_error
    assert "timed out" in result.text


# -- threads ----------------------------------------------------------------------------


async def test_a_sync_handler_runs_in_a_worker_thread() -> None:
    """api.md: sync handlers run in trio.to_thread.run_sync."""

    @tool
    def where() -> bool:
        """Say whether this runs on the main thread."""
        return threading.current_thread() is threading.main_thread()

    async with McpTestClient(Server("t", "1", tools=[where])) as client:
        result = await client.call_tool("where")

    assert result.structured is False


async def test_a_blocked_sync_handler_does_not_block_other_requests() -> None:
    """api.md: synchronous handlers never block other requests."""
    release = threading.Event()
    entered = threading.Event()

    @tool
    def wait_for_release() -> str:
        """Block the thread until released."""
        entered.set()
        release.wait(10)
        return "released"

    @tool
    async def quick() -> str:
        """Answer at once."""
        return "quick"

    server = Server("t", "1", tools=[wait_for_release, quick])
    results: dict[str, Any] = {}
    async with McpTestClient(server) as client:

        async def slow_call() -> None:
            results["slow"] = (await client.call_tool("wait_for_release")).structured

        with trio.fail_after(5):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(slow_call)
                await trio.to_thread.run_sync(entered.wait)
                results["quick"] = (await client.call_tool("quick")).structured
                assert "slow" not in results
                release.set()

    assert {"quick": "quick", "slow": "released"} == results


# -- progress and logs ------------------------------------------------------------------


@tool
async def busy() -> str:
    """Report progress and log along the way."""
    ctx = ToolContext.current()
    await ctx.progress(1, 3, "one")
    await ctx.progress(1, 3, "one again")  # does not increase: dropped
    await ctx.log("debug", "detail")
    await ctx.log("warning", "careful")
    await ctx.progress(3, 3)
    return "done"


def params_of(notifications: Iterable[Any], method: str) -> list[Any]:
    """The params of each notification of ``method``, in order."""
    return [wire(n)["params"] for n in notifications if n["method"] == method]


async def test_progress_is_sent_only_with_a_token_and_only_increasing() -> None:
    """Spec (mcp §11): progressToken opts in; progress must increase."""
    async with McpTestClient(Server("p", "1", tools=[busy])) as client:
        without = await client.call_tool("busy")
        with_token = await client.call_tool("busy", progress_token="tok")

    progress = params_of(with_token.notifications, "notifications/progress")
    assert [] == params_of(without.notifications, "notifications/progress")
    assert [(1, "one"), (3, None)] == [
        (p["progress"], p.get("message")) for p in progress
    ]
    assert {"tok"} == {p["progressToken"] for p in progress}


async def test_logs_are_sent_only_at_or_above_the_requests_level() -> None:
    """Spec (mcp §11): logLevel opts in, at or above that level."""
    async with McpTestClient(Server("p", "1", tools=[busy])) as client:
        silent = await client.call_tool("busy")
        await client.call_tool("busy", log_level="info")
        messages = params_of(client.notifications, "notifications/message")

    assert [] == params_of(silent.notifications, "notifications/message")
    assert [("warning", "careful")] == [(m["level"], m["data"]) for m in messages]


async def test_an_unknown_log_level_in_a_handler_is_its_own_bug() -> None:
    """Our choice: ctx.log with a level the protocol lacks raises ValueError."""
    with pytest.raises(ValueError, match="unknown log level"):
        await ToolContext.current().log("verbose", "x")


# -- grants and receipts ----------------------------------------------------------------


@tool(caps=[write])
async def save(text: str) -> str:
    """Save a text.

    Args:
        text: The text.
    """
    return text


@tool(caps=[write])
async def save_and_audit() -> str:
    """Save, then read the audit log it did not declare."""
    ToolContext.current().require(audit)
    return "audited"


async def test_a_call_without_the_grant_is_refused_as_an_error_result() -> None:
    """api.md: a call without the grant is an isError result and a receipt."""
    receipts: list[Receipt] = []
    server = Server("g", "1", tools=[save], receipts=receipts.append)
    async with McpTestClient(server) as client:
        refused = await client.call_tool("save", {"text": "x"})
    async with McpTestClient(server, allow=[write]) as client:
        allowed = await client.call_tool("save", {"text": "x"})

    assert refused.is_error
    assert "write" in refused.text
    assert {"kind": "refused", "capability": "write", "declared": True} == (
        refused.meta[ERROR_KEY]
    )
    assert "x" == allowed.structured
    assert ["refused", "ok"] == [r.outcome for r in receipts]


async def test_require_refuses_a_capability_the_tool_did_not_declare() -> None:
    """api.md: caps= is the ceiling of ToolContext.require(), whatever is granted."""
    server = Server("g", "1", tools=[save_and_audit])
    async with McpTestClient(server, allow=[write, audit]) as client:
        result = await client.call_tool("save_and_audit")

    assert result.is_error
    assert "audit" in result.text


async def test_grants_may_depend_on_the_principal() -> None:
    """api.md: allow= may be a callable principal -> capabilities."""

    def allow(principal: object) -> list[Capability]:
        return [write] if principal == "editor" else []

    server = Server("g", "1", tools=[save])
    async with McpTestClient(server, principal="editor", allow=allow) as client:
        editor = await client.call_tool("save", {"text": "x"})
    async with McpTestClient(server, principal="reader", allow=allow) as client:
        reader = await client.call_tool("save", {"text": "x"})

    assert (False, True) == (editor.is_error, reader.is_error)


async def test_every_call_leaves_one_receipt_naming_its_outcome() -> None:
    """api.md: every tools/call leaves a Receipt, delivered to receipts=."""
    receipts: list[Receipt] = []

    @tool
    def fails() -> str:
        """Fail unexpectedly."""
        raise RuntimeError("boom")

    server = Server("r", "1", tools=[save, fails], receipts=receipts.append)
    async with McpTestClient(server, principal="p-1", allow=[write]) as client:
        await client.call_tool("save", {"text": "draft-of-the-contract"})
        await client.call_tool("save", {"text": 5})
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("fails")

    assert -32603 == caught.value.code
    assert ["ok", "invalid", "internal"] == [r.outcome for r in receipts]
    assert {"p-1"} == {r.principal_id for r in receipts}
    assert ["save", "save", "fails"] == [r.name for r in receipts]
    assert "draft-of-the-contract" not in repr([r.as_record() for r in receipts])
