"""Properties of the legacy edge over generated handshake-era messages.

Whatever a handshake-era client sends, the edge never fails: each request gets exactly
one reply under its own id, every message the server emits validates against the
negotiated revision's official schema (``LegacyPeer`` checks each), and the stream
keeps serving. The pure translations hold the same promises for any modern input.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legacy_server import ALL_CAPS, make_server
from support.legacy import LegacyPeer
from support.legacy_schema import REVISIONS, check_legacy

from trio_mcp._legacy import Session
from trio_mcp._legacy._shapes import legacy_result

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
json_values = st.recursive(
    json_scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
METHODS = [
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "server/discover",
    "subscriptions/listen",
    "tasks/get",
    "initialize",
    "no/such/method",
]
#: Tools that answer at once (``slow`` and ``forever`` would only make runs long).
NAMES = ["echo", "add", "summary", "maybe", "link", "fail", "ask_name", "ask_all", "x"]
URIS = ["note://static", "note://alpha", "note://gamma", "watch://counter", "x://y"]
params = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(NAMES) | st.text(max_size=4) | json_values,
        "arguments": st.dictionaries(
            st.sampled_from(["a", "b", "text", "found"]), json_values
        ),
        "uri": st.sampled_from(URIS) | json_values,
        "level": st.sampled_from(["debug", "error", "loud"]) | json_values,
        "cursor": json_values,
        "_meta": st.dictionaries(
            st.sampled_from(["progressToken", "io.modelcontextprotocol/logLevel", "k"]),
            json_values,
        ),
        "inputResponses": json_values,
        "requestState": json_values,
    },
)
requests = st.lists(st.tuples(st.sampled_from(METHODS), params), max_size=8)


async def _answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "elicitation/create":
        return {"action": "decline"}
    if method == "roots/list":
        return {"roots": []}
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "ok"},
        "model": "m",
    }


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    revision=st.sampled_from(REVISIONS),
    before=requests,
    after=requests,
    capabilities=st.sampled_from([{}, ALL_CAPS, {"sampling": {}}]),
)
async def test_every_request_gets_one_valid_reply_under_its_own_id(
    revision: str,
    before: list[tuple[str, Any]],
    after: list[tuple[str, Any]],
    capabilities: dict[str, Any],
) -> None:
    async with LegacyPeer(
        make_server(), revision=revision, capabilities=capabilities, answer=_answer
    ) as peer:
        sent: list[str] = []
        for method, body in before:
            if method != "initialize":  # its reply would change the revision
                sent.append(f"before-{len(sent)}")
                await peer.exchange(method, body, request_id=sent[-1])
        await peer.initialize()
        for method, body in after:
            sent.append(f"after-{len(sent)}")
            await peer.exchange(method, body, request_id=sent[-1])
        assert {} == await peer.request("ping")

    replies = Counter(m.get("id") for m in peer.messages if "method" not in m)
    assert dict.fromkeys(sent, 1) == {k: replies[k] for k in sent}


@given(raw=st.one_of(st.text(max_size=40), st.binary(max_size=40), json_values))
async def test_any_text_leaves_the_stream_serving(raw: Any) -> None:
    """Bytes that are not a request (responses, junk, batches) never stop the edge."""
    async with LegacyPeer(make_server()) as peer:
        await peer.initialize()
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        text = raw if isinstance(raw, str) else json.dumps(raw)
        if text.strip() and "\n" not in text:
            await peer.send_raw(text)
        assert {} == await peer.request("ping")


structured = st.one_of(st.none(), json_values)
schemas = st.one_of(
    st.none(),
    st.just({"type": "object", "properties": {"a": {"type": "integer"}}}),
    st.sampled_from([{"type": "integer"}, {"type": ["object", "null"]}, {"anyOf": []}]),
    st.dictionaries(st.sampled_from(["type", "$defs", "items", "x"]), json_values),
)


@given(revision=st.sampled_from(REVISIONS), value=structured, schema=schemas)
def test_a_call_result_always_fits_the_revision(
    revision: str, value: Any, schema: Any
) -> None:
    session = Session(revision, {}, {"name": "c", "version": "1"})
    modern = {
        "resultType": "complete",
        "content": [{"type": "text", "text": "t"}],
        "structuredContent": value,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
    }

    shaped = legacy_result(
        "tools/call", {"name": "t"}, dict(modern), session, lambda name: schema
    )

    check_legacy({"jsonrpc": "2.0", "id": 1, "result": shaped}, revision, "tools/call")
    assert "resultType" not in shaped
    assert "_meta" not in shaped


@given(revision=st.sampled_from(REVISIONS), schema=schemas)
def test_a_listed_tool_always_fits_the_revision(revision: str, schema: Any) -> None:
    session = Session(revision, {}, {"name": "c", "version": "1"})
    tool: dict[str, Any] = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"a": True, "b": False}},
    }
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(schema, dict) and (kind is None or isinstance(kind, str)):
        tool["outputSchema"] = schema
    modern: dict[str, Any] = {
        "tools": [tool],
        "ttlMs": 0,
        "cacheScope": "public",
        "resultType": "complete",
    }

    shaped = legacy_result("tools/list", {}, modern, session, lambda name: None)

    check_legacy({"jsonrpc": "2.0", "id": 1, "result": shaped}, revision, "tools/list")


@given(
    legacy_meta=json_values,
    capabilities=st.dictionaries(
        st.sampled_from(["elicitation", "sampling", "roots", "tasks"]), json_values
    ),
    level=st.none() | st.sampled_from(["debug", "info"]),
    revision=st.sampled_from(REVISIONS),
)
def test_the_modern_meta_is_always_the_sessions(
    legacy_meta: Any, capabilities: dict[str, Any], level: str | None, revision: str
) -> None:
    session = Session(revision, capabilities, {"name": "c", "version": "1"}, level)

    meta = session.modern_meta(legacy_meta)

    assert "2026-07-28" == meta["io.modelcontextprotocol/protocolVersion"]
    assert (
        session.modern_capabilities()
        == meta["io.modelcontextprotocol/clientCapabilities"]
    )
    assert {"name": "c", "version": "1"} == meta["io.modelcontextprotocol/clientInfo"]
    assert level == meta.get("io.modelcontextprotocol/logLevel")
    assert "tasks" not in meta["io.modelcontextprotocol/clientCapabilities"]
