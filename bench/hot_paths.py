"""Where trio_mcp's server spends its CPU per call: py-spy on the stdio and HTTP hot paths.

    bench/.venv/bin/python bench/hot_paths.py [--calls 20000] [--tool echo] [--only stdio]

Starts ``examples/bench_server.py`` (stdio, then HTTP), warms it up, attaches py-spy
(``record --format raw``: on-CPU samples only, no instrumentation in the server) and
sends ``--calls`` echo calls, 16 in flight. It then prints, per transport, the server's
CPU µs per call split two ways: by area (the module a sample's innermost frame is in,
grouped: trio_mcp's own subpackages, Trio, Hypercorn/h11, json, ...) and by the
functions with the most time at or below them (inclusive) and in them (self). The raw
stacks are kept in bench/results/profile-*.txt (speedscope and flame graph tools read
them). py-spy needs ptrace rights over the server (root, or a ptrace_scope of 0).
"""

from __future__ import annotations

import argparse
import collections
import signal
import subprocess
import sys
import time

from load import StdioPeer, cpu_seconds, http_run
from run import ENV, PY, RESULTS, ROOT, free_port, pin_server, stop, wait_http

SPY = str(ROOT / "bench" / ".venv" / "bin" / "py-spy")
#: Areas by the first matching piece of a frame's file path, in order.
AREAS = [
    ("trio_mcp/_transports/_stream", "trio_mcp transports: stdio/stream framing"),
    ("trio_mcp/_transports/_stdio", "trio_mcp transports: stdio"),
    ("trio_mcp/_http/_app", "trio_mcp transports: ASGI app"),
    ("trio_mcp/_transports", "trio_mcp transports: other"),
    ("trio_mcp/_dispatch", "trio_mcp dispatch"),
    ("trio_mcp/_declare", "trio_mcp declarations (call plans, replies)"),
    ("trio_mcp/_decode", "trio_mcp decode/encode (cattrs hooks)"),
    ("trio_mcp/_protocol", "trio_mcp protocol (JSON-RPC, headers, _meta)"),
    ("trio_mcp/_authority", "trio_mcp authority (caps, receipts, redaction)"),
    ("trio_mcp/_json", "trio_mcp JSON (dumps/loads, depth checks)"),
    ("trio_mcp/_otel", "trio_mcp otel"),
    ("trio_mcp/_context", "trio_mcp context"),
    ("trio_mcp/", "trio_mcp other"),
    ("examples/", "the tool bodies"),
    ("cattrs/", "cattrs"),
    ("attr/", "attrs"),
    ("hypercorn/", "Hypercorn"),
    ("h11/", "h11"),
    ("json/", "json (stdlib)"),
    ("trio/_core/_run", "Trio scheduler"),
    ("trio/_core/_io", "Trio I/O (epoll)"),
    ("trio/", "Trio other (streams, sync, channels)"),
    ("outcome/", "Trio other (streams, sync, channels)"),
    ("contextvars", "contextvars"),
    ("logging/", "logging"),
]


def area_of(frame: str) -> str:
    """The area a frame ``func (path:line)`` belongs to."""
    for piece, area in AREAS:
        if piece in frame:
            return area
    return "other Python / C"


def summarise(raw: str, us_per_call: float, top: int = 18) -> list[str]:
    """Markdown tables: µs per call by area (self), and the top functions."""
    samples = 0
    by_area: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [f for f in stack.split(";") if "(" in f]
        if not frames:
            continue
        samples += count
        by_area[area_of(frames[-1])] += count
        own[_short(frames[-1])] += count
        for frame in {_short(f) for f in frames}:
            inclusive[frame] += count
    if not samples:
        return ["(no samples)"]
    scale = us_per_call / samples
    lines = ["| area (innermost frame) | µs/call | share |", "|---|---:|---:|"]
    for area, count in by_area.most_common():
        lines.append(f"| {area} | {count * scale:.1f} | {count / samples:.0%} |")
    lines += ["", "| function (inclusive: it and below) | µs/call | self µs/call |"]
    lines.append("|---|---:|---:|")
    for frame, count in inclusive.most_common(top * 3):
        if "trio_mcp/" in frame or "hypercorn/" in frame or "examples/" in frame:
            lines.append(
                f"| `{frame}` | {count * scale:.1f} | {own[frame] * scale:.1f} |"
            )
    return lines[: 5 + len(by_area) + top]


def _short(frame: str) -> str:
    """``func (path:line)`` -> ``func (package/module.py)`` without the line number."""
    name, _, where = frame.partition(" (")
    path = where.rsplit(":", 1)[0]
    for anchor in ("trio_mcp/", "site-packages/", "lib/python3"):
        if anchor in path:
            path = path[path.index(anchor) :].removeprefix("site-packages/")
            break
    return f"{name} ({path})"


def profile(transport: str, calls: int, tool: str) -> list[str]:
    """Load the server under py-spy; the summary lines for one transport."""
    port = free_port()
    stdio = transport == "stdio"
    argv = [PY, "examples/bench_server.py"]
    if not stdio:
        argv += ["--http", "--port", str(port)]
    pipe = subprocess.PIPE if stdio else subprocess.DEVNULL
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdin=pipe, stdout=pipe, env=ENV, preexec_fn=pin_server
    )
    out = RESULTS / f"profile-{transport}.txt"
    RESULTS.mkdir(exist_ok=True)
    try:
        peer = StdioPeer(proc) if stdio else None
        if peer is None:
            wait_http(proc, port)

        def load(count: int) -> float:
            if peer is not None:
                return peer.run(tool, count, 16, 300).rate
            return http_run(port, tool, count, 16, 300).rate

        load(1000)
        record = ["record", "--format", "raw", "-r", "400", "--nonblocking"]
        spy = subprocess.Popen(
            [SPY, *record, "-o", str(out), "--pid", str(proc.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0)  # py-spy attaches
        before = cpu_seconds(proc.pid)
        rate = load(calls)
        us = (cpu_seconds(proc.pid) - before) / calls * 1e6
        spy.send_signal(signal.SIGINT)
        spy.wait(30)
    finally:
        stop(proc)
    head = (
        f"### {transport}: {tool}, {calls:,} calls at {rate:,.0f} req/s under the "
        f"profiler, server CPU {us:.0f} µs/call"
    )
    return [head, "", *summarise(out.read_text(), us)]


def main(argv: list[str]) -> None:
    """Profile each transport in turn and print the summaries."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--tool", default="echo", choices=["echo", "add", "search"])
    parser.add_argument("--only", choices=["stdio", "http"])
    args = parser.parse_args(argv)
    for transport in ("stdio", "http"):
        if args.only in (None, transport):
            print("\n".join(profile(transport, args.calls, args.tool)) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
