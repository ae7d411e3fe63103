"""The client against real Hypercorn on 127.0.0.1: both eras, cancellation by closing
the stream, credentials that go to the target alone, and redirects never followed."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import trio
from support import serving, serving_app
from support.asgi import HeaderRecorder
from support.raw_server import answering
from support.upstream import cancelled_across, make_server, tour

from trio_mcp import McpError
from trio_mcp.client import Client


@pytest.mark.parametrize(
    ("legacy", "era", "revision"),
    [
        (False, "auto", "2026-07-28"),
        (True, "auto", "2026-07-28"),
        (True, "legacy", "2025-11-25"),
    ],
)
async def test_an_http_server_answers_every_kind_of_request(
    legacy: bool, era: str, revision: str
) -> None:
    async with (
        serving(make_server(legacy=legacy)) as url,
        Client(url + "/mcp", era=era) as client,  # type: ignore[arg-type]
    ):
        assert revision == client.server.revision
        await tour(client)


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_cancel_reaches_the_handler_over_http(tmp_path: Path, era: str) -> None:
    async with (
        serving(make_server(legacy=True)) as url,
        Client(url + "/mcp", era=era) as client,  # type: ignore[arg-type]
    ):
        await cancelled_across(client, tmp_path / "mark")
        assert "x" == (await client.call_tool("echo", {"text": "x"})).text


async def test_headers_and_a_fresh_token_go_with_every_request() -> None:
    tokens = itertools.count(1)

    async def auth() -> str:
        return f"token-{next(tokens)}"

    seen = HeaderRecorder(make_server().mount())
    async with (
        serving_app(seen) as url,
        Client(url + "/mcp", headers={"x-team": "blue"}, auth=auth) as client,
    ):
        await client.call_tool("echo", {"text": "hi"})
        await client.list_tools()

    assert [f"Bearer token-{n}" for n in (1, 2, 3)] == [
        h["authorization"] for _, h in seen.requests
    ]
    assert {"blue"} == {h["x-team"] for _, h in seen.requests}
    call = seen.requests[1][1]
    assert ("tools/call", "echo", "2026-07-28") == (
        call["mcp-method"],
        call["mcp-name"],
        call["mcp-protocol-version"],
    )


async def test_a_legacy_session_is_kept_and_deleted_on_exit() -> None:
    seen = HeaderRecorder(make_server(legacy=True).mount())
    async with (
        serving_app(seen) as url,
        Client(url + "/mcp", era="legacy", auth="secret") as client,
    ):
        await client.call_tool("echo", {"text": "hi"})

    methods = [m for m, _ in seen.requests]
    # initialize, notifications/initialized, tools/call; the session's GET stream
    # (opened in the background, maybe not yet when the block ends); DELETE last.
    assert (3, "DELETE") == (methods.count("POST"), methods[-1])
    assert set(methods) <= {"POST", "GET", "DELETE"}
    sessions = [h.get("mcp-session-id") for _, h in seen.requests]
    assert sessions[0] is None
    assert sessions[1] is not None
    assert {sessions[1]} == set(sessions[1:])
    assert {"Bearer secret"} == {h["authorization"] for _, h in seen.requests}


async def test_a_redirect_is_never_followed() -> None:
    redirect = (
        b"HTTP/1.1 307 Temporary Redirect\r\n"
        b"Location: http://127.0.0.1:9/elsewhere\r\n"
        b"Content-Length: 0\r\n\r\n"
    )
    async with answering(redirect) as port:
        with pytest.raises(McpError.Transport, match=r"307.*127\.0\.0\.1:9/elsewhere"):
            async with Client(f"http://127.0.0.1:{port}/mcp", auth="secret"):
                pass


async def test_nothing_listening_is_a_transport_error_naming_no_secret() -> None:
    with trio.socket.socket() as sock:
        await sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(McpError.Transport) as raised:
        async with Client(f"http://user:pw@127.0.0.1:{port}/mcp?token=abc"):
            pass
    assert f"http://127.0.0.1:{port}/mcp" in str(raised.value)
    assert "pw" not in str(raised.value)
    assert "abc" not in str(raised.value)
