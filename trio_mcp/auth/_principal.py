"""``TokenPrincipal``: who a verified token speaks for, as handlers see it."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from trio_mcp._json import JsonValue

__all__ = ["TokenPrincipal", "scopes_of"]


def _frozen_claims(claims: Mapping[str, JsonValue]) -> Mapping[str, JsonValue]:
    return MappingProxyType(dict(claims))


@attrs.frozen
class TokenPrincipal:
    """The principal of a request whose bearer token was verified.

    It never holds the token itself, so no log, receipt or error can show it.

    Attributes:
        id: The token's ``sub``, else its ``client_id`` (receipts name it).
        client_id: The OAuth client the token was issued to, when known.
        scopes: The token's scopes.
        claims: The verified JWT claims, or the introspection answer (read-only).
        issuer: The authorization server that issued the token.
    """

    id: str
    client_id: str | None
    scopes: frozenset[str]
    claims: Mapping[str, JsonValue] = attrs.field(
        converter=_frozen_claims, eq=False, repr=False
    )
    issuer: str


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token's claims carry: ``scope`` (RFC 9068, space-separated),
    else ``scp`` (a list or a string, as some issuers write it)."""
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(s for s in value if isinstance(s, str) and s)
    return frozenset()


def principal_of(claims: Mapping[str, Any], issuer: str) -> TokenPrincipal:
    """The principal a verified token (or an introspection answer) names.

    Raises:
        ValueError: if it names no one (neither ``sub`` nor ``client_id``).
    """
    client_id = claims.get("client_id", claims.get("azp"))
    client = client_id if isinstance(client_id, str) else None
    sub = claims.get("sub")
    ident = sub if isinstance(sub, str) and sub else client
    if not ident:
        raise ValueError("the token names neither a subject (sub) nor a client_id")
    return TokenPrincipal(
        id=ident,
        client_id=client,
        scopes=scopes_of(claims),
        claims=claims,
        issuer=issuer,
    )
