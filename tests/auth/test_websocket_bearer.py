"""``serve_websocket(auth=BearerAuth(...))`` with a real authorization server (issue 34).

The token rides on the upgrade request's ``Authorization`` header: refused, the
handshake is a 401 with ``WWW-Authenticate``; admitted, the connection's calls run
with its principal and grants, each call checks the token again (a revoked token
stops working on a connection already open), step-up refusals are the same as over
HTTP, and the connection is closed (1008) when its token expires.
"""

from __future__ import annotations

import time

import pytest
import trio
from oauth_provider import OPAQUE_AUDIENCE, RESOURCE_SERVER, Provider
from support import serving_websocket
from support.ws_peer import connected, handshake_answer
from test_oauth_http import (
    METADATA_URL,
    SCOPES,
    claims_for,
    make_auth,
    make_server,
    mint,
)
from trio_websocket import ConnectionClosed

from trio_mcp import InsecureBinding, Receipt
from trio_mcp.auth import BearerAuth, Introspection


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_without_auth_a_bind_beyond_loopback_is_refused() -> None:
    with pytest.raises(InsecureBinding):
        await make_server().serve_websocket("0.0.0.0", 0)


async def test_a_handshake_without_a_good_token_is_a_401(provider: Provider) -> None:
    async with serving_websocket(make_server(), auth=make_auth(provider)) as port:
        missing = await handshake_answer(port)
        forged = await handshake_answer(port, headers=bearer("not.a.jwt"))

    assert 401 == missing[0]
    assert f'resource_metadata="{METADATA_URL}"' in missing[1]["www-authenticate"]
    assert 401 == forged[0]
    assert 'error="invalid_token"' in forged[1]["www-authenticate"]


async def test_a_real_token_runs_calls_with_its_principal_and_scopes(
    provider: Provider,
) -> None:
    receipts: list[Receipt] = []
    token = provider.token("notes:read")
    async with (
        serving_websocket(make_server(receipts), auth=make_auth(provider)) as port,
        connected(port, headers=bearer(token)) as peer,
    ):
        await peer.call(1, "whoami")
        await peer.call(2, "read_note", name="n")
        await peer.call(3, "write_note", name="n", text="t")
        await peer.call(4, "reboot")
        who, read, write, reboot = [await peer.reply(n) for n in (1, 2, 3, 4)]

    assert ("agent", ["notes:read"]) == (
        who["result"]["structuredContent"]["client_id"],
        who["result"]["structuredContent"]["scopes"],
    )
    assert "result" in read
    # Step-up: the scope that would grant it is named, before the handler.
    assert -31403 == write["error"]["code"]
    assert reboot["result"]["isError"] is True
    outcomes = {r.name: (r.outcome, r.error_type) for r in receipts}
    assert ("refused", "insufficient_scope") == outcomes["write_note"]
    assert all(r.principal_id == "agent" for r in receipts)


async def test_a_token_revoked_on_an_open_connection_stops_its_calls(
    provider: Provider,
) -> None:
    receipts: list[Receipt] = []
    auth = BearerAuth(
        provider.issuer,
        OPAQUE_AUDIENCE,
        scopes=SCOPES,
        introspection=Introspection(*RESOURCE_SERVER, cache_ttl=0),
    )
    token = provider.token("notes:read", resource=OPAQUE_AUDIENCE)
    async with (
        serving_websocket(make_server(receipts), auth=auth) as port,
        connected(port, headers=bearer(token)) as peer,
    ):
        await peer.call(1, "whoami")
        before = await peer.reply(1)
        await trio.to_thread.run_sync(provider.revoke, token)
        await peer.call(2, "whoami")
        after = await peer.reply(2)

    assert "result" in before
    assert -31401 == after["error"]["code"]
    assert "reconnect with a valid token" in after["error"]["message"]
    assert ("refused", "invalid_token") == (
        receipts[-1].outcome,
        receipts[-1].error_type,
    )


async def test_the_connection_closes_when_its_token_expires(
    provider: Provider, signing_key: object
) -> None:
    token = mint(signing_key, claims_for(provider, exp=int(time.time()) + 2))  # type: ignore[arg-type]
    async with (
        serving_websocket(make_server(), auth=make_auth(provider)) as port,
        connected(port, headers=bearer(token)) as peer,
    ):
        await peer.call(1, "whoami")
        assert "result" in await peer.reply(1)
        with trio.fail_after(15):
            while peer.ws.closed is None:  # the reader task sees the close
                try:
                    await peer.ws.send_message("{}")
                except ConnectionClosed:
                    break
                await trio.sleep(0.2)
        closed = peer.ws.closed
        # trio-websocket 0.12's client waits for the server's TCP close and leaks
        # its socket when its task ends first: close it here.
        await trio.aclose_forcefully(peer.ws._stream)

    assert closed is not None
    assert 1008 == closed.code
    assert "token expired" in (closed.reason or "")
