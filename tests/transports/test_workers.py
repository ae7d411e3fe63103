"""Several Hypercorn Trio workers on one port (issue 13), as real processes.

Every call opens a new connection, so the kernel may hand it to either worker;
the tests call until both answered (bounded), then check what they share.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import trio
from support import scale_server, serving
from support.scale_http import call, listening
from support.scale_procs import (
    HERE,
    RedisServer,
    Replicas,
    free_port,
    serve_command,
    stop,
    wait_for_port,
)

from trio_mcp import Server, Transport, tool
from trio_mcp._http._workers import find_target
from trio_mcp._protocol._state import StateKeyRequired

TRIES = 2000
#: Spawned workers import the server anew; on a loaded machine that takes a while.
STARTUP = 90.0


async def workers_seen(url: str, want: int = 2) -> set[str]:
    """Call ``whoami`` on fresh connections until ``want`` processes answered.

    Bounded in count and time; a worker still importing simply is not seen yet.
    """
    seen: set[str] = set()
    with trio.move_on_after(STARTUP):
        for _ in range(TRIES):
            seen.add((await call(url, "whoami"))["structuredContent"])
            if len(seen) >= want:
                break
    return seen


async def test_two_workers_serve_one_port_and_share_updates_through_redis(
    redis_server: RedisServer, replicas: Replicas
) -> None:
    """``trio-mcp serve --workers 2 --broadcast URL``: two processes answer on one
    port, and a listener on one hears updates published by both."""
    served = replicas.start(
        "replica-w", "--workers", "2", "--broadcast", redis_server.url
    )

    seen = await workers_seen(served.url)
    publishers: set[str] = set()
    uris: list[str] = []
    async with listening(served.url, resourceSubscriptions=["ticket://5"]) as listen:
        for _ in range(200):
            touched = await call(served.url, "touch", {"uri": "ticket://5"})
            publishers.add(touched["structuredContent"])
            update = await listen.next_or_end()
            assert update is not None
            uris.append(update["params"]["uri"])
            if len(publishers) == 2:
                break

    assert 2 == len(seen)
    assert {"replica-w"} == {s.split(":")[0] for s in seen}
    assert seen == publishers
    assert {"ticket://5"} == set(uris)


def _refused_by_the_command_line(*args: str, env: dict[str, str] | None = None) -> str:
    """``trio-mcp serve`` of the scale server on port 0 with ``args`` stops with
    status 2; its stderr."""
    completed = subprocess.run(
        serve_command("--port", "0", *args),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert 2 == completed.returncode
    return completed.stderr


def test_two_workers_without_a_state_key_are_refused() -> None:
    environ = {k: v for k, v in os.environ.items() if k != "TRIO_MCP_STATE_KEY"}

    stderr = _refused_by_the_command_line("--workers", "2", env=environ)

    assert "TRIO_MCP_STATE_KEY" in stderr
    assert "state_key" in stderr


def test_a_broadcast_url_that_is_not_redis_is_refused_by_the_command_line() -> None:
    stderr = _refused_by_the_command_line("--broadcast", "http://127.0.0.1:6379")

    assert "--broadcast" in stderr
    assert "redis://" in stderr


async def test_serve_http_with_workers_runs_hypercorns_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``serve_http(workers=2)`` inside a Trio run: the port is reported, two
    processes answer, and cancelling stops them."""
    monkeypatch.setenv("TRIO_MCP_STATE_KEY", "k" * 40)
    monkeypatch.delenv("SCALE_REDIS_URL", raising=False)
    async with serving(scale_server.server, workers=2) as base:
        seen = await workers_seen(f"{base}/mcp")

    assert 2 == len(seen)
    assert all(int(s.rsplit(":", 1)[1]) != os.getpid() for s in seen)


OWNER = """
import sys
from functools import partial

import scale_server
import trio

trio.run(partial(scale_server.server.serve_http, port=int(sys.argv[1]), workers=2))
"""


def port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_workers_stop_when_the_process_that_started_them_is_killed() -> None:
    """SIGKILL gives serve_http no chance to cancel: the supervisor notices it is
    orphaned and stops its workers, so nothing keeps serving the port."""
    port = free_port()
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(port)],
        env={**os.environ, "TRIO_MCP_STATE_KEY": "k" * 40, "PYTHONPATH": str(HERE)},
    )
    try:
        wait_for_port(port, owner, "serve_http(workers=2)")
        seen = trio.run(workers_seen, f"http://127.0.0.1:{port}/mcp", 1)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=10)
        deadline = time.monotonic() + STARTUP
        while port_open(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        still_open = port_open(port)
    finally:
        stop(owner)

    assert 1 == len(seen)
    assert still_open is False


async def test_serve_http_with_workers_and_no_state_key_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRIO_MCP_STATE_KEY", raising=False)

    with pytest.raises(StateKeyRequired, match="TRIO_MCP_STATE_KEY"):
        await scale_server.server.serve_http(port=0, workers=2)


def test_a_server_that_no_module_names_cannot_be_found_by_workers() -> None:
    @tool
    def ping() -> str:
        """Answer."""
        return "pong"

    local = Server("local", "1", tools=[ping])

    with pytest.raises(Transport, match="module-level name"):
        find_target(local)


def test_a_module_level_server_is_found_by_its_module() -> None:
    assert "support.scale_server:server" == find_target(scale_server.server)
