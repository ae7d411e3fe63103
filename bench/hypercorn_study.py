"""Which Hypercorn settings lower its per-request cost for request/response traffic?

    bench/.venv/bin/python bench/hypercorn_study.py [--calls 3000] [--repeat 3]

Each variant is a set of ``hypercorn.config.Config`` overrides (or a different
protocol or worker), run under two apps: the bare ASGI ceiling (``peers/ceiling.py``,
Hypercorn's own cost) and trio_mcp's ASGI app (``peers/trio_mcp_hypercorn.py``).
Both start from the ``Config`` that ``serve_http`` builds. ``echo`` calls, 16 in
flight: 16 keep-alive HTTP/1.1 connections, or for h2 16 concurrent streams on one
prior-knowledge (h2c) connection. Repeats are interleaved; the best is shown with the
server's CPU time per call and the ratio to the first variant in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any

from load import (
    CALL_TIMEOUT,
    REVISION,
    LoadError,
    LoadResult,
    _connect,
    check_reply,
    cpu_seconds,
    http_message,
    http_run,
    request_body,
)
from run import PY, free_port, spawn, stop, wait_http


@dataclass
class Variant:
    """One way to run Hypercorn."""

    name: str
    overrides: tuple[str, ...] = ()
    protocol: str = "h11"  # or "h2": prior-knowledge h2c
    mode: str = "http"  # ceiling.py mode; "http-asyncio" is Hypercorn's asyncio worker


VARIANTS = [
    Variant("serve_http's Config (h11; access log off)"),
    Variant("include_date_header=False", ("include_date_header=false",)),
    Variant("include_server_header=False", ("include_server_header=false",)),
    Variant(
        "both headers off",
        ("include_date_header=false", "include_server_header=false"),
    ),
    Variant("access log on (to /dev/null)", ("accesslog=/dev/null",)),
    Variant(
        # Hypercorn ends an h2 connection (GOAWAY) after keep_alive_max_requests
        # streams, 1,000 by default: raised so one connection carries the whole run.
        "h2 (prior knowledge, 16 streams on 1 connection)",
        ("keep_alive_max_requests=1000000",),
        protocol="h2",
    ),
    Variant("Hypercorn's asyncio worker (for comparison)", mode="http-asyncio"),
]
APPS = {
    "bare ASGI": lambda v, port: [PY, "bench/peers/ceiling.py", v.mode, str(port)],
    "trio_mcp": lambda v, port: [PY, "bench/peers/trio_mcp_hypercorn.py", str(port)],
}


def h2_headers(port: int, tool: str, length: int) -> list[tuple[str, str]]:
    """The h2 request headers for one ``tools/call``, as on HTTP/1.1."""
    return [
        (":method", "POST"),
        (":scheme", "http"),
        (":authority", f"127.0.0.1:{port}"),
        (":path", "/mcp"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", REVISION),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
        ("content-length", str(length)),
    ]


async def _h2_load(
    port: int, tool: str, calls: int, inflight: int, limit: float
) -> LoadResult:
    """``calls`` requests as concurrent h2 streams on one connection."""
    import h2.config
    import h2.connection

    reader, writer = await _connect("127.0.0.1", port)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    result = LoadResult()
    streams: dict[int, list[Any]] = {}  # stream id: [start, body, status, type]
    sent = 0
    begin = time.perf_counter()
    try:
        while result.calls + result.errors < calls:
            if time.perf_counter() > begin + limit:
                break
            while sent < calls and len(streams) < inflight:
                sent += 1
                body = request_body(tool, sent)
                sid = conn.get_next_available_stream_id()
                conn.send_headers(sid, h2_headers(port, tool, len(body)))
                conn.send_data(sid, body, end_stream=True)
                streams[sid] = [time.perf_counter(), bytearray(), 0, b""]
            writer.write(conn.data_to_send())
            data = await asyncio.wait_for(reader.read(1 << 16), CALL_TIMEOUT)
            if not data:
                raise LoadError("the h2 server closed the connection")
            for event in conn.receive_data(data):
                _h2_event(conn, event, streams, tool, result)
    finally:
        writer.close()
    result.seconds = time.perf_counter() - begin
    return result


def _h2_event(
    conn: Any, event: Any, streams: dict[int, list[Any]], tool: str, result: LoadResult
) -> None:
    """Fold one h2 event into its stream; check the reply when the stream ends."""
    import h2.events

    if isinstance(event, h2.events.ResponseReceived):
        headers = {bytes(k): bytes(v) for k, v in event.headers}
        streams[event.stream_id][2] = int(headers[b":status"])
        streams[event.stream_id][3] = headers.get(b"content-type", b"")
    elif isinstance(event, h2.events.DataReceived):
        streams[event.stream_id][1] += event.data
        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
    elif isinstance(event, h2.events.StreamEnded):
        start, body, status, kind = streams.pop(event.stream_id)
        message = http_message(kind, bytes(body)) if status == 200 else {}
        problem = check_reply(tool, message) if message else f"HTTP {status}"
        if problem:
            result.note_error(problem)
        else:
            result.calls += 1
            result.latencies.append(time.perf_counter() - start)
    elif isinstance(event, h2.events.StreamReset):
        streams.pop(event.stream_id, None)
        result.note_error(f"stream reset: {event!r}")


def measure(app: str, variant: Variant, calls: int, warmup: int) -> tuple[float, float]:
    """One repeat: (req/s, server CPU µs per call)."""
    port = free_port()
    argv = APPS[app](variant, port)
    for item in variant.overrides:
        argv += ["--set", item]
    proc = spawn(argv, f"study-{app.split()[0]}", stdio=False)
    try:
        wait_http(proc, port)

        def load(count: int) -> LoadResult:
            if variant.protocol == "h2":
                return asyncio.run(_h2_load(port, "echo", count, 16, 120))
            return http_run(port, "echo", count, 16, 120)

        load(warmup)
        before = cpu_seconds(proc.pid)
        result = load(calls)
        used = cpu_seconds(proc.pid) - before
        if result.errors:
            raise LoadError(f"{app}, {variant.name}: {result.first_error}")
        return result.rate, used / max(result.calls, 1) * 1e6
    finally:
        stop(proc)


def main(argv: list[str]) -> None:
    """Run every variant under both apps, interleaved; print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    # Stopped with SIGTERM, unwind so the server running now is stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {0})
    best: dict[tuple[str, str], tuple[float, float]] = {}
    for repeat in range(args.repeat):
        print(f"study: repeat {repeat + 1} of {args.repeat}", file=sys.stderr)
        for variant in VARIANTS:
            for app in APPS:
                if app == "trio_mcp" and variant.mode != "http":
                    continue
                rate, cpu = measure(app, variant, args.calls, 300)
                print(f"  {variant.name[:40]:40} {app:9} {rate:7,.0f}", file=sys.stderr)
                old = best.get((variant.name, app), (0.0, float("inf")))
                best[(variant.name, app)] = (max(old[0], rate), min(old[1], cpu))
    print(table(best, args))


def table(best: dict[tuple[str, str], tuple[float, float]], args: Any) -> str:
    """The study's Markdown table."""
    first = VARIANTS[0].name
    lines = [
        f"echo over HTTP, {args.calls} calls, 16 in flight, best of {args.repeat} "
        "interleaved repeats; x = req/s ÷ the first row's, same app.",
        "",
        "| Hypercorn variant | bare ASGI req/s | x | srv µs/call "
        "| trio_mcp req/s | x | srv µs/call |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for variant in VARIANTS:
        cells = [variant.name]
        for app in APPS:
            got = best.get((variant.name, app))
            base = best.get((first, app))
            if got is None or base is None:
                cells += ["-", "-", "-"]
                continue
            cells += [f"{got[0]:,.0f}", f"{got[0] / base[0]:.2f}", f"{got[1]:,.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main(sys.argv[1:])
