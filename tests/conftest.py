"""Fixtures every test folder may use.

``sink`` (receipts) and ``spans`` (OpenTelemetry) are cheap; ``redis_server`` and
``replicas`` start real processes, and only when a test asks for them. The redis and
replica fixtures are defined (and checked by mypy) in support/scale_procs.py; the one
``conftest`` module mypy sees is this one (tests/auth/conftest.py is excluded).
"""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from support.receipts import Sink
from support.scale_procs import redis_server, replicas
from support.spans import span_exporter

__all__ = ["redis_server", "replicas", "sink", "spans"]


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
