"""A server process for the interrupt tests: ``serve_http`` or ``serve_stdio`` as a
script would run it, with Ctrl-C caught the ordinary Python way.

``python interrupt_server.py http`` prints ``port N`` once it listens;
``python interrupt_server.py stdio`` serves stdin. A ``KeyboardInterrupt`` leaving
``trio.run`` exits 130, so the test can tell it from an exception group (a traceback
and status 1) or a swallowed interrupt (the process keeps running).
"""

from __future__ import annotations

import sys

import trio
from support.conn_peer import make_server

from trio_mcp import Limits

LIMITS = Limits(idle_timeout=60)


class PrintPort:
    """A ``task_status`` that prints the bound port: ``serve_http`` is called directly,
    as a script would, with no nursery of the script's own around it."""

    def started(self, port: int) -> None:
        print(f"port {port}", flush=True)


async def http() -> None:
    await make_server().serve_http(
        port=0,
        limits=LIMITS,
        task_status=PrintPort(),  # type: ignore[arg-type]
    )


async def stdio() -> None:
    await make_server().serve_stdio(limits=LIMITS)


if __name__ == "__main__":
    try:
        trio.run(http if sys.argv[1] == "http" else stdio)
    except KeyboardInterrupt:
        sys.exit(130)
