"""The in-memory span exporter on the global tracer provider, shared by the tests."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def span_exporter() -> InMemorySpanExporter:
    """The one exporter on the global provider, installed on first use.

    The global provider can be set once per process, so the exporter lives on the
    provider itself: a second import of a test module (a mutation-testing run in the
    same process) finds it there instead of adding one that never sees a span.
    """
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        current = TracerProvider()
        trace.set_tracer_provider(current)
    exporter: InMemorySpanExporter | None = getattr(
        current, "_trio_mcp_test_exporter", None
    )
    if exporter is None:
        exporter = InMemorySpanExporter()
        current.add_span_processor(SimpleSpanProcessor(exporter))
        current._trio_mcp_test_exporter = exporter  # type: ignore[attr-defined]
    return exporter
