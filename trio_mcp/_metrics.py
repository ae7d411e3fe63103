"""Request metrics: the OpenTelemetry MCP semantic conventions, and Prometheus text.

Every request the dispatcher answers is one observation of
``mcp.server.operation.duration`` (seconds) with ``mcp.method.name``, the tool or
prompt name (``gen_ai.tool.name``, ``gen_ai.prompt.name``) and, when it failed,
``error.type`` (the JSON-RPC error code, or ``tool_error`` for a tool result with
``isError``). Three counters go beside it: calls refused before their handler (a
missing capability or scope, a spent rate limit: a ``refused`` receipt), calls
answered "busy" (no room: also a ``refused`` receipt, counted here instead), and
calls refused by a rate limit. Two more count tasks whose process stopped (with a
shared store): ``trio_mcp.tasks.resumed`` (a durable task run again by another
process; ``reason`` ``released`` after a graceful stop, ``heartbeat`` after its
lease ran out) and ``trio_mcp.tasks.abandoned`` (one that failed for it;
``reason`` ``not_durable`` or ``max_attempts``).

Two sinks, each optional:
- OpenTelemetry: when ``opentelemetry-api`` is installed and the application has
  set a meter provider (its SDK and exporters), through the global meter.
- Prometheus: when an HTTP app serves ``metrics_path``, into a registry of
  ``prometheus-client`` that the app renders in the text format. Recording there
  directly is about four times cheaper than an OpenTelemetry SDK histogram read by
  the OpenTelemetry Prometheus exporter (docs/performance.md has the numbers), so
  that is the chosen exporter.

Without either, nothing is built on the request's path: ``start()`` returns None.
Labels are bounded, from the catalog and the protocol only: a method the server does
not serve and a tool or prompt name the catalog does not have are recorded as
``OTHER`` (``_OTHER``), so no request can add a series; resource URIs are never
labels.
"""

from __future__ import annotations

import contextvars
import math
import time
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = [
    "DURATION",
    "OTHER",
    "Measure",
    "count",
    "count_task",
    "enable_prometheus",
    "finish",
    "note_outcome",
    "prometheus_text",
    "start",
]

DURATION: Final = "mcp.server.operation.duration"
#: The one label value of every method and name a client made up (the
#: OpenTelemetry conventions' spelling for an unknown HTTP method).
OTHER: Final = "_OTHER"
#: The buckets the semantic conventions advise for MCP operation durations.
BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
Event = Literal["refused", "busy", "rate_limited"]
COUNTERS: Final[dict[Event, tuple[str, str]]] = {
    "refused": (
        "trio_mcp.server.refused",
        "Calls refused before their handler (capability, scope, rate limit)",
    ),
    "busy": ("trio_mcp.server.busy", "Calls answered 'server busy' (503 over HTTP)"),
    "rate_limited": ("trio_mcp.server.rate_limited", "Calls refused by a rate limit"),
}
TaskEvent = Literal["resumed", "abandoned"]
#: Why a task was resumed or abandoned: a bounded set of label values.
TaskReason = Literal["released", "heartbeat", "not_durable", "max_attempts"]
TASK_COUNTERS: Final[dict[TaskEvent, tuple[str, str]]] = {
    "resumed": (
        "trio_mcp.tasks.resumed",
        "Durable tasks run again by another process after theirs stopped",
    ),
    "abandoned": (
        "trio_mcp.tasks.abandoned",
        "Tasks failed because their process stopped (not durable, or out of attempts)",
    ),
}
_NAME_ATTRIBUTE: Final = {
    "tools/call": "gen_ai.tool.name",
    "prompts/get": "gen_ai.prompt.name",
}


@attrs.define(slots=True, eq=False)
class Measure:
    """One request being measured: when it started and how its call ended."""

    started: float
    method: str
    outcome: str | None = None


_measure: contextvars.ContextVar[Measure | None] = contextvars.ContextVar(
    "trio_mcp_measure", default=None
)


class _Prometheus:
    """The instruments in a private ``prometheus-client`` registry."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self.duration = Histogram(
            "mcp_server_operation_duration_seconds",
            "MCP request duration as observed on the server (mcp.server.operation.duration)",
            ["mcp_method_name", "gen_ai_tool_name", "gen_ai_prompt_name", "error_type"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.counters = {
            event: Counter(
                name.replace(".", "_"),
                text,
                ["mcp_method_name"],
                registry=self.registry,
            )
            for event, (name, text) in COUNTERS.items()
        }
        self.task_counters = {
            event: Counter(
                name.replace(".", "_"), text, ["reason"], registry=self.registry
            )
            for event, (name, text) in TASK_COUNTERS.items()
        }

    def count_task(self, event: TaskEvent, reason: TaskReason) -> None:
        self.task_counters[event].labels(reason).inc()

    def record(self, seconds: float, method: str, name: str | None, error: str) -> None:
        tool = name if method == "tools/call" and name else ""
        prompt = name if method == "prompts/get" and name else ""
        self.duration.labels(method, tool, prompt, error).observe(seconds)

    def count(self, event: Event, method: str) -> None:
        self.counters[event].labels(method).inc()


class _OpenTelemetry:
    """The instruments on the application's global meter provider."""

    def __init__(self) -> None:
        from opentelemetry import metrics

        from ._version import __version__

        meter = metrics.get_meter("trio_mcp", __version__)
        self.duration = meter.create_histogram(
            DURATION,
            unit="s",
            description="MCP request duration as observed on the server",
            explicit_bucket_boundaries_advisory=list(BUCKETS),
        )
        self.counters = {
            event: meter.create_counter(name, unit="{call}", description=text)
            for event, (name, text) in COUNTERS.items()
        }
        self.task_counters = {
            event: meter.create_counter(name, unit="{task}", description=text)
            for event, (name, text) in TASK_COUNTERS.items()
        }

    def count_task(self, event: TaskEvent, reason: TaskReason) -> None:
        self.task_counters[event].add(1, {"reason": reason})

    def record(self, seconds: float, method: str, name: str | None, error: str) -> None:
        attributes: dict[str, str] = {"mcp.method.name": method}
        if name is not None and method in _NAME_ATTRIBUTE:
            attributes[_NAME_ATTRIBUTE[method]] = name
        if error:
            attributes["error.type"] = error
        self.duration.record(seconds, attributes)

    def count(self, event: Event, method: str) -> None:
        self.counters[event].add(1, {"mcp.method.name": method})


_prometheus: _Prometheus | None = None
_otel: _OpenTelemetry | None = None
#: When (``time.monotonic()``) a request looks for a real meter provider next; never
#: again (infinity) in a process without OpenTelemetry.
_otel_next_check: float = -math.inf
_RECHECK: Final = 10.0


def enable_prometheus() -> None:
    """Record into the Prometheus registry from now on (an app serves it).

    Raises:
        ImportError: if prometheus-client is not installed (the ``metrics`` extra).
    """
    global _prometheus
    if _prometheus is None:
        _prometheus = _Prometheus()


def prometheus_text() -> tuple[bytes, str]:
    """The Prometheus registry in the text format, and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    enable_prometheus()
    assert _prometheus is not None
    registry: CollectorRegistry = _prometheus.registry
    return generate_latest(registry), CONTENT_TYPE_LATEST


def _global_otel() -> _OpenTelemetry | None:
    """The OpenTelemetry sink, once the application has set a meter provider.

    Looked up again every ten seconds until found: a provider may be set after the
    server starts, and the check must not cost every request.
    """
    global _otel, _otel_next_check
    if _otel is not None:
        return _otel
    now = time.monotonic()
    if now < _otel_next_check:
        return None
    _otel_next_check = now + _RECHECK
    try:
        from opentelemetry import metrics
    except ImportError:
        # Never installed in this process: a failed import is not cached by Python,
        # and looking again searched sys.path on every request (40 us).
        _otel_next_check = math.inf
        return None
    provider: Any = metrics.get_meter_provider()
    if type(provider).__name__ in ("_ProxyMeterProvider", "NoOpMeterProvider"):
        return None
    _otel = _OpenTelemetry()
    return _otel


def start(method: str) -> contextvars.Token[Measure | None] | None:
    """Begin measuring a request, if anything records; None otherwise."""
    if _prometheus is None and _global_otel() is None:
        return None
    return _measure.set(Measure(time.perf_counter(), method))


def note_outcome(outcome: str, *, busy: bool = False) -> None:
    """Record how the request's call ended (its receipt's outcome).

    A ``refused`` call is counted as ``busy`` when it was refused for want of room
    (no call slot or waiting place, no thread for a sync handler), else as
    ``refused``.
    """
    measure = _measure.get()
    if measure is not None:
        measure.outcome = outcome
        if outcome == "refused":
            _count("busy" if busy else "refused", measure.method)


def finish(
    token: contextvars.Token[Measure | None],
    name: str | None,
    error_code: int | None,
) -> None:
    """End the request's measure and record it.

    Args:
        token: What ``start()`` returned.
        name: The tool or prompt it named, if the catalog has it.
        error_code: The JSON-RPC error code of its reply, if it was an error.
    """
    measure = _measure.get()
    _measure.reset(token)
    if measure is None:
        return
    seconds = time.perf_counter() - measure.started
    method = measure.method
    if error_code is not None:
        error = str(error_code)
    elif method == "tools/call" and measure.outcome not in (None, "ok"):
        error = "tool_error"
    else:
        error = ""
    for sink in (_prometheus, _otel):
        if sink is not None:
            sink.record(seconds, method, name, error)


def count(event: Event, method: str) -> None:
    """Count a call answered without running: ``busy`` or ``rate_limited``."""
    _count(event, method)


def _count(event: Event, method: str) -> None:
    if _prometheus is None and _global_otel() is None:
        return
    for sink in (_prometheus, _otel):
        if sink is not None:
            sink.count(event, method)


def count_task(event: TaskEvent, reason: TaskReason) -> None:
    """Count a task resumed or abandoned because its process stopped."""
    if _prometheus is None and _global_otel() is None:
        return
    for sink in (_prometheus, _otel):
        if sink is not None:
            sink.count_task(event, reason)
