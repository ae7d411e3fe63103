"""What each guard adds to a call: an interleaved A/B of server CPU per call.

    bench/.venv/bin/python bench/guards.py [--quick] [--pairs 40] [--json]

(``bash bench/run.sh`` runs it and puts its table and issue 28's guard targets in
its report.) The guards, each against the same server without it (A):

- ``BearerAuth`` (RS256 JWTs; keys from a JWKS file served on 127.0.0.1 as
  bench/auth.py does): one token reused by every call, so the verified-token cache
  answers; and a token never seen before on every call (full verification: parse,
  key by ``kid``, signature, claims);
- ``RateLimit`` (in memory): every call takes a token from its caller's bucket;
- metrics with an OpenTelemetry SDK meter provider installed (in-memory reader),
  and with ``metrics_path`` (trio_mcp's Prometheus registry);
- structural redaction: every call reveals a living ``Secret``, so the call's
  registry holds its plaintext and the reply is masked by structure; A: the call
  knows no secret (``echo`` and ``search``).

How. The added cost is measured in this one process, where it can be told from
noise: the HTTP guards through ``server.mount(...)`` driven as an ASGI server would
(one POST after another, no sockets), the redaction through ``serve_messages`` (the
stdio loop without the pipe, 16 in flight). A and B run in blocks of calls,
alternating (A B, then B A), and each pair gives B - A in CPU time per call
(``time.process_time``) and B ÷ A in calls per second; the figure is the median
over the pairs. The share of a call is that added CPU ÷ the whole call's server CPU
over a real transport: ``examples/bench_server.py``-like tools on ``serve_http`` /
``serve_stdio`` loaded from outside (bench/load.py, 16 in flight), measured here
unless bench/run.py passes its own trio_mcp figures (``--call-us``). The throughput
ratio of a whole call follows: call ÷ (call + added).

Both metrics sinks are process-wide in trio_mcp (one Prometheus registry, the
global meter provider), so for their A blocks this script switches trio_mcp's
``_metrics`` module off and back on (private state, asserted to exist, and checked:
B blocks must record and A blocks must not). bench/auth.py (a sequential client,
separate servers) and bench/prod_costs.py (the Redis store, the steps alone) remain
the detailed studies. Figures, not a test.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import guard_server
import trio
from auth import AUDIENCE, ISSUER, jwks_served, signing_key, token, wait_port
from guard_server import server
from load import (
    HttpLoad,
    LoadError,
    StdioPeer,
    check_reply,
    cpu_seconds,
    request_body,
    run_http,
)
from run import PY, free_port, spawn, stop

from trio_mcp import RateLimit, _metrics
from trio_mcp.auth import BearerAuth

#: One call's coroutine, run ``n`` times per block.
Block = Callable[[int], Awaitable[None]]


@dataclass
class Sizes:
    """Pairs of blocks, calls per block, and the transport loads' sizes."""

    pairs: int
    http_block: int
    stdio_block: int
    http_calls: int
    stdio_calls: int


@dataclass
class Figure:
    """One guard on one tool: the A and B blocks, paired."""

    key: str
    label: str
    case: str
    a_cpu: list[float] = field(default_factory=list)  # µs per call, each block
    b_cpu: list[float] = field(default_factory=list)
    a_wall: list[float] = field(default_factory=list)
    b_wall: list[float] = field(default_factory=list)
    call_us: float = float("nan")  # the whole call's server CPU over the transport

    @property
    def added_us(self) -> float:
        """Median over the pairs of B - A, server CPU µs per call."""
        return statistics.median(
            b - a for a, b in zip(self.a_cpu, self.b_cpu, strict=True)
        )

    @property
    def error_us(self) -> float:
        """The standard error of ``added_us``, from the pairs' spread (1.25 MAD x 1.48 / √n)."""
        diffs = [b - a for a, b in zip(self.a_cpu, self.b_cpu, strict=True)]
        middle = statistics.median(diffs)
        mad = statistics.median(abs(d - middle) for d in diffs)
        return float(1.2533 * 1.4826 * mad / len(diffs) ** 0.5)

    @property
    def in_process_ratio(self) -> float:
        """Median over the pairs of B's calls per second ÷ A's (A's wall time ÷ B's)."""
        return statistics.median(
            a / b for a, b in zip(self.a_wall, self.b_wall, strict=True)
        )

    def as_json(self) -> dict[str, object]:
        """What bench/run.py and bench/targets.py read."""
        share = self.added_us / self.call_us
        return {
            "label": self.label,
            "case": self.case,
            "cpu_a": self.call_us,
            "cpu_b": self.call_us + self.added_us,
            "added_us": self.added_us,
            "cpu_added": share,
            "error": self.error_us / self.call_us,
            "rate_ratio": self.call_us / (self.call_us + self.added_us),
            "in_process_a_us": statistics.median(self.a_cpu),
            "in_process_rate_ratio": self.in_process_ratio,
        }


# -- HTTP: the ASGI app in process -----------------------------------------------------


def scope(token_value: str = "") -> dict[str, Any]:
    """An ASGI scope for one ``tools/call`` of ``echo`` on loopback."""
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", b"echo"),
    ]
    if token_value:
        headers.append((b"authorization", f"Bearer {token_value}".encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def asgi_call(app: Any, call_scope: dict[str, Any], body: bytes) -> None:
    """One request to ``app``; its reply must be 200 with the right ``echo`` answer."""
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(call_scope, receive, send)
    reply = b"".join(m.get("body", b"") for m in sent[1:])
    if sent[0]["status"] != 200 or b'"hello"' not in reply:
        raise LoadError(f"HTTP {sent[0]['status']}: {reply[:200]!r}")


def http_block(app: Any, tokens: Iterator[str] | None = None) -> Block:
    """``n`` calls of ``echo`` to ``app``, one after another (each its own token)."""
    body = request_body("echo", 1)
    plain = scope()

    async def run(n: int) -> None:
        for _ in range(n):
            await asgi_call(app, plain if tokens is None else scope(next(tokens)), body)

    return run


# -- stdio: serve_messages in process --------------------------------------------------


class Messages:
    """``server.serve_messages`` fed from a channel, 16 requests in flight.

    As bench/load.py's stdio client does: a reply lets the next request in, so the
    server always has 16 to run (its limiter's slots), never a queue of waiters.
    """

    INFLIGHT = 16

    def __init__(self) -> None:
        self.send_in, self.receive_in = trio.open_memory_channel[str | bytes](1 << 10)
        self.lines: list[str] = []
        self.sent = self.answered = self.wanted = 0
        self.last = ""
        self.done = trio.Event()

    async def on_reply(self, text: str) -> None:
        self.answered += 1
        self.last = text
        if self.sent < self.wanted:
            self.send_in.send_nowait(self.lines[self.sent % len(self.lines)])
            self.sent += 1
        elif self.answered >= self.wanted:
            self.done.set()

    def block(self, tool: str) -> Block:
        """``n`` calls of ``tool``, 16 in flight."""
        lines = [request_body(tool, i).decode() for i in range(1, 1025)]

        async def run(n: int) -> None:
            self.lines, self.wanted, self.done = lines, n, trio.Event()
            self.sent = self.answered = 0
            while self.sent < min(n, self.INFLIGHT):
                self.send_in.send_nowait(lines[self.sent])
                self.sent += 1
            await self.done.wait()
            problem = check_reply(tool, json.loads(self.last))
            if problem:
                raise LoadError(problem)

        return run


# -- the A/B ---------------------------------------------------------------------------


async def timed(block: Block, n: int) -> tuple[float, float]:
    """CPU µs and wall µs per call of one block."""
    cpu, wall = time.process_time(), time.perf_counter()
    await block(n)
    return (
        (time.process_time() - cpu) / n * 1e6,
        (time.perf_counter() - wall) / n * 1e6,
    )


async def ab(
    figure: Figure,
    a: Block,
    b: Block,
    n: int,
    pairs: int,
    switch: Callable[[bool], None] = lambda on: None,
) -> None:
    """``pairs`` pairs of blocks: A then B, B then A, ...; ``switch(on)`` before each."""
    for side in (False, True):  # warm both up
        switch(side)
        await (b if side else a)(n)
    for pair in range(pairs):
        for side in (False, True) if pair % 2 == 0 else (True, False):
            switch(side)
            cpu, wall = await timed(b if side else a, n)
            (figure.b_cpu if side else figure.a_cpu).append(cpu)
            (figure.b_wall if side else figure.a_wall).append(wall)
    switch(False)


class MetricsSwitch:
    """Turns trio_mcp's process-wide metrics sinks on and off between blocks."""

    def __init__(self) -> None:
        for name in ("_prometheus", "_otel", "_otel_next_check"):
            assert hasattr(_metrics, name), f"trio_mcp._metrics.{name} is gone"
        self.prometheus = _metrics._prometheus
        self.otel = _metrics._otel
        assert self.prometheus is not None, "metrics_path did not enable Prometheus"
        assert self.otel is not None, "the OTel meter provider was not picked up"

    def prometheus_text(self) -> bytes:
        """The Prometheus registry's text (the B side's records)."""
        from prometheus_client import generate_latest

        return generate_latest(self.prometheus.registry)  # type: ignore[union-attr]

    def only(self, sink: str) -> Callable[[bool], None]:
        """A switch: ``sink`` on when B runs; nothing records when A runs."""

        def switch(on: bool) -> None:
            _metrics._prometheus = self.prometheus if on and sink == "prom" else None
            _metrics._otel = self.otel if on and sink == "otel" else None
            # trio_mcp must not look for a provider again while A runs.
            _metrics._otel_next_check = math.inf

        return switch


def install_otel() -> Any:
    """An OpenTelemetry SDK meter provider with an in-memory reader, made global."""
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider([reader]))
    return reader


def recorded(reader: Any) -> int:
    """How many ``tools/call`` durations the OTel reader holds."""
    data = reader.get_metrics_data()
    count = 0
    for resource in data.resource_metrics if data else ():
        for scope_metrics in resource.scope_metrics:
            for metric in scope_metrics.metrics:
                if metric.name == _metrics.DURATION:
                    count += sum(p.count for p in metric.data.data_points)
    return count


async def http_guards(jwks: str, key: Any, sizes: Sizes) -> list[Figure]:
    """The HTTP guards, each against the plain app (``key`` signs the tokens)."""
    n, pairs = sizes.http_block, sizes.pairs
    fresh = iter([token(key, i) for i in range(1, (pairs + 1) * n + 1)])
    plain = server.mount()
    with_auth = server.mount(auth=BearerAuth(ISSUER, AUDIENCE, jwks_uri=jwks))
    limited = server.mount(rate_limit=RateLimit(1_000_000, 1))
    figures = [
        Figure("jwt", "BearerAuth, one token reused", "http echo"),
        Figure("jwt-fresh", "BearerAuth, a new token every call", "http echo"),
        Figure("rate-limit", "RateLimit (memory)", "http echo"),
    ]
    one = token(key, 0)
    await ab(
        figures[0], http_block(plain), http_block(with_auth, repeat(one)), n, pairs
    )
    await ab(figures[1], http_block(plain), http_block(with_auth, fresh), n, pairs)
    await ab(figures[2], http_block(plain), http_block(limited), n, pairs)
    figures += await metrics_guards(plain, sizes)
    return figures


async def metrics_guards(plain: Any, sizes: Sizes) -> list[Figure]:
    """Metrics through the OTel SDK and through ``metrics_path``, against none."""
    n, pairs = sizes.http_block, sizes.pairs
    reader = install_otel()
    _metrics._otel_next_check = 0.0  # look for a provider on the next request
    await http_block(plain)(1)  # trio_mcp finds the OTel provider
    server.mount(metrics_path="/metrics")  # enables the Prometheus registry
    switch = MetricsSwitch()
    otel = Figure("metrics-otel", "metrics, OTel SDK meter provider", "http echo")
    prom = Figure("metrics-prometheus", "metrics, metrics_path", "http echo")
    before = recorded(reader)
    await ab(otel, http_block(plain), http_block(plain), n, pairs, switch.only("otel"))
    # B blocks (and B's warm-up) record, A blocks do not.
    assert recorded(reader) - before == (pairs + 1) * n, "OTel A/B switch failed"
    text = switch.prometheus_text()
    await ab(prom, http_block(plain), http_block(plain), n, pairs, switch.only("prom"))
    assert switch.prometheus_text() != text, "Prometheus A/B switch failed"
    return [otel, prom]


def repeat(value: str) -> Iterator[str]:
    """``value`` forever."""
    while True:
        yield value


async def redaction(sizes: Sizes) -> list[Figure]:
    """A living ``Secret`` revealed by every call, against calls that know none."""
    messages = Messages()
    figures = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            partial(server.serve_messages, messages.receive_in, messages.on_reply)
        )
        guard_server.keep_secret()
        for tool in ("echo", "search"):
            figure = Figure("redaction", "a Secret alive", f"stdio {tool}")
            block = messages.block(tool)
            await ab(
                figure,
                block,
                block,
                sizes.stdio_block,
                sizes.pairs,
                guard_server.reveal,
            )
            figures.append(figure)
        messages.send_in.close()
    return figures


async def in_process(jwks: str, key: Any, sizes: Sizes) -> list[Figure]:
    """Every guard's A/B."""
    figures = await http_guards(jwks, key, sizes)
    return figures + await redaction(sizes)


# -- the whole call over a real transport ----------------------------------------------


def call_us(sizes: Sizes) -> dict[str, float]:
    """Server CPU µs per call of the plain guard server over HTTP and stdio.

    Best of two loads each (16 in flight, after a warm-up), server on CPU 1.
    """
    found: dict[str, float] = {}
    port = free_port()
    proc = spawn([PY, "bench/guard_server.py", "http", str(port)], "guards-http", False)
    try:
        wait_port(port)
        found["http echo"] = best_load(proc.pid, "echo", sizes.http_calls, port)
    finally:
        stop(proc)
    proc = spawn([PY, "bench/guard_server.py", "stdio"], "guards-stdio", True)
    try:
        peer = StdioPeer(proc)
        for tool in ("echo", "search"):
            found[f"stdio {tool}"] = best_load(proc.pid, tool, sizes.stdio_calls, peer)
    finally:
        stop(proc)
    return found


def best_load(pid: int, tool: str, calls: int, target: int | StdioPeer) -> float:
    """Lowest server CPU µs per call of two loads (after a warm-up)."""
    found = []
    for count in (calls // 5, calls, calls):
        before = cpu_seconds(pid)
        if isinstance(target, StdioPeer):
            result = target.run(tool, count, 16, 60)
        else:
            result = run_http(HttpLoad(target, tool, count, 16, 60))
        if result.errors or result.calls < count:
            raise LoadError(f"{tool}: {result.first_error or 'time limit'}")
        found.append((cpu_seconds(pid) - before) / count * 1e6)
    return min(found[1:])


def table(figures: list[Figure], sizes: Sizes) -> list[str]:
    """The A/B as Markdown: one line per guard and tool."""
    lines = [
        f"Guards' A/B (`bench/guards.py`): {sizes.pairs} pairs of blocks of "
        f"{sizes.http_block} HTTP or {sizes.stdio_block} stdio calls, in process, "
        "A and B alternating; added = median of B - A in CPU per call; a whole call = "
        "the server's CPU per call over the transport (16 in flight).",
        "",
        "| guard | case | A in process µs | added µs | whole call µs | share of a call "
        "| B ÷ A req/s, in process | whole call |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for figure in figures:
        found = figure.as_json()
        lines.append(
            f"| {figure.label} | {figure.case} | {found['in_process_a_us']:,.0f} "
            f"| {figure.added_us:+,.1f} ±{figure.error_us:.1f} | {figure.call_us:,.0f} "
            f"| {found['cpu_added']:+.1%} | {figure.in_process_ratio:.3f} "
            f"| {found['rate_ratio']:.3f} |"
        )
    return lines


def as_json(figures: list[Figure]) -> dict[str, dict[str, object]]:
    """By ``key/case``, and by ``key`` alone the case where the guard costs most."""
    found: dict[str, dict[str, object]] = {}
    for figure in figures:
        found[f"{figure.key}/{figure.case}"] = figure.as_json()
        same = [f for f in figures if f.key == figure.key]
        if figure is max(same, key=lambda f: f.added_us / f.call_us):
            found[figure.key] = figure.as_json()
    return found


def parse(argv: list[str]) -> tuple[argparse.Namespace, Sizes]:
    """Options and sizes."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer, smaller blocks")
    parser.add_argument("--pairs", type=int, help="pairs of blocks (quick 20, 40)")
    parser.add_argument(
        "--call-us",
        help="the whole calls' server CPU µs, as 'http echo=1000,stdio echo=150,"
        "stdio search=300' (bench/run.py passes its own); measured here if absent",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    quick = args.quick
    sizes = Sizes(
        pairs=args.pairs or (20 if quick else 40),
        http_block=100,
        stdio_block=200 if quick else 400,
        http_calls=500 if quick else 2000,
        stdio_calls=1000 if quick else 4000,
    )
    return args, sizes


def main(argv: list[str]) -> None:
    """Measure, then print the table (or, with ``--json``, one JSON object)."""
    args, sizes = parse(argv)
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {0})
    begin = time.monotonic()
    if args.call_us:
        calls = {
            k.strip(): float(v)
            for k, v in (p.split("=") for p in args.call_us.split(","))
        }
    else:
        calls = call_us(sizes)
    key = signing_key()
    with jwks_served(key) as jwks:
        figures = trio.run(in_process, jwks, key, sizes)
    for figure in figures:
        figure.call_us = calls[figure.case]
    lines = table(figures, sizes)
    lines.append(
        f"\n{time.monotonic() - begin:.0f} s; load average at the end "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs."
    )
    if args.json:
        print(json.dumps({**as_json(figures), "table": lines}))
    else:
        print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
