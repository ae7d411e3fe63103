"""The canary suite: one secret value, every path, nowhere to be found.

Each tool of ``canary_app`` receives (or makes, or defaults to) a canary made fresh
for each run as a ``Secret``, or uses the process-wide ``ENV_TOKEN``, and reveals it
into exception text, chained causes, log and progress notifications, internal
errors, timeouts, the app's logger, the root logger, a third-party logger with its
own stderr handler, the call's worker thread and a plain thread. The canary must
never appear in any byte a client receives (in-process, over Streamable HTTP and
over stdio), in ``requestState`` (decoded too), in any log line (DEBUG handlers on
the root and the third-party logger, every record attribute and traceback included;
stderr of the stdio subprocess), in any receipt, or in any span. api.md: a Secret
"never appears in schemas, results, errors, logs, receipts, reprs or cache keys".

Results (``content`` text and ``structuredContent``) carry revealed plaintext from
careless handlers too: the reply path masks them.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import canary_app
import httpx
import pytest
import support
from canary_app import CALLS, CANARY, make_server
from support import serving
from support.mcp_http import post

from trio_mcp.testing import McpTestClient, ProtocolError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        InMemorySpanExporter,
    )
    from support.receipts import Sink

META: dict[str, Any] = {
    **support.META,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/logLevel": "debug",
    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
}
OTHER_REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("server/discover", {}),
    ("tools/list", {}),
    ("prompts/list", {}),
    ("resources/templates/list", {}),
    ("prompts/get", {"name": "vault_prompt", "arguments": {"topic": "t"}}),
    ("resources/read", {"uri": "vault://k"}),
]


class RecordingClient(McpTestClient):
    """A test client that also keeps every message text the server emitted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.received: list[str] = []

    async def _on_message(self, text: str) -> None:
        self.received.append(text)
        await super()._on_message(text)


@pytest.fixture
def log_lines() -> Iterator[list[str]]:
    """Every log record, formatted with its traceback, and all its attributes.

    Kept by DEBUG handlers on the root logger and on the third-party logger, which
    does not propagate.
    """
    lines: list[str] = []
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(formatter.format(record) + repr(record.__dict__))

    root = logging.getLogger()
    handler, level = Keep(logging.DEBUG), root.level
    root.addHandler(handler)
    canary_app.vendor_log.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        canary_app.vendor_log.removeHandler(handler)
        root.setLevel(level)


def _call_params(tool: str, arguments: dict[str, object], index: int) -> dict[str, Any]:
    return {
        "name": tool,
        "arguments": arguments,
        "_meta": {**META, "progressToken": f"p-{index}"},
    }


def _assert_no_canary(where: str, texts: list[str], canary: str = CANARY) -> None:
    leaks = [text for text in texts if canary in text]
    assert [] == leaks, f"the canary leaked into {where}"


def _decoded_states(texts: list[str]) -> list[str]:
    """Every ``requestState`` in the messages, and each base64url part decoded."""
    found: list[str] = []
    for text in texts:
        result = json.loads(text).get("result")
        state = result.get("requestState") if isinstance(result, dict) else None
        if not isinstance(state, str):
            continue
        found.append(state)
        for part in state.split("."):
            try:
                # Sealed parts are binary (AES-GCM): decoded leniently, so a
                # plaintext canary inside would still show.
                found.append(
                    base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode(
                        errors="replace"
                    )
                )
            except (binascii.Error, UnicodeDecodeError):
                continue
    return found


#: Evidence that each logging path really ran (masked): the suite cannot pass
#: because a log line was never written.
LOGGED = [
    "server-side log of **********",
    "RuntimeError: crash with **********",
    "app logger: ********** and **********",
    "root logger: **********",
    "root logger, env: **********",
    "GET /v1?key=**********&env=**********",
    "ValueError: vendor failed for **********",
    "worker thread: **********",
    "plain thread: ********** **********",
    "plain thread, vendor: **********",
    "asking before using **********",
]


def _assert_logged(text: str) -> None:
    missing = [line for line in LOGGED if line not in text]
    assert [] == missing, "a logging path did not run"


async def test_the_handlers_really_hold_the_canary() -> None:
    """Guards the suite against passing vacuously: the plaintext reaches the handler."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("holds", {"token": CANARY})

    assert result.structured is True


async def test_the_canary_never_leaves_in_process(
    sink: Sink, spans: InMemorySpanExporter, log_lines: list[str]
) -> None:
    """Every path through McpTestClient: client bytes, logs, receipts and spans."""
    async with RecordingClient(make_server(sink)) as client:
        for index, (tool, arguments) in enumerate(CALLS):
            await client.exchange("tools/call", _call_params(tool, arguments, index))
        for method, params in OTHER_REQUESTS:
            await client.exchange(method, {**params, "_meta": META})
        # The handlers did run: results, errors and notifications came back.
        structured = await client.call_tool(
            "echo_credential", {"user": "u", "token": CANARY}
        )
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("internal_error", {"token": CANARY})

    assert -32603 == caught.value.code
    states = _decoded_states(client.received)
    assert {"user": "u", "token": "**********"} == structured.structured
    assert len(CALLS) + 2 == len([r for r in sink.receipts if r.kind == "tool"])
    assert any('"notifications/progress"' in text for text in client.received)
    assert any('"notifications/message"' in text for text in client.received)
    assert any("env token is **********" in text for text in client.received)
    assert any("env token ********** refused" in text for text in client.received)
    assert any("your token is **********" in text for text in client.received)
    assert any('"env":"**********"' in text for text in client.received)
    assert len(states) >= 2
    _assert_logged("\n".join(log_lines))
    _assert_no_canary("the client's bytes", client.received)
    _assert_no_canary("a requestState", states)
    _assert_no_canary("the log", log_lines)
    _assert_no_canary("a receipt", [repr(r) for r in sink.receipts])
    _assert_no_canary(
        "a receipt record", [json.dumps(r.as_record()) for r in sink.receipts]
    )
    _assert_no_canary("a span", [span.to_json() for span in spans.get_finished_spans()])


def test_the_logging_outside_any_call_is_masked(log_lines: list[str]) -> None:
    """A process-wide Secret is masked with no call running, in any logger."""
    logging.getLogger("canary_app").warning("boot: %s", canary_app.ENV_TOKEN.reveal())
    canary_app.vendor_log.warning("vendor boot: %s", canary_app.ENV_TOKEN.reveal())

    assert any("boot: **********" in line for line in log_lines)
    assert any("vendor boot: **********" in line for line in log_lines)
    _assert_no_canary("the log", log_lines)


async def _post_all(
    server_calls: list[tuple[str, dict[str, object]]],
    requests_extra: list[tuple[str, dict[str, Any]]],
    sink: Sink | None = None,
) -> list[str]:
    """POST each call (and the extra requests) to a served canary app; every reply."""
    received: list[str] = []
    server = make_server(sink)
    async with serving(server) as base, httpx.AsyncClient(timeout=30) as http:
        requests = [
            ("tools/call", _call_params(t, a, i))
            for i, (t, a) in enumerate(server_calls)
        ]
        requests += requests_extra
        for index, (method, params) in enumerate(requests):
            name = params.get("name", params.get("uri"))
            response = await post(
                http, base, method, params, name=name, request_id=index, wait=30
            )
            received.append(repr(response.headers) + response.text)
    return received


async def test_the_canary_never_leaves_over_http(
    log_lines: list[str], sink: Sink
) -> None:
    """Every path over Streamable HTTP on Hypercorn (JSON and SSE bodies, headers)."""
    other = [(m, {**p, "_meta": META}) for m, p in OTHER_REQUESTS]
    received = await _post_all(CALLS, other, sink)

    assert len(CALLS) + len(other) == len(received)
    assert any("your token is **********" in text for text in received)
    _assert_logged("\n".join(log_lines))
    assert len(CALLS) == len([r for r in sink.receipts if r.kind == "tool"])
    _assert_no_canary("an HTTP response", received)
    _assert_no_canary("the log", log_lines)
    _assert_no_canary("a receipt", [repr(r) for r in sink.receipts])


def test_the_canary_never_leaves_over_stdio() -> None:
    """Every path over stdio in a subprocess: stdout (protocol) and stderr (DEBUG logs)."""
    canary = f"{CANARY}-stdio"
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": _call_params(t, _with(a, canary), i),
            }
        )
        for i, (t, a) in enumerate(CALLS)
    ]
    lines += [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 100 + i,
                "method": m,
                "params": {**p, "_meta": META},
            }
        )
        for i, (m, p) in enumerate(OTHER_REQUESTS)
    ]
    done = subprocess.run(
        [sys.executable, str(Path(canary_app.__file__))],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "TRIO_MCP_CANARY": canary,
            "TRIO_MCP_CANARY_ENV": f"{canary}-from-env",
        },
        check=False,
    )

    assert 0 == done.returncode, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) <= len(replies)
    assert "starting with **********" in done.stderr
    assert "your token is **********" in done.stdout
    _assert_logged(done.stderr)
    assert canary not in done.stdout
    assert canary not in done.stderr


def _with(arguments: dict[str, object], canary: str) -> dict[str, object]:
    return {k: canary if v == CANARY else v for k, v in arguments.items()}
