"""The server bench/client.py cancels calls on: ``wait(mark)`` writes ``started``
to the file ``mark``, waits, and when its call is cancelled writes the moment it
saw the cancel (``time.monotonic()``, one clock for every process on Linux).

``python bench/cancel_server.py [--legacy]`` serves stdio; ``--http PORT`` or
``--websocket PORT`` serves on 127.0.0.1.
"""

from __future__ import annotations

import sys
import time

import trio

from trio_mcp import Server, tool


@tool
async def wait(mark: str) -> str:
    """
    Wait until cancelled; write when the cancel was seen.

    Args:
        mark: A file path.
    """
    path = trio.Path(mark)
    await path.write_text("started")
    try:
        await trio.sleep_forever()
    finally:
        seen = time.monotonic()
        with trio.CancelScope(shield=True):
            await path.write_text(f"cancelled {seen!r}")
    return "never"


if __name__ == "__main__":
    server = Server("cancel-bench", "1.0", tools=[wait], legacy="--legacy" in sys.argv)
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("http", port=port)
    elif "--websocket" in sys.argv:
        port = int(sys.argv[sys.argv.index("--websocket") + 1])
        server.run("websocket", port=port)
    else:
        server.run()
