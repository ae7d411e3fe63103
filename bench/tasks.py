"""Time what the tasks extension adds to a call, at the dispatcher (no transport).

    .venv/bin/python bench/tasks.py [--calls 5000]

Prints microseconds per request, best of five rounds, for: the same instant tool
answered synchronously (a client without the extension), created as a task (the
``CreateTaskResult``: record, nursery start, encode), read with ``tasks/get`` once
finished, and a whole task (create, let it finish, read the result). Memory: the
bytes a finished task holds, from tracemalloc over 1000 tasks.
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from trio_mcp import Server, tool
from trio_mcp._dispatch import Caller
from trio_mcp._protocol._jsonrpc import parse_message

TASKS = "io.modelcontextprotocol/tasks"


@tool(task="optional")
async def instant(text: str) -> str:
    """Echo at once.

    Args:
        text: What to echo.
    """
    await trio.lowlevel.checkpoint()
    return text


def line(method: str, capabilities: dict[str, Any], **params: Any) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"_meta": meta, **params},
    }
    return json.dumps(message).encode()


async def _noop(message: object) -> None:
    """Drop notifications."""


async def best_of_five(calls: int, one: Callable[[], Awaitable[None]]) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls // 5):
            await one()
        best = min(best, (time.perf_counter() - start) / (calls // 5))
    return best


async def main(calls: int) -> None:
    server = Server("bench", "1", tools=[instant])
    dispatcher, caller = server._dispatcher, Caller()
    plain = line("tools/call", {}, name="instant", arguments={"text": "hi"})
    as_task = line(
        "tools/call",
        {"extensions": {TASKS: {}}},
        name="instant",
        arguments={"text": "hi"},
    )

    async def handle(raw: bytes) -> dict[str, Any]:
        reply = await dispatcher.handle(parse_message(raw), caller, _noop)  # type: ignore[arg-type]
        message: dict[str, Any] = reply.message
        return message

    async with server.task_nursery():
        task_id = (await handle(as_task))["result"]["taskId"]
        await trio.testing.wait_all_tasks_blocked()
        get = line("tasks/get", {"extensions": {TASKS: {}}}, taskId=task_id)

        async def sync_call() -> None:
            await handle(plain)

        async def create() -> None:
            await handle(as_task)

        async def read() -> None:
            await handle(get)

        async def whole() -> None:
            created = await handle(as_task)
            await trio.testing.wait_all_tasks_blocked()
            ask = line(
                "tasks/get",
                {"extensions": {TASKS: {}}},
                taskId=created["result"]["taskId"],
            )
            done = await handle(ask)
            assert done["result"]["status"] == "completed"

        for name, one in [
            ("sync call", sync_call),
            ("create task", create),
            ("tasks/get", read),
            ("whole task", whole),
        ]:
            seconds = await best_of_five(calls, one)
            print(f"{name:12} {seconds * 1e6:8.1f} us/request")

        before = len(dispatcher.tasks._records)
        tracemalloc.start()
        snapshot = tracemalloc.take_snapshot()
        for _ in range(1000):
            await handle(as_task)
        await trio.testing.wait_all_tasks_blocked()
        grown = tracemalloc.take_snapshot().compare_to(snapshot, "filename")
        tracemalloc.stop()
        held = sum(stat.size_diff for stat in grown)
        kept = len(dispatcher.tasks._records) - before
        print(f"memory       {held / kept:8.0f} bytes per finished task ({kept} kept)")


if __name__ == "__main__":
    import trio.testing

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=5_000)
    trio.run(main, parser.parse_args().calls)
