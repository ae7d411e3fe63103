"""The server of bench/production.py: a slow call, and a call that runs as a task.

Every worker and replica builds it from this module and shares buckets, task
records and changes through ``RedisStore(os.environ["PROD_BENCH_REDIS"])``, unless
``PROD_BENCH_STORE=memory`` (bench/prod_costs.py's in-memory variants).
"""

from __future__ import annotations

import os

import trio

from trio_mcp import RedisStore, Server, tool


@tool
async def work(ms: int) -> str:
    """Take ``ms`` milliseconds, as a call that waits on a database would.

    Args:
        ms: How long to take.
    """
    await trio.sleep(ms / 1000)
    return "done"


@tool(task="optional")
async def job(n: int, ms: int) -> int:
    """As a task: take ``ms`` milliseconds, then answer ``n``.

    Args:
        n: The answer, so the client can match results to calls.
        ms: How long to take.
    """
    await trio.sleep(ms / 1000)
    return n


def _store() -> RedisStore | None:
    if os.environ.get("PROD_BENCH_STORE") == "memory":
        return None
    return RedisStore(os.environ.get("PROD_BENCH_REDIS", "redis://127.0.0.1:6379/0"))


server = Server("prod-bench", "1.0", tools=[work, job], store=_store())
