"""When the stdio stream closes, every running handler's ``ctx.cancel`` fires (api.md
"The way out"), in a worker thread too.

Before, stdin's end cancelled the request tasks after the grace period, but
``ctx.cancel`` never fired: an async handler saw ``Cancelled`` with
``ctx.cancel.cancelled`` still false, and a sync handler polling the token in its
worker thread never learned that nobody waits for it any more. The handlers write a
marker file when they see the token fire; the test reads the files after the
server process exited.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from wayout_peer import spawn


@pytest.mark.parametrize("tool", ["sync_watch_cancel", "async_watch_cancel"])
async def test_stdin_end_fires_ctx_cancel_of_a_running_handler(
    tool: str, tmp_path: Path
) -> None:
    args = ("--grace", "0.2", "--marker-dir", str(tmp_path), "--linger", "20")
    async with spawn(*args) as peer:
        await peer.call(1, tool, label="watcher")
        await peer.probe("started watcher")

        exit_status = await peer.close_stdin_and_wait()

    assert exit_status == 0
    assert await trio.Path(tmp_path / "watcher").read_text() == "seen"
    assert peer.find(1) is None  # cut off by the close: no reply is sent


async def test_stdin_end_fires_ctx_cancel_of_sync_and_async_handlers_together(
    tmp_path: Path,
) -> None:
    args = ("--grace", "0", "--marker-dir", str(tmp_path), "--linger", "20")
    async with spawn(*args) as peer:
        for number in range(3):
            await peer.call(number, "sync_watch_cancel", label=f"sync-{number}")
            await peer.call(10 + number, "async_watch_cancel", label=f"async-{number}")
        for number in range(3):
            await peer.probe(f"started sync-{number}")
            await peer.probe(f"started async-{number}")

        exit_status = await peer.close_stdin_and_wait()

    assert exit_status == 0
    assert sorted(p.name for p in await trio.Path(tmp_path).iterdir()) == [
        *(f"async-{n}" for n in range(3)),
        *(f"sync-{n}" for n in range(3)),
    ]
