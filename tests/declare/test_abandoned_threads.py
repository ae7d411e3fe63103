"""Timed-out synchronous handlers that keep blocking starve nothing (api.md "The way
out", docs/limits.md "Worker threads").

A timed-out sync handler's worker thread is abandoned: the call ends, the thread runs
on until the function returns. Before, those threads counted against Trio's default
limiter of 40 threads, so 40 of them made every later sync handler (and any other
``trio.to_thread`` user) wait until one returned. Here 40 handlers block on an
event the test sets only at the end; an unrelated sync tool must still be answered.
``fail_after`` is a liveness bound, not a speed target.
"""

from __future__ import annotations

import threading

import trio
from support.conn_peer import double

from trio_mcp import Receipt, Server, ToolContext, tool
from trio_mcp.testing import McpTestClient

STUCK = 40
LIVENESS = 20.0


async def test_forty_abandoned_sync_handlers_do_not_starve_a_new_sync_call() -> None:
    release = threading.Event()
    entered = threading.Semaphore(0)

    @tool(timeout=0.05)
    def stuck(n: int) -> int:
        """
        Block until the test releases every stuck handler.

        Args:
            n: Which call this is.
        """
        entered.release()
        release.wait(timeout=60)
        return n

    receipts: list[Receipt] = []
    server = Server("threads", "1", tools=[stuck, double], receipts=receipts.append)
    try:
        async with McpTestClient(server) as client:
            for n in range(STUCK):
                timed_out = await client.call_tool("stuck", {"n": n})
                assert timed_out.is_error
            for _ in range(STUCK):  # every one really is blocking in its thread
                assert entered.acquire(timeout=LIVENESS)

            with trio.fail_after(LIVENESS):
                doubled = await client.call_tool("double", {"n": 21})
                other_thread_user = await trio.to_thread.run_sync(lambda: "free")
    finally:
        release.set()

    assert doubled.structured == 42
    assert other_thread_user == "free"
    assert [r.outcome for r in receipts] == ["timeout"] * STUCK + ["ok"]


def test_an_abandoned_handler_sees_ctx_cancel_after_the_run_has_ended() -> None:
    """A sync handler abandoned by a call that ended, still running after ``trio.run``
    returned, reads ``ctx.cancel.cancelled`` as true: nothing can wait for it now.
    Before, the token answered false forever once the run was gone."""
    go_on = threading.Event()
    seen: list[bool] = []
    done = threading.Event()

    @tool(timeout=0.05)
    def outlives_the_run() -> str:
        """Wait for the test, then report what ctx.cancel says."""
        go_on.wait(timeout=60)
        seen.append(ToolContext.current().cancel.cancelled)
        done.set()
        return "late"

    async def main() -> None:
        async with McpTestClient(
            Server("late", "1", tools=[outlives_the_run])
        ) as client:
            timed_out = await client.call_tool("outlives_the_run", {})
            assert timed_out.is_error

    trio.run(main)
    go_on.set()

    assert done.wait(timeout=LIVENESS)
    assert seen == [True]
