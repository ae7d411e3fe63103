"""Ctrl-C and SIGTERM stop a loaded server, every time, without a traceback (issue 30).

A real server process (``serve_http`` in a script, ``trio-mcp serve``, ``serve_stdio``)
is kept busy by 20 clients with calls in flight (async and sync handlers), then gets
the signal. It must exit within a few seconds, with a status that says it was
stopped (never 1), and nothing on stderr may be a traceback or Hypercorn's "Error in
ASGI Framework". Before the fix, a ``KeyboardInterrupt`` raised inside a request's
nursery reached Hypercorn wrapped in an exception group, which it logged and
swallowed: the server ran on. Each case runs five times, because where the interrupt
lands is a matter of timing.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from support.conn_peer import call_bytes, call_json, read_reply

HERE = Path(__file__).parent
SCRIPT = HERE / "interrupt_server.py"
CLIENTS = 20
ROUNDS = 5
#: Liveness bounds, not speed targets.
START = 30.0
STOP = 5.0
LOADED = 40  # replies seen before the signal: the server really is busy

#: How a stopped server may exit: an interrupt caught (130) or passed on (-2), a
#: graceful stop (0), or SIGTERM's default action (-15) or caught (143).
STOPPED = {0, 130, -signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGTERM}
SIGNALS = [signal.SIGINT, signal.SIGTERM]


def environment() -> dict[str, str]:
    path = os.pathsep.join([str(HERE), str(HERE.parent), *sys.path])
    return {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"}


class Process:
    """A server subprocess with its stderr collected and its port found."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.stderr = b""
        self.port: int | None = None
        self.found = trio.Event()
        self.signalled = False

    async def collect(self, stream: trio.abc.ReceiveStream, port: str) -> None:
        pattern = re.compile(port.encode())
        data = b""
        async for chunk in stream:
            data += chunk
            if stream is self.process.stderr:
                self.stderr += chunk
            match = pattern.search(data)
            if match and self.port is None:
                self.port = int(match.group(1))
                self.found.set()

    async def stop(self, signum: int) -> int:
        self.signalled = True
        self.process.send_signal(signum)
        with trio.fail_after(STOP):
            return await self.process.wait()


async def run_http(command: list[str], port_pattern: str, signum: int) -> None:
    process = await trio.lowlevel.open_process(
        command,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    server = Process(process)
    replies = trio.Semaphore(0)
    try:
        async with trio.open_nursery() as nursery:
            assert process.stdout is not None
            assert process.stderr is not None
            nursery.start_soon(server.collect, process.stdout, port_pattern)
            nursery.start_soon(server.collect, process.stderr, port_pattern)
            with trio.fail_after(START):
                await server.found.wait()
            assert server.port is not None
            async with trio.open_nursery() as clients:
                for n in range(CLIENTS):
                    clients.start_soon(http_client, server, n, replies)
                with trio.fail_after(START):
                    for _ in range(LOADED):
                        await replies.acquire()
                status = await server.stop(signum)
    finally:
        if process.returncode is None:
            process.kill()
    check_stopped(status, server.stderr)


async def http_client(server: Process, n: int, replies: trio.Semaphore) -> None:
    """Send calls on a keep-alive connection (reconnecting) until the server is gone.

    Every reply before the signal is a 200; a call cut off by the stop may get
    Hypercorn's 500.
    """
    assert server.port is not None
    port = server.port
    requests = [
        call_bytes(port, n),
        call_bytes(port, n, name="double", arguments={"n": n}),
        call_bytes(port, n, name="block", arguments={"seconds": 0.05}),
    ]
    sent = 0
    while True:
        try:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
        except OSError:
            return
        try:
            async with stream:
                while True:
                    await stream.send_all(requests[sent % len(requests)])
                    sent += 1
                    status, body = await read_reply(stream)
                    assert status == 200 or server.signalled, body
                    replies.release()
        except (trio.BrokenResourceError, EOFError, OSError):
            await trio.sleep(0.01)


def check_stopped(status: int, stderr: bytes) -> None:
    text = stderr.decode(errors="replace")
    assert status in STOPPED, text
    assert "Traceback" not in text
    assert "Error in ASGI Framework" not in text


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
async def test_serve_http_stops_under_load(signum: int) -> None:
    for _ in range(ROUNDS):
        await run_http([sys.executable, str(SCRIPT), "http"], r"port (\d+)\n", signum)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
async def test_trio_mcp_serve_stops_under_load(signum: int) -> None:
    target = f"{HERE.parent / 'support' / 'conn_peer.py'}:make_server"
    command = [sys.executable, "-m", "trio_mcp", "serve", target, "--port", "0"]
    for _ in range(ROUNDS):
        await run_http(command, r"http://127\.0\.0\.1:(\d+)/mcp", signum)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
async def test_serve_stdio_stops_under_load(signum: int) -> None:
    for _ in range(ROUNDS):
        await run_stdio(signum)


async def run_stdio(signum: int) -> None:
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SCRIPT), "stdio"],
        env=environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    server = Process(process)
    try:
        async with trio.open_nursery() as nursery:
            assert process.stderr is not None
            nursery.start_soon(server.collect, process.stderr, "(?!)")
            status = await stdio_load(server, signum)
    finally:
        if process.returncode is None:
            process.kill()
    check_stopped(status, server.stderr)


async def stdio_load(server: Process, signum: int) -> int:
    """Keep ``CLIENTS`` calls in flight on stdin, then send the signal."""
    process = server.process
    assert process.stdin is not None
    assert process.stdout is not None
    lines = [
        call_json(n, "block", {"seconds": 0.05}) if n % 2 else call_json(n)
        for n in range(10_000)
    ]
    for line in lines[:CLIENTS]:
        await process.stdin.send_all(line + b"\n")
    sent, seen, data = CLIENTS, 0, b""
    with trio.fail_after(START):
        while seen < LOADED:
            data += await process.stdout.receive_some()
            while b"\n" in data:
                reply, _, data = data.partition(b"\n")
                assert "result" in json.loads(reply)
                seen += 1
                await process.stdin.send_all(lines[sent] + b"\n")
                sent += 1
    return await server.stop(signum)
