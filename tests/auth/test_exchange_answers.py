"""``TokenExchange`` against a token endpoint that answers whatever a test says.

oidc-provider answers only what an honest authorization server does; this endpoint
(a real HTTP server on 127.0.0.1, a thread of ``http.server``) answers what a broken
or hostile one could: a redirect, a body past the bound, JSON that is no object, an
error code with quotes, tokens of every lifetime. It records what it was sent.
"""

from __future__ import annotations

import http.server
import json
import threading
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from trio_mcp import McpError
from trio_mcp._store import MemoryStore, StoreUnavailable
from trio_mcp.auth import ExchangeFailed, TokenExchange
from trio_mcp.auth._exchange import ACCESS_TOKEN_TYPE, EARLY, MAX_ANSWER, MAX_TOKEN
from trio_mcp.auth._principal import principal_of

CALLER = "the-callers-access-token"


class Endpoint(http.server.BaseHTTPRequestHandler):
    """Answers each POST with ``server.answer`` (status, body bytes, headers) and
    records the request's headers and form in ``server.seen``."""

    server: Any

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        form = self.rfile.read(int(self.headers["content-length"])).decode()
        sent = {k.lower(): v for k, v in self.headers.items()}
        self.server.seen.append((self.path, sent, urllib.parse.parse_qs(form)))
        status, body, headers = self.server.answer
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def endpoint() -> Iterator[Any]:
    server: Any = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    server.seen = []
    server.answer = (200, b"{}", {})
    server.url = f"http://127.0.0.1:{server.server_address[1]}/token"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def answering(endpoint: Any, status: int, body: Any, **headers: str) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    endpoint.answer = (status, raw, headers)


def bearer(token: str = "exchanged.token.value", **more: Any) -> dict[str, Any]:
    return {"access_token": token, "token_type": "Bearer", **more}


def caller(ident: str = "someone") -> Any:
    return principal_of({"sub": ident}, "https://auth.example", CALLER)


async def failure(auth: TokenExchange) -> str:
    with pytest.raises(ExchangeFailed) as failed:
        await auth(caller())
    return str(failed.value)


# -- what is sent ---------------------------------------------------------------------------
async def test_the_request_is_rfc_8693s_with_basic_client_authentication(
    endpoint: Any,
) -> None:
    answering(endpoint, 200, bearer(issued_token_type=ACCESS_TOKEN_TYPE))
    auth = TokenExchange(
        endpoint.url,
        "gateway",
        "s3cret",
        audience="up",
        resource="https://up/mcp",
        scope="a b",
    )

    assert "exchanged.token.value" == await auth(caller())

    path, headers, form = endpoint.seen[0]
    assert "/token" == path
    assert "application/json" == headers["accept"]
    assert "Basic Z2F0ZXdheTpzM2NyZXQ=" == headers["authorization"]
    assert {
        "grant_type": ["urn:ietf:params:oauth:grant-type:token-exchange"],
        "subject_token": [CALLER],
        "subject_token_type": [ACCESS_TOKEN_TYPE],
        "requested_token_type": [ACCESS_TOKEN_TYPE],
        "audience": ["up"],
        "resource": ["https://up/mcp"],
        "scope": ["a b"],
    } == form


async def test_what_is_not_given_is_not_sent(endpoint: Any) -> None:
    answering(endpoint, 200, bearer())

    await TokenExchange(endpoint.url, "gateway", "s3cret")(caller())

    assert {"audience", "resource", "scope"}.isdisjoint(endpoint.seen[0][2])


# -- what is answered -----------------------------------------------------------------------
async def test_a_redirect_is_not_followed(endpoint: Any) -> None:
    answering(endpoint, 302, b"", location=endpoint.url + "?elsewhere")

    message = await failure(TokenExchange(endpoint.url, "gateway", "s3cret"))

    assert (
        f"token exchange failed: the token endpoint {endpoint.url} answered HTTP 302"
        == message
    )
    assert 1 == len(endpoint.seen)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            {"error": "invalid_grant", "error_description": CALLER},
            ", error invalid_grant",
        ),
        ({"error": 'say "this"'}, ""),
        ({"error_description": "no code"}, ""),
        (b"<html>not json</html>", ""),
        (["invalid_grant"], ""),
    ],
    ids=["code", "quoted code", "no code", "html", "array"],
)
async def test_a_refusal_says_its_status_and_a_plain_error_code_only(
    endpoint: Any, body: Any, said: str
) -> None:
    answering(endpoint, 400, body)

    message = await failure(TokenExchange(endpoint.url, "gateway", "s3cret"))

    assert (
        f"token exchange failed: the token endpoint {endpoint.url} answered HTTP 400{said}"
        == message
    )
    assert CALLER not in message


@pytest.mark.parametrize("body", [b"[1]", b'"token"', b"not json", b""])
async def test_an_answer_that_is_no_json_object_is_a_failure(
    endpoint: Any, body: bytes
) -> None:
    answering(endpoint, 200, body)

    message = await failure(TokenExchange(endpoint.url, "gateway", "s3cret"))

    assert (
        f"token exchange failed: the token endpoint {endpoint.url} answered something "
        "that is not a JSON object"
    ) == message


async def test_an_answer_of_64_kib_is_read_and_one_byte_more_is_not(
    endpoint: Any,
) -> None:
    small = json.dumps(bearer()).encode()
    auth = TokenExchange(endpoint.url, "gateway", "s3cret")

    answering(endpoint, 200, small + b" " * (MAX_ANSWER - len(small)))
    assert "exchanged.token.value" == await auth(caller("one"))
    answering(endpoint, 200, small + b" " * (MAX_ANSWER + 1 - len(small)))
    message = await failure(auth)

    assert message.endswith("answered something that is not a JSON object")


async def test_the_longest_token_is_accepted(endpoint: Any) -> None:
    answering(endpoint, 200, bearer("t" * MAX_TOKEN))

    assert "t" * MAX_TOKEN == await TokenExchange(endpoint.url, "g", "s")(caller())


async def test_a_token_that_is_not_a_bearer_access_token_is_a_failure(
    endpoint: Any,
) -> None:
    answering(endpoint, 200, bearer(token_type="DPoP"))

    message = await failure(TokenExchange(endpoint.url, "gateway", "s3cret"))

    assert (
        f"token exchange failed: the token endpoint {endpoint.url} issued a token that "
        "is not a bearer token"
    ) == message


# -- how long it is kept --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expires_in", "kept"),
    [(600, 600 - EARLY), (100, 90.0), (1, 0.9), (0, None), (None, None)],
)
async def test_a_token_is_kept_until_shortly_before_it_expires(
    endpoint: Any, expires_in: int | None, kept: float | None
) -> None:
    answering(endpoint, 200, bearer(expires_in=expires_in))
    store = MemoryStore()

    await TokenExchange(endpoint.url, "gateway", "s3cret", store=store)(caller())

    if kept is None:
        assert {} == store._values
        return
    [(key, (sealed, until))] = store._values.items()
    assert kept - 0.2 <= until - trio.current_time() <= kept
    assert key.startswith("token-exchange:")
    assert 15 + 64 == len(key)
    assert b"exchanged.token.value" not in sealed


async def test_any_principal_id_makes_a_cache_key(endpoint: Any) -> None:
    """A JSON string may hold a lone surrogate; it still names one cache entry."""
    answering(endpoint, 200, bearer(expires_in=600))
    store = MemoryStore()
    auth = TokenExchange(endpoint.url, "gateway", "s3cret", store=store)

    await auth(caller("\ud800"))
    await auth(caller("\ud800"))

    assert 1 == len(endpoint.seen)
    assert 1 == len(store._values)


def test_the_sealing_and_naming_keys_are_derived_apart() -> None:
    key = "k" * 32
    auth = TokenExchange("https://auth.example/token", "g", "s", state_key=key)

    assert auth._naming != auth._sealing
    assert key.encode() not in (auth._naming, auth._sealing)


class DownStore(MemoryStore):
    """A store whose every read and write fails, as a Redis that is down does."""

    async def get(self, key: str) -> bytes | None:
        raise StoreUnavailable("down")

    async def put(self, key: str, value: bytes, seconds: float) -> None:
        raise StoreUnavailable("down")


async def test_a_store_that_fails_is_named_by_its_error_alone(
    endpoint: Any, caplog: pytest.LogCaptureFixture
) -> None:
    answering(endpoint, 200, bearer(expires_in=600))

    await TokenExchange(endpoint.url, "g", "s", store=DownStore())(caller())

    assert [
        "token exchange: the cache is unreachable (StoreUnavailable)",
        "token exchange: cannot cache a token (StoreUnavailable)",
    ] == caplog.messages


# -- arguments ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"token_endpoint": "ftp://auth.example/token"},
            "token_endpoint 'ftp://auth.example/token' must be an absolute http(s) URL, "
            "such as 'https://auth.example.com'",
        ),
        ({"client_id": ""}, "TokenExchange(client_id=...) must be a client id, not ''"),
        ({"client_secret": 5}, "TokenExchange(client_secret=...) must be a str, not 5"),
        (
            {"timeout": 0},
            "TokenExchange(timeout=...) must be a finite number > 0, not 0",
        ),
        (
            {"store": "redis://x"},
            "TokenExchange(store=...) must be a MemoryStore or a RedisStore, not 'redis://x'",
        ),
    ],
)
def test_each_argument_that_cannot_work_is_named(
    options: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {
        "token_endpoint": "https://auth.example/token",
        "client_id": "gateway",
        "client_secret": "secret",
        **options,
    }
    with pytest.raises(McpError.InvalidArgument) as refused:
        TokenExchange(**arguments)

    assert message == str(refused.value)


@pytest.mark.parametrize(
    ("options", "shown"),
    [
        ({"audience": "up", "resource": "https://up/mcp"}, "'up'"),
        ({"resource": "https://up/mcp"}, "'https://up/mcp'"),
        ({}, "''"),
    ],
)
def test_the_repr_names_the_endpoint_and_the_target(
    options: dict[str, Any], shown: str
) -> None:
    auth = TokenExchange("https://auth.example/token", "g", "secret", **options)

    assert f"TokenExchange('https://auth.example/token', audience={shown})" == repr(
        auth
    )
