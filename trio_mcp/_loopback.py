"""Loopback, decided in one place: which hosts and addresses are this machine only.

Two questions with two answers, both here:

- **An address** (where to bind, the local address a request arrived on): loopback
  is ``localhost``, any of 127.0.0.0/8, ``::1`` and an IPv4-mapped 127/8 address.
  Beyond loopback, HTTP needs ``require_auth=True`` (``McpError.InsecureBinding``).
- **A name** a browser sends in ``Host`` or ``Origin`` (DNS-rebinding protection): a
  loopback server answers only to ``LOOPBACK_HOSTS``, with any port, besides the
  names its owner allows. A page at ``http://127.0.0.2`` is not among them: a name is
  allowed by listing it, not by what it resolves to.

No I/O and no trio here.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from ._errors import InsecureBinding

__all__ = ["LOOPBACK_HOSTS", "arrived_on_loopback", "is_loopback", "is_loopback_name"]

#: Host names a loopback server accepts in ``Host`` and ``Origin`` (with any port), as
#: they are written there: an IPv6 address in brackets.
LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})


def check_binding(host: str, *, require_auth: bool, serving: str = "HTTP") -> None:
    """Refuse to listen beyond loopback unless every request must be authenticated.

    ``serve_http`` and ``serve_websocket`` call it before binding anything.

    Raises:
        McpError.InsecureBinding: if ``host`` is not loopback and ``require_auth`` is false.
    """
    if not require_auth and not is_loopback(host):
        raise InsecureBinding(
            f"refusing to serve {serving} on {host!r} without authentication: bind "
            "to 127.0.0.1, or pass auth=BearerAuth(...), or require_auth=True behind "
            "an authenticating layer"
        )


@functools.lru_cache(maxsize=64)
def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, 127/8, ``::1``).

    Cached: every HTTP request asks it about the address it arrived on, and parsing
    an IP address costs more than the rest of that check.
    """
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def arrived_on_loopback(scope: Mapping[str, Any]) -> bool:
    """Whether an ASGI request's local address (``scope["server"]``) is loopback.

    A server that reports none (Hypercorn on a Unix socket, some test harnesses)
    is not known to be local, so it counts as not loopback.
    """
    server = scope.get("server")
    if not server:
        return False
    return is_loopback(str(server[0]))


def is_loopback_name(hostname: str | None) -> bool:
    """Whether a URL's host, as ``urlsplit(...).hostname`` gives it (lower-cased, an
    IPv6 address without brackets), is one of ``LOOPBACK_HOSTS``."""
    if hostname is None:
        return False
    return (f"[{hostname}]" if ":" in hostname else hostname) in LOOPBACK_HOSTS
