"""Streamable HTTP paths the main HTTP tests leave out: header checks, hosts and
origins at their edges, a client leaving mid-body, and the ASGI lifespan.

Header checks run on Hypercorn (httpx as the client). A request without a Host
header, a body cut off by a disconnect and the lifespan protocol cannot be produced
through an HTTP/1.1 client, so those tests play the ASGI server themselves and call
the app ``server.mount()`` returns with real ASGI messages.
"""

from __future__ import annotations

import base64
import json
from collections.abc import MutableMapping
from typing import Any

import httpx
import pytest
import trio
from support import META, serving
from support.asgi import http_scope
from support.mcp_http import call_tool, checked, headers_for

from trio_mcp import Limits, Server, tool

ran: list[str] = []


@tool
def echo(text: str) -> str:
    """
    Return the text unchanged.

    Args:
        text: What to return.
    """
    ran.append(text)
    return text


def make_server() -> Server:
    return Server("edges", "1.0", tools=[echo])


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    ran.clear()


# -- mirrored headers (revision 2026-07-28, Streamable HTTP headers) ------------------


async def _call_echo(headers: dict[str, str], meta: dict[str, Any] = META) -> Any:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        with trio.fail_after(10):
            response = await client.post(
                url + "/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {
                        "_meta": meta,
                        "name": "echo",
                        "arguments": {"text": "hi"},
                    },
                },
                headers=headers,
            )
    return response


@pytest.mark.parametrize(
    ("name_header", "message"),
    [
        (None, "header mismatch: the Mcp-Name header is required for tools/call"),
        (
            "=?base64?not base64!?=",
            "header mismatch: Mcp-Name has an invalid base64 value",
        ),
        ("=?base64?/w==?=", "header mismatch: Mcp-Name has an invalid base64 value"),
        ("other", "header mismatch: Mcp-Name does not match params.name"),
    ],
    ids=["missing", "not-base64", "not-utf8", "another-name"],
)
async def test_a_missing_or_bad_mcp_name_is_400_with_32020(
    name_header: str | None, message: str
) -> None:
    headers = headers_for("tools/call")
    if name_header is not None:
        headers["mcp-name"] = name_header

    response = await _call_echo(headers)

    assert 400 == response.status_code
    assert {"code": -32020, "message": message} == checked(response, None)["error"]
    assert [] == ran


async def test_mcp_name_in_base64_is_accepted() -> None:
    encoded = base64.b64encode(b"echo").decode()
    response = await _call_echo(headers_for("tools/call", f"=?base64?{encoded}?="))

    assert 200 == response.status_code
    assert "hi" == checked(response, "tools/call")["result"]["structuredContent"]


async def test_a_version_header_disagreeing_with_meta_is_400_with_32020() -> None:
    """The header mirrors _meta's protocolVersion; a supported but different value
    in either place is a mismatch, not a pick of one."""
    headers = headers_for("tools/call", "echo")
    headers["mcp-protocol-version"] = "2025-11-25"

    response = await _call_echo(headers)

    assert 400 == response.status_code
    assert {
        "code": -32020,
        "message": "header mismatch: MCP-Protocol-Version does not match _meta "
        "protocolVersion",
    } == checked(response, None)["error"]
    assert [] == ran


# -- origins ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin", ["null", "file://", "https://evil.example", "http://localhost.evil"]
)
async def test_an_opaque_or_foreign_origin_is_403(origin: str) -> None:
    """DNS rebinding protection: 'null' (a sandboxed page, a file) is not loopback."""
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await call_tool(client, url, "echo", {"text": "x"}, origin=origin)

    assert 403 == response.status_code
    assert [] == ran


# -- the app driven as an ASGI server would ------------------------------------------


class Asgi:
    """One HTTP request through an ASGI app: what it sent back, in order."""

    def __init__(self, headers: dict[str, str], chunks: list[bytes], *, end: bool):
        self.scope = http_scope([(k.encode(), v.encode()) for k, v in headers.items()])
        self._incoming: list[dict[str, Any]] = [
            {"type": "http.request", "body": chunk, "more_body": True}
            for chunk in chunks
        ]
        if end:
            self._incoming[-1]["more_body"] = False
        self._end = end
        self.sent: list[MutableMapping[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        if self._incoming:
            return self._incoming.pop(0)
        if self._end:
            await trio.sleep_forever()  # the client waits for its reply
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        await trio.lowlevel.checkpoint()
        self.sent.append(message)

    @property
    def status(self) -> int:
        status: int = self.sent[0]["status"]
        return status

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent[1:])


def _echo_body(text: str = "hi") -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"_meta": META, "name": "echo", "arguments": {"text": text}},
        }
    ).encode()


async def test_a_request_without_a_host_header_is_421() -> None:
    """Our choice: no Host cannot be checked against the allowed hosts; refuse it."""
    headers = {"content-type": "application/json", **headers_for("tools/call", "echo")}
    call = Asgi(headers, [_echo_body()], end=True)

    with trio.fail_after(10):
        await make_server().mount()(call.scope, call.receive, call.send)

    assert 421 == call.status
    assert {
        "code": -32600,
        "message": "misdirected request: this Host is not served here",
    } == json.loads(call.body)["error"]
    assert [] == ran


async def test_the_same_request_with_a_loopback_host_is_served() -> None:
    """The counterpart of the test above: only the Host header differs."""
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        **headers_for("tools/call", "echo"),
    }
    call = Asgi(headers, [_echo_body()], end=True)

    with trio.fail_after(10):
        await make_server().mount()(call.scope, call.receive, call.send)

    assert 200 == call.status
    assert "hi" == json.loads(call.body)["result"]["structuredContent"]


async def test_a_client_leaving_mid_body_gets_nothing_and_runs_nothing() -> None:
    """The body never ended: there is no message to answer, and no handler runs."""
    body = _echo_body()
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        **headers_for("tools/call", "echo"),
    }
    call = Asgi(headers, [body[:20], body[20:40]], end=False)

    with trio.fail_after(10):
        await make_server().mount()(call.scope, call.receive, call.send)

    assert [] == call.sent
    assert [] == ran


async def test_lifespan_startup_and_shutdown_complete() -> None:
    """ASGI lifespan: both phases are acknowledged and the app then returns."""
    incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        return incoming.pop(0)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    app = make_server().mount()
    with trio.fail_after(10):
        await app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)

    assert [
        {"type": "lifespan.startup.complete"},
        {"type": "lifespan.shutdown.complete"},
    ] == sent


async def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    """Content-Length says too much: 413 at once, without waiting for the body."""
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "content-length": "5000",
        **headers_for("tools/call", "echo"),
    }
    call = Asgi(headers, [b"{"], end=False)
    call._end = True  # the client then waits: only an early refusal answers it

    with trio.fail_after(10):
        await make_server().mount(limits=Limits(max_message_bytes=1000))(
            call.scope, call.receive, call.send
        )

    assert 413 == call.status
    assert -32600 == json.loads(call.body)["error"]["code"]


async def test_asgi_messages_may_leave_out_body_and_more_body() -> None:
    """ASGI: ``body`` defaults to b"" and ``more_body`` to False."""
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        **headers_for("tools/call", "echo"),
    }
    call = Asgi(headers, [_echo_body(), b""], end=True)
    call._incoming[0]["more_body"] = True
    del call._incoming[1]["body"]
    del call._incoming[1]["more_body"]

    with trio.fail_after(10):
        await make_server().mount()(call.scope, call.receive, call.send)

    assert 200 == call.status
    assert "hi" == json.loads(call.body)["result"]["structuredContent"]
