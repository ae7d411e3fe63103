"""The server of bench/durable_soak.py: one durable task tool.

Every replica builds it from this module and shares task records and leases through
``RedisStore(os.environ["DURABLE_SOAK_REDIS"], heartbeat=DURABLE_SOAK_HEARTBEAT)``.
"""

from __future__ import annotations

import os

import trio

from trio_mcp import RedisStore, Server, ToolContext, tool
from trio_mcp._instance import instance_id


@tool(task="required", durable=True, max_attempts=20)
async def job(n: int, ms: int) -> str:
    """As a durable task: take ``ms`` milliseconds, then say which attempt ran where.

    Args:
        n: Echoed back, so the soak matches results to calls.
        ms: How long the work takes.
    """
    await trio.sleep(ms / 1000)
    return f"{n}@{instance_id()}#{ToolContext.current().attempt}"


server = Server(
    "durable-soak",
    "1.0",
    tools=[job],
    store=RedisStore(
        os.environ["DURABLE_SOAK_REDIS"],
        heartbeat=float(os.environ.get("DURABLE_SOAK_HEARTBEAT", "2.0")),
    ),
)
