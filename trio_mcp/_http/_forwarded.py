"""Who is calling, for a rate limit: the principal, else the client's address.

The address is the peer of the TCP connection (ASGI ``scope["client"]``, the
caller's ``peer``). Behind a
reverse proxy that peer is the proxy, so the client is read from ``Forwarded``
(RFC 7239) or else ``X-Forwarded-For``, but only when the peer is a proxy the
operator named as trusted: anyone can send those headers. The list is walked from
the right (the hop nearest to us) past every trusted proxy; the first address that
is not one is the client.
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Mapping

from .._context import principal_id
from .._rate_limit import RateLimit

__all__ = ["caller_key", "client_address"]


def caller_key(
    principal: object | None,
    peer: str | None,
    headers: Mapping[str, str],
    limit: RateLimit,
) -> str:
    """The bucket key of a request: its principal's id, else its client's address.

    Hashed, so a key holds no identifier in the clear (Redis keys get listed).
    """
    who = principal_id(principal)
    kind = "p" if who is not None else "a"
    if who is None:
        who = client_address(peer, headers, limit) or "unknown"
    digest = hashlib.sha256(f"{kind}:{who}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def client_address(
    peer: str | None, headers: Mapping[str, str], limit: RateLimit
) -> str | None:
    """The client's address (``peer`` is the TCP peer), honouring forwarding
    headers from trusted proxies only."""
    if peer is None or not _trusted(peer, limit):
        return peer
    hops = _forwarded_for(headers)
    for hop in reversed(hops):
        if not _trusted(hop, limit):
            return hop
    return hops[0] if hops else peer


def _trusted(address: str, limit: RateLimit) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in limit.trusted_proxies)


def _forwarded_for(headers: Mapping[str, str]) -> list[str]:
    """The addresses a request passed through, client first."""
    forwarded = headers.get("forwarded")
    if forwarded is not None:
        hops = []
        for element in forwarded.split(","):
            for pair in element.split(";"):
                name, _, value = pair.strip().partition("=")
                if name.strip().lower() == "for":
                    hops.append(_node(value))
        return [h for h in hops if h]
    chain = headers.get("x-forwarded-for", "")
    return [h for h in (_node(part) for part in chain.split(",")) if h]


def _node(value: str) -> str:
    """An address from a ``for=`` node: quotes, brackets and a port removed."""
    value = value.strip().strip('"')
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") == 1:  # IPv4 with a port
        return value.partition(":")[0]
    return value
