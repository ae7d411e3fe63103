"""Requests per second with 1 worker, 2 workers and 2 replicas (docs/deploy.md).

    .venv/bin/python bench/scale.py [--rounds 3] [--duration 5] [--connections 16]

Each configuration serves ``examples/bench_server.py`` with ``trio-mcp serve`` on
127.0.0.1, sharing changes through a redis-server started here (``--broadcast``),
as a deployment would; ``wrk`` (Debian's ``wrk`` package) sends ``tools/call echo``
over keep-alive connections. Two replicas get one ``wrk`` each with half the
connections, standing in for a load balancer. Configurations are interleaved per
round and the median is printed, with the load average, as a Markdown table.
Every process is started here on a free port and stopped by PID. Figures, not a
test: the machine is shared, so compare ratios from one run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = f"{ROOT / 'examples' / 'bench_server.py'}:server"
BODY = (
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
    '"arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":'
    '"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
)
SCRIPT = f"""wrk.method = "POST"
wrk.body = '{BODY}'
wrk.headers["content-type"] = "application/json"
wrk.headers["accept"] = "application/json, text/event-stream"
wrk.headers["mcp-protocol-version"] = "2026-07-28"
wrk.headers["mcp-method"] = "tools/call"
wrk.headers["mcp-name"] = "echo"
"""
#: Seconds for spawned workers to import the server before traffic starts.
SETTLE = 5.0
#: name -> (workers per replica, replicas)
CONFIGS = {"1 worker": (1, 1), "2 workers": (2, 1), "2 replicas": (1, 2)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"bench: a process exited at start ({process.args!r})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"bench: nothing listened on port {port} within 30 s")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A redis-server on 127.0.0.1 (a free port, nothing saved), and its URL."""
    executable = shutil.which("redis-server")
    if executable is None:
        sys.exit("redis-server is not installed (scripts/bootstrap installs it)")
    port = free_port()
    process = subprocess.Popen(
        [
            executable,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )
    wait_for(port, process)
    return process, f"redis://127.0.0.1:{port}/0"


def serve(workers: int, redis_url: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "TRIO_MCP_STATE_KEY": "bench-" + "k" * 40}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trio_mcp",
            "serve",
            TARGET,
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--broadcast",
            redis_url,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    wait_for(port, process)
    if workers > 1:
        # Hypercorn's supervisor binds before its workers have imported the app;
        # connections queue meanwhile, which is not what is being measured.
        time.sleep(SETTLE)
    return process, port


def wrk(ports: list[int], connections: int, duration: int, script: str) -> float:
    """Run one wrk per port at once; return the summed requests per second."""
    each = max(1, connections // len(ports))
    runs = [
        subprocess.Popen(
            [
                "wrk",
                "-t1",
                f"-c{each}",
                f"-d{duration}s",
                "-s",
                script,
                f"http://127.0.0.1:{port}/mcp",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for port in ports
    ]
    total = 0.0
    for run in runs:
        out, _ = run.communicate(timeout=duration + 60)
        match = re.search(r"Requests/sec:\s+([\d.]+)", out)
        errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        if match is None or errors is not None:
            sys.exit(f"bench: wrk failed or got errors:\n{out}")
        total += float(match.group(1))
    return total


def measure(name: str, redis_url: str, args: argparse.Namespace, script: str) -> float:
    workers, replicas = CONFIGS[name]
    started = [serve(workers, redis_url) for _ in range(replicas)]
    try:
        ports = [port for _, port in started]
        wrk(ports, args.connections, 2, script)  # warm-up: caches, connections
        return wrk(ports, args.connections, args.duration, script)
    finally:
        for process, _ in started:
            stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    for tool, package in (("wrk", "wrk"), ("redis-server", "redis-server")):
        if shutil.which(tool) is None:
            sys.exit(f"bench: {tool} is missing; install it: apt-get install {package}")
    redis, redis_url = start_redis()
    results: dict[str, list[float]] = {name: [] for name in CONFIGS}
    load_before = os.getloadavg()[0]
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
            f.write(SCRIPT)
        for round_no in range(1, args.rounds + 1):
            for name in CONFIGS:
                rps = measure(name, redis_url, args, f.name)
                results[name].append(rps)
                print(f"round {round_no}: {name}: {rps:.0f} req/s", file=sys.stderr)
        os.unlink(f.name)
    finally:
        stop(redis)
    load_after = os.getloadavg()[0]
    base = statistics.median(results["1 worker"])
    print(f"| configuration | req/s (median of {args.rounds}) | vs 1 worker | rounds |")
    print("| --- | --- | --- | --- |")
    for name, values in results.items():
        median = statistics.median(values)
        rounds = ", ".join(f"{v:.0f}" for v in values)
        print(f"| {name} | {median:.0f} | {median / base:.2f}x | {rounds} |")
    print(
        f"\n{os.cpu_count()} CPUs; load average {load_before:.1f} before, "
        f"{load_after:.1f} after; {args.connections} connections, "
        f"{args.duration} s per run, wrk on the same machine."
    )


if __name__ == "__main__":
    main()
