"""Handlers that panic: raise a ``BaseException`` that is not Trio's cancellation.

Served in-process by the panic tests (``make_server``) and as a real stdio
subprocess (``python tests/dispatch/panic_server.py``). ``PANICS`` names each
exception a handler can raise; ``panic`` raises it from an async handler,
``panic_in_thread`` from a synchronous one (a worker thread).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable

import trio
from support.tools import add

from trio_mcp import Receipt, Server, tool


class Abort(BaseException):
    """A user's own BaseException subclass (as some CLI libraries define)."""


def _generator_exit() -> BaseException:
    return GeneratorExit()


#: Each panic by name: how to make the exception a handler raises.
PANICS: dict[str, Callable[[], BaseException]] = {
    "SystemExit": lambda: SystemExit(2),
    "KeyboardInterrupt": KeyboardInterrupt,
    "GeneratorExit": _generator_exit,
    "asyncio.CancelledError": asyncio.CancelledError,
    "Abort": lambda: Abort("stop everything"),
}


def probe(event: str) -> None:
    """Tell the test what happened, on stderr (never the protocol stream)."""
    sys.stderr.write(f"probe: {event}\n")
    sys.stderr.flush()


@tool
async def panic(kind: str) -> str:
    """Raise a BaseException from an async handler.

    Args:
        kind: A key of PANICS.
    """
    await trio.lowlevel.checkpoint()
    raise PANICS[kind]()


@tool
def panic_in_thread(kind: str) -> str:
    """Raise a BaseException from a synchronous handler, in its worker thread.

    Args:
        kind: A key of PANICS.
    """
    raise PANICS[kind]()


@tool
async def busy(seconds: float) -> str:
    """Compute without awaiting for a while (a real Ctrl-C lands in here).

    Args:
        seconds: How long to keep busy.
    """
    probe("busy")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.02)  # noqa: ASYNC251 - busy on purpose, between checkpoints
        await trio.lowlevel.checkpoint()
    return "done"


def make_server(receipts: Callable[[Receipt], None] | None = None) -> Server:
    """The panicking tools beside ``add`` and ``busy``; ``receipts`` as
    ``Server`` takes it."""
    return Server(
        "panics", "1.0", tools=[panic, panic_in_thread, add, busy], receipts=receipts
    )


if __name__ == "__main__":
    trio.run(make_server().serve_stdio)
