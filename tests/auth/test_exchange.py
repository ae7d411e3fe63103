"""``TokenExchange`` (RFC 8693) against a real token endpoint.

oidc-provider (conftest.py) has a registered token-exchange grant (provider.mjs): the
``gateway`` client exchanges a JWT access token the provider issued for one aimed at
``UPSTREAM_AUDIENCE``, for the same subject. The caller's token is one a real
``BearerAuth`` admitted (its principal holds it); the exchanged token is checked by a
``BearerAuth`` of the upstream's audience, as the upstream would. Logs are captured
throughout: neither token may appear in them, nor in any error.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from oauth_provider import (
    AUDIENCE,
    GATEWAY,
    OTHER_AUDIENCE,
    UPSTREAM_AUDIENCE,
    Provider,
    new_key,
)
from support.scale_procs import RedisServer
from support.strategies import json_trees

from trio_mcp import McpError, Secret
from trio_mcp._http._oauth import Admission
from trio_mcp._store import MemoryStore, RedisStore
from trio_mcp.auth import BearerAuth, ExchangeFailed, TokenExchange, TokenPrincipal
from trio_mcp.auth._exchange import ACCESS_TOKEN_TYPE, EARLY, _issued, _safe_code
from trio_mcp.auth._principal import principal_of

KEY = "k" * 32


async def admitted(provider: Provider, token: str) -> TokenPrincipal:
    """The principal a gateway's ``BearerAuth`` makes of ``token``."""
    admission = await BearerAuth(provider.issuer, AUDIENCE).admit(f"Bearer {token}")
    assert isinstance(admission, Admission)
    assert isinstance(admission.principal, TokenPrincipal)
    return admission.principal


def exchange(provider: Provider, **options: Any) -> TokenExchange:
    options.setdefault("resource", UPSTREAM_AUDIENCE)
    return TokenExchange(f"{provider.issuer}/token", *GATEWAY, **options)


async def upstream_sees(provider: Provider, token: str) -> TokenPrincipal:
    """The principal the upstream (its own audience) makes of an exchanged token."""
    admission = await BearerAuth(provider.issuer, UPSTREAM_AUDIENCE).admit(
        f"Bearer {token}"
    )
    assert isinstance(admission, Admission), admission
    assert isinstance(admission.principal, TokenPrincipal)
    return admission.principal


@pytest.fixture
def own_provider(tmp_path: Path) -> Any:
    """A provider this test may stop (the session's is shared)."""
    started = Provider(tmp_path, [new_key("key-x")])
    yield started
    started.stop()


# -- exchanged ----------------------------------------------------------------------------
async def test_the_upstream_gets_a_token_of_its_own_for_the_callers_subject(
    provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    inbound = provider.token("notes:read notes:write")
    principal = await admitted(provider, inbound)

    token = await exchange(provider, scope="notes:read")(principal)

    assert token is not None
    assert inbound != token
    seen = await upstream_sees(provider, token)
    assert (principal.id, "gateway") == (seen.id, seen.client_id)
    assert UPSTREAM_AUDIENCE == seen.claims["aud"]
    assert frozenset({"notes:read"}) == seen.scopes
    # The caller's token is not the upstream's: its audience is the gateway's.
    refused = await BearerAuth(provider.issuer, UPSTREAM_AUDIENCE).admit(
        f"Bearer {inbound}"
    )
    assert not isinstance(refused, Admission)
    assert inbound not in caplog.text
    assert token not in caplog.text


async def test_no_principal_or_no_callers_token_gets_no_token(
    provider: Provider,
) -> None:
    unverified = principal_of({"sub": "someone"}, provider.issuer)
    auth = exchange(provider)

    assert await auth(None) is None
    assert await auth("a principal of the host's") is None
    assert await auth(unverified) is None


async def test_the_token_is_reused_until_shortly_before_it_expires(
    own_provider: Provider,
) -> None:
    store = MemoryStore()
    auth = exchange(own_provider, store=store, state_key=KEY)
    principal = await admitted(own_provider, own_provider.token())
    other = await admitted(own_provider, own_provider.token())

    first = await auth(principal)
    for_other = await auth(other)
    own_provider.stop()  # from now on, only the cache can answer
    again = await auth(principal)

    assert first is not None
    assert first == again
    assert for_other not in (None, first)
    kept = [until - trio.current_time() for _, until in store._values.values()]
    assert 2 == len(kept)
    assert all(600 - EARLY - 5 <= left <= 600 - EARLY for left in kept)
    for key, (sealed, _) in store._values.items():
        assert first.encode() not in sealed
        assert first not in key
        assert principal.id not in key


async def test_another_audience_or_scope_is_another_exchange(
    provider: Provider,
) -> None:
    store = MemoryStore()
    principal = await admitted(provider, provider.token("notes:read notes:write"))

    read = await exchange(provider, store=store, scope="notes:read")(principal)
    write = await exchange(provider, store=store, scope="notes:write")(principal)
    other = await exchange(provider, store=store, resource=OTHER_AUDIENCE)(principal)

    assert len({read, write, other}) == 3
    assert 3 == len(store._values)
    assert frozenset({"notes:write"}) == (await upstream_sees(provider, write)).scopes  # type: ignore[arg-type]


async def test_replicas_share_the_sealed_cache_through_redis(
    own_provider: Provider, redis_server: RedisServer
) -> None:
    principal = await admitted(own_provider, own_provider.token())
    first_store, second_store = (
        RedisStore(redis_server.url),
        RedisStore(redis_server.url),
    )
    async with first_store.running(), second_store.running():
        first = exchange(own_provider, store=first_store, state_key=KEY)
        second = exchange(own_provider, store=second_store, state_key=KEY)
        stranger = exchange(own_provider, store=second_store, state_key="x" * 32)

        token = await first(principal)
        own_provider.stop()
        shared = await second(principal)
        with pytest.raises(ExchangeFailed, match="could not be reached"):
            await stranger(principal)  # another key opens nothing: a miss

    assert token is not None
    assert token == shared
    dump = _redis_dump(redis_server)
    assert "token-exchange:" in dump
    assert token not in dump
    assert principal.token is not None
    assert principal.token.reveal() not in dump


def _redis_dump(redis_server: RedisServer) -> str:
    """Every key and string value in the redis-server, as text (redis-cli)."""
    cli = shutil.which("redis-cli")
    assert cli is not None, "redis-cli is installed with redis-server"
    port = str(redis_server.port)
    keys = subprocess.run(
        [cli, "-p", port, "--scan"], capture_output=True, text=True, timeout=10
    ).stdout.split()
    values = [
        subprocess.run(
            [cli, "-p", port, "--no-raw", "get", key],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
        for key in keys
    ]
    return "\n".join(keys + values)


# -- failures -----------------------------------------------------------------------------
async def test_a_refused_exchange_names_the_endpoint_and_the_error_never_a_token(
    provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    inbound = provider.token()
    principal = await admitted(provider, inbound)
    wrong_secret = TokenExchange(
        f"{provider.issuer}/token",
        GATEWAY[0],
        "not-the-secret",
        resource=UPSTREAM_AUDIENCE,
    )
    unknown = exchange(provider, resource="https://unknown.example/mcp")

    with pytest.raises(ExchangeFailed) as secret_refused:
        await wrong_secret(principal)
    with pytest.raises(ExchangeFailed) as target_refused:
        await unknown(principal)

    assert (
        f"token exchange failed: the token endpoint {provider.issuer}/token answered "
        "HTTP 401, error invalid_client"
    ) == str(secret_refused.value)
    assert "HTTP 400, error invalid_target" in str(target_refused.value)
    assert isinstance(secret_refused.value, McpError)
    for text in (str(secret_refused.value), str(target_refused.value), caplog.text):
        assert inbound not in text
        assert "not-the-secret" not in text
    assert 2 == caplog.text.count("token exchange failed")


async def test_an_unreachable_or_silent_endpoint_fails_within_the_timeout() -> None:
    principal = principal_of({"sub": "s"}, "https://auth.example", "the-callers-token")
    with trio.socket.socket() as silent:
        await silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        slow = TokenExchange(f"http://127.0.0.1:{port}/token", "c", "s", timeout=0.5)
        with trio.fail_after(5), pytest.raises(ExchangeFailed) as hung:
            await slow(principal)
    closed = TokenExchange(f"http://127.0.0.1:{port}/token", "c", "s", timeout=2)
    with pytest.raises(ExchangeFailed) as refused:
        await closed(principal)

    assert "could not be reached (TooSlowError)" in str(hung.value)
    assert "could not be reached (ConnectError)" in str(refused.value)


def test_the_secret_is_never_shown() -> None:
    auth = TokenExchange(
        "https://auth.example/token", "gateway", "s3cr3t-value", audience="up"
    )
    held = TokenExchange(
        "https://auth.example/token", "gateway", Secret("s3cr3t-value")
    )

    assert "TokenExchange('https://auth.example/token', audience='up')" == repr(auth)
    assert "s3cr3t-value" not in repr(held)
    assert "s3cr3t-value" == held.client_secret.reveal()


# -- what a token endpoint may answer -------------------------------------------------------
GOOD = {
    "access_token": "abc.def.ghi",
    "token_type": "Bearer",
    "issued_token_type": ACCESS_TOKEN_TYPE,
    "expires_in": 300,
}


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"access_token": None}, "without a usable access_token"),
        ({"access_token": ""}, "without a usable access_token"),
        ({"access_token": "a b"}, "without a usable access_token"),
        ({"access_token": "é"}, "without a usable access_token"),
        ({"access_token": "a\n"}, "without a usable access_token"),
        ({"access_token": "a" * 16_385}, "without a usable access_token"),
        ({"access_token": 5}, "without a usable access_token"),
        ({"token_type": "DPoP"}, "not a bearer token"),
        ({"token_type": None}, "not a bearer token"),
        (
            {"issued_token_type": "urn:ietf:params:oauth:token-type:id_token"},
            "not an access token",
        ),
    ],
)
def test_an_answer_that_is_no_bearer_access_token_is_refused(
    changes: dict[str, Any], words: str
) -> None:
    with pytest.raises(ExchangeFailed, match=words):
        _issued({**GOOD, **changes}, "here")


@pytest.mark.parametrize(
    ("expires_in", "lifetime"),
    [
        (300, 300.0),
        (1.5, 1.5),
        (None, 0.0),
        (0, 0.0),
        (-5, 0.0),
        (True, 0.0),
        (float("inf"), 0.0),
        ("300", 0.0),
    ],
)
def test_the_lifetime_is_expires_in_when_it_is_a_positive_number(
    expires_in: object, lifetime: float
) -> None:
    answer = {**GOOD, "token_type": "bearer", "expires_in": expires_in}
    answer.pop("issued_token_type")

    assert ("abc.def.ghi", lifetime) == _issued(answer, "here")


def test_only_plain_oauth_error_codes_are_repeated() -> None:
    assert _safe_code("invalid_grant")
    assert _safe_code("a")
    assert _safe_code("a b~X")  # the first and last printable ASCII, and X
    assert not _safe_code("a\x7f")
    assert _safe_code("x" * 64)
    assert not _safe_code("x" * 65)
    assert not _safe_code("")
    assert not _safe_code('a"b')
    assert not _safe_code("a\\b")
    assert not _safe_code("a\nb")
    assert not _safe_code("é")
    assert not _safe_code(5)


json_values = json_trees(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    max_leaves=5,
)


@settings(max_examples=200, deadline=None)
@given(
    answer=st.dictionaries(
        st.sampled_from(
            ["access_token", "token_type", "issued_token_type", "expires_in"]
        ),
        json_values | st.sampled_from(["Bearer", ACCESS_TOKEN_TYPE, "tok"]),
    )
)
def test_any_answer_gives_a_usable_token_or_exchange_failed(
    answer: dict[str, Any],
) -> None:
    try:
        token, lifetime = _issued(answer, "here")
    except ExchangeFailed:
        return
    assert token == answer["access_token"]
    assert token.isascii()
    assert token.isprintable()
    assert " " not in token
    assert lifetime >= 0


async def test_a_store_that_is_down_is_a_cache_miss_not_a_failure(
    provider: Provider, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    principal = await admitted(provider, provider.token())
    store = RedisStore(redis_server.url, timeout=0.5)
    auth = exchange(provider, store=store)

    async with store.running():
        redis_server.stop()
        try:
            token = await auth(principal)
        finally:
            redis_server.start()

    assert token is not None
    assert "the cache is unreachable" in caplog.text
    assert "cannot cache a token" in caplog.text
    assert token not in caplog.text


async def test_a_failed_exchange_over_http_says_why(provider: Provider) -> None:
    """The answer's error_description may echo what was sent: it is never repeated."""
    principal = await admitted(provider, provider.token())
    assert principal.token is not None
    async with httpx.AsyncClient() as client:
        direct = await client.post(
            f"{provider.issuer}/token",
            auth=GATEWAY,
            data={
                "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                "subject_token": "not.a.token",
                "subject_token_type": ACCESS_TOKEN_TYPE,
                "resource": UPSTREAM_AUDIENCE,
            },
        )
    assert "error_description" in direct.json()
    forged = principal_of({"sub": "s"}, provider.issuer, "not.a.token")

    with pytest.raises(ExchangeFailed) as failed:
        await exchange(provider)(forged)

    assert str(failed.value).endswith("answered HTTP 400, error invalid_grant")
