"""The issuer's metadata and signing keys, fetched over HTTP and cached.

- Discovery: RFC 8414 ``/.well-known/oauth-authorization-server``, else OpenID
  Connect discovery; the document must name the configured issuer exactly (RFC 8414
  §3.3: a mix-up defence). It gives ``jwks_uri`` and ``introspection_endpoint``.
- Keys: the JWKS is kept for ``jwks_ttl`` seconds. A token naming a ``kid`` not held
  refetches it, at most once per ``jwks_min_interval`` (a stream of forged ``kid``
  values cannot make the server hammer its issuer). A failed fetch keeps the keys
  held: an unreachable issuer does not stop tokens signed with known keys.
- A refresh (discovery and the JWKS together) runs on its own, in a Trio system
  task, and is bounded by one ``timeout`` in all. Only a request that needs a key
  not held waits for it, and for at most ``timeout``; a token signed by a held key
  is checked at once, even while the keys are stale and a refresh hangs (the stale
  keys start one in the background). So an unreachable or hanging issuer costs a
  request at most one ``timeout``. A failure is logged and answered as "no key",
  which the caller turns into a 401.

The HTTP client is httpx, which runs on Trio; no blocking I/O in the event loop.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from typing import Any

import attrs
import httpx
import trio
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, OKPKey, RSAKey

from ._settings import Settings

__all__ = [
    "KEY_TYPES",
    "PRIVATE_MEMBERS",
    "Endpoints",
    "KeyCache",
    "PublicKey",
    "fetch_json",
]

log = logging.getLogger("trio_mcp.auth")

PublicKey = RSAKey | ECKey | OKPKey
KEY_TYPES: Mapping[str, type[PublicKey]] = {
    "RSA": RSAKey,
    "EC": ECKey,
    "OKP": OKPKey,
}
#: Largest metadata or JWKS document read (bytes): a hostile or broken issuer
#: cannot make the server buffer without bound.
MAX_DOCUMENT = 1_048_576


class FetchError(Exception):
    """A document could not be fetched or was not a JSON object."""


async def fetch_json(url: str, within: float) -> dict[str, Any]:
    """GET a JSON object, within ``within`` seconds in total.

    Raises:
        FetchError: on any failure (network, status, size, JSON).
    """
    try:
        with trio.fail_after(within):
            async with (
                httpx.AsyncClient(timeout=within, follow_redirects=False) as client,
                client.stream("GET", url, headers={"accept": "application/json"}) as r,
            ):
                if r.status_code != 200:
                    raise FetchError(f"GET {url}: HTTP {r.status_code}")
                body = await _read_bounded(r)
        document = json.loads(body)
    except (httpx.HTTPError, trio.TooSlowError, ValueError, OSError) as exc:
        raise FetchError(f"GET {url}: {type(exc).__name__}: {exc}") from None
    if not isinstance(document, dict):
        raise FetchError(f"GET {url}: not a JSON object")
    return document


async def _read_bounded(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_DOCUMENT:
            raise FetchError(f"GET {response.url}: larger than {MAX_DOCUMENT} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def metadata_urls(issuer: str) -> tuple[str, str]:
    """RFC 8414 §3.1's URL (well-known part before the issuer's path), then OIDC's."""
    base = issuer.rstrip("/")
    scheme, _, rest = base.partition("://")
    host, slash, path = rest.partition("/")
    rfc8414 = f"{scheme}://{host}/.well-known/oauth-authorization-server{slash}{path}"
    return rfc8414, f"{base}/.well-known/openid-configuration"


@attrs.define(eq=False)
class Endpoints:
    """Where the issuer publishes its keys and answers introspection."""

    jwks_uri: str | None
    introspection_endpoint: str | None


async def discover(settings: Settings) -> Endpoints:
    """The issuer's endpoints: those configured, the rest from its metadata.

    Raises:
        FetchError: if the metadata is needed and cannot be had, or names another
            issuer.
    """
    configured = settings.introspection and settings.introspection.endpoint
    if settings.jwks_uri is not None and (configured or settings.introspection is None):
        return Endpoints(settings.jwks_uri, configured or None)
    problems = []
    for url in metadata_urls(settings.issuer):
        try:
            document = await fetch_json(url, settings.timeout)
        except FetchError as exc:
            problems.append(str(exc))
            continue
        if document.get("issuer") != settings.issuer:
            raise FetchError(
                f"{url} describes issuer {document.get('issuer')!r}, not "
                f"{settings.issuer!r} (RFC 8414 §3.3); check the issuer URL"
            )
        jwks = settings.jwks_uri or _str(document.get("jwks_uri"))
        found = configured or _str(document.get("introspection_endpoint"))
        return Endpoints(jwks, found)
    raise FetchError("; ".join(problems))


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_jwks(document: Mapping[str, Any]) -> dict[str | None, PublicKey]:
    """The usable public signing keys of a JWKS, by ``kid``.

    Keys for encryption (``use: enc``), of unknown types, or that fail to import are
    left out; a private key's private part is dropped.
    """
    keys: dict[str | None, PublicKey] = {}
    raw = document.get("keys")
    for entry in raw if isinstance(raw, list) else ():
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        key_type = KEY_TYPES.get(entry.get("kty"))  # type: ignore[arg-type]
        if key_type is None:
            continue
        public = {k: v for k, v in entry.items() if k not in PRIVATE_MEMBERS}
        try:
            key = key_type.import_key(public)
        except (JoseError, ValueError, TypeError, LookupError):  # unknown crv: KeyError
            continue
        kid = entry.get("kid")
        keys[kid if isinstance(kid, str) else None] = key
    return keys


PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


@attrs.define(eq=False)
class KeyCache:
    """The issuer's endpoints and signing keys, refreshed by the rules above."""

    settings: Settings
    endpoints: Endpoints | None = None
    keys: dict[str | None, PublicKey] = attrs.field(factory=dict)
    fetched_at: float = -math.inf
    """When the keys were last fetched (Trio's clock)."""
    tried_at: float = -math.inf
    """When a fetch was last attempted, successful or not."""
    refreshing: trio.Event | None = None
    """Set when the refresh in flight ends; None while none runs."""

    async def key(self, kid: str | None) -> PublicKey | None:
        """The key named ``kid`` (or the only key, when the token names none).

        A held key is returned at once (stale keys start a refresh in the
        background); a key not held waits for a refresh, at most ``timeout``.
        """
        found = self._find(kid)
        if found is not None:
            if trio.current_time() - self.fetched_at > self.settings.jwks_ttl:
                self._start_refresh()
            return found
        done = self._start_refresh()
        if done is not None:
            with trio.move_on_after(self.settings.timeout):
                await done.wait()
        return self._find(kid)

    async def newer(self, kid: str | None, held: PublicKey) -> PublicKey | None:
        """Another key under ``kid`` than ``held`` (whose signature did not verify),
        if the keys are stale or being refreshed: the issuer may have rotated the
        key under the same ``kid``. Waits for that refresh, at most ``timeout``;
        None at once when the keys are fresh."""
        stale = trio.current_time() - self.fetched_at > self.settings.jwks_ttl
        done = self.refreshing
        if done is None and stale:
            done = self._start_refresh()
        if done is None:
            return None
        with trio.move_on_after(self.settings.timeout):
            await done.wait()
        found = self._find(kid)
        return None if found is None or found is held else found

    def _find(self, kid: str | None) -> PublicKey | None:
        if kid is None and len(self.keys) == 1:
            return next(iter(self.keys.values()))
        return self.keys.get(kid) if kid is not None else None

    def _start_refresh(self) -> trio.Event | None:
        """The refresh in flight, or a new one if ``jwks_min_interval`` allows;
        None when none runs (the interval forbids one)."""
        if self.refreshing is not None:
            return self.refreshing
        now = trio.current_time()
        if now - self.tried_at < self.settings.jwks_min_interval:
            return None
        self.tried_at = now
        done = self.refreshing = trio.Event()
        # A system task: the refresh belongs to no request (one that gives up,
        # or whose client leaves, must not cancel it for the others).
        trio.lowlevel.spawn_system_task(
            self._refresh, done, name="trio_mcp.auth: refresh the issuer's keys"
        )
        return done

    async def _refresh(self, done: trio.Event) -> None:
        """Fetch the endpoints (once) and the JWKS, within one ``timeout``; never
        raises (a system task's exception would end the Trio run)."""
        try:
            document = await self._fetch_keys()
        except FetchError as exc:
            log.warning(
                "could not refresh the issuer's keys (%s); keeping the %d held",
                exc,
                len(self.keys),
            )
        except Exception:  # a bug must not end the whole Trio run
            log.exception("refreshing the issuer's keys failed; keeping those held")
        else:
            self.keys = parse_jwks(document)
            self.fetched_at = trio.current_time()
        finally:
            self.refreshing = None
            done.set()

    async def _fetch_keys(self) -> dict[str, Any]:
        """The JWKS document, discovery included, within one ``timeout`` in all.

        Raises:
            FetchError: on any failure, running out of time included.
        """
        timeout = self.settings.timeout
        try:
            with trio.fail_after(timeout):
                endpoints = await self.resolve()
                if endpoints.jwks_uri is None:
                    raise FetchError("the issuer's metadata names no jwks_uri")
                return await fetch_json(endpoints.jwks_uri, timeout)
        except trio.TooSlowError:
            raise FetchError(f"no answer within {timeout:g} s") from None

    async def resolve(self) -> Endpoints:
        """The issuer's endpoints, discovered once (a failure is retried later).

        Raises:
            FetchError: if they cannot be discovered now.
        """
        if self.endpoints is None:
            self.endpoints = await discover(self.settings)
        return self.endpoints
