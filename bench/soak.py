"""Soak: 100,000 ``tools/call`` requests over stdio and over HTTP; does RSS stay flat?

    bench/.venv/bin/python bench/soak.py [--calls 100000] [--time-limit 600] [--only stdio]

Serves ``examples/bench_server.py``, warms it up (5,000 calls), reads its resident set,
then sends ``--calls`` calls in rounds of 10,000 (``echo``, ``add`` and ``search`` in
turn, 16 in flight; HTTP opens fresh keep-alive connections each round) and prints the
RSS after every round and the growth from the warm-up figure (the target is under
5 MiB). Every reply is checked. Each transport stops at ``--time-limit`` seconds even
if fewer calls were sent, and says so.
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from load import LoadResult, StdioPeer, check_reply, http_ask, http_run, request_body
from load import rss_mib as rss
from run import ENV

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "examples/bench_server.py"]
TOOLS = ("echo", "add", "search")
ROUND = 10_000
WARMUP = 5_000
INFLIGHT = 16


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def soak(transport: str, calls: int, time_limit: float) -> None:
    """Run one transport's soak and print its RSS line by line."""
    port = free_port()
    stdio = transport == "stdio"
    argv = SERVER if stdio else [*SERVER, "--http", "--port", str(port)]
    pipe = subprocess.PIPE if stdio else subprocess.DEVNULL
    proc = subprocess.Popen(argv, cwd=ROOT, stdin=pipe, stdout=pipe, env=ENV)
    try:
        peer = StdioPeer(proc) if stdio else None
        if peer is None:
            wait_http(port)

        def load(tool: str, count: int, limit: float) -> LoadResult:
            if peer is not None:
                return peer.run(tool, count, INFLIGHT, limit)
            return http_run(port, tool, count, INFLIGHT, limit)

        for tool in TOOLS:
            load(tool, WARMUP // len(TOOLS), time_limit)
        base = rss(proc.pid)
        print(f"{transport}: RSS after {WARMUP:,} warm-up calls: {base:.1f} MiB")
        done = errors = 0
        begin = time.monotonic()
        rounds = 0
        while done < calls:
            left = time_limit - (time.monotonic() - begin)
            if left <= 0:
                print(f"{transport}: time limit reached after {done:,} calls")
                break
            tool = TOOLS[rounds % len(TOOLS)]
            result = load(tool, min(ROUND, calls - done), left)
            done += result.calls + result.errors
            errors += result.errors
            rounds += 1
            now = rss(proc.pid)
            print(
                f"{transport}: {done:>7,} calls ({tool:6} {result.rate:7,.0f} req/s) "
                f"RSS {now:.1f} MiB ({now - base:+.1f})",
                flush=True,
            )
        end = rss(proc.pid)
        print(
            f"{transport}: {done:,} calls, {errors} wrong replies, "
            f"{time.monotonic() - begin:.0f} s; RSS {base:.1f} -> {end:.1f} MiB, "
            f"growth {end - base:+.1f} MiB (target < 5)"
        )
    finally:
        stop(proc)


def wait_http(port: int, limit: float = 30.0) -> None:
    """Wait until the HTTP server answers an echo call correctly."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            message = http_ask(port, request_body("echo", 0), "echo")
        except OSError:
            time.sleep(0.02)
            continue
        if message and not check_reply("echo", message):
            return
    raise SystemExit(f"soak: the HTTP server did not answer within {limit} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server we started, by PID: EOF (stdio) or SIGINT (HTTP), then kill."""
    if proc.stdin is not None:
        proc.stdin.close()
    else:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main(argv: list[str]) -> None:
    """Soak each transport in turn."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument(
        "--time-limit", type=float, default=600.0, help="per transport (s)"
    )
    parser.add_argument("--only", choices=["stdio", "http"])
    args = parser.parse_args(argv)
    # Stopped with SIGTERM, unwind so the server running now is stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    for transport in ("stdio", "http"):
        if args.only in (None, transport):
            soak(transport, args.calls, args.time_limit)


if __name__ == "__main__":
    main(sys.argv[1:])
