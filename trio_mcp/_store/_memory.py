"""``Store`` and ``MemoryStore``: what workers and replicas may share, kept in-process.

A store holds the state that must outlive one request: the rate-limit buckets, the
multi round-trip states already answered (``claim``: each is answered once) and
(with ``RedisStore``) the task records and the broadcast. ``MemoryStore``, the
default, keeps the buckets in this process's memory: each worker and replica then
limits on its own. Its memory is bounded: past ``max_keys`` callers, buckets that
have filled up again are forgotten (a full bucket is what a new caller gets anyway),
then the oldest.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from .. import _checks as checks
from .._rate_limit import Bucket, RateLimit, take

__all__ = ["ClaimsFull", "MemoryStore", "Store"]


class Store:
    """Where a server keeps state shared beyond one request (the interface).

    ``Server(store=...)`` takes a ``MemoryStore`` (the default) or a ``RedisStore``.
    """

    shared = False
    """Whether other processes see this store's state (task records among them)."""

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Keep what the store needs (a connection) for the block; here, nothing."""
        yield

    async def take(self, key: str, limit: RateLimit) -> float:
        """Take a token from ``key``'s bucket; return 0.0, or the seconds to wait."""
        raise NotImplementedError

    async def claim(self, key: str, seconds: float) -> bool:
        """Claim ``key`` for ``seconds``: True the first time, False while it is
        claimed (a multi round-trip ``requestState`` answered once).

        Raises:
            ClaimsFull: if no more claims can be held now (refuse, do not forget).
        """
        raise NotImplementedError

    async def put(self, key: str, value: bytes, seconds: float) -> None:
        """Keep ``value`` under ``key`` for ``seconds`` (a cache: it may be forgotten
        sooner). Write only what may be read by anyone with access to the store:
        secrets sealed, keys naming no secret."""
        raise NotImplementedError

    async def get(self, key: str) -> bytes | None:
        """The value ``put`` under ``key``, or None once expired or forgotten."""
        raise NotImplementedError


class ClaimsFull(Exception):
    """Every place for a claim is taken by one that has not expired yet."""


class MemoryStore(Store):
    """Rate-limit buckets in this process's memory (the default store).

    Args:
        max_keys: Most callers whose buckets are kept at once.
    """

    def __init__(self, *, max_keys: int = 100_000) -> None:
        self.max_keys = checks.count(max_keys, "MemoryStore(max_keys=...)", 1)
        self._buckets: dict[str, Bucket] = {}
        self._claims: dict[str, float] = {}
        """Claimed keys, until when (Trio's clock), oldest first."""
        self._values: dict[str, tuple[bytes, float]] = {}
        """Cached values (``put``), until when (Trio's clock), oldest first."""

    def __repr__(self) -> str:
        return f"MemoryStore(max_keys={self.max_keys})"

    async def take(self, key: str, limit: RateLimit) -> float:
        """Take a token from ``key``'s bucket; return 0.0, or the seconds to wait."""
        return self.take_now(key, limit)

    def take_now(self, key: str, limit: RateLimit) -> float:
        """``take`` without a checkpoint (nothing here waits)."""
        now = trio.current_time()
        bucket, wait = take(self._buckets.get(key), now, limit)
        if key not in self._buckets and len(self._buckets) >= self.max_keys:
            self._forget(now, limit)
        self._buckets[key] = bucket
        return wait

    async def claim(self, key: str, seconds: float) -> bool:
        """Claim ``key`` for ``seconds``: True the first time, False while claimed.

        At most ``max_keys`` claims are held: past that the expired ones go, and
        if none has expired the claim is refused (``ClaimsFull``) rather than an
        unexpired one forgotten, which would let it be claimed twice.
        """
        return self.claim_now(key, seconds)

    def claim_now(self, key: str, seconds: float) -> bool:
        """``claim`` without a checkpoint."""
        now = trio.current_time()
        until = self._claims.get(key)
        if until is not None and until > now:
            return False
        if until is None and len(self._claims) >= self.max_keys:
            self._claims = {k: t for k, t in self._claims.items() if t > now}
            if len(self._claims) >= self.max_keys:
                raise ClaimsFull(f"{self.max_keys} claims are held")
        self._claims.pop(key, None)
        self._claims[key] = now + seconds
        return True

    async def put(self, key: str, value: bytes, seconds: float) -> None:
        """Keep ``value`` for ``seconds``; past ``max_keys`` values, the expired go,
        then the oldest."""
        now = trio.current_time()
        self._values.pop(key, None)
        if len(self._values) >= self.max_keys:
            kept = {k: v for k, v in self._values.items() if v[1] > now}
            while len(kept) >= self.max_keys:
                del kept[next(iter(kept))]
            self._values = kept
        self._values[key] = (value, now + seconds)

    async def get(self, key: str) -> bytes | None:
        """The value kept under ``key``, or None once expired."""
        await trio.lowlevel.checkpoint()
        found = self._values.get(key)
        if found is None or found[1] <= trio.current_time():
            return None
        return found[0]

    def _forget(self, now: float, limit: RateLimit) -> None:
        """Make room: drop full buckets, else the oldest half."""
        full = [
            key
            for key, (tokens, then) in self._buckets.items()
            if tokens + (now - then) * limit.rate >= limit.capacity
        ]
        if not full:
            full = list(self._buckets)[: max(1, len(self._buckets) // 2)]
        for key in full:
            del self._buckets[key]
