"""Peer for bench/adversarial.py: trio_mcp's ``serve_http`` with every default.

    python bench/peers/adversarial_trio.py PORT

``ADVERSARIAL_LIMITS`` (JSON, e.g. ``{"max_concurrent": 40}``) overrides ``Limits`` fields;
``ADVERSARIAL_OPTIONS`` (JSON, e.g. ``{"metrics_path": "/metrics"}``) adds ``serve_http``
options.

Tools: ``echo`` (async), ``block(seconds)`` and ``double(n)`` (synchronous, in worker
threads). Ctrl-C ends it the ordinary Python way (exit 130, no traceback).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading

import trio

from trio_mcp import Limits, Server, tool


@tool
async def echo(text: str) -> str:
    """
    Return the text unchanged.

    Args:
        text: What to return.
    """
    return text


@tool
def block(seconds: float) -> str:
    """
    Block a worker thread, ignoring cancellation.

    Args:
        seconds: How long.
    """
    threading.Event().wait(seconds)
    return "done"


@tool
def double(n: int) -> int:
    """
    Double a number, synchronously.

    Args:
        n: The number.
    """
    return 2 * n


@tool
def trim() -> int:
    """
    Return freed heap memory to the kernel (glibc ``malloc_trim``); the bench's probe.
    """
    return int(ctypes.CDLL("libc.so.6").malloc_trim(0))


server = Server("adversarial", "1", tools=[echo, block, double, trim])

if __name__ == "__main__":
    try:
        limits = Limits(**json.loads(os.environ.get("ADVERSARIAL_LIMITS", "{}")))
        options = json.loads(os.environ.get("ADVERSARIAL_OPTIONS", "{}"))
        trio.run(
            lambda: server.serve_http(port=int(sys.argv[1]), limits=limits, **options)
        )
    except KeyboardInterrupt:
        sys.exit(130)
