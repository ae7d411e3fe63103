"""What the blocked-loop watch (``Limits.blocked_warning``) costs: per task step and
per call.

    .venv/bin/python bench/blocked_watch.py [--steps 200000] [--calls 5000] [--pairs 20]

Two A/B figures, each measured in alternating blocks (watch off, watch on) and shown
as the median of the pairs' differences (noise on a shared machine only slows a block
down, and pairs cancel slow drifts). CPU time is the process's, so the watchdog
thread's own wake-ups are counted:

* per task step: one task awaiting ``trio.lowlevel.checkpoint()`` in a loop, inside
  ``watch_blocking(1.0)`` or not;
* per call: ``tools/call`` of the ``echo`` tool of ``examples/bench_server.py`` (an
  ``async def``), one at a time through ``serve_messages`` on memory channels, with
  ``Limits(blocked_warning=math.inf)`` (no watch) or the default 1 s.

The first design, a ``trio.abc.Instrument`` timing every task step, measured +1.0 us
per step and +7.0 to +9.0 us per call (+8.7 to +10.3 %) here; the watchdog thread
replaced it (docs/limits.md).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from bench_server import server

from trio_mcp import Limits
from trio_mcp._blocked import watch_blocking

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


async def steps_block(steps: int, watched: bool) -> float:
    """CPU seconds for ``steps`` checkpoints of one task."""
    with watch_blocking(1.0 if watched else math.inf):
        start = time.process_time()
        for _ in range(steps):
            await trio.lowlevel.checkpoint()
        return time.process_time() - start


async def calls_block(calls: int, watched: bool) -> float:
    """CPU seconds for ``calls`` sequential ``echo`` calls through serve_messages."""
    limits = Limits(blocked_warning=1.0 if watched else math.inf)
    send_in, receive_in = trio.open_memory_channel[str](1)
    send_out, receive_out = trio.open_memory_channel[str](1)
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"_meta": META, "name": "echo", "arguments": {"text": "hi"}},
        }
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: server.serve_messages(receive_in, send_out.send, limits=limits)
        )
        await send_in.send(line)  # warm-up
        await receive_out.receive()
        start = time.process_time()
        for _ in range(calls):
            await send_in.send(line)
            await receive_out.receive()
        spent = time.process_time() - start
        await send_in.aclose()
    return spent


async def ab(measure, count: int, pairs: int) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """Median per-unit seconds off, on, and the median paired difference."""
    offs, ons, deltas = [], [], []
    for _ in range(pairs):
        off = await measure(count, False) / count
        on = await measure(count, True) / count
        offs.append(off)
        ons.append(on)
        deltas.append(on - off)
    return statistics.median(offs), statistics.median(ons), statistics.median(deltas)


async def main(steps: int, calls: int, pairs: int) -> None:
    off, on, delta = await ab(steps_block, steps, pairs)
    print(
        f"task step: {off * 1e9:7.0f} ns without the watch, {on * 1e9:7.0f} ns with it:"
        f" +{delta * 1e9:.0f} ns per step (median of {pairs} pairs of {steps} steps)"
    )
    off, on, delta = await ab(calls_block, calls, pairs)
    print(
        f"echo call: {off * 1e6:7.1f} us without the watch, {on * 1e6:7.1f} us with it:"
        f" +{delta * 1e6:.2f} us per call, {delta / off:+.1%}"
        f" (median of {pairs} pairs of {calls} calls)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--calls", type=int, default=5_000)
    parser.add_argument("--pairs", type=int, default=20)
    args = parser.parse_args()
    trio.run(main, args.steps, args.calls, args.pairs)
