"""The asyncio servers themselves: uvicorn's command line, Hypercorn's asyncio worker.

uvicorn runs in a child process as a user would start it, and stops on SIGINT or
SIGTERM with nothing on stderr: no warning, no traceback, no error line. Hypercorn's
asyncio worker runs in process and drives the app's own ASGI lifespan.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from asgi_hosts import add, call_request, post_call, run_clean
from hypercorn.asyncio import serve
from hypercorn.config import Config
from support import subprocess_env
from support.mcp_http import headers_for

from trio_mcp import Server
from trio_mcp.asyncio import mount

HERE = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("stop", "status"),
    # After its graceful shutdown uvicorn raises the signal again: SIGINT's default
    # handler is Python's KeyboardInterrupt, which uvicorn's command line catches;
    # SIGTERM's ends the process by the signal, as the sender asked.
    [(signal.SIGINT, 0), (signal.SIGTERM, -signal.SIGTERM)],
    ids=["SIGINT", "SIGTERM"],
)
def test_the_uvicorn_command_line_serves_and_stops_cleanly(
    stop: signal.Signals, status: int
) -> None:
    port = _free_port()
    argv = [
        sys.executable, "-W", "always", "-m", "uvicorn", "fastapi_served:app",
        "--app-dir", str(HERE), "--host", "127.0.0.1", "--port", str(port),
        "--log-level", "warning",
    ]  # fmt: skip
    child = subprocess.Popen(
        argv, stderr=subprocess.PIPE, text=True, env=subprocess_env()
    )
    try:
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(timeout=10) as client:
            deadline = time.monotonic() + 30
            while True:
                try:
                    hello = client.get(url + "/hello").json()
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "uvicorn did not start"
                    assert child.poll() is None, child.stderr.read()  # type: ignore[union-attr]
                    time.sleep(0.05)
            reply = client.post(
                url + "/mcp/",
                json=call_request("add", a=2, b=3),
                headers=headers_for("tools/call", "add"),
            ).json()
        child.send_signal(stop)
        _, stderr = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()

    assert {"hello": "world"} == hello
    assert 5 == reply["result"]["structuredContent"]
    assert status == child.returncode
    assert "" == stderr


def test_hypercorns_asyncio_worker_serves_the_app_and_runs_its_lifespan() -> None:
    server = Server("hypercorn", "1.0", tools=[add])
    app = mount(server)
    port = _free_port()
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.errorlog = None

    async def main() -> tuple[bool, dict[str, Any]]:
        stop = asyncio.Event()
        serving = asyncio.create_task(serve(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
        async with httpx.AsyncClient() as client:
            while True:
                try:
                    reply = await post_call(
                        client,
                        f"http://127.0.0.1:{port}/mcp",
                        "add",
                        {"a": 20, "b": 22},
                    )
                    break
                except httpx.ConnectError:
                    await asyncio.sleep(0.02)
        running = trio.lowlevel.in_trio_run()
        stop.set()
        await serving
        return running, reply.json()

    running, reply = run_clean(main)

    assert running
    assert 42 == reply["result"]["structuredContent"]
