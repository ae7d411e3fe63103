"""Who is calling, for a bound per caller: the principal, else the client's address.

The address is the peer of the TCP connection (ASGI ``scope["client"]``, a
WebSocket's remote address). Behind a reverse proxy that peer is the proxy, so the
client is read from a forwarding header, but only as the operator configured it
(``ClientAddresses``): only on a request whose peer is a proxy named in
``trusted_proxies`` (anyone can send those headers), and only the one header the
operator named (``forwarded_header``: ``X-Forwarded-For`` by default, or RFC 7239
``Forwarded``). Any other forwarding header a client sends changes nothing: a
proxy that sets only ``X-Forwarded-For`` passes a client's own ``Forwarded: for=``
through untouched, and reading it would let the client pick its own bucket.

The named header is walked from the right (the hop nearest to us, written by our
proxy) past every trusted proxy; the first address that is not one is the client.
A hop that is not an IP address (an RFC 7239 obfuscated name, ``unknown``, junk a
client prepended) stops the walk at the proxy that wrote it: its address stands for
the client, which shares that proxy's bucket rather than choosing one.

Keys group IPv6 clients by /64 (one customer's network; a client holds a whole /64
and could take a fresh address per request) and IPv4-mapped IPv6 addresses as the
IPv4 address they are.
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Iterable, Mapping
from typing import Final, Literal

import attrs

from .._checks import invalid
from .._context import principal_id
from .._rate_limit import Network, RateLimit, networks

__all__ = [
    "FORWARDED_HEADERS",
    "ClientAddresses",
    "ForwardedHeader",
    "address_key",
    "caller_key",
]

#: The forwarding headers the operator may name (lower-cased).
ForwardedHeader = Literal["x-forwarded-for", "forwarded"]
FORWARDED_HEADERS: Final[tuple[ForwardedHeader, ...]] = ("x-forwarded-for", "forwarded")
#: IPv6 clients share a bucket per network of this many leading bits.
IPV6_PREFIX: Final = 64

IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def _trusted(values: Iterable[str] | None) -> frozenset[Network]:
    return frozenset() if values is None else networks(values, "trusted_proxies")


def _header(value: str) -> ForwardedHeader:
    folded = value.lower() if isinstance(value, str) else value
    if folded not in FORWARDED_HEADERS:
        raise invalid("forwarded_header", "'x-forwarded-for' or 'forwarded'", value)
    return folded


@attrs.frozen
class ClientAddresses:
    """How a transport finds the client's address behind reverse proxies.

    Args:
        trusted_proxies: Addresses or networks (``"10.0.0.0/8"``) of the reverse
            proxies whose forwarding header names the client; from any other peer
            every forwarding header is ignored.
        forwarded_header: The one header those proxies set:
            ``"x-forwarded-for"`` (the default) or ``"forwarded"`` (RFC 7239).
    """

    trusted_proxies: frozenset[Network] = attrs.field(default=None, converter=_trusted)
    forwarded_header: ForwardedHeader = attrs.field(
        default="x-forwarded-for", converter=_header
    )

    @classmethod
    def of(
        cls,
        trusted_proxies: Iterable[str] | None,
        forwarded_header: str | None,
        rate_limit: RateLimit | None,
    ) -> ClientAddresses:
        """A transport's options; ``RateLimit(trusted_proxies=...)`` (the older
        spelling) stands in for ``trusted_proxies`` when it is not given."""
        if trusted_proxies is None and rate_limit is not None:
            trusted_proxies = [str(n) for n in rate_limit.trusted_proxies]
        return cls(trusted_proxies, forwarded_header or "x-forwarded-for")

    def client(self, peer: str | None, headers: Mapping[str, str]) -> str | None:
        """The client's address: ``peer`` (the TCP peer), or what the named
        header says when ``peer`` is a trusted proxy."""
        if peer is None or not self.trusted_proxies or not self._trusts(peer):
            return peer
        value = headers.get(self.forwarded_header)
        if value is None:
            return peer
        nearest = peer
        hops = _hops(value, self.forwarded_header == "forwarded")
        for hop in reversed(hops):
            ip = _ip(hop)
            if ip is None:
                return nearest  # the proxy that wrote junk stands for its client
            if not self._trusts_ip(ip):
                return str(ip)
            nearest = str(ip)
        return nearest

    def _trusts(self, address: str) -> bool:
        ip = _ip(address)
        return ip is not None and self._trusts_ip(ip)

    def _trusts_ip(self, ip: IP) -> bool:
        return any(ip in network for network in self.trusted_proxies)


def _ip(text: str) -> IP | None:
    """``text`` as an IP address (IPv4-mapped IPv6 as IPv4), or None."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _hops(value: str, rfc7239: bool) -> list[str]:
    """The addresses in one forwarding header, client first.

    Split on every comma, quoted or not: a client that opens a quote in its own
    part cannot swallow the hop our proxy appends after it.
    """
    hops = []
    for element in value.split(","):
        if not rfc7239:
            hops.append(_node(element))
            continue
        for pair in element.split(";"):
            name, _, node = pair.strip().partition("=")
            if name.strip().lower() == "for":
                hops.append(_node(node))
    return hops


def _node(value: str) -> str:
    """An address from a node: quotes, brackets and a port removed."""
    value = value.strip().strip('"')
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") == 1:  # IPv4 with a port
        return value.partition(":")[0]
    return value


def address_key(address: str | None) -> str:
    """What one client's bucket is named by: an IPv6 address's /64, an IPv4
    address (mapped ones included), else the text as given."""
    if address is None:
        return "unknown"
    ip = _ip(address)
    if ip is None:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        network = ipaddress.IPv6Network((ip, IPV6_PREFIX), strict=False)
        return str(network)
    return str(ip)


def caller_key(principal: object | None, address: str | None) -> str:
    """The bucket key of a request: its principal's id, else its client's address
    (``address_key``).

    Hashed, so a key holds no identifier in the clear (Redis keys get listed).
    """
    who = principal_id(principal)
    kind = "p" if who is not None else "a"
    if who is None:
        who = address_key(address)
    digest = hashlib.sha256(f"{kind}:{who}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]
