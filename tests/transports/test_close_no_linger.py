"""A closed stdin fires a running sync handler's ``ctx.cancel`` before the process
exits (issue 24 class 6). The server below serves and exits: it lingers for nothing
(``wayout_server.py`` without ``--linger``), so the worker thread polling the token
must see it fire while the run is still alive."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from support.stdio_kinds import stdio_kind  # noqa: F401 - the fixture
from support.wayout_peer import spawn

pytestmark = pytest.mark.usefixtures("stdio_kind")


@pytest.mark.parametrize("grace", ["0", "0.2"])
async def test_stdin_end_fires_a_sync_handlers_cancel_before_the_process_exits(
    grace: str, tmp_path: Path
) -> None:
    async with spawn("--grace", grace, "--marker-dir", str(tmp_path)) as peer:
        await peer.call(1, "sync_watch_cancel", label="watcher")
        await peer.probe("started watcher")

        exit_status = await peer.close_stdin_and_wait()

    assert 0 == exit_status
    assert "seen" == await trio.Path(tmp_path / "watcher").read_text()
