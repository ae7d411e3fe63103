"""OpenTelemetry (api.md "Authority and evidence"): one span per request.

The span continues ``_meta.traceparent``/``tracestate`` and names the method, the
tool and the outcome. OpenTelemetry is never imported by ``import trio_mcp``, and a
server runs unchanged where it is not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest
from opentelemetry import trace
from support.tools import add

from trio_mcp import Server, ToolError, tool
from trio_mcp.testing import McpTestClient, ProtocolError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        InMemorySpanExporter,
    )

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_SPAN}-01"


class Nope(ToolError):
    """A readable failure."""


@tool
def refuse(reason: str) -> int:
    """
    Fail.

    Args:
        reason: Why.
    """
    raise Nope(reason)


@tool
def crash() -> int:
    """Crash."""
    raise RuntimeError("span-must-not-see-this")


def server() -> Server:
    return Server("otel", "1", tools=[add, refuse, crash])


def _request_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.kind == trace.SpanKind.SERVER]


async def test_a_tool_call_runs_in_one_server_span(spans: InMemorySpanExporter) -> None:
    """api.md: each request runs in one span; ours names method, tool and outcome."""
    async with McpTestClient(server()) as client:
        await client.call_tool("add", {"a": 1, "b": 2})

    (span,) = _request_spans(spans)
    assert "tools/call add" == span.name
    assert span.attributes is not None
    assert "tools/call" == span.attributes["mcp.method"]
    assert "add" == span.attributes["mcp.tool.name"]
    assert "ok" == span.attributes["mcp.outcome"]
    assert "error.type" not in span.attributes


async def test_the_span_names_the_replica_and_worker(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: spans carry the serving process as ``service.instance.id``."""
    monkeypatch.setenv("TRIO_MCP_INSTANCE", "replica-a")
    async with McpTestClient(server()) as client:
        await client.call_tool("add", {"a": 1, "b": 2})

    (span,) = _request_spans(spans)
    assert span.attributes is not None
    assert f"replica-a:{os.getpid()}" == span.attributes["service.instance.id"]


async def test_the_span_continues_the_clients_trace(
    spans: InMemorySpanExporter,
) -> None:
    """api.md: the span continues _meta.traceparent (W3C trace context)."""
    async with McpTestClient(server()) as client:
        await client.call_tool(
            "add",
            {"a": 1, "b": 2},
            meta={"traceparent": TRACEPARENT, "tracestate": "k=v"},
        )

    (span,) = _request_spans(spans)
    assert int(TRACE_ID, 16) == span.context.trace_id
    assert span.parent is not None
    assert int(PARENT_SPAN, 16) == span.parent.span_id
    assert "v" == span.context.trace_state.get("k")


async def test_without_traceparent_the_span_starts_a_trace(
    spans: InMemorySpanExporter,
) -> None:
    """Our choice: a request without trace context is a new root span."""
    async with McpTestClient(server()) as client:
        await client.call_tool("add", {"a": 1, "b": 2})

    (span,) = _request_spans(spans)
    assert span.parent is None


async def test_an_error_span_has_the_error_type_and_no_message(
    spans: InMemorySpanExporter,
) -> None:
    """Our choice: error.type is the class; messages (which may hold secrets) stay out."""
    async with McpTestClient(server()) as client:
        await client.call_tool("refuse", {"reason": "span-secret-1"})
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("crash")

    assert -32603 == caught.value.code
    refused, crashed = _request_spans(spans)
    assert refused.attributes is not None
    assert crashed.attributes is not None
    assert ("error", "test_otel_spans.Nope") == (
        refused.attributes["mcp.outcome"],
        refused.attributes["error.type"],
    )
    assert ("internal", "builtins.RuntimeError") == (
        crashed.attributes["mcp.outcome"],
        crashed.attributes["error.type"],
    )
    assert trace.StatusCode.ERROR == crashed.status.status_code
    assert -32603 == crashed.attributes["rpc.jsonrpc.error_code"]
    everything = repr(
        [
            (s.attributes, s.events, s.status.description)
            for s in spans.get_finished_spans()
        ]
    )
    assert "span-secret-1" not in everything
    assert "span-must-not-see-this" not in everything


async def test_every_request_gets_a_span(spans: InMemorySpanExporter) -> None:
    """api.md: each request runs in one span, not only calls."""
    async with McpTestClient(server()) as client:
        await client.discover()
        await client.list_tools()

    assert ["server/discover", "tools/list"] == [s.name for s in _request_spans(spans)]


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert 0 == done.returncode, done.stderr
    return done.stdout.strip()


def test_importing_trio_mcp_does_not_load_opentelemetry() -> None:
    """style.md §2: import trio_mcp loads no opentelemetry."""
    loaded = _run("""
        import sys
        import trio_mcp
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
    """)

    assert "[]" == loaded


def test_a_server_without_opentelemetry_serves_calls() -> None:
    """api.md: spans only when opentelemetry-api is installed; otherwise nothing changes."""
    out = _run("""
        import sys, trio

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ImportError("blocked: " + name)
                return None

        sys.meta_path.insert(0, Block())
        from trio_mcp import Server, tool
        from trio_mcp.testing import McpTestClient

        @tool
        def add(a: int, b: int) -> int:
            '''
            Add.

            Args:
                a: First.
                b: Second.
            '''
            return a + b

        async def main():
            async with McpTestClient(Server("x", "1", tools=[add])) as client:
                result = await client.call_tool(
                    "add", {"a": 2, "b": 3},
                    meta={"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
                )
            print(result.structured, any(m.startswith("opentelemetry") for m in sys.modules))

        trio.run(main)
    """)

    assert "5 False" == out


@pytest.mark.parametrize("method", ["invented/x", "x" * 500, "initialize"])
async def test_a_method_the_server_does_not_serve_names_no_span(
    method: str, spans: InMemorySpanExporter
) -> None:
    """Issue 34: span names come only from the protocol, as metric labels do: a
    client's made-up method is ``_OTHER``, never a name of its choosing."""
    async with McpTestClient(server()) as client:
        with pytest.raises(ProtocolError):
            await client.request(method, {})

    (span,) = _request_spans(spans)
    assert "_OTHER" == span.name
    assert span.attributes is not None
    assert "_OTHER" == span.attributes["mcp.method"]
