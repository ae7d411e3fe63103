"""Stdlib ``json`` against ``orjson`` on what a call parses and encodes.

    bench/.venv/bin/python bench/json_codecs.py

Times trio_mcp's own ``loads``/``encode_message`` (stdlib ``json``, strict) and
``orjson`` on a ``tools/call`` request and two replies (``echo``'s and ``search``'s,
about 3 KB), best of five rounds, then shows where the two differ on values the
wire can carry. docs/performance.md records the decision these figures support.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import orjson
from peers.tools import records

from trio_mcp._json import encode_message, loads

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
REQUEST = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": META, "name": "echo", "arguments": {"text": "hello"}},
    }
).encode()


def reply(value: Any) -> dict[str, Any]:
    """A ``tools/call`` response as trio_mcp writes it."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [{"type": "text", "text": json.dumps(value)}],
            "structuredContent": {"result": value},
            "isError": False,
            "resultType": "complete",
            "_meta": {
                "io.modelcontextprotocol/serverInfo": {"name": "b", "version": "1"}
            },
        },
    }


def best_us(work: Callable[[], object], rounds: int = 5, count: int = 20_000) -> float:
    """The fastest round's time per call, in microseconds."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(count):
            work()
        best = min(best, (time.perf_counter() - start) / count)
    return best * 1e6


def outcome(work: Callable[[], object]) -> str:
    """What ``work`` returns, or the name of what it raises."""
    try:
        return repr(work())
    except Exception as exc:  # the point is to show which side raises
        return type(exc).__name__


def main() -> None:
    """Print the timings, then the differences in behaviour."""
    echo, search = reply("hello"), reply(records("printer", 20))
    rows = [
        ("parse the request", lambda: loads(REQUEST), lambda: orjson.loads(REQUEST)),
        (
            "encode echo's reply",
            lambda: encode_message(echo),
            lambda: orjson.dumps(echo),
        ),
        (
            f"encode search's reply ({len(encode_message(search)):,} B)",
            lambda: encode_message(search),
            lambda: orjson.dumps(search),
        ),
    ]
    print(f"orjson {orjson.__version__}; µs per call, best of 5 rounds\n")
    print("| step | stdlib json | orjson | saved |\n|---|---:|---:|---:|")
    for name, ours, theirs in rows:
        a, b = best_us(ours), best_us(theirs)
        print(f"| {name} | {a:.2f} | {b:.2f} | {a - b:.2f} |")
    print("\n| value | stdlib json (trio_mcp) | orjson |\n|---|---|---|")
    cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        (
            "encode NaN",
            lambda: encode_message(float("nan")),
            lambda: orjson.dumps(float("nan")),
        ),
        (
            "encode a lone surrogate",
            lambda: encode_message("\ud800"),
            lambda: orjson.dumps("\ud800"),
        ),
        (
            "encode {1: 'a'}",
            lambda: encode_message({1: "a"}),
            lambda: orjson.dumps({1: "a"}),
        ),
        ("parse 2**70", lambda: loads(str(2**70)), lambda: orjson.loads(str(2**70))),
        (
            'parse "\\ud800"',
            lambda: loads('"\\ud800"'),
            lambda: orjson.loads('"\\ud800"'),
        ),
    ]
    for name, ours, theirs in cases:
        print(f"| {name} | {outcome(ours)} | {outcome(theirs)} |")


if __name__ == "__main__":
    main()
