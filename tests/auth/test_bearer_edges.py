"""trio_mcp.auth at its edges: discovery, a bad or silent issuer, prompts and
resources, and the arguments refused when they are written.

Issuers here are real HTTP servers on 127.0.0.1: oidc-provider (conftest.py), a
directory of metadata files served by ``python -m http.server`` (to publish what a
real server would not: metadata for another issuer, only OIDC discovery), and a
socket that accepts and never answers.
"""

from __future__ import annotations

import base64
import http.server
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from joserfc import jwt
from joserfc.jwk import ECKey, OKPKey, RSAKey
from oauth_provider import (
    AUDIENCE,
    READ,
    RESOURCE_SERVER,
    WRITE,
    Provider,
    new_key,
    signed,
    valid_claims,
)
from support.mcp_http import headers_for
from support.mcp_http import post as post_rpc

from trio_mcp import (
    McpError,
    PromptMessage,
    Receipt,
    Server,
    prompt,
    resource,
)
from trio_mcp._http._oauth import Admission
from trio_mcp.auth import BearerAuth, Introspection

SCOPES = {"notes:read": [READ], "notes:write": [WRITE]}
RAN: list[str] = []


@prompt(caps=[WRITE])
def draft(topic: str) -> list[PromptMessage]:
    """Draft a note.

    Args:
        topic: What about.
    """
    RAN.append("draft")
    return [PromptMessage.user(f"write about {topic}")]


@resource("notes://secret", caps=[WRITE])
def secret_note() -> str:
    """A note only writers may read."""
    RAN.append("secret_note")
    return "s3cr3t"


def token_for(key: RSAKey, issuer: str, **changes: Any) -> str:
    return signed(key, {**valid_claims(issuer), **changes})


async def post(
    url: str, method: str, params: dict[str, Any], token: str | None, name: str
) -> httpx.Response:
    extra = {} if token is None else {"authorization": f"Bearer {token}"}
    headers = headers_for(method, name, **extra)
    async with httpx.AsyncClient() as client:
        return await post_rpc(
            client, url, method, params, headers=headers, request_id=7, wait=15
        )


async def serve(auth: BearerAuth, receipts: list[Receipt] | None = None) -> Any:
    from support import serving

    server = Server(
        "edges",
        "1.0",
        prompts=[draft],
        resources=[secret_note],
        receipts=None if receipts is None else receipts.append,
    )
    return serving(server, auth=auth)


# -- prompts and resources get the step-up too ---------------------------------------------
@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("prompts/get", {"name": "draft", "arguments": {"topic": "x"}}, "draft"),
        ("resources/read", {"uri": "notes://secret"}, "notes://secret"),
    ],
)
async def test_prompts_and_resources_get_the_403_before_they_run(
    provider: Provider, method: str, params: dict[str, Any], name: str
) -> None:
    RAN.clear()
    receipts: list[Receipt] = []
    auth = BearerAuth(provider.issuer, AUDIENCE, scopes=SCOPES)
    async with await serve(auth, receipts) as url:
        refused = await post(url, method, params, provider.token("notes:read"), name)
        allowed = await post(
            url, method, params, provider.token("notes:read notes:write"), name
        )

    assert 403 == refused.status_code
    assert 200 == allowed.status_code
    assert 1 == len(RAN)  # only the writer's call ran
    assert ["refused", "ok"] == [r.outcome for r in receipts]


# -- discovery and issuers that misbehave ----------------------------------------------------
@pytest.fixture
def static_issuer(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on 127.0.0.1 serving the files of a directory."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (tmp_path / "requests.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", str(port), "-b", "127.0.0.1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}", tmp_path
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
        log.close()


def fetches(root: Path, path: str) -> int:
    """How many times the static issuer served ``path`` (its request log)."""
    return (root / "requests.log").read_text().count(f'"GET {path} ')


def publish(root: Path, path: str, document: object) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(document))


async def test_openid_discovery_is_used_when_rfc_8414_metadata_is_absent(
    static_issuer: tuple[str, Path],
) -> None:
    issuer, root = static_issuer
    key = new_key("k")
    publish(root, "/.well-known/openid-configuration", {
        "issuer": issuer, "jwks_uri": f"{issuer}/keys.json",
    })  # fmt: skip
    publish(root, "/keys.json", {"keys": [key.as_dict()]})
    auth = BearerAuth(issuer, AUDIENCE)

    admitted = await auth.admit(f"Bearer {token_for(key, issuer)}")

    assert isinstance(admitted, Admission)
    assert "someone" == admitted.principal.id  # type: ignore[attr-defined]


async def test_metadata_naming_another_issuer_admits_nothing(
    static_issuer: tuple[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    issuer, root = static_issuer
    key = new_key("k")
    publish(root, "/.well-known/oauth-authorization-server", {
        "issuer": "https://evil.example", "jwks_uri": f"{issuer}/keys.json",
    })  # fmt: skip
    publish(root, "/keys.json", {"keys": [key.as_dict()]})
    auth = BearerAuth(issuer, AUDIENCE)

    refused = await auth.admit(f"Bearer {token_for(key, issuer)}")

    assert (401, "invalid_token") == (refused.status, refused.error)  # type: ignore[union-attr]
    assert "describes issuer 'https://evil.example'" in caplog.text


@pytest.mark.parametrize(
    "keys", ["not json", {"keys": "nope"}, {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}]
)
async def test_a_useless_jwks_is_a_401(
    static_issuer: tuple[str, Path], keys: object
) -> None:
    issuer, root = static_issuer
    key = new_key("k")
    (root / "keys.json").write_text(keys if isinstance(keys, str) else json.dumps(keys))
    auth = BearerAuth(issuer, AUDIENCE, jwks_uri=f"{issuer}/keys.json")

    refused = await auth.admit(f"Bearer {token_for(key, issuer)}")

    assert 401 == refused.status  # type: ignore[union-attr]


async def test_an_issuer_that_never_answers_is_a_401_within_the_timeout() -> None:
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    issuer = f"http://127.0.0.1:{listener.getsockname()[1]}"
    key = new_key("k")
    auth = BearerAuth(issuer, AUDIENCE, timeout=0.5)
    started = trio.current_time()

    refused = await auth.admit(f"Bearer {token_for(key, issuer)}")

    assert 401 == refused.status  # type: ignore[union-attr]
    assert trio.current_time() - started < 3  # two metadata URLs, 0.5 s each
    listener.close()


async def test_an_issuer_down_from_the_start_is_a_401() -> None:
    auth = BearerAuth("http://127.0.0.1:9", AUDIENCE, timeout=2)
    refused = await auth.admit(
        f"Bearer {token_for(new_key('k'), 'http://127.0.0.1:9')}"
    )

    assert (401, "invalid_token") == (refused.status, refused.error)  # type: ignore[union-attr]


async def test_introspection_with_a_wrong_client_secret_is_a_401(
    provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = provider.token(resource="https://mcp.example/opaque")
    auth = BearerAuth(
        provider.issuer,
        "https://mcp.example/opaque",
        introspection=Introspection(RESOURCE_SERVER[0], "a-wrong-secret-value"),
    )

    refused = await auth.admit(f"Bearer {token}")

    assert (401, "invalid_token") == (refused.status, refused.error)  # type: ignore[union-attr]
    assert token not in caplog.text
    assert "a-wrong-secret-value" not in caplog.text


# -- arguments refused when written ------------------------------------------------------------
@pytest.mark.parametrize("algorithms", [["HS256"], ["RS256", "none"], ["HS512"]])
def test_none_and_hmac_cannot_be_configured(algorithms: list[str]) -> None:
    with pytest.raises(ValueError, match="are never accepted"):
        BearerAuth("https://a.example", AUDIENCE, algorithms=algorithms)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"issuer": "auth.example.com"}, ValueError),
        ({"audience": "mcp"}, ValueError),
        ({"algorithms": ["RS1"]}, ValueError),
        ({"algorithms": "RS256"}, TypeError),
        ({"required_scopes": "notes:read"}, TypeError),
        ({"scopes": {"notes:read": ["notes.read"]}}, TypeError),
        ({"leeway": -1}, ValueError),
        ({"leeway": float("nan")}, ValueError),
        ({"timeout": 0}, ValueError),
        ({"leeway": 10**400}, ValueError),
        ({"timeout": "5"}, ValueError),
        ({"introspection": ("id", "secret")}, TypeError),
    ],
)
def test_bad_arguments_fail_at_construction(
    kwargs: dict[str, Any], error: type[Exception]
) -> None:
    arguments: dict[str, Any] = {"issuer": "https://a.example", "audience": AUDIENCE}
    arguments.update(kwargs)
    with pytest.raises(McpError.InvalidArgument) as raised:
        BearerAuth(**arguments)
    assert isinstance(raised.value, error)  # what a caller may already catch


def test_bad_introspection_arguments_are_an_invalid_argument() -> None:
    with pytest.raises(McpError.InvalidArgument, match="cache_ttl must be"):
        Introspection("id", "secret", cache_ttl=-1)


def test_the_client_secret_never_shows() -> None:
    config = Introspection("mcp-server", "its-client-secret")
    auth = BearerAuth("https://a.example", AUDIENCE, introspection=config)

    assert "its-client-secret" not in repr(config) + repr(auth)
    assert "its-client-secret" == config.client_secret.reveal()


@pytest.mark.parametrize(
    ("alg", "make"),
    [
        ("ES256", lambda: ECKey.generate_key("P-256", parameters={"kid": "ec"})),
        ("ES384", lambda: ECKey.generate_key("P-384", parameters={"kid": "ec"})),
        ("EdDSA", lambda: OKPKey.generate_key("Ed25519", parameters={"kid": "okp"})),
        ("Ed25519", lambda: OKPKey.generate_key("Ed25519", parameters={"kid": "okp"})),
        ("PS256", lambda: RSAKey.generate_key(2048, parameters={"kid": "rsa"})),
    ],
)
async def test_every_asymmetric_key_type_verifies(
    static_issuer: tuple[str, Path], alg: str, make: Any
) -> None:
    issuer, root = static_issuer
    key = make()
    publish(root, "/keys.json", {"keys": [key.as_dict()]})
    auth = BearerAuth(issuer, AUDIENCE, jwks_uri=f"{issuer}/keys.json")
    now = int(time.time())
    claims = {"iss": issuer, "aud": AUDIENCE, "sub": "k", "exp": now + 60}
    with warnings.catch_warnings():  # minting EdDSA warns (RFC 9864); checking must not
        warnings.simplefilter("ignore")
        token = jwt.encode({"alg": alg, "kid": key.kid}, claims, key, algorithms=[alg])

    admitted = await auth.admit(f"Bearer {token}")

    assert isinstance(admitted, Admission)


async def test_unknown_kids_refetch_the_keys_at_most_once_per_interval(
    static_issuer: tuple[str, Path],
) -> None:
    issuer, root = static_issuer
    key = new_key("k")
    publish(root, "/keys.json", {"keys": [key.as_dict()]})
    auth = BearerAuth(issuer, AUDIENCE, jwks_uri=f"{issuer}/keys.json")
    assert isinstance(await auth.admit(f"Bearer {token_for(key, issuer)}"), Admission)

    for n in range(5):
        stranger = RSAKey.import_key(key.as_dict(private=True), {"kid": f"made-up-{n}"})
        refused = await auth.admit(f"Bearer {token_for(stranger, issuer)}")
        assert 401 == refused.status  # type: ignore[union-attr]

    assert 1 == fetches(root, "/keys.json")


async def test_keys_are_fetched_again_after_jwks_ttl(
    static_issuer: tuple[str, Path],
) -> None:
    """A key withdrawn at the issuer stops working for new tokens once the TTL ends
    and the refresh that starts has answered; a token signed by the key now under
    the same kid waits for that refresh instead of failing on the stale key."""
    issuer, root = static_issuer
    old, new = new_key("same-kid"), new_key("same-kid")
    publish(root, "/keys.json", {"keys": [old.as_dict()]})
    auth = BearerAuth(
        issuer,
        AUDIENCE,
        jwks_uri=f"{issuer}/keys.json",
        jwks_ttl=0.3,
        jwks_min_interval=0.1,
    )
    assert isinstance(await auth.admit(f"Bearer {token_for(old, issuer)}"), Admission)
    publish(root, "/keys.json", {"keys": [new.as_dict()]})
    await trio.sleep(0.4)

    admitted = await auth.admit(f"Bearer {token_for(new, issuer)}")
    refused = await auth.admit(f"Bearer {token_for(old, issuer, sub='later')}")

    assert 401 == refused.status  # type: ignore[union-attr]
    assert isinstance(admitted, Admission)
    assert 2 == fetches(root, "/keys.json")


# -- an introspection answer with a date no float can hold ----------------------------------
class _Answers(http.server.BaseHTTPRequestHandler):
    """An issuer whose introspection endpoint answers ``active`` with the date the
    token names: the JSON integer is written out in digits, as a real one could."""

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        issuer = f"http://{self.headers['host']}"
        self._send(json.dumps({
            "issuer": issuer, "jwks_uri": f"{issuer}/keys",
            "introspection_endpoint": f"{issuer}/introspect",
        }).encode())  # fmt: skip

    def do_POST(self) -> None:
        form = self.rfile.read(int(self.headers["content-length"])).decode()
        exp = dict(p.split("=", 1) for p in form.split("&"))["token"]
        answer = {"active": True, "aud": AUDIENCE, "sub": "someone", "scope": "x"}
        self._send(json.dumps(answer)[:-1].encode() + f', "exp": {exp}}}'.encode())


@pytest.mark.parametrize("exp", ["1" + "0" * 400, "-1" + "0" * 400, "1e400"])
async def test_an_introspected_date_no_float_can_hold_is_a_401(exp: str) -> None:
    issuer = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    thread = threading.Thread(target=issuer.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{issuer.server_address[1]}"
        auth = BearerAuth(url, AUDIENCE, introspection=Introspection("rs", "secret"))

        refused = await auth.admit(f"Bearer {exp}")

        assert (401, "invalid_token") == (refused.status, refused.error)  # type: ignore[union-attr]
    finally:
        issuer.shutdown()
        issuer.server_close()


# -- what an introspection answer must say --------------------------------------------------
class _Introspected(_Answers):
    """An issuer whose introspection endpoint answers what the token spells: the
    token is an answer in base64url JSON (``ISSUER`` stands for the issuer's URL)."""

    def do_POST(self) -> None:
        form = self.rfile.read(int(self.headers["content-length"])).decode()
        token = dict(p.split("=", 1) for p in form.split("&"))["token"]
        answer = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        self._send(answer.replace("ISSUER", f"http://{self.headers['host']}").encode())


LEEWAY = 30.0
_NOT_OURS = "the token is not meant for this resource (aud)"
_OTHER_ISSUER = "the token was issued by another authorization server"


@pytest.mark.parametrize(
    ("changes", "admitted"),
    [
        ({}, True),
        ({"exp": None}, True),  # no exp: the issuer's "active" is the word
        ({"iss": None}, True),
        ({"exp": LEEWAY / 2}, True),
        ({"exp": -LEEWAY / 2}, True),  # expired, within the leeway
        ({"exp": -2 * LEEWAY}, "the token has expired"),
        ({"exp": "soon"}, "the token has expired"),
        ({"active": False}, "the token is not active"),
        ({"active": "true"}, "the token is not active"),
        ({"active": None}, "the token is not active"),
        ({"aud": "https://another.example/mcp"}, _NOT_OURS),
        ({"aud": None}, _NOT_OURS),
        ({"iss": "https://another.example"}, _OTHER_ISSUER),
    ],
)
async def test_an_introspection_answer_admits_only_an_active_token_for_us(
    changes: dict[str, Any], admitted: bool | str
) -> None:
    """``active`` must be ``true``, ``aud`` this resource, ``iss`` (when given) the
    issuer, and ``exp`` (when given) a date not past, give or take the leeway; a
    refusal's ``error_description`` says which (``admitted`` is then that text)."""
    now = time.time()
    answer: dict[str, Any] = {
        "active": True, "aud": AUDIENCE, "iss": "ISSUER", "sub": "someone",
        "scope": "x", "exp": 600,
    }  # fmt: skip
    answer.update(changes)
    answer = {k: v for k, v in answer.items() if v is not None}
    if isinstance(answer.get("exp"), float | int):
        answer["exp"] = now + answer["exp"]
    token = base64.urlsafe_b64encode(json.dumps(answer).encode()).decode().rstrip("=")
    issuer = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Introspected)
    thread = threading.Thread(target=issuer.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{issuer.server_address[1]}"
        auth = BearerAuth(
            url, AUDIENCE, introspection=Introspection("rs", "secret"), leeway=LEEWAY
        )

        result = await auth.admit(f"Bearer {token}")
    finally:
        issuer.shutdown()
        issuer.server_close()

    if admitted is True:
        assert isinstance(result, Admission)
    else:
        assert (401, "invalid_token", admitted) == (
            result.status,  # type: ignore[union-attr]
            result.error,  # type: ignore[union-attr]
            result.description,  # type: ignore[union-attr]
        )


# -- what the bearer check does not cover (docs/guides/oauth.md) ------------------------------
async def test_metrics_are_not_behind_the_bearer_check(provider: Provider) -> None:
    """As documented: ``auth=`` guards /mcp; /metrics, when turned on, must be kept
    private by routing. If this changes, change the guide and docs/deploy.md too."""
    from support import serving

    server = Server("edges", "1.0", prompts=[draft])
    auth = BearerAuth(provider.issuer, AUDIENCE)
    async with (
        serving(server, auth=auth, metrics_path="/metrics") as url,
        httpx.AsyncClient() as client,
    ):
        unauthenticated_mcp = await post(url, "prompts/list", {}, None, "")
        scraped = await client.get(url + "/metrics")

    assert 401 == unauthenticated_mcp.status_code
    assert 200 == scraped.status_code
    assert "text/plain" in scraped.headers["content-type"]
