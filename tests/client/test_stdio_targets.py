"""The client against real stdio subprocesses: both eras, cancellation across the
process boundary, and a child that is always stopped."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import trio
from support.upstream import cancelled_across, stdio_command, tour

from trio_mcp import McpError
from trio_mcp.client import Client

TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("extra", "era", "revision"),
    [
        ((), "auto", "2026-07-28"),
        (("--legacy",), "auto", "2026-07-28"),
        (("--legacy",), "legacy", "2025-11-25"),
    ],
)
async def test_a_stdio_server_answers_every_kind_of_request(
    extra: tuple[str, ...], era: str, revision: str
) -> None:
    async with Client(stdio_command(*extra), era=era) as client:  # type: ignore[arg-type]
        assert revision == client.server.revision
        await tour(client)


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_cancel_reaches_the_handler_in_the_child(
    tmp_path: Path, era: str
) -> None:
    extra = ("--legacy",) if era == "legacy" else ()
    async with Client(stdio_command(*extra), era=era) as client:  # type: ignore[arg-type]
        await cancelled_across(client, tmp_path / "mark")
        assert "x" == (await client.call_tool("echo", {"text": "x"})).text


async def test_the_child_is_gone_when_the_block_exits() -> None:
    async with Client(stdio_command()) as client:
        child = (await client.call_tool("pid")).structured
        assert isinstance(child, int)
        assert os.getpid() != child
        assert _alive(child)
    assert not _alive(child)


async def test_a_child_that_ignores_eof_is_terminated(tmp_path: Path) -> None:
    """A server that never reads stdin to its end still stops (SIGTERM)."""
    script = tmp_path / "stubborn.py"
    script.write_text(
        "import sys, time, json\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from support.upstream import make_server\n"
        "import threading\n"
        "threading.Thread(target=make_server().run, daemon=True).start()\n"
        "while True: time.sleep(1)\n"
    )
    tests = str(TESTS)
    with trio.fail_after(20):
        async with Client([sys.executable, str(script), tests]) as client:
            assert "x" == (await client.call_tool("echo", {"text": "x"})).text


async def test_a_command_that_cannot_start_is_a_transport_error() -> None:
    with pytest.raises(McpError.Transport, match="could not start"):
        async with Client(["/nonexistent/trio-mcp-server"]):
            pass


async def test_a_child_that_exits_fails_the_calls_in_flight() -> None:
    command = [sys.executable, "-c", "import sys; sys.stdin.readline()"]
    with pytest.raises(McpError.Transport, match="closed"):
        async with Client(command, era="modern", timeout=10):
            pass


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()
