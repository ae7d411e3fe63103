"""One OpenTelemetry span per request, when ``opentelemetry-api`` is installed.

The span continues the W3C trace context the client put in ``_meta.traceparent``
and ``_meta.tracestate``. Its attributes name the method, the tool, prompt or
resource, the outcome and the error type: never argument values, results or
exception messages, so a secret cannot reach a span.

OpenTelemetry is imported inside functions, on the first request, and only if it
is installed: ``import trio_mcp`` never loads it, and without it every function
here is a no-op. ``parse_traceparent`` needs no OpenTelemetry at all.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ._instance import instance_id
from ._protocol import _wire as wire
from ._version import __version__

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["annotate", "parse_traceparent", "request_span", "spanning"]

_TRACEPARENT = re.compile(
    r"(?P<version>[0-9a-f]{2})-(?P<trace_id>[0-9a-f]{32})-(?P<span_id>[0-9a-f]{16})"
    r"-(?P<flags>[0-9a-f]{2})(?:-.*)?"
)

#: The span of the request being served, for ``annotate``.
_span: contextvars.ContextVar[Span | None] = contextvars.ContextVar(
    "trio_mcp_request_span", default=None
)
#: None until the first request looks; then ``opentelemetry.trace``, or False when
#: opentelemetry-api is not installed.
_trace_api: Any = None
#: Whether the environment names a tracer provider (``OTEL_PYTHON_TRACER_PROVIDER``),
#: read once with the import above.
_provider_in_env = False
_UNKNOWN = object()


def parse_traceparent(meta: Mapping[str, object] | None) -> str | None:
    """Return the trace id of ``_meta.traceparent`` (32 hex digits), if valid.

    A W3C ``traceparent`` is ``version-traceid-spanid-flags``; version ``ff`` and
    all-zero ids are invalid, and so is anything after the flags for version 00.
    """
    value = meta.get(wire.META_TRACEPARENT) if meta is not None else None
    if not isinstance(value, str):
        return None
    match = _TRACEPARENT.fullmatch(value.strip())
    if match is None:
        return None
    version, trace_id = match["version"], match["trace_id"]
    if version == "ff" or trace_id == "0" * 32 or match["span_id"] == "0" * 16:
        return None
    if version == "00" and len(value.strip()) != 55:
        return None
    return trace_id


def _trace() -> Any:
    """``opentelemetry.trace``, imported on first use (it is optional), or None."""
    global _trace_api, _provider_in_env
    if _trace_api is None:
        try:
            from opentelemetry import trace
        except ImportError:
            _trace_api = False
        else:
            _provider_in_env = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
            _trace_api = trace
    return _trace_api or None


def _no_provider(trace: Any) -> bool:
    """Whether no tracer provider is set, so every span would be a no-op.

    ``trace.get_tracer_provider()`` looks ``OTEL_PYTHON_TRACER_PROVIDER`` up in
    ``os.environ`` on every call until a provider is set (a KeyError raised and
    caught each time). Its module global answers first when it is there as
    opentelemetry-api defines it; the environment was read once. Otherwise the
    public call decides.
    """
    if getattr(trace, "_TRACER_PROVIDER", _UNKNOWN) is None and not _provider_in_env:
        return True
    return isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


_NO_SPAN: contextlib.AbstractContextManager[None] = contextlib.nullcontext()


def request_span(
    method: str, meta: Mapping[str, object] | None, request_id: str | int | None
) -> contextlib.AbstractContextManager[None]:
    """Run the block in a server span for one request, continuing the client's trace.

    Exceptions pass through unrecorded (their messages could carry secrets); the
    dispatcher reports outcomes with ``annotate``. Without OpenTelemetry, or with
    no tracer provider configured (every span would be a no-op), this is a shared
    null context: nothing is built on the request's path.
    """
    trace = _trace()
    if trace is None or _no_provider(trace):
        return _NO_SPAN
    return _server_span(method, meta, request_id)


@contextlib.contextmanager
def _server_span(
    method: str, meta: Mapping[str, object] | None, request_id: str | int | None
) -> Iterator[None]:
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import (
        TraceContextTextMapPropagator,
    )

    carrier: dict[str, str] = {}
    for key in (wire.META_TRACEPARENT, wire.META_TRACESTATE):
        value = meta.get(key) if meta is not None else None
        if isinstance(value, str):
            carrier[key] = value
    parent = TraceContextTextMapPropagator().extract(carrier) if carrier else None
    attributes: dict[str, str] = {
        "mcp.method": method,
        "rpc.system": "jsonrpc",
        "service.instance.id": instance_id(),
    }
    if request_id is not None:
        attributes["jsonrpc.request.id"] = str(request_id)
    tracer = trace.get_tracer("trio_mcp", __version__)
    with tracer.start_as_current_span(
        method,
        context=parent,
        kind=trace.SpanKind.SERVER,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        token = _span.set(span)
        try:
            yield
        finally:
            _span.reset(token)


def spanning() -> bool:
    """Whether the current request has a span (callers skip building attributes)."""
    return _span.get() is not None


def annotate(
    attributes: Mapping[str, str | int | None] | None = None,
    *,
    name: str | None = None,
    error: str | None = None,
) -> None:
    """Set attributes on the current request's span, if there is one.

    Args:
        attributes: Values to set (``{"mcp.outcome": "ok"}``); ``None`` is skipped.
        name: A new span name (``"tools/call close_ticket"``).
        error: An error type; sets ``error.type`` and the span's status to error.
    """
    span = _span.get()
    if span is None:
        return
    if name is not None:
        span.update_name(name)
    for key, value in (attributes or {}).items():
        if value is not None:
            span.set_attribute(key, value)
    if error is not None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("error.type", error)
        span.set_status(Status(StatusCode.ERROR, error))
