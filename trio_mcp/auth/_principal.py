"""``TokenPrincipal``: who a verified token speaks for, as handlers see it."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from trio_mcp._json import JsonValue

__all__ = ["HeldToken", "TokenPrincipal", "principal_of", "scopes_of"]


class HeldToken:
    """A verified access token, held for the one place that needs it (token
    exchange). Its repr and str are masked; it is not an attrs class, a mapping
    or a string, so nothing that structures a principal (cattrs, JSON) can write
    it out by accident.

    Not a ``Secret``: a ``Secret`` is masked in every log record while it lives,
    and a busy server holds thousands of verified tokens at once.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The token; keep it out of anything that is logged or returned."""
        return self._value

    def __repr__(self) -> str:
        return "HeldToken('***')"

    __str__ = __repr__

    def __reduce__(self) -> str:
        raise TypeError("a HeldToken is not pickled")


def _frozen_claims(claims: Mapping[str, JsonValue]) -> Mapping[str, JsonValue]:
    return MappingProxyType(dict(claims))


@attrs.frozen
class TokenPrincipal:
    """The principal of a request whose bearer token was verified.

    It holds the token only for ``TokenExchange`` (RFC 8693: the caller's token is
    what is exchanged), as a ``HeldToken`` outside its repr and equality, so no log,
    receipt or error shows it.

    Attributes:
        id: The token's ``sub``, else its ``client_id`` (receipts name it).
        client_id: The OAuth client the token was issued to, when known.
        scopes: The token's scopes.
        claims: The verified JWT claims, or the introspection answer (read-only).
        issuer: The authorization server that issued the token.
        token: The verified access token itself (``token.reveal()`` gives it);
            None for a principal built without one.
    """

    id: str
    client_id: str | None
    scopes: frozenset[str]
    claims: Mapping[str, JsonValue] = attrs.field(
        converter=_frozen_claims, eq=False, repr=False
    )
    issuer: str
    token: HeldToken | None = attrs.field(
        default=None, init=False, eq=False, repr=False
    )
    """Not an ``__init__`` argument, so what rebuilds a principal from its init
    fields (a durable task's start) leaves it out: set by ``principal_of``."""


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token's claims carry: ``scope`` (RFC 9068, space-separated),
    else ``scp`` (a list or a string, as some issuers write it)."""
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(s for s in value if isinstance(s, str) and s)
    return frozenset()


def principal_of(
    claims: Mapping[str, Any], issuer: str, token: str | None = None
) -> TokenPrincipal:
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
    principal = TokenPrincipal(
        id=ident,
        client_id=client,
        scopes=scopes_of(claims),
        claims=claims,
        issuer=issuer,
    )
    if token is not None:
        object.__setattr__(principal, "token", HeldToken(token))
    return principal
