"""Peer: standalone FastMCP, ``fastmcp`` 4.1.6.

    python bench/peers/fastmcp_peer.py stdio
    python bench/peers/fastmcp_peer.py http PORT

HTTP is FastMCP's own ``run("http")`` (Starlette on uvicorn), on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import sys

from fastmcp import FastMCP
from tools import records

server = FastMCP("bench-fastmcp", version="1.0")


@server.tool
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def search(query: str, limit: int = 20) -> list[dict[str, str]]:
    """Return `limit` benchmark records mentioning the query."""
    return records(query, limit)


def main(argv: list[str]) -> None:
    """Serve stdio, or Streamable HTTP on the given port."""
    if argv[1] == "stdio":
        server.run("stdio", show_banner=False, log_level="WARNING")
    else:
        server.run(
            "http",
            show_banner=False,
            host="127.0.0.1",
            port=int(argv[2]),
            log_level="WARNING",
        )


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # the bench stops HTTP with SIGINT
        main(sys.argv)
