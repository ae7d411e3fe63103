"""trio_mcp mounted in FastAPI under uvicorn, beside FastMCP mounted the same way.

    bench/.venv/bin/python bench/fastapi_mount.py [--calls 3000] [--repeat 3] [--quick]

Each peer is one process, ``bench/peers/fastapi_app.py``: a FastAPI app with its own
route and an MCP server mounted at ``/mcp``, under uvicorn on 127.0.0.1, started and
stopped with the app's lifespan.

- ``trio_mcp asyncio mount``: ``trio_mcp.asyncio.mount(server, path="/")``, the
  server on Trio as the guest of uvicorn's asyncio loop;
- ``fastmcp in FastAPI``: FastMCP 4.1.6's ``http_app(path="/")``, as its docs mount it;
- ``FastAPI floor``: the same FastAPI app answering a fixed reply (no MCP server);
- ``trio_mcp serve_http``: for reference, the same server on its own stack
  (Hypercorn's Trio worker, no FastAPI, no bridge).

Then the bridge alone, in process (no sockets, no FastAPI): the same ``echo`` call
through ``trio_mcp.asyncio.mount``'s app under asyncio and through ``server.mount()``'s
app under Trio, each driven as an ASGI server would, in alternating blocks; the
difference per call is what the guest run's crossings cost.

The load is ``load.py``'s HTTP client: ``--inflight`` keep-alive connections, every
reply checked. Each repeat runs the peers in turn (interleaved); the table shows the
best repeat (req/s, server CPU µs per call from ``/proc``) and the median req/s.
Figures, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from load import (
    LoadError,
    check_reply,
    cpu_seconds,
    http_ask,
    http_run,
    peak_rss_mib,
    request_body,
)

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PY = sys.executable
SERVER_CPU = 1


@dataclass(frozen=True)
class Peer:
    """One server process: how to start it and where its MCP endpoint is."""

    name: str
    argv: tuple[str, ...]
    path: str
    tools: tuple[str, ...] = ("echo", "add", "search")


PEERS = (
    Peer(
        "trio_mcp asyncio mount",
        (PY, str(BENCH / "peers" / "fastapi_app.py"), "trio_mcp", "{port}"),
        "/mcp/",
    ),
    Peer(
        "fastmcp in FastAPI",
        (PY, str(BENCH / "peers" / "fastapi_app.py"), "fastmcp", "{port}"),
        "/mcp/",
    ),
    Peer(
        "FastAPI floor",
        (PY, str(BENCH / "peers" / "fastapi_app.py"), "bare", "{port}"),
        "/mcp/",
        ("echo",),
    ),
    Peer(
        "trio_mcp serve_http",
        (PY, str(ROOT / "examples" / "bench_server.py"), "--http", "--port", "{port}"),
        "/mcp",
    ),
)


@dataclass
class Figures:
    """Every repeat of one peer and tool."""

    rates: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)
    p99_ms: list[float] = field(default_factory=list)
    errors: int = 0
    rss_mib: float = 0.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pin_server() -> None:
    """In the child: the server on its own processor, apart from the client."""
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {SERVER_CPU})


def start(peer: Peer, port: int) -> subprocess.Popen[bytes]:
    """Start ``peer`` on ``port`` and wait until it answers one checked echo call."""
    argv = [arg.replace("{port}", str(port)) for arg in peer.argv]
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        preexec_fn=pin_server,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LoadError(f"{peer.name} exited ({proc.returncode}) before answering")
        try:
            message = http_ask(port, request_body("echo", 0), "echo", peer.path)
        except (OSError, EOFError, ValueError):
            time.sleep(0.02)
            continue
        if message and not check_reply("echo", message):
            return proc
        stop(proc)
        raise LoadError(f"{peer.name}: wrong first answer {message!r}")
    stop(proc)
    raise LoadError(f"{peer.name} did not answer within 30 s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server we started, by its PID: SIGINT, then harder."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            proc.wait(10)
            return
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
    proc.wait()


def measure(peer: Peer, args: argparse.Namespace, table: dict[str, Figures]) -> None:
    """One repeat of ``peer``: every tool, after a warm-up."""
    port = free_port()
    proc = start(peer, port)
    try:
        for tool in peer.tools:
            http_run(port, tool, args.warmup, args.inflight, 30, peer.path)
            before = cpu_seconds(proc.pid)
            result = http_run(port, tool, args.calls, args.inflight, 60, peer.path)
            used = cpu_seconds(proc.pid) - before
            figures = table.setdefault(f"{peer.name}|{tool}", Figures())
            figures.rates.append(result.rate)
            figures.cpu_us.append(used / max(result.calls, 1) * 1e6)
            figures.p99_ms.append(result.percentile(0.99) * 1e3)
            figures.errors += result.errors
            print(
                f"  {peer.name:24} {tool:6} {result.rate:8,.0f} req/s  "
                f"{figures.cpu_us[-1]:7,.0f} us/call  errors {result.errors}",
                file=sys.stderr,
            )
        rss = peak_rss_mib(proc.pid)
        for tool in peer.tools:
            table[f"{peer.name}|{tool}"].rss_mib = rss
    finally:
        stop(proc)


def report(table: dict[str, Figures], args: argparse.Namespace) -> None:
    """Print the table (best repeat, median rate) and the ratios to FastMCP."""
    print(
        f"\nPOST tools/call through uvicorn, {args.inflight} connections, "
        f"{args.calls} calls per load, best of {args.repeat} interleaved repeats "
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)\n"
    )
    print(
        "| server | tool | req/s (best) | req/s (median) | server CPU us/call | "
        "p99 ms | x fastmcp req/s | errors | peak RSS MiB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key, figures in table.items():
        name, tool = key.split("|")
        best = max(figures.rates)
        peer = table.get(f"fastmcp in FastAPI|{tool}")
        ratio = f"{best / max(peer.rates):.2f}" if peer else "-"
        print(
            f"| {name} | {tool} | {best:,.0f} | {statistics.median(figures.rates):,.0f}"
            f" | {min(figures.cpu_us):,.0f} | {min(figures.p99_ms):.2f} | {ratio}"
            f" | {figures.errors} | {figures.rss_mib:.0f} |"
        )


def bridge_alone(calls: int, blocks: int) -> tuple[float, float]:
    """CPU µs per in-process echo call: through the asyncio mount, and direct (best)."""
    import asyncio

    import trio

    sys.path.insert(0, str(ROOT / "examples"))
    from bench_server import server

    from trio_mcp.asyncio import mount

    body = request_body("echo", 1)
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", b"echo"),
    ]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": "POST", "scheme": "http", "path": "/mcp", "raw_path": b"/mcp",
        "root_path": "", "query_string": b"", "headers": headers,
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }  # fmt: skip

    async def one(app: object, sleep: object) -> None:
        sent = False

        async def receive() -> dict[str, object]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await sleep()  # type: ignore[operator]
            return {"type": "http.disconnect"}

        async def send(message: object) -> None:
            pass

        await app(dict(scope), receive, send)  # type: ignore[operator]

    async def through_asyncio() -> float:
        app = mount(server)
        async with app.lifespan():
            for _ in range(calls // 10):
                await one(app, asyncio.Event().wait)
            start = time.process_time()
            for _ in range(calls):
                await one(app, asyncio.Event().wait)
            return time.process_time() - start

    async def direct() -> float:
        app = server.mount()
        for _ in range(calls // 10):
            await one(app, trio.sleep_forever)
        start = time.process_time()
        for _ in range(calls):
            await one(app, trio.sleep_forever)
        return time.process_time() - start

    bridged, plain = [], []
    for _ in range(blocks):
        bridged.append(asyncio.run(through_asyncio()) / calls * 1e6)
        plain.append(trio.run(direct) / calls * 1e6)
    return min(bridged), min(plain)


def main() -> None:
    """Run every peer ``--repeat`` times, interleaved, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--inflight", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="500 calls, 1 repeat")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.warmup, args.repeat = 500, 100, 1
    table: dict[str, Figures] = {}
    for repeat in range(args.repeat):
        print(f"repeat {repeat + 1}/{args.repeat}", file=sys.stderr)
        for peer in PEERS:
            measure(peer, args, table)
    report(table, args)
    bridged, plain = bridge_alone(args.calls, 5 if not args.quick else 2)
    print(
        f"\nThe bridge alone, in process (echo, {args.calls} calls, best of blocks): "
        f"{bridged:,.0f} µs CPU per call through the asyncio mount, {plain:,.0f} µs "
        f"through server.mount() under Trio: the guest run's crossings add "
        f"{bridged - plain:,.0f} µs per call."
    )


if __name__ == "__main__":
    main()
