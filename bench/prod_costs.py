"""What the rate limiter and the metrics cost per HTTP call (A/B, docs/performance.md).

    .venv/bin/python bench/prod_costs.py [--rounds 5] [--calls 2000]

``trio-mcp serve bench/prod_server.py:server`` runs on 127.0.0.1 in five variants:
plain; ``--rate-limit`` with the in-memory store; ``--rate-limit`` with the buckets
in a redis-server started here (``PROD_BENCH_STORE=redis``); ``--metrics-path``; and
both in memory. One client sends ``tools/call work`` (0 ms) one after another over a
keep-alive connection; the figure is the server process's CPU time (user + system)
per call, which other processes on a shared machine cannot inflate the way they do
a round trip. The variants are interleaved in every round; the best round per
variant is printed with its difference from plain. The steps are also timed alone,
in-process, first. Every process is stopped by PID.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import trio
from production import STATE_KEY, TARGET, body, free_port, headers, stop, wait_for

VARIANTS: dict[str, tuple[list[str], dict[str, str]]] = {
    "plain": ([], {}),
    "rate limit (memory)": (["--rate-limit", "1000000/1"], {}),
    "rate limit (Redis)": (
        ["--rate-limit", "1000000/1"],
        {"PROD_BENCH_STORE": "redis"},
    ),
    "metrics": (["--metrics-path", "/metrics"], {}),
    "rate limit + metrics (memory)": (
        ["--rate-limit", "1000000/1", "--metrics-path", "/metrics"],
        {},
    ),
}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(url: str, calls: int, pid: int) -> float:
    """The server's CPU seconds per call over ``calls`` sequential calls (after 200
    to warm up): unlike the round trip, other processes on the machine cannot
    inflate it by taking the CPU away."""
    payload = body("tools/call", name="work", arguments={"ms": 0})
    with httpx.Client(timeout=30) as client:
        for _ in range(200):
            client.post(url, json=payload, headers=headers("tools/call", "work"))
        started = cpu_seconds(pid)
        for _ in range(calls):
            response = client.post(
                url, json=payload, headers=headers("tools/call", "work")
            )
            assert response.status_code == 200, response.text
        return (cpu_seconds(pid) - started) / calls


def micro(redis_port: int, n: int = 20_000) -> None:
    """The steps alone, in-process: what they add to each call, without HTTP's noise."""
    from trio_mcp import RateLimit, RedisStore, _metrics
    from trio_mcp._http._forwarded import caller_key
    from trio_mcp._store import MemoryStore

    limit = RateLimit(1_000_000, 1)
    scope = {"client": ("127.0.0.1", 5000)}
    memory = MemoryStore()

    async def steps() -> dict[str, float]:
        out: dict[str, float] = {}
        started = time.perf_counter()
        for _ in range(n):
            await memory.take(caller_key(None, scope, {}, limit), limit)
        out["rate limit, memory store"] = (time.perf_counter() - started) / n
        store = RedisStore(f"redis://127.0.0.1:{redis_port}/0")
        async with store.running():
            started = time.perf_counter()
            for _ in range(n // 10):
                await store.take(caller_key(None, scope, {}, limit), limit)
            out["rate limit, Redis store (one script call)"] = (
                time.perf_counter() - started
            ) / (n // 10)
        _metrics.enable_prometheus()
        started = time.perf_counter()
        for _ in range(n):
            token = _metrics.start("tools/call")
            assert token is not None
            _metrics.note_outcome("ok")
            _metrics.finish(token, "work", None)
        out["metrics (histogram observation)"] = (time.perf_counter() - started) / n
        return out

    print("| step alone, in-process | per call |\n| --- | --- |")
    for name, seconds in trio.run(steps).items():
        print(f"| {name} | {seconds * 1e6:.1f} µs |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    redis = shutil.which("redis-server")
    if redis is None:
        sys.exit("redis-server is not installed (scripts/bootstrap installs it)")
    redis_port = free_port()
    redis_proc = subprocess.Popen(
        [redis, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    results: dict[str, list[float]] = {name: [] for name in VARIANTS}
    try:
        wait_for(redis_port, redis_proc)
        micro(redis_port)
        for _ in range(args.rounds):
            for name, (flags, extra) in VARIANTS.items():
                results[name].append(one(flags, extra, redis_port, args.calls))
    finally:
        stop(redis_proc)
    plain = min(results["plain"])
    print("| variant | server CPU per call (best) | vs plain | rounds (µs) |")
    print("| --- | --- | --- | --- |")
    for name, values in results.items():
        median = min(values)
        rounds = ", ".join(f"{v * 1e6:.0f}" for v in values)
        print(
            f"| {name} | {median * 1e6:.0f} µs | {(median - plain) * 1e6:+.0f} µs "
            f"({(median / plain - 1) * 100:+.1f} %) | {rounds} |"
        )
    print(
        f"\n{args.calls} calls per round, {args.rounds} rounds; load average {os.getloadavg()[0]:.1f}"
    )


def one(flags: list[str], extra: dict[str, str], redis_port: int, calls: int) -> float:
    port = free_port()
    env = {
        **os.environ,
        "PROD_BENCH_REDIS": f"redis://127.0.0.1:{redis_port}/0",
        "TRIO_MCP_STATE_KEY": STATE_KEY,
        "PROD_BENCH_STORE": "memory",
        **extra,
    }
    command = [
        sys.executable,
        "-m",
        "trio_mcp",
        "serve",
        TARGET,
        "--port",
        str(port),
        *flags,
    ]
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_for(port, process)
        return measure(f"http://127.0.0.1:{port}/mcp", calls, process.pid)
    finally:
        stop(process)


if __name__ == "__main__":
    main()
