"""``ToolContext.require()`` fails closed (api.md "Trust"), through real JSON.

A check that cannot see the call's grants is refused: in a plain thread the handler
started, or in a task of a Trio run that serves calls but outside any of them. The
call's own context (an async handler, a sync handler in its worker thread, a thread
given the context with ``contextvars.copy_context()``) checks the grants; a direct
call of a decorated function outside any server (a unit test) still works.
"""

from __future__ import annotations

import contextvars
import functools
import threading

import pytest
import trio

from trio_mcp import Capability, Refusal, Server, ToolContext, tool
from trio_mcp.testing import McpTestClient

notes = Capability("notes", description="Read notes")


def _require_in(thread_target: str) -> str:
    """Require ``notes`` in a new thread (plain, or carrying the call's context)."""
    outcome: list[str] = []

    def check() -> None:
        try:
            ToolContext.current().require(notes)
        except Refusal as exc:
            outcome.append(f"refused: {exc}")
        else:
            outcome.append("passed")

    target = check
    if thread_target == "copied":
        target = functools.partial(contextvars.copy_context().run, check)
    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    return outcome[0]


@tool(caps=[notes])
async def plain_thread() -> str:
    """Require the capability in a plain thread this handler starts."""
    return _require_in("plain")


@tool(caps=[notes])
def plain_thread_from_sync() -> str:
    """Require the capability in a plain thread this sync handler starts."""
    return _require_in("plain")


@tool(caps=[notes])
async def copied_context() -> str:
    """Require the capability in a thread that carries this call's context."""
    return _require_in("copied")


@tool(caps=[notes])
async def in_handler() -> str:
    """Require the capability in the handler itself."""
    ToolContext.current().require(notes)
    return "passed"


@tool(caps=[notes])
def in_worker_thread() -> str:
    """Require the capability in the worker thread the framework runs this in."""
    ToolContext.current().require(notes)
    return "passed"


@tool
def undeclared_in_worker_thread() -> str:
    """Require a capability this tool did not declare, in its worker thread."""
    ToolContext.current().require(notes)
    return "passed"


def server() -> Server:
    return Server(
        "require",
        "1",
        tools=[
            plain_thread,
            plain_thread_from_sync,
            copied_context,
            in_worker_thread,
            undeclared_in_worker_thread,
        ],
    )


@pytest.mark.parametrize("name", ["plain_thread", "plain_thread_from_sync"])
async def test_a_plain_thread_the_handler_starts_cannot_pass_require(
    name: str,
) -> None:
    """Trust: granted or not, a check that cannot see the call's grants is refused."""
    async with McpTestClient(server(), allow=[notes]) as client:
        result = await client.call_tool(name)

    assert result.structured.startswith("refused: ")  # type: ignore[union-attr]
    assert "notes" in result.text
    assert "copy_context" in result.text


async def test_a_thread_given_the_calls_context_checks_its_grants() -> None:
    async with McpTestClient(server(), allow=[notes]) as granted:
        passed = await granted.call_tool("copied_context")
    async with McpTestClient(server()) as refused:
        denied = await refused.call_tool("copied_context")

    assert "passed" == passed.structured
    assert denied.is_error


async def test_a_sync_handler_in_its_worker_thread_checks_its_grants() -> None:
    async with McpTestClient(server(), allow=[notes]) as client:
        passed = await client.call_tool("in_worker_thread")
        undeclared = await client.call_tool("undeclared_in_worker_thread")

    assert "passed" == passed.structured
    assert undeclared.is_error
    assert "notes" in undeclared.text


async def test_outside_any_call_while_a_server_serves_require_is_refused() -> None:
    """A task of a serving run (not on behalf of a call) sees no grants: refused."""
    async with McpTestClient(server(), allow=[notes]) as client:
        await client.call_tool("in_worker_thread")
        with pytest.raises(Refusal, match="cannot see"):
            ToolContext.current().require(notes)
        with pytest.raises(Refusal, match="cannot see"):
            await trio.to_thread.run_sync(in_worker_thread)


async def test_a_direct_call_after_a_test_client_closed_still_works() -> None:
    """The serving count falls back to zero: a unit test after a client passes."""
    assert "passed" == await in_handler()
    async with McpTestClient(server(), allow=[notes]) as client:
        await client.call_tool("in_worker_thread")

    assert "passed" == await in_handler()
    assert "passed" == await trio.to_thread.run_sync(in_worker_thread)


_released = threading.Event()
_late: list[str] = []
_late_threads: list[threading.Thread] = []


@tool(caps=[notes])
async def outliving_thread() -> str:
    """Start a plain thread that requires the capability after the server closed."""

    def late() -> None:
        _released.wait(10)
        try:
            ToolContext.current().require(notes)
        except Refusal:
            _late.append("refused")
        else:
            _late.append("passed")

    _late_threads.append(threading.Thread(target=late, daemon=True))
    _late_threads[0].start()
    return "started"


async def test_a_plain_thread_that_outlives_its_server_is_still_refused() -> None:
    late = Server("late", "1", tools=[outliving_thread])
    async with McpTestClient(late, allow=[notes]) as client:
        assert "started" == (await client.call_tool("outliving_thread")).structured

    _released.set()
    await trio.to_thread.run_sync(_late_threads[0].join, 10)

    assert ["refused"] == _late


async def test_a_direct_async_call_outside_any_server_still_works() -> None:
    """api.md: a direct call of a decorated function (a unit test) still works."""
    assert "passed" == await in_handler()


def test_a_direct_sync_call_outside_any_server_still_works() -> None:
    assert "passed" == in_worker_thread()


async def test_a_direct_call_in_a_trio_worker_thread_outside_any_server_works() -> None:
    assert "passed" == await trio.to_thread.run_sync(in_worker_thread)


def test_a_plain_thread_outside_any_server_is_refused() -> None:
    """Fail closed: a thread that is neither the main thread nor Trio's sees no call.

    Nothing tells a thread a handler started from one a test started, and such a
    thread may outlive its server: a plain thread is refused, server or not.
    """
    assert _require_in("plain").startswith("refused: ")
