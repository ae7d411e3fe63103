"""What ``trio_mcp.client`` costs per call, against examples/bench_server.py.

Prints, per transport (stdio, Streamable HTTP), the client process's CPU per
``tools/call`` of ``echo`` (sequential calls; the server runs in its own process, so
its CPU is not counted) and the p50/p99 latency, beside the official Python SDK's
client (``mcp`` 2.3.0) making the same calls. Then, per transport and era, how long
a cancelled call takes to reach its handler in the server process (from the cancel
of the scope around ``call_tool`` to the handler seeing its cancel; bench/
cancel_server.py). A figure, not a verdict: no target is judged here
(bench/README.md).

    .venv/bin/python bench/client.py [--calls N] [--rounds N]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, str(ROOT / "examples" / "bench_server.py")]

Call = Callable[[], Awaitable[object]]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _measure(call: Call, calls: int) -> tuple[float, float, float]:
    for _ in range(min(50, calls)):  # warm up
        await call()
    latencies = []
    cpu = time.process_time()
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        latencies.append(time.perf_counter() - start)
    cpu = time.process_time() - cpu
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return cpu / calls * 1e6, statistics.median(latencies) * 1e6, p99 * 1e6


async def ours(target: object, calls: int) -> tuple[float, float, float]:
    from trio_mcp.client import Client

    async with Client(target) as client:  # type: ignore[arg-type]

        async def call() -> object:
            return await client.call_tool("echo", {"text": "hello"})

        return await _measure(call, calls)


async def sdk(target: object, calls: int) -> tuple[float, float, float]:
    """The official client (``mcp.Client``, its era found by itself)."""
    from mcp import Client, StdioServerParameters

    if isinstance(target, list):
        target = StdioServerParameters(command=target[0], args=target[1:])
    async with Client(target) as client:  # type: ignore[arg-type]

        async def call() -> object:
            return await client.call_tool("echo", {"text": "hello"})

        return await _measure(call, calls)


CANCEL_SERVER = [sys.executable, str(ROOT / "bench" / "cancel_server.py")]


async def cancel_latency(target: object, era: str, rounds: int) -> list[float]:
    """Seconds from each cancel to the handler's seeing it, ``rounds`` times."""
    import tempfile

    import trio

    from trio_mcp.client import Client

    seen: list[float] = []
    async with Client(target, era=era) as client:  # type: ignore[arg-type]
        for n in range(rounds):
            mark = trio.Path(tempfile.gettempdir()) / f"trio-mcp-cancel-{n}"
            await mark.write_text("")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(client.call_tool, "wait", {"mark": str(mark)})
                while await mark.read_text() != "started":  # noqa: ASYNC110 - another process writes it
                    await trio.sleep(0.005)
                cancelled = time.monotonic()
                nursery.cancel_scope.cancel()
            with trio.fail_after(10):
                while not (text := await mark.read_text()).startswith("cancelled"):  # noqa: ASYNC110
                    await trio.sleep(0.002)
            seen.append(float(text.split()[1]) - cancelled)
            await mark.unlink()
    return seen


def _cancel_rows(rounds: int) -> None:
    print()
    print("| cancel reaches the handler | p50 ms | max ms |")
    print("|---|---:|---:|")
    cases: list[tuple[str, list[str], object, str]] = [
        ("stdio, 2026-07-28", [], CANCEL_SERVER, "modern"),
        ("stdio, handshake era", ["--legacy"], [*CANCEL_SERVER, "--legacy"], "legacy"),
    ]
    for name, target, era in [(c[0], c[2], c[3]) for c in cases]:
        figures = anyio.run(cancel_latency, target, era, rounds, backend="trio")
        print(
            f"| {name} | {statistics.median(figures) * 1e3:.1f} | {max(figures) * 1e3:.1f} |"
        )
    for kind, flag, eras in (
        ("HTTP", "--http", ("modern", "legacy")),
        ("WebSocket", "--websocket", ("modern",)),
    ):
        port = _free_port()
        scheme = "http" if kind == "HTTP" else "ws"
        server = subprocess.Popen(
            [*CANCEL_SERVER, "--legacy", flag, str(port)], stderr=subprocess.DEVNULL
        )
        try:
            _wait_for(port)
            for era in eras:
                figures = anyio.run(
                    cancel_latency,
                    f"{scheme}://127.0.0.1:{port}/mcp",
                    era,
                    rounds,
                    backend="trio",
                )
                label = "2026-07-28" if era == "modern" else "handshake era"
                print(
                    f"| {kind}, {label} | {statistics.median(figures) * 1e3:.1f} | {max(figures) * 1e3:.1f} |"
                )
        finally:
            server.terminate()
            server.wait(10)


def _wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)


def _row(name: str, figures: tuple[float, float, float]) -> str:
    cpu, p50, p99 = figures
    return f"| {name} | {cpu:,.0f} | {p50:,.0f} | {p99:,.0f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20, help="cancels per transport")
    args = parser.parse_args()
    print("| client, transport | client CPU µs/call | p50 µs | p99 µs |")
    print("|---|---:|---:|---:|")
    print(
        _row(
            "trio_mcp.client, stdio",
            anyio.run(ours, SERVER, args.calls, backend="trio"),
        )
    )
    try:
        print(_row("mcp 2.3.0 Client, stdio", anyio.run(sdk, SERVER, args.calls)))
    except Exception as exc:  # a peer that fails is a row that says so
        print(f"| mcp 2.3.0 Client, stdio | failed: {exc!r} | | |")
    port = _free_port()
    server = subprocess.Popen(
        [*SERVER, "--http", "--port", str(port)], stderr=subprocess.DEVNULL
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        _wait_for(port)
        print(
            _row(
                "trio_mcp.client, HTTP",
                anyio.run(ours, url, args.calls, backend="trio"),
            )
        )
        try:
            print(_row("mcp 2.3.0 Client, HTTP", anyio.run(sdk, url, args.calls)))
        except Exception as exc:
            print(f"| mcp 2.3.0 Client, HTTP | failed: {exc!r} | | |")
    finally:
        server.terminate()
        server.wait(10)
    _cancel_rows(args.rounds)


if __name__ == "__main__":
    main()
