"""The 1,000-tool catalog: how long ``Server(...)`` takes to build and ``tools/list`` to answer.

    bench/.venv/bin/python bench/catalog.py [--tools 1000] [--json]
    bench/.venv/bin/python bench/catalog.py serve [--tools 1000]   (stdio server)

The first form declares the tools and builds the ``Server`` in this (fresh) process,
then starts the second form as a subprocess and times ``tools/list`` over stdio,
following ``nextCursor`` through every page: the whole walk and the first page alone,
median of the rounds. Tools differ in name, description and parameters, as a real
catalog's would.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

from load import LoadError, StdioPeer, request_body

from trio_mcp import Server, tool

ROUNDS = 20


def make_tool(index: int) -> Any:
    """Declare tool ``index``: its own name, docstring and a few typed parameters."""

    async def lookup(query: str, limit: int = 10, exact: bool = False) -> list[str]:
        return [query] * min(limit, 3)

    lookup.__doc__ = f"""
    Look up records of kind {index} by a query.

    Args:
        query: Words to look for in kind {index}.
        limit: Most records to return.
        exact: Match whole words only.
    """
    return tool(name=f"lookup_{index:04d}")(lookup)


def build(count: int) -> tuple[Server, float, float]:
    """The server and the seconds spent declaring the tools and building it."""
    begin = time.perf_counter()
    tools = [make_tool(index) for index in range(count)]
    declared = time.perf_counter()
    server = Server("catalog-bench", "1.0", tools=tools)
    return server, declared - begin, time.perf_counter() - declared


def walk(peer: StdioPeer, timeout: float = 10.0) -> tuple[int, int, float, float]:
    """List every page: (pages, tools, seconds for all, seconds for the first)."""
    cursor = ""
    pages = tools = 0
    first = 0.0
    begin = time.perf_counter()
    while True:
        body = request_body(cursor, 1_000_000 + pages, "tools/list")
        reply = peer.ask(body, timeout)
        if "result" not in reply:
            raise LoadError(f"tools/list failed: {reply!r}")
        if not pages:
            first = time.perf_counter() - begin
        pages += 1
        tools += len(reply["result"]["tools"])
        cursor = reply["result"].get("nextCursor") or ""
        if not cursor:
            return pages, tools, time.perf_counter() - begin, first


def measure(count: int, rounds: int = ROUNDS) -> dict[str, Any]:
    """Build here, then time ``tools/list`` against a served copy."""
    _, declare_s, build_s = build(count)
    proc = subprocess.Popen(
        [sys.executable, __file__, "serve", "--tools", str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        peer = StdioPeer(proc)
        walk(peer, timeout=300)  # warm-up; the server is still declaring its tools
        runs = [walk(peer) for _ in range(rounds)]
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)
    pages, listed, _, _ = runs[0]
    if listed != count:
        raise LoadError(f"tools/list gave {listed} tools, not {count}")
    return {
        "tools": count,
        "declare_ms": declare_s * 1e3,
        "build_ms": build_s * 1e3,
        "pages": pages,
        "list_ms": statistics.median(run[2] for run in runs) * 1e3,
        "first_page_ms": statistics.median(run[3] for run in runs) * 1e3,
        "rounds": rounds,
    }


def main(argv: list[str]) -> None:
    """Measure (default) or serve (``serve``)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "mode", nargs="?", default="measure", choices=["measure", "serve"]
    )
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="walks timed")
    args = parser.parse_args(argv)
    if args.mode == "serve":
        import trio

        server, _, _ = build(args.tools)
        trio.run(server.serve_stdio)
        return
    figures = measure(args.tools, max(1, args.rounds))
    if args.json:
        print(json.dumps(figures))
        return
    print(
        f"{figures['tools']:,} tools: declared in {figures['declare_ms']:,.0f} ms, "
        f"Server(...) built in {figures['build_ms']:,.0f} ms; tools/list "
        f"({figures['pages']} pages) {figures['list_ms']:,.1f} ms, first page "
        f"{figures['first_page_ms']:,.2f} ms (median of {figures['rounds']})"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
