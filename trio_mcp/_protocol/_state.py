"""Sealing and opening multi round-trip ``requestState`` (MCP revision 2026-07-28,
multi round-trip server rules).

``requestState`` travels through the client, so it is attacker-controlled input, and
what a handler carries in it (``NeedsInput(state=...)``) may be private. The token
is sealed with an AEAD (AES-256-GCM, from the ``cryptography`` package): the client
can neither read nor alter it. The token is ``v2.<nonce>.<ciphertext>`` (base64url;
a fresh 96-bit nonce each time); the ciphertext holds the carried state, an expiry
and the descriptors of the requests asked. The associated data binds it to the
principal id, the method and a digest of the request's salient params (tool or
prompt name plus the canonical JSON of its arguments; a resource's URI), so it
opens only for the same caller repeating the same request. The principal id is
part of the associated data only, so it never appears in the token.

Keys come from ``Server(state_key=...)`` (one key, or a list: the first seals, all
open, for rotation), else the environment variable ``TRIO_MCP_STATE_KEY`` (keys
separated by commas), else a random key made once per process. Each configured key
(at least 32 bytes) is turned into its AES key with HMAC-SHA256 under a fixed label.
With several processes or replicas behind one endpoint, configure a shared key: a
random key makes each replica refuse the others' state.

No I/O and no trio here; ``cryptography`` is imported on the first seal or open.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from .._checks import as_tuple
from .._errors import InvalidArgument, StateKeyRequired
from .._json import JsonObject, JsonValue, dumps

__all__ = [
    "DEFAULT_STATE_TTL",
    "ENV_STATE_KEY",
    "MIN_KEY_BYTES",
    "Binding",
    "InvalidState",
    "StateKeyRequired",
    "StateSealer",
    "parse_keys",
    "require_shared_key",
    "salient_digest",
]

#: Seconds a sealed state stays valid.
DEFAULT_STATE_TTL: Final = 600.0
MIN_KEY_BYTES: Final = 32
ENV_STATE_KEY: Final = "TRIO_MCP_STATE_KEY"
_VERSION: Final = "v2"
_NONCE_BYTES: Final = 12
#: Turns a configured key into the AES-256 key that seals with it.
_KEY_LABEL: Final = b"trio-mcp requestState v2 AES-256-GCM"

KeyConfig = bytes | str | Sequence[bytes | str] | None


class InvalidState(ValueError):
    """A ``requestState`` that must not reach the handler; the message says why."""


def require_shared_key(
    config: KeyConfig, *, processes: int, environ: Mapping[str, str] | None = None
) -> None:
    """Refuse to serve from several processes when no state key is configured.

    Without ``Server(state_key=...)`` or ``TRIO_MCP_STATE_KEY`` each process makes
    a random key, so the second round of a multi round-trip request fails whenever
    it lands on another process than the first.

    Raises:
        StateKeyRequired: if ``processes > 1`` and no key is configured.
    """
    env = (os.environ if environ is None else environ).get(ENV_STATE_KEY, "")
    if processes > 1 and config is None and not env.strip(" ,"):
        raise StateKeyRequired(
            f"{processes} worker processes need one shared requestState key, or a "
            "multi round-trip request fails when its rounds land on different "
            f"workers: set {ENV_STATE_KEY} (make one with: python -c "
            '"import secrets; print(secrets.token_urlsafe(32))") or pass '
            "Server(state_key=...), the same value on every worker and replica"
        )


@attrs.frozen(eq=False)
class Binding:
    """What a sealed state is bound to: who asked, by which method, with which params."""

    method: str
    digest: str
    principal: str | None = None


def _split(token: object) -> tuple[bytes, bytes]:
    """Return the nonce and the ciphertext of ``v2.<nonce>.<ciphertext>``.

    Only the shape is checked here; ``StateSealer.open`` authenticates the rest.

    Raises:
        InvalidState: if ``token`` is not a string of that shape in base64url.
    """
    if not isinstance(token, str):
        raise InvalidState("requestState must be a string")
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != _VERSION:
        raise InvalidState("requestState is not a token this server issued")
    try:
        nonce, sealed = _unb64(parts[1]), _unb64(parts[2])
    except (ValueError, binascii.Error):
        raise InvalidState("requestState is not a token this server issued") from None
    if len(nonce) != _NONCE_BYTES or not sealed:
        raise InvalidState("requestState is not a token this server issued")
    return nonce, sealed


def _canonical(value: JsonValue) -> bytes:
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    ).encode()


def salient_digest(method: str, params: Mapping[str, JsonValue]) -> str:
    """Return the digest of the params a retry must repeat unchanged.

    ``tools/call`` and ``prompts/get``: the name and the arguments (canonical JSON,
    absent arguments equal to ``{}``); ``resources/read``: the URI.
    """
    if method == "resources/read":
        salient: JsonValue = {"uri": params.get("uri")}
    else:
        arguments = params.get("arguments")
        salient = {"name": params.get("name"), "arguments": arguments or {}}
    return _b64(hashlib.sha256(_canonical(salient)).digest())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text or any(c not in _B64_ALPHABET for c in text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_B64_ALPHABET: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)


def _key_bytes(key: bytes | str) -> bytes:
    raw = key.encode() if isinstance(key, str) else key
    if not isinstance(raw, bytes):
        raise InvalidArgument("a state key is bytes or str")
    if len(raw) < MIN_KEY_BYTES:
        raise InvalidArgument(
            f"a state key must be at least {MIN_KEY_BYTES} bytes; "
            "make one with secrets.token_urlsafe(32)"
        )
    return raw


def parse_keys(
    config: KeyConfig, *, environ: Mapping[str, str] | None = None
) -> tuple[bytes, ...]:
    """Return the keys to use: configured, else from the environment, else random.

    Raises:
        McpError.InvalidArgument: if a configured key is shorter than 32 bytes or
            neither bytes nor str, or the list is empty (a ``ValueError`` and a
            ``TypeError``, what this raised before).
    """
    if config is None:
        env = (os.environ if environ is None else environ).get(ENV_STATE_KEY, "")
        parts = [p.strip() for p in env.split(",") if p.strip()]
        if not parts:
            return (secrets.token_bytes(MIN_KEY_BYTES),)
        return tuple(_key_bytes(p) for p in parts)
    if isinstance(config, bytes | str):
        return (_key_bytes(config),)
    listed = as_tuple(
        config, "Server(state_key=...)", "a key (bytes or str), a list of keys or None"
    )
    keys = tuple(_key_bytes(k) for k in listed)
    if not keys:
        raise InvalidArgument("state_key is an empty list; give at least one key")
    return keys


def wall_clock() -> float:
    """Return ``time.time()``, looked up on each call.

    A default of ``time.time`` itself would be bound once, at import; looking it up
    lets a test that patches ``time.time`` move every server's clock, through the
    public ``Server`` alone.
    """
    return time.time()


@attrs.frozen(eq=False)
class StateSealer:
    """Seals and opens ``requestState`` tokens with AES-256-GCM.

    ``keys[0]`` seals; every key opens (rotation). ``clock`` returns Unix time in
    seconds; tests inject one to check expiry.
    """

    keys: tuple[bytes, ...] = attrs.field(converter=tuple[bytes, ...])
    ttl: float = DEFAULT_STATE_TTL
    clock: Callable[[], float] = wall_clock
    _made: dict[str, Any] = attrs.field(factory=dict, init=False, repr=False, eq=False)

    @keys.validator
    def _check(self, attribute: object, value: tuple[bytes, ...]) -> None:
        if not value:
            raise ValueError("a StateSealer needs at least one key")
        for key in value:
            _key_bytes(key)

    @classmethod
    def from_config(
        cls, config: KeyConfig = None, *, ttl: float = DEFAULT_STATE_TTL
    ) -> StateSealer:
        """Build a sealer from ``Server(state_key=...)`` (see ``parse_keys``)."""
        return cls(parse_keys(config), ttl=ttl)

    def _ciphers(self) -> tuple[Any, ...]:
        """One AES-256-GCM cipher per key, made on first use and kept."""
        ciphers = self._made.get("ciphers")
        if ciphers is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            ciphers = self._made["ciphers"] = tuple(
                AESGCM(hmac.new(key, _KEY_LABEL, hashlib.sha256).digest())
                for key in self.keys
            )
        return ciphers

    def seal(self, contents: JsonObject, binding: Binding) -> str:
        """Return a token carrying ``contents``, bound to ``binding``, expiring after
        ``ttl``; nobody without the key can read or change it.

        Raises:
            TypeError: if ``contents`` is not JSON.
        """
        body: JsonObject = {
            "exp": int(self.clock() + self.ttl),
            "m": binding.method,
            "c": contents,
        }
        try:
            plaintext = dumps(body).encode()
        except (TypeError, ValueError) as exc:
            raise TypeError("the carried state must be a JSON value") from exc
        nonce = secrets.token_bytes(_NONCE_BYTES)
        sealed = self._ciphers()[0].encrypt(nonce, plaintext, _bound(binding))
        return f"{_VERSION}.{_b64(nonce)}.{_b64(sealed)}"

    def open(self, token: object, binding: Binding) -> JsonObject:
        """Authenticate ``token`` against ``binding`` and return its contents.

        Raises:
            InvalidState: if the token is malformed, fails authentication (tampered,
                sealed with an unknown key, or for another principal or request), has
                expired, or was issued for another method.
        """
        from cryptography.exceptions import InvalidTag

        nonce, sealed = _split(token)
        bound = _bound(binding)
        for cipher in self._ciphers():
            try:
                plaintext = cipher.decrypt(nonce, sealed, bound)
                break
            except InvalidTag:
                continue
        else:
            raise InvalidState(
                "requestState does not verify: it was altered, sealed with a key this "
                "server does not hold, or issued for another caller or other arguments"
            )
        return self._contents(json.loads(plaintext), binding)

    def _contents(self, body: JsonValue, binding: Binding) -> JsonObject:
        if not isinstance(body, dict) or not isinstance(body.get("c"), dict):
            raise InvalidState(  # pragma: no cover - only we seal
                "requestState has an unexpected payload"
            )
        exp = body.get("exp")
        if not isinstance(exp, int) or self.clock() >= exp:
            raise InvalidState("requestState has expired; start the request again")
        if body.get("m") != binding.method:
            raise InvalidState(  # pragma: no cover - the associated data binds it too
                "requestState was issued for another method"
            )
        contents = body["c"]
        assert isinstance(contents, dict)
        return contents


def _bound(binding: Binding) -> bytes:
    """The associated data: what a sealed state is bound to."""
    return _canonical([_VERSION, binding.principal, binding.method, binding.digest])
