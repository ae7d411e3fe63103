"""A process without OpenTelemetry: the first request looks for it, later ones do not.

Python does not remember a failed import, so looking for ``opentelemetry`` again on
each request searched ``sys.path`` every time (about 40 us of a 85 us ``echo``).
OpenTelemetry is installed here, so its absence is made by a finder in front of the
others that refuses it and counts the lookups.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

import pytest
from support.tools import echo

from trio_mcp import Server, _metrics, _otel
from trio_mcp.testing import McpTestClient


class _Absent:
    """A meta path finder for which ``opentelemetry`` is not installed."""

    def __init__(self) -> None:
        self.lookups = 0

    def find_spec(
        self,
        name: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if name.partition(".")[0] != "opentelemetry":
            return None
        self.lookups += 1
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)


@pytest.fixture
def absent(monkeypatch: pytest.MonkeyPatch) -> _Absent:
    """OpenTelemetry uninstalled for the test; the metrics as in a fresh process."""
    finder = _Absent()
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    for name in [m for m in sys.modules if m.partition(".")[0] == "opentelemetry"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(_metrics, "_prometheus", None)
    monkeypatch.setattr(_metrics, "_otel", None)
    monkeypatch.setattr(_metrics, "_otel_next_check", -math.inf)
    monkeypatch.setattr(_otel, "_trace_api", None)
    return finder


async def test_only_the_first_request_looks_for_opentelemetry(absent: _Absent) -> None:
    async with McpTestClient(Server("no-otel", "1", tools=[echo])) as client:
        assert "a" == (await client.call_tool("echo", {"text": "a"})).text
        first = absent.lookups
        for text in ("b", "c", "d"):
            assert text == (await client.call_tool("echo", {"text": text})).text
        await client.list_tools()

    assert 1 <= first == absent.lookups
