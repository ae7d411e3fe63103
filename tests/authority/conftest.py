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


_EXPORTER = InMemorySpanExporter()


def _install_exporter() -> None:
    # The global provider can be set once per process; share it if someone did.
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        current = TracerProvider()
        trace.set_tracer_provider(current)
    if not getattr(current, "_trio_mcp_test_exporter", False):
        current.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        current._trio_mcp_test_exporter = True  # type: ignore[attr-defined]


@pytest.fixture
def spans() -> InMemorySpanExporter:
    """The spans finished during this test (the global provider exports to it)."""
    _install_exporter()
    _EXPORTER.clear()
    return _EXPORTER
