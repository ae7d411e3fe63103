"""Helpers for the authority tests: a receipt sink and an in-memory span exporter."""

from __future__ import annotations

import attrs
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.spans import span_exporter

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


@pytest.fixture
def spans() -> InMemorySpanExporter:
    """The spans finished during this test (the global provider exports to it)."""
    exporter = span_exporter()
    exporter.clear()
    return exporter
