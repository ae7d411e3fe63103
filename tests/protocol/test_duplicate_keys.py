"""A member name twice in one JSON object is a parse error on every transport.

RFC 8259 §4 leaves such objects to each parser: most keep the last value, some the
first, some refuse (the go-sdk advisory GHSA-q382-vc8q-7jhj). A gateway in front of
the server that reads ``"method": "tools/list"`` while the server reads
``"tools/call"`` would check one request and pass another. So the server refuses the
bytes (-32700, HTTP 400) and names the key, wherever it repeats: the envelope,
``params``, ``arguments`` or ``_meta``; in-process, over stdio, Streamable HTTP,
WebSocket, and for handshake-era clients over stdio and HTTP.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio
from support import META, serving, serving_websocket, wire
from support.legacy import LegacyPeer, initialize_request
from support.legacy_http import LegacyHttpPeer, session_headers
from support.mcp_http import headers_for
from support.stdio_probe import spawn
from support.tools import echo
from support.ws_peer import connected

from trio_mcp import Server
from trio_mcp._protocol._jsonrpc import Fault, parse_message
from trio_mcp.testing import McpTestClient

WAIT = 10.0


def _member(key: str, value: Any) -> str:
    return f"{json.dumps(key)}:{json.dumps(value)}"


def _object(*members: str) -> str:
    return "{" + ",".join(members) + "}"


def call_text(where: str | None, *, meta: dict[str, Any] = META) -> str:
    """A ``tools/call`` of ``echo`` whose object at ``where`` names a key twice
    (none when ``where`` is None), the first value the one a reader keeping the
    first would act on."""
    meta_members = [_member(k, v) for k, v in meta.items()]
    if where == "_meta":
        meta_members.append(_member("io.modelcontextprotocol/protocolVersion", "x"))
    arguments = [_member("text", "seen")]
    if where == "arguments":
        arguments.append(_member("text", "smuggled"))
    params = [
        '"_meta":' + _object(*meta_members),
        _member("name", "echo"),
        '"arguments":' + _object(*arguments),
    ]
    if where == "params":
        params.append(_member("name", "other"))
    envelope = [
        _member("jsonrpc", "2.0"),
        _member("id", 7),
        _member("method", "tools/call"),
        '"params":' + _object(*params),
    ]
    if where == "envelope":
        envelope.append(_member("method", "tools/list"))
    return _object(*envelope)


#: Where the key repeats, and the key the refusal names.
REPEATS = {
    "envelope": "method",
    "params": "name",
    "arguments": "text",
    "_meta": "io.modelcontextprotocol/protocolVersion",
}


def check_refusal(message: dict[str, Any], key: str) -> None:
    assert message.get("id") is None
    assert -32700 == message["error"]["code"]
    assert f"{key!r}" in message["error"]["message"]


@pytest.mark.parametrize("where", sorted(REPEATS))
def test_parse_message_refuses_a_repeated_key_and_names_it(where: str) -> None:
    fault = parse_message(call_text(where).encode())

    assert isinstance(fault, Fault)
    assert 400 == fault.http_status
    check_refusal(fault.to_message(), REPEATS[where])
    assert not isinstance(parse_message(call_text(None)), Fault)


def test_the_same_key_in_two_objects_is_no_repeat() -> None:
    text = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"id":2,"_meta":{"id":3}}}'
    assert not isinstance(parse_message(text), Fault)


def server(legacy: bool = False) -> Server:
    return Server("dup", "1", tools=[echo], legacy=legacy)


@pytest.mark.parametrize("where", sorted(REPEATS))
async def test_in_process(where: str) -> None:
    async with McpTestClient(server()) as client:
        [refused] = await client.send_raw(call_text(where))
        [served] = await client.send_raw(call_text(None))

    check_refusal(refused, REPEATS[where])
    assert "seen" == wire(served)["result"]["structuredContent"]


async def test_over_stdio() -> None:
    async with spawn() as peer:
        for where in sorted(REPEATS):
            await peer.write(call_text(where).encode() + b"\n")
        await peer.write(call_text(None).encode() + b"\n")
        await peer.reply(7)
        refused = [m for m in peer.messages if m.get("id") is None]

    assert len(REPEATS) == len(refused)
    for where, message in zip(sorted(REPEATS), refused, strict=True):
        check_refusal(message, REPEATS[where])


async def test_over_streamable_http() -> None:
    async with serving(server()) as base, httpx.AsyncClient() as client:
        answers = {}
        for where in (*sorted(REPEATS), None):
            with trio.fail_after(WAIT):
                answers[where] = await client.post(
                    base + "/mcp",
                    content=call_text(where).encode(),
                    headers=headers_for("tools/call", "echo"),
                )

    for where, key in REPEATS.items():
        assert 400 == answers[where].status_code
        check_refusal(answers[where].json(), key)
    assert 200 == answers[None].status_code


async def test_over_websocket() -> None:
    async with serving_websocket(server()) as port, connected(port) as peer:
        for where in sorted(REPEATS):
            await peer.ws.send_message(call_text(where))
        peer.methods[7] = "tools/call"
        await peer.ws.send_message(call_text(None))
        served = await peer.reply(7)
        refused = [m for m in peer.messages if m.get("id") is None]

    assert len(REPEATS) == len(refused)
    for where, message in zip(sorted(REPEATS), refused, strict=True):
        check_refusal(message, REPEATS[where])
    assert "seen" == served["result"]["structuredContent"]


def initialize_text() -> str:
    """A handshake-era ``initialize`` whose ``clientInfo`` names ``name`` twice."""
    text = json.dumps(initialize_request(1))
    return text.replace('"name": "x"', '"name": "x", "name": "admin"', 1)


async def test_handshake_era_over_stdio() -> None:
    async with LegacyPeer(server(legacy=True)) as peer:
        await peer.send_raw(initialize_text())
        await peer.initialize()  # a session opens with an initialize read once

    check_refusal(peer.messages[0], "name")


async def test_handshake_era_over_http() -> None:
    async with serving(server(legacy=True)) as base, httpx.AsyncClient() as client:
        url = base + "/mcp"
        with trio.fail_after(WAIT):
            opening = await client.post(
                url, content=initialize_text(), headers=session_headers(None)
            )
        peer = LegacyHttpPeer(client, url)
        await peer.initialize()
        in_session = await client.post(
            url, content=call_text("arguments"), headers=peer.headers()
        )

    assert 400 == opening.status_code
    assert "mcp-session-id" not in opening.headers
    check_refusal(opening.json(), "name")
    assert 400 == in_session.status_code
    check_refusal(in_session.json(), "text")
