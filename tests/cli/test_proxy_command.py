"""``trio-mcp proxy``: one upstream served through a gateway, over stdio or HTTP,
bridging eras; each hop a real process."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from support import serving, subprocess_env
from support.gateway import listed
from support.upstream import make_server, stdio_command

from trio_mcp import McpError
from trio_mcp.client import Client

PROXY = [sys.executable, "-m", "trio_mcp", "proxy"]


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_a_stdio_proxy_of_a_command_serves_it_in_either_era(era: str) -> None:
    """A handshake-era client reaches a modern server through ``--legacy``."""
    command = [*PROXY, "--legacy", "--prefix", "up_", "--", *stdio_command()]
    async with Client(command, era=era) as client:  # type: ignore[arg-type]
        await listed(client.list_tools, "up_add")
        added = await client.call_tool("up_add", {"a": 2, "b": 3})

    assert {"total": 5} == added.structured


async def test_a_stdio_proxy_serves_an_http_upstream_to_a_stdio_host() -> None:
    async with serving(make_server(legacy=True)) as base:
        command = [*PROXY, f"{base}/mcp"]
        async with Client(command) as client:
            await listed(client.list_tools, "echo")
            echoed = await client.call_tool("echo", {"text": "over two hops"})
            assert client.server.name == f"proxy of {base}/mcp"

    assert "over two hops" == echoed.text


async def test_serve_http_serves_a_stdio_upstream_over_http(tmp_path: Path) -> None:
    port = _free_port()
    log = (tmp_path / "stderr").open("w")
    process = await trio.lowlevel.open_process(
        [*PROXY, "--serve-http", f"127.0.0.1:{port}", "--", *stdio_command()],
        env=subprocess_env(),
        stdin=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        with trio.fail_after(20):
            while True:
                try:
                    async with Client(url, timeout=2) as client:
                        await listed(client.list_tools, "echo")
                        echoed = await client.call_tool("echo", {"text": "hi"})
                        break
                except McpError.Transport:  # not listening yet
                    await trio.sleep(0.1)
    finally:
        process.terminate()
        with trio.fail_after(10):
            await process.wait()
        log.close()

    assert "hi" == echoed.text


def test_a_proxy_needs_one_upstream() -> None:
    done = subprocess.run(
        [*PROXY], capture_output=True, text=True, timeout=60, env=subprocess_env()
    )

    assert 2 == done.returncode
    assert "name one upstream" in done.stderr


def test_serve_http_needs_host_and_port() -> None:
    done = subprocess.run(
        [*PROXY, "--serve-http", "8000", "http://127.0.0.1:1/mcp"],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(),
    )

    assert 2 == done.returncode
    assert "HOST:PORT" in done.stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
