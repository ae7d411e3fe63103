"""The server every wire fuzz test talks to, in-process or as a real subprocess.

Its catalog is small but reaches each way out: a string echoed back (lone
surrogates travel through it), a float scaled (``1e308`` overflows to ``inf``), an
attrs value, a prompt and a resource template whose variable is echoed.

    python tests/fuzz/fuzz_server.py stdio|http|websocket [--max-message-bytes N]

For ``http`` and ``websocket`` it binds 127.0.0.1 on a free port and writes
``fuzz-server: port N`` on stderr once it listens.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial

import attrs
import trio
from support.tools import echo, greet

from trio_mcp import Limits, Server, resource, tool

#: Small, so oversized messages cost little to send: the limit's code path is
#: the same at 8 KiB as at the 4 MiB default.
MAX_MESSAGE_BYTES = 8192


@attrs.frozen
class Pair:
    """Two values side by side."""

    left: str
    right: float


@tool
def scale(x: float, factor: float = 2.0) -> float:
    """
    Multiply a number.

    Args:
        x: The number.
        factor: What to multiply it by.
    """
    return x * factor


@tool
def pair(left: str, right: float) -> Pair:
    """
    Put a string and a number side by side.

    Args:
        left: The string.
        right: The number.
    """
    return Pair(left, right)


@resource(uri="note://{name}")
def note(name: str) -> str:
    """
    A note whose text is its own name.

    Args:
        name: The note's name.
    """
    return name


def make_server() -> Server:
    """Return a fresh server over the fuzz catalog."""
    return Server(
        "fuzz-target",
        "1.0.0",
        tools=[echo, scale, pair],
        prompts=[greet],
        resources=[note],
    )


async def main(transport: str, max_message_bytes: int) -> None:
    """Serve ``transport`` until stdin closes (stdio) or the process is killed."""
    server = make_server()
    if transport == "stdio":
        await server.serve_stdio(max_message_bytes=max_message_bytes)
        return
    serve = server.serve_http if transport == "http" else server.serve_websocket
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(
                serve,
                host="127.0.0.1",
                port=0,
                limits=Limits(max_message_bytes=max_message_bytes),
            )
        )
        sys.stderr.write(f"fuzz-server: port {port}\n")
        sys.stderr.flush()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("transport", choices=["stdio", "http", "websocket"])
    parser.add_argument("--max-message-bytes", type=int, default=MAX_MESSAGE_BYTES)
    options = parser.parse_args()
    trio.run(main, options.transport, options.max_message_bytes)
