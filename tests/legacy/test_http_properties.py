"""Properties of handshake-era HTTP traffic: session ids, headers and bodies.

The app is driven in process (``AsgiLegacyClient``), so Hypothesis can try many
sequences: whatever a client sends, every request of a session gets exactly one
reply under its own id (JSON, or the last event of its stream, after any
server-to-client requests it answered), valid for the session's revision; no answer
is a 5xx; a made-up or mangled session id finds nothing (404, or 400 for one HTTP
cannot carry); and a flood of ``initialize`` never holds more than
``Limits.max_sessions``.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legacy_server import ALL_CAPS, make_server
from support.legacy_asgi import AsgiLegacyClient
from support.legacy_schema import REVISIONS
from test_properties import METHODS, json_values, params

from trio_mcp import Limits
from trio_mcp._legacy._sessions import MemorySessions

requests = st.lists(st.tuples(st.sampled_from(METHODS), params), max_size=6)
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(
    revision=st.sampled_from(REVISIONS),
    sequence=requests,
    capabilities=st.sampled_from([{}, ALL_CAPS, {"sampling": {}}]),
)
async def test_every_request_of_a_session_gets_one_valid_reply(
    revision: str, sequence: list[tuple[str, Any]], capabilities: dict[str, Any]
) -> None:
    client = AsgiLegacyClient(make_server().mount(), revision)
    init = await client.initialize(revision, capabilities)
    assert 200 == init.status
    for number, (method, body) in enumerate(sequence):
        answered = await client.request(f"r{number}", method, body)
        replies = [m for m in answered.messages if "method" not in m]
        assert answered.status in (200, 400), answered
        assert [f"r{number}"] == [r.get("id") for r in replies], answered
        assert replies[-1] is answered.messages[-1]  # the reply ends the stream
    assert 200 == (await client.request("last", "ping", None)).status


@SETTINGS
@given(
    sid=st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF)),
    version=st.none()
    | st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=12)
    | st.sampled_from(REVISIONS),
    body=json_values | st.binary(max_size=30),
    method=st.sampled_from(["POST", "GET", "DELETE", "PUT"]),
)
async def test_a_made_up_session_finds_nothing(
    sid: str, version: str | None, body: Any, method: str
) -> None:
    app = make_server().mount()
    client = AsgiLegacyClient(app)
    await client.initialize("2025-11-25", {})
    assert client.sid is not None
    if sid == client.sid:
        return
    headers = client.headers()
    headers["mcp-session-id"] = sid
    if version is None:
        headers.pop("mcp-protocol-version")
    else:
        headers["mcp-protocol-version"] = version
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()

    answered = await client.send(raw, headers, method=method)

    assert answered.status in (400, 404, 406, 415), answered
    for message in answered.messages:
        assert "result" not in message


@SETTINGS
@given(body=json_values | st.binary(max_size=40), version=st.sampled_from(REVISIONS))
async def test_any_body_in_a_session_is_answered_without_a_server_error(
    body: Any, version: str
) -> None:
    client = AsgiLegacyClient(make_server().mount(), version)
    await client.initialize(version, ALL_CAPS)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()

    answered = await client.send(raw)

    assert answered.status in (200, 202, 400), answered
    assert 200 == (await client.request("after", "ping", None)).status


@settings(max_examples=10, deadline=None)
@given(count=st.integers(min_value=1, max_value=40), bound=st.integers(1, 8))
async def test_a_flood_of_initialize_holds_at_most_max_sessions(
    count: int, bound: int
) -> None:
    server = make_server()
    app = server.mount(limits=Limits(max_sessions=bound))
    clients = [AsgiLegacyClient(app) for _ in range(count)]
    for client in clients:
        assert 200 == (await client.initialize("2025-11-25", {})).status

    table = server._hub.sessions if server._hub is not None else None
    assert isinstance(table, MemorySessions)
    assert min(count, bound) == len(table)
    live = [(await c.request(1, "ping", None)).status for c in clients]
    assert [404] * (count - min(count, bound)) + [200] * min(count, bound) == live
