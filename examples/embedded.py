"""A server embedded in a program that does other work in the same nursery.

``serve_http`` is an ordinary async function: it runs beside a background job and
stops when the nursery is cancelled. Here the job counts ticks that a tool reports.

    python examples/embedded.py --port 8000
"""

from __future__ import annotations

import argparse

import attrs
import trio

from trio_mcp import Server, ToolHints, tool


@attrs.define
class Clock:
    """Work the program does anyway; the tool only reads it."""

    ticks: int = 0

    async def run(self, interval: float) -> None:
        """Count a tick every ``interval`` seconds, forever."""
        while True:
            await trio.sleep(interval)
            self.ticks += 1

    @tool(hints=ToolHints(read_only=True))
    def ticks_so_far(self) -> int:
        """Say how many ticks the background job has counted."""
        return self.ticks


async def main(
    port: int, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Run the clock and the MCP server side by side until cancelled."""
    clock = Clock()
    server = Server("embedded", "1.0", tools=[clock.ticks_so_far])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(clock.run, 0.05)
        bound = await nursery.start(server.serve_http, "127.0.0.1", port)
        task_status.started(bound)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8000)
    trio.run(main, parser.parse_args().port)
