"""The settings of a resource server: checked once, when they are written.

``Introspection`` configures RFC 7662 for opaque tokens; ``Settings`` holds
``BearerAuth``'s checked arguments. A mistake (an HMAC algorithm, a bare string
where a list belongs, an issuer that is not a URL) is a ``ValueError`` or
``TypeError`` at construction, not a 401 at the first request.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

import attrs

from trio_mcp import Capability, Secret
from trio_mcp import _checks as checks
from trio_mcp._errors import InvalidArgument

__all__ = ["DEFAULT_ALGORITHMS", "Introspection", "Settings"]

#: The asymmetric JWS algorithms accepted by default (RFC 7518, RFC 8037).
DEFAULT_ALGORITHMS = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
    "ES256", "ES384", "ES512", "EdDSA", "Ed25519", "Ed448",
)  # fmt: skip
#: ``BearerAuth(dpop=...)``: DPoP-bound tokens (RFC 9449) accepted beside bearer
#: tokens, or required.
DPOP_MODES = ("allowed", "required")
#: Algorithms never accepted, whatever ``algorithms=`` says: ``none`` is no
#: signature, and an HMAC key is a shared secret a resource server cannot hold
#: safely (and the classic confusion verifies an HS256 token keyed with the
#: issuer's *public* key).
FORBIDDEN_ALGORITHMS = frozenset({"none", "HS256", "HS384", "HS512"})


def _secret(value: str | Secret[str]) -> Secret[str]:
    if isinstance(value, Secret):
        return value
    return Secret(checks.string(value, "Introspection.client_secret"))


def _finite(value: object) -> bool:
    """A number (not a boolean) that a float holds and that is not NaN or infinite."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _non_negative(
    instance: object, attribute: attrs.Attribute[float], value: float
) -> None:
    if not _finite(value) or value < 0:
        raise InvalidArgument(
            f"{attribute.name} must be a finite number >= 0, not {value!r}"
        )


def _url(name: str, value: str) -> str:
    try:
        parts = urlsplit(value) if isinstance(value, str) else None
    except ValueError:  # an unbalanced IPv6 bracket
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.netloc
        or parts.fragment
    ):
        raise InvalidArgument(
            f"{name} {value!r} must be an absolute http(s) URL, such as 'https://auth.example.com'"
        )
    return value


@attrs.frozen
class Introspection:
    """RFC 7662 token introspection, for access tokens that are not JWTs.

    Args:
        client_id: This resource server's client id at the authorization server.
        client_secret: Its secret (sent with HTTP Basic authentication); held as a
            ``Secret``, so it never shows in a repr or a log.
        endpoint: The introspection endpoint; by default the issuer's metadata
            names it.
        cache_ttl: Seconds an answer is reused (never past the token's ``exp``);
            a revoked token stops working within it. 0 asks every time.
    """

    client_id: str = attrs.field(validator=checks.text)
    client_secret: Secret[str] = attrs.field(converter=_secret)
    endpoint: str | None = attrs.field(
        default=None, validator=checks.optional(checks.text)
    )
    cache_ttl: float = attrs.field(default=30.0, validator=_non_negative)

    def __attrs_post_init__(self) -> None:
        if self.endpoint is not None:
            _url("introspection endpoint", self.endpoint)


def scope_names(name: str, values: Iterable[str]) -> tuple[str, ...]:
    if isinstance(values, str):
        raise InvalidArgument(
            f"{name} must be a list of strings, not the string {values!r}"
        )
    out = checks.as_tuple(values, name, "a list of str")
    for value in out:
        if not isinstance(value, str) or not value or " " in value:
            raise InvalidArgument(f"{name}: {value!r} is not a scope or algorithm name")
    return out


def algorithms_of(algorithms: Iterable[str] | None) -> tuple[str, ...]:
    """The allowed JWS algorithms, refusing ``none`` and HMAC."""
    if algorithms is None:
        return DEFAULT_ALGORITHMS
    chosen = scope_names("algorithms", algorithms)
    bad = sorted(set(chosen) & FORBIDDEN_ALGORITHMS)
    if bad:
        raise InvalidArgument(
            f"algorithms {bad} are never accepted: 'none' is no signature and HMAC "
            "needs a shared secret; use asymmetric ones such as RS256 or ES256"
        )
    unknown = sorted(set(chosen) - set(DEFAULT_ALGORITHMS))
    if unknown or not chosen:
        raise InvalidArgument(
            f"algorithms must be some of {', '.join(DEFAULT_ALGORITHMS)}; "
            f"got {list(chosen)}"
        )
    return chosen


def scope_map(
    scopes: Mapping[str, Iterable[Capability]] | None,
) -> dict[str, frozenset[str]]:
    """Each scope's capability names, checked."""
    if scopes is not None and not isinstance(scopes, Mapping):
        raise checks.invalid(
            "BearerAuth(scopes=...)", "a mapping of scopes to Capability lists", scopes
        )
    out: dict[str, frozenset[str]] = {}
    for scope, caps in (scopes or {}).items():
        scope_names("scopes", [scope])
        listed = checks.as_tuple(caps, f"scopes[{scope!r}]", "a list of Capability")
        if not all(isinstance(c, Capability) for c in listed):
            raise InvalidArgument(
                f"scope {scope!r} must map to Capability values, got {listed!r}"
            )
        out[scope] = frozenset(c.name for c in listed)
    return out


@attrs.frozen(kw_only=True, eq=False)
class Settings:
    """``BearerAuth``'s arguments, checked."""

    issuer: str
    audience: str
    scopes: dict[str, frozenset[str]]
    required_scopes: tuple[str, ...]
    jwks_uri: str | None
    introspection: Introspection | None
    algorithms: tuple[str, ...]
    leeway: float
    hide_ungranted: bool
    jwks_ttl: float
    jwks_min_interval: float
    timeout: float
    dpop: str = "allowed"
    dpop_leeway: float = 300.0

    def __attrs_post_init__(self) -> None:
        _url("issuer", self.issuer)
        _url("audience", self.audience)
        if self.jwks_uri is not None:
            _url("jwks_uri", self.jwks_uri)
        if self.dpop not in DPOP_MODES or not isinstance(self.dpop, str):
            raise checks.invalid(
                "BearerAuth(dpop=...)", "'allowed' or 'required'", self.dpop
            )
        for name in ("leeway", "jwks_ttl", "jwks_min_interval", "dpop_leeway"):
            value = getattr(self, name)
            if not _finite(value) or value < 0:
                raise InvalidArgument(
                    f"{name} must be a finite number >= 0, not {value!r}"
                )
        if not _finite(self.timeout) or self.timeout <= 0:
            raise InvalidArgument(
                f"timeout must be a finite number > 0, not {self.timeout!r}"
            )
        if not isinstance(self.hide_ungranted, bool):
            raise checks.invalid(
                "BearerAuth(hide_ungranted=...)", "True or False", self.hide_ungranted
            )
        if self.introspection is not None and not isinstance(
            self.introspection, Introspection
        ):
            raise InvalidArgument("introspection must be an Introspection(...)")
