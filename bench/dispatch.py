"""Time the dispatcher alone: parse, check, decode, call, encode; no transport.

    .venv/bin/python bench/dispatch.py [--calls 20000]

Prints microseconds per call for each benchmark tool, the best of five rounds (noise on
a shared machine only slows a round down). This is the part of a call trio_mcp owns; the
transports add framing and I/O on top.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from bench_server import server

from trio_mcp._dispatch import Caller
from trio_mcp._protocol._jsonrpc import parse_message

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CALLS = {
    "echo": {"text": "hello"},
    "add": {"a": 2, "b": 3},
    "search": {"query": "printer"},
}


async def _noop(message: object) -> None:
    """Drop notifications."""


async def main(calls: int) -> None:
    caller = Caller()
    for name, arguments in CALLS.items():
        line = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"_meta": META, "name": name, "arguments": arguments},
            }
        ).encode()
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(calls // 5):
                request = parse_message(line)
                reply = await server._dispatcher.handle(request, caller, _noop)  # type: ignore[arg-type]
                assert reply.body
            best = min(best, (time.perf_counter() - start) / (calls // 5))
        print(
            f"{name:7} {best * 1e6:7.1f} us/call  ({1 / best:,.0f} calls/s, one core)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20_000)
    trio.run(main, parser.parse_args().calls)
