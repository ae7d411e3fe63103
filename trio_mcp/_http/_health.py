"""The app's ``GET`` endpoints beside MCP: ``/healthz`` and ``metrics_path``.

``/healthz``: whether this replica can still serve every call.

An orchestrator polls it and replaces a replica that says it is degraded. Healthy is
``200`` with ``ok``; degraded is ``503`` with a JSON object saying why, and
``Retry-After``. Today one thing degrades a replica: the budget of abandoned
synchronous handler threads is spent (``_declare/_threads.py``), so every new
synchronous call is refused until those threads return.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .. import _metrics
from .._declare._threads import thread_budget
from .._errors import Transport, install_hint
from .._json import JsonObject, encode_message

__all__ = ["enable_metrics", "health_report", "send_health", "send_metrics"]

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def health_report() -> JsonObject | None:
    """Why this replica is degraded, or None when it is healthy."""
    budget = thread_budget()
    if not budget.spent:
        return None
    return {
        "status": "degraded",
        "reason": "abandoned synchronous handler threads are still running; new "
        "synchronous calls are refused until they return (replace this replica)",
        "lingeringThreads": budget.lingering,
        "maxLingeringThreads": budget.max_lingering,
        "refusedCalls": budget.refused,
    }


async def send_health(send: Send, *, head: bool = False) -> None:
    """Answer a ``GET`` (or ``HEAD``) of ``/healthz``."""
    report = health_report()
    if report is None:
        status, body = 200, b"ok\n"
        headers = [(b"content-type", b"text/plain; charset=utf-8")]
    else:
        status, body = 503, encode_message(report)
        headers = [(b"content-type", b"application/json"), (b"retry-after", b"5")]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


def enable_metrics() -> None:
    """Start recording for ``metrics_path``; a missing extra fails at once.

    Raises:
        McpError.Transport: if prometheus-client is not installed.
    """
    try:
        _metrics.enable_prometheus()
    except ImportError as exc:
        raise Transport(
            f"metrics_path needs prometheus-client; {install_hint('metrics')}"
        ) from exc


async def send_metrics(send: Send) -> None:
    """Answer a scrape: the metrics in the Prometheus text format."""
    body, content_type = _metrics.prometheus_text()
    headers = [
        (b"content-type", content_type.encode("ascii")),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
