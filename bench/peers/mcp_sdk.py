"""Peer: the official MCP Python SDK, ``mcp`` 2.3.0, with its high-level ``MCPServer``.

    python bench/peers/mcp_sdk.py stdio
    python bench/peers/mcp_sdk.py http PORT

HTTP is the SDK's own Streamable HTTP app on uvicorn (its default stack), on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import sys

from mcp.server import MCPServer
from tools import records

server = MCPServer("bench-mcp", version="1.0", log_level="WARNING")


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def search(query: str, limit: int = 20) -> list[dict[str, str]]:
    """Return `limit` benchmark records mentioning the query."""
    return records(query, limit)


def main(argv: list[str]) -> None:
    """Serve stdio, or Streamable HTTP on the given port."""
    if argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[2]))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # the bench stops HTTP with SIGINT
        main(sys.argv)
