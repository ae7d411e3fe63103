"""``RateLimit``: a token bucket per caller, and the arithmetic both stores share.

A bucket holds at most ``burst`` tokens (``calls`` unless given) and gains
``calls / per`` tokens a second; each call takes one. A call that finds less than
one token is refused, and told how long until one is there. The state is two
numbers (tokens, when they were counted), so the in-memory store keeps a tuple per
key and ``RedisStore`` a hash updated by one Lua script (``_redis.BUCKET_SCRIPT``),
which runs the same arithmetic atomically on the server.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from datetime import timedelta
from typing import Final

import attrs

from . import _checks as checks
from ._errors import InvalidArgument
from ._units import seconds

__all__ = ["Bucket", "Network", "RateLimit", "networks", "take"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _per(value: float | timedelta) -> float:
    try:
        result = seconds(value, what="RateLimit.per", finite=True)
    except InvalidArgument:
        result = None
    if result is None or not result > 0:
        raise InvalidArgument(
            "RateLimit.per must be a positive, finite number of seconds"
        )
    return result


_calls = checks.at_least(1)
_burst = checks.optional(_calls)


def networks(values: Iterable[str], where: str) -> frozenset[Network]:
    """IP addresses or networks (``"10.0.0.0/8"``), as networks.

    Raises:
        InvalidArgument: naming ``where`` for anything else.
    """
    if isinstance(values, str):
        values = (values,)
    listed = checks.as_tuple(values, where, "a list of IP addresses or networks")
    try:
        return frozenset(ipaddress.ip_network(v.strip(), strict=False) for v in listed)
    except (ValueError, TypeError, AttributeError) as exc:
        raise InvalidArgument(
            f"{where} takes IP addresses or networks: {exc}"
        ) from None


def _networks(values: Iterable[str]) -> frozenset[Network]:
    return networks(values, "RateLimit.trusted_proxies")


@attrs.frozen
class RateLimit:
    """At most ``calls`` calls every ``per`` seconds for each caller (a token bucket).

    Given as ``mount(..., rate_limit=...)`` or ``serve_http(..., rate_limit=...)``.
    The caller is the principal when the request is authenticated, else the client's
    address. A call beyond the limit is answered with HTTP 429, ``Retry-After`` and
    a JSON-RPC -32000 error, and leaves a ``refused`` receipt. Only calls count
    (``tools/call``, ``prompts/get``, ``resources/read``, ``completion/complete``);
    discovery, lists and the tasks methods do not.

    Args:
        calls: Calls allowed per ``per`` seconds, on average.
        per: The period, in seconds or as a ``timedelta``.
        burst: Most calls allowed at once after a quiet spell; ``calls`` if None.
        trusted_proxies: The older spelling of the ``trusted_proxies=`` option of
            ``mount``, ``serve_http`` and ``serve_websocket`` (which wins when both
            are given): addresses or networks of reverse proxies whose forwarding
            header (``forwarded_header=``, ``X-Forwarded-For`` by default) names
            the client. Without either, forwarding headers are ignored, since any
            client can send them.
    """

    calls: int = attrs.field(validator=_calls)
    per: float = attrs.field(converter=_per)
    burst: int | None = attrs.field(default=None, kw_only=True, validator=_burst)
    trusted_proxies: frozenset[Network] = attrs.field(
        default=(), kw_only=True, converter=_networks
    )

    @property
    def capacity(self) -> int:
        """Tokens a full bucket holds."""
        return self.calls if self.burst is None else self.burst

    @property
    def rate(self) -> float:
        """Tokens gained per second."""
        return self.calls / self.per


Bucket = tuple[float, float]
"""A bucket's state: its tokens, and the time they were counted (seconds)."""

#: Refused calls do not empty a bucket further: its tokens never go below zero.
_FLOOR: Final = 0.0


def take(bucket: Bucket | None, now: float, limit: RateLimit) -> tuple[Bucket, float]:
    """Take one token from ``bucket`` (None: a full one) at ``now``.

    Returns the new state and the seconds until a token is there: 0.0 when the
    call may go ahead.
    """
    capacity = limit.capacity
    if bucket is None:
        tokens = float(capacity)
    else:
        held, then = bucket
        tokens = min(capacity, held + max(0.0, now - then) * limit.rate)
    if tokens >= 1.0:
        return (tokens - 1.0, now), 0.0
    return (max(tokens, _FLOOR), now), (1.0 - tokens) / limit.rate
