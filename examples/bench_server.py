"""The benchmark server: the three tools every peer in the shared harness exposes.

``python examples/bench_server.py`` serves stdio; ``--http --port N`` serves Streamable
HTTP on 127.0.0.1:N at /mcp. Tools are async so no worker threads are involved, as
for the peers.
"""

from __future__ import annotations

import argparse
from functools import partial

import attrs
import trio

from trio_mcp import Server, tool


@attrs.frozen
class Record:
    """One search hit."""

    id: str
    title: str


@tool
async def echo(text: str) -> str:
    """
    Return the text unchanged.

    Args:
        text: The text to return.
    """
    return text


@tool
async def add(a: int, b: int) -> int:
    """
    Add two integers.

    Args:
        a: The first integer.
        b: The second integer.
    """
    return a + b


@tool
async def search(query: str, limit: int = 20) -> list[Record]:
    """
    Return `limit` benchmark records mentioning the query.

    Args:
        query: Words to put in each title.
        limit: How many records to return.
    """
    return [
        Record(f"T-{i}", f"{query} Benchmark record with a short title {i}")
        for i in range(1, limit + 1)
    ]


server = Server("trio-mcp-bench", "1.0", tools=[echo, add, search])


def main() -> None:
    """Serve stdio, or HTTP with --http."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.http:
        trio.run(partial(server.serve_http, host="127.0.0.1", port=args.port))
    else:
        trio.run(server.serve_stdio)


if __name__ == "__main__":
    main()
