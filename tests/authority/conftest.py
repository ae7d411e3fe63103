"""Helpers for the authority tests: a receipt sink and an in-memory span exporter."""

from __future__ import annotations

import attrs
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from trio_mcp import Receipt


@attrs.define
class Sink:
    """A ``receipts=`` callable that keeps every receipt, in order."""

    receipts: list[Receipt] = attrs.field(factory=list)

    def __call__(self, receipt: Receipt) -> None:
        self.receipts.append(receipt)

    @property
    def only(self) -> Receipt:
        """The one receipt received; fails the test if there is not exactly one."""
        assert 1 == len(self.receipts), self.receipts
        return self.receipts[0]


@pytest.fixture
def sink() -> Sink:
    """A fresh receipt sink."""
    return Sink()


def _exporter() -> InMemorySpanExporter:
    """The one exporter on the global provider, installed on first use.

    The global provider can be set once per process, so the exporter lives on the
    provider itself: a second import of this module (a mutation-testing run in the
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


@pytest.fixture
def spans() -> InMemorySpanExporter:
    """The spans finished during this test (the global provider exports to it)."""
    exporter = _exporter()
    exporter.clear()
    return exporter
