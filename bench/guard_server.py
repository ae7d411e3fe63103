"""The server of bench/guards.py: the benchmark's tools with one guard turned on or off.

    python bench/guard_server.py stdio [--secret]
    python bench/guard_server.py http PORT [--auth JWKS_URI] [--rate-limit]
                                           [--metrics otel|prometheus]

``echo``, ``add`` and ``search`` answer as ``examples/bench_server.py``'s do (the
load client checks every reply). Each flag turns on one guard, so an A/B pair
differs by exactly that guard:

- ``--secret``: a module-level ``Secret`` lives, and every tool reveals it, so each
  call's registry holds its plaintext and the reply is masked by structure (content
  text and ``structuredContent`` walked, the log record factory installed). Without
  it no call knows a secret and masking is skipped, as for most calls.
- ``--auth``: ``BearerAuth`` (bench/auth.py's issuer and audience) with its keys at
  ``JWKS_URI``.
- ``--rate-limit``: ``RateLimit(1_000_000, 1)``: every call takes a token from its
  caller's bucket (in memory) and none is refused.
- ``--metrics otel``: an OpenTelemetry SDK ``MeterProvider`` (with an in-memory
  reader) is the global one, so every request records its duration through
  trio_mcp's OpenTelemetry instruments; ``--metrics prometheus``: ``metrics_path``
  serves trio_mcp's Prometheus registry, which every request records into.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

from auth import AUDIENCE, ISSUER
from bench_server import Record

from trio_mcp import RateLimit, Secret, Server, tool


def _nothing() -> None:
    """What every tool calls first without --secret."""


#: What every tool calls first: nothing, or revealing the living secret (--secret).
_touch: Callable[[], object] = _nothing


@tool
async def echo(text: str) -> str:
    """
    Return the text unchanged.

    Args:
        text: The text to return.
    """
    _touch()
    return text


@tool
async def add(a: int, b: int) -> int:
    """
    Add two integers.

    Args:
        a: The first integer.
        b: The second integer.
    """
    _touch()
    return a + b


@tool
async def search(query: str, limit: int = 20) -> list[Record]:
    """
    Return `limit` benchmark records mentioning the query.

    Args:
        query: Words to put in each title.
        limit: How many records to return.
    """
    _touch()
    return [
        Record(f"T-{i}", f"{query} Benchmark record with a short title {i}")
        for i in range(1, limit + 1)
    ]


server = Server("trio-mcp-guards", "1.0", tools=[echo, add, search])
#: Kept alive from ``keep_secret()`` on (a module-level Secret).
KEY: Secret[str] | None = None


def keep_secret() -> None:
    """Make a module-level ``Secret`` that lives as long as the process."""
    global KEY
    KEY = Secret(secrets.token_hex(16))


def reveal(on: bool) -> None:
    """Whether every tool reveals the living secret (bench/guards.py switches it)."""
    global _touch
    assert KEY is not None, "keep_secret() first"
    _touch = KEY.reveal if on else _nothing


def http_options(args: argparse.Namespace) -> dict[str, Any]:
    """``serve_http``'s options for the guards the flags turn on."""
    options: dict[str, Any] = {}
    if args.auth:
        from trio_mcp.auth import BearerAuth

        options["auth"] = BearerAuth(ISSUER, AUDIENCE, jwks_uri=args.auth)
    if args.rate_limit:
        options["rate_limit"] = RateLimit(1_000_000, 1)
    if args.metrics == "prometheus":
        options["metrics_path"] = "/metrics"
    elif args.metrics == "otel":
        from opentelemetry import metrics
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        metrics.set_meter_provider(MeterProvider([InMemoryMetricReader()]))
    return options


def main() -> None:
    """Serve stdio or HTTP with the guards the flags name."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("port", type=int, nargs="?", default=0)
    parser.add_argument("--secret", action="store_true")
    parser.add_argument("--auth", metavar="JWKS_URI")
    parser.add_argument("--rate-limit", action="store_true")
    parser.add_argument("--metrics", choices=["otel", "prometheus"])
    args = parser.parse_args()
    if args.secret:
        keep_secret()
        reveal(True)
    if args.transport == "stdio":
        trio.run(server.serve_stdio)
        return
    serve = partial(server.serve_http, port=args.port, **http_options(args))
    trio.run(serve)


if __name__ == "__main__":
    main()
