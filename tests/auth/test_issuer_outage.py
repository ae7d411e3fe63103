"""An unreachable or hanging issuer costs a request at most one ``timeout`` (issue 34).

The audit found an outage cost two timeouts (RFC 8414 discovery, then OpenID
discovery, each with its own), and that tokens signed by held keys waited behind the
refresh lock. Now a refresh (discovery and the JWKS) runs in the background within
one ``timeout``; only a request that needs a key not held waits for it, and for at
most ``timeout``; a token signed by a held key is checked at once.

The issuer here is in this process (a Trio listener that answers, or hangs), so the
tests run on Trio's mock clock: the figures are the clock's, not wall time. The
real oidc-provider's part (its port taken over by a hanging listener) is at the end.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from joserfc import jws, jwt
from joserfc.jwk import RSAKey
from oauth_provider import AUDIENCE, Provider, new_key
from support import logged, serving
from support.mcp_http import headers_for, request_body

from trio_mcp import Server, tool
from trio_mcp._http._oauth import Admission, Challenge
from trio_mcp.auth import BearerAuth, Introspection

TIMEOUT = 5.0


class Issuer:
    """An authorization server in this process: its metadata and JWKS, or a hang."""

    def __init__(self) -> None:
        self.url = ""
        self.keys: list[RSAKey] = []
        self.hanging = False
        self.requests = 0
        self.names_jwks = True
        """Whether the metadata names ``jwks_uri``."""
        self.delay = 0.0
        """Seconds (of the mock clock) before each answer."""

    async def handle(self, stream: trio.SocketStream) -> None:
        async with stream:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = await stream.receive_some(4096)
                if not chunk:
                    return
                head += chunk
            self.requests += 1
            if self.hanging:
                await trio.sleep_forever()
            await trio.sleep(self.delay)
            path = head.split(b" ", 2)[1].decode()
            await stream.send_all(self.answer(path))

    def answer(self, path: str) -> bytes:
        documents: dict[str, Any] = {
            "/.well-known/oauth-authorization-server": {
                "issuer": self.url,
                "introspection_endpoint": f"{self.url}/introspect",
                **({"jwks_uri": f"{self.url}/jwks"} if self.names_jwks else {}),
            },
            "/jwks": {"keys": [k.as_dict() for k in self.keys]},
        }
        if path not in documents:
            return b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
        body = json.dumps(documents[path]).encode()
        return (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)
        )


@asynccontextmanager
async def issuer_running(issuer: Issuer) -> AsyncIterator[Issuer]:
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_tcp, issuer.handle, 0, host="127.0.0.1")
        )
        issuer.url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}"
        yield issuer
        nursery.cancel_scope.cancel()


def token(
    key: RSAKey,
    issuer: str,
    kid: str | None = None,
    *,
    named: bool = True,
    **claims: Any,
) -> str:
    """A token of ``issuer`` signed by ``key``; its header names ``kid`` (the key's
    own by default), or no key at all when not ``named``."""
    now = int(time.time())
    body = {
        "iss": issuer,
        "aud": AUDIENCE,
        "sub": "someone",
        "iat": now,
        "exp": now + 600,
        **claims,
    }
    header = {"alg": "RS256", "kid": kid or key.kid} if named else {"alg": "RS256"}
    return jwt.encode(header, body, key)


async def timed_admit(auth: BearerAuth, value: str) -> tuple[object, float]:
    started = trio.current_time()
    result = await auth.admit(f"Bearer {value}")
    return result, trio.current_time() - started


def assert_challenged_in_time(result: object, took: float) -> None:
    """Refused with a challenge, after one ``TIMEOUT`` at most."""
    assert isinstance(result, Challenge)
    assert took <= TIMEOUT


def refresh_failures(caplog: pytest.LogCaptureFixture) -> list[str]:
    return logged(caplog, "trio_mcp.auth", "refresh")


async def first_admit(issuer: Issuer) -> tuple[object, float]:
    """Serve ``issuer`` as it is set up; admit one token signed by a key it never
    published, with a fresh ``BearerAuth``."""
    async with issuer_running(issuer):
        auth = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT)
        return await timed_admit(auth, token(new_key("k"), issuer.url))


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        ("hanging", "no answer within 5 s"),
        ("names_no_jwks", "the issuer's metadata names no jwks_uri"),
    ],
)
async def test_a_failed_refresh_costs_one_timeout_and_says_why(
    autojump_clock: trio.testing.MockClock,
    caplog: pytest.LogCaptureFixture,
    fault: str,
    why: str,
) -> None:
    """A hanging issuer, or one whose metadata names no JWKS: the token is refused
    (401) within one timeout, and the operator's line says why and what is kept."""
    issuer = Issuer()
    issuer.hanging = fault == "hanging"
    issuer.names_jwks = fault != "names_no_jwks"
    refused, took = await first_admit(issuer)

    assert isinstance(refused, Challenge)
    assert 401 == refused.status
    # Before: RFC 8414 discovery, OpenID discovery and the JWKS, a timeout each.
    assert took <= TIMEOUT
    assert issuer.requests >= 1
    assert [
        f"could not refresh the issuer's keys ({why}); keeping the 0 held"
    ] == refresh_failures(caplog)


async def test_many_requests_during_an_outage_each_wait_one_timeout_at_most(
    autojump_clock: trio.testing.MockClock,
) -> None:
    took: list[float] = []
    async with issuer_running(Issuer()) as issuer:
        issuer.hanging = True
        auth = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT, jwks_min_interval=1.0)

        async def one(n: int) -> None:
            await trio.sleep(n * 0.7)
            result, seconds = await timed_admit(
                auth, token(new_key(f"k{n}"), issuer.url)
            )
            assert isinstance(result, Challenge)
            took.append(seconds)

        async with trio.open_nursery() as nursery:
            for n in range(12):
                nursery.start_soon(one, n)

    assert 12 == len(took)
    assert max(took) <= TIMEOUT


async def test_held_keys_admit_at_once_while_a_refresh_hangs(
    autojump_clock: trio.testing.MockClock,
) -> None:
    key = new_key("held")
    async with issuer_running(Issuer()) as issuer:
        issuer.keys = [key]
        auth = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT, jwks_ttl=60)
        first, _ = await timed_admit(auth, token(key, issuer.url))
        fetched = issuer.requests
        issuer.hanging = True
        await trio.sleep(61)  # the keys are stale: the next request starts a refresh
        stale, stale_took = await timed_admit(auth, token(key, issuer.url, sub="b"))
        await trio.testing.wait_all_tasks_blocked()
        refreshing = issuer.requests - fetched
        during, during_took = await timed_admit(auth, token(key, issuer.url, sub="c"))
        unknown, unknown_took = await timed_admit(
            auth, token(new_key("other"), issuer.url)
        )

    assert isinstance(first, Admission)
    assert isinstance(stale, Admission)
    assert isinstance(during, Admission)
    assert 1 == refreshing  # the stale keys started one refresh, which hangs
    assert 0 == stale_took == during_took  # never behind the refresh
    assert_challenged_in_time(unknown, unknown_took)


async def test_introspection_with_a_hanging_issuer_costs_one_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with issuer_running(Issuer()) as issuer:
        issuer.hanging = True
        auth = BearerAuth(
            issuer.url,
            AUDIENCE,
            timeout=TIMEOUT,
            introspection=Introspection("rs", "rs-secret-0123456789abcdef"),
        )
        refused, took = await timed_admit(auth, "an-opaque-token")

    assert_challenged_in_time(refused, took)


async def test_a_closed_port_is_refused_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with issuer_running(Issuer()) as issuer:
        url = issuer.url
    auth = BearerAuth(url, AUDIENCE, timeout=TIMEOUT)
    refused, took = await timed_admit(auth, token(new_key("k"), url))

    assert isinstance(refused, Challenge)
    assert took < TIMEOUT


def unnamed_token(key: RSAKey, issuer: str) -> str:
    """A token whose header names no ``kid``."""
    return token(key, issuer, named=False)


async def test_a_token_naming_no_key_is_checked_with_the_only_key(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Without a ``kid`` the issuer's one key is the key; of two, neither is,
    not even one published without a ``kid`` itself."""
    one, two = new_key("one"), new_key("two")
    nameless = RSAKey.generate_key(2048, parameters={"alg": "RS256", "use": "sig"})
    async with issuer_running(Issuer()) as issuer:
        issuer.keys = [one]
        single = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT)
        alone, _ = await timed_admit(single, unnamed_token(one, issuer.url))
        issuer.keys = [one, two]
        double = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT)
        either, _ = await timed_admit(double, unnamed_token(one, issuer.url))
        named, _ = await timed_admit(double, token(two, issuer.url))
        issuer.keys = [nameless, two]
        mixed = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT)
        unmatched, _ = await timed_admit(mixed, unnamed_token(nameless, issuer.url))

    assert "kid" not in nameless.as_dict()
    assert isinstance(alone, Admission)
    assert isinstance(either, Challenge)
    assert isinstance(named, Admission)
    assert isinstance(unmatched, Challenge)


async def test_a_failed_signature_waits_for_the_refresh_another_request_started(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Keys fresh, but a refresh in flight (a token of a ``kid`` not held started
    it): a token whose held key did not verify waits for it, and the issuer may
    have replaced that key."""
    old = new_key("k")
    async with issuer_running(Issuer()) as issuer:
        issuer.keys = [old]
        auth = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT, jwks_min_interval=1)
        first, _ = await timed_admit(auth, token(old, issuer.url))
        replaced = new_key("k")
        issuer.keys = [replaced, new_key("added")]
        issuer.delay = 2
        await trio.sleep(1)
        results: list[object] = []

        async def admit(value: str) -> None:
            results.append((await timed_admit(auth, value))[0])

        async with trio.open_nursery() as nursery:
            nursery.start_soon(admit, token(issuer.keys[1], issuer.url))
            await trio.testing.wait_all_tasks_blocked()  # its refresh waits 2 s
            nursery.start_soon(admit, token(replaced, issuer.url, sub="b"))

    assert isinstance(first, Admission)
    assert [Admission, Admission] == [type(r) for r in results]


async def test_a_key_the_issuer_adds_is_fetched_for_the_token_that_names_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Rotation by a new ``kid``: the one key held does not stand in for it."""
    old, new = new_key("old"), new_key("new")
    async with issuer_running(Issuer()) as issuer:
        issuer.keys = [old]
        auth = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT, jwks_min_interval=1)
        before, _ = await timed_admit(auth, token(old, issuer.url))
        issuer.keys = [old, new]
        await trio.sleep(1)
        after, took = await timed_admit(auth, token(new, issuer.url))
        still, _ = await timed_admit(auth, token(old, issuer.url, sub="b"))

    assert isinstance(before, Admission)
    assert isinstance(after, Admission)
    assert took <= TIMEOUT
    assert isinstance(still, Admission)


async def test_a_key_replaced_under_its_kid_is_fetched_once_the_keys_are_stale(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Rotation under the same ``kid``: past ``jwks_ttl`` a token of the new key
    waits for the refresh its request started, then verifies."""
    async with issuer_running(Issuer()) as issuer:
        issuer.keys = [new_key("k")]
        auth = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT, jwks_ttl=60)
        first, _ = await timed_admit(auth, token(issuer.keys[0], issuer.url))
        replaced = new_key("k")
        issuer.keys = [replaced, new_key("other")]
        await trio.sleep(61)
        after, took = await timed_admit(auth, token(replaced, issuer.url, sub="b"))

    assert isinstance(first, Admission)
    assert isinstance(after, Admission)
    assert took <= TIMEOUT


async def test_fresh_keys_are_not_fetched_again_whatever_the_token(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Within ``jwks_ttl`` (its last instant included) neither a good token nor
    a forged one (another key under a held ``kid``) costs the issuer a request;
    the first request past it fetches the keys once."""
    key = new_key("k")
    forger = new_key("k")
    async with issuer_running(Issuer()) as issuer:
        issuer.keys = [key]
        auth = BearerAuth(
            issuer.url, AUDIENCE, timeout=TIMEOUT, jwks_ttl=60, jwks_min_interval=1
        )
        await trio.sleep(40)  # the keys are fetched at a time other than zero
        assert isinstance(
            (await timed_admit(auth, token(key, issuer.url)))[0], Admission
        )
        fetched = issuer.requests
        outcomes = []
        for wait in (10, 50):  # 10 s after the fetch, then exactly jwks_ttl after
            await trio.sleep(wait)
            outcomes.append((await timed_admit(auth, token(key, issuer.url)))[0])
            outcomes.append((await timed_admit(auth, token(forger, issuer.url)))[0])
            await trio.testing.wait_all_tasks_blocked()
            assert fetched == issuer.requests
        await trio.sleep(1)
        stale, _ = await timed_admit(auth, token(key, issuer.url, sub="b"))
        await trio.testing.wait_all_tasks_blocked()

    assert [Admission, Challenge] * 2 == [type(o) for o in outcomes]
    assert isinstance(stale, Admission)
    assert fetched + 1 == issuer.requests


async def test_unknown_kids_refetch_once_per_min_interval(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A token naming a ``kid`` not held fetches the keys, at most once per
    ``jwks_min_interval``: again at exactly that interval, not before."""
    async with issuer_running(Issuer()) as issuer:
        issuer.keys = [new_key("k")]
        auth = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT, jwks_min_interval=5)
        fetches = []
        for wait in (0, 4, 1):  # at 0, at 4 (too soon), at 5
            await trio.sleep(wait)
            before = issuer.requests
            refused, _ = await timed_admit(auth, token(new_key("forged"), issuer.url))
            assert isinstance(refused, Challenge)
            await trio.testing.wait_all_tasks_blocked()
            fetches.append(issuer.requests - before)

    assert [2, 0, 1] == fetches  # discovery and the JWKS; nothing; the JWKS


@tool
def ping() -> str:
    """Answer."""
    return "pong"


async def test_the_real_issuers_port_hanging_stops_no_token_of_a_held_key(
    tmp_path: Any,
) -> None:
    """The real oidc-provider issues and serves its keys, then its port is taken
    by a listener that never answers: tokens of the held key keep being admitted
    (each within the test's bound, far below the 30 s timeout a wait would take),
    one of an unknown key is a 401."""
    key = new_key("real")
    own = Provider(tmp_path, [key])
    try:
        auth = BearerAuth(
            own.issuer, AUDIENCE, timeout=30, jwks_ttl=0.5, jwks_min_interval=0.1
        )
        server = Server("outage", "1", tools=[ping])
        async with (
            serving(server, auth=auth) as url,
            httpx.AsyncClient() as client,
        ):

            async def call(value: str) -> int:
                with trio.fail_after(10):
                    response = await client.post(
                        url + "/mcp",
                        json=request_body("tools/call", {"name": "ping"}),
                        headers={
                            **headers_for("tools/call", "ping"),
                            "authorization": f"Bearer {value}",
                        },
                    )
                return response.status_code

            assert 200 == await call(own.token())
            port = own.port
            own.stop()
            hang = Issuer()
            hang.hanging = True
            async with trio.open_nursery() as nursery:
                await nursery.start(
                    partial(trio.serve_tcp, hang.handle, port, host="127.0.0.1")
                )
                await trio.sleep(0.6)  # the keys are now stale
                statuses = [
                    await call(token(key, own.issuer, sub=f"s{n}")) for n in range(3)
                ]
                nursery.cancel_scope.cancel()
    finally:
        own.stop()

    assert [200, 200, 200] == statuses
    assert hang.requests >= 1  # a refresh was tried, and hung


async def test_a_header_member_joserfc_does_not_know_is_accepted(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Issuers add their own header members (``typ``, vendor hints): the token is
    judged by its signature and claims, not refused for them."""
    key = new_key("k")
    async with issuer_running(Issuer()) as issuer:
        issuer.keys = [key]
        auth = BearerAuth(issuer.url, AUDIENCE, timeout=TIMEOUT)
        now = int(time.time())
        claims = {
            "iss": issuer.url, "aud": AUDIENCE, "sub": "someone",
            "iat": now, "exp": now + 600,
        }  # fmt: skip
        header = {"alg": "RS256", "kid": key.kid, "typ": "at+jwt", "x-tenant": "7"}
        lax = jws.JWSRegistry(strict_check_header=False)  # to write it at all
        signed = jwt.encode(header, claims, key, registry=lax)
        admitted, _ = await timed_admit(auth, signed)

    assert isinstance(admitted, Admission)
