"""Peer for bench/adversarial.py: ``mcp`` 2.3.0's ``MCPServer`` on uvicorn.

    python bench/peers/adversarial_mcp.py PORT

The same three tools as ``adversarial_trio.py``. Stateless Streamable HTTP with JSON
replies (``stateless_http=True, json_response=True``), so a call needs no
``initialize``; otherwise its defaults (uvicorn, AnyIO's 40 worker threads).
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading

from mcp.server import MCPServer

server = MCPServer("adversarial-mcp", version="1.0", log_level="WARNING")


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def block(seconds: float) -> str:
    """Block a worker thread, ignoring cancellation."""
    threading.Event().wait(seconds)
    return "done"


@server.tool()
def double(n: int) -> int:
    """Double a number, synchronously."""
    return 2 * n


@server.tool()
def trim() -> int:
    """Return freed heap memory to the kernel (glibc ``malloc_trim``); the bench's probe."""
    return int(ctypes.CDLL("libc.so.6").malloc_trim(0))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(sys.argv[1]),
            stateless_http=True,
            json_response=True,
        )
