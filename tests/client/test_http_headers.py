"""What the client mirrors into Streamable HTTP headers (revision 2026-07-28,
"Streamable HTTP"), as a trio_mcp server checks them: ``Mcp-Param-*`` for
``x-mcp-header`` parameters (learnt from ``tools/list``, or after a -32020),
``Mcp-Name`` in the base64 form when it is not plain ASCII; and a handshake-era
session that expired is opened again."""

from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st
from support import serving_app
from support.asgi import HeaderRecorder
from support.tools import locate
from support.upstream import make_server

from trio_mcp import Server, resource
from trio_mcp._protocol._headers import decode_header_value
from trio_mcp.client import Client
from trio_mcp.client._httplink import header_value


@resource("doc://{name}")
def doc(name: str) -> str:
    """
    A document.

    Args:
        name: Its name.
    """
    return f"doc {name}"


async def test_param_headers_are_learnt_from_a_refusal_and_sent() -> None:
    seen = HeaderRecorder(Server("headers", "1.0", tools=[locate]).mount())
    async with serving_app(seen) as url, Client(url + "/mcp") as client:
        first = await client.call_tool("locate", {"region": "eu", "shard": 3})
        second = await client.call_tool("locate", {"region": "us", "fast": True})

    assert ("eu/3/False", "us/None/True") == (first.text, second.text)
    last = seen.requests[-1][1]
    assert ("us", "true") == (last["mcp-param-region"], last["mcp-param-fast"])
    assert "mcp-param-shard" not in last


async def test_param_headers_are_sent_at_once_after_a_listing() -> None:
    seen = HeaderRecorder(Server("headers", "1.0", tools=[locate]).mount())
    async with serving_app(seen) as url, Client(url + "/mcp") as client:
        await client.list_tools()
        before = len(seen.requests)
        routed = await client.call_tool("locate", {"region": "zürich", "shard": 7})

    assert "zürich/7/False" == routed.text
    assert before + 1 == len(seen.requests), "no refusal, no second try"


async def test_a_uri_that_is_not_ascii_travels_in_the_base64_form() -> None:
    seen = HeaderRecorder(Server("docs", "1.0", resources=[doc]).mount())
    async with serving_app(seen) as url, Client(url + "/mcp") as client:
        read = await client.read_resource("doc://crème brûlée")

    assert "doc crème brûlée" == read.text
    assert seen.requests[-1][1]["mcp-name"].startswith("=?base64?")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_every_header_value_decodes_to_what_was_sent(value: str) -> None:
    encoded = header_value(value)

    assert encoded.isascii()
    assert "\r" not in encoded
    assert "\n" not in encoded
    assert value == decode_header_value(encoded)


async def test_an_expired_session_is_opened_again() -> None:
    seen = HeaderRecorder(make_server(legacy=True).mount())
    async with serving_app(seen) as url, Client(url + "/mcp", era="legacy") as client:
        await client.call_tool("echo", {"text": "one"})
        sid = next(
            h["mcp-session-id"] for m, h in seen.requests if "mcp-session-id" in h
        )
        async with httpx.AsyncClient() as other:
            ended = await other.delete(
                url + "/mcp",
                headers={"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"},
            )
        assert 200 <= ended.status_code < 300
        again = await client.call_tool("echo", {"text": "two"})

    assert "two" == again.text
    sessions = {h.get("mcp-session-id") for _, h in seen.requests} - {None}
    assert 2 == len(sessions)


async def test_a_modern_server_needs_no_session_and_keeps_none() -> None:
    seen = HeaderRecorder(make_server().mount())
    async with serving_app(seen) as url, Client(url + "/mcp") as client:
        await client.call_tool("echo", {"text": "x"})

    assert all("mcp-session-id" not in h for _, h in seen.requests)
    assert {"POST"} == {m for m, _ in seen.requests}
