"""Admission of HTTP calls: a rate limit, a slot, a bounded wait, or an answer at once.

Streamable HTTP has no stream to pace: each call is its own request, so a burst of
slow calls would queue without end. The gate bounds it as the stream loop does for
stdio and WebSocket: at most ``max_concurrent`` calls run and ``max_waiting`` more
wait for a slot across every connection of the app; one more is answered at once
with HTTP 503, ``Retry-After`` and a JSON-RPC -32000 body.

Invariants:
- Only calls (``tools/call``, ``prompts/get``, ``resources/read``,
  ``completion/complete``) pass the gate; discovery, lists, the tasks methods and
  listen streams never wait and are never refused here.
- A call takes its place (``admit``) before anything else, and keeps it until
  it ends (``leave``), however it ends: a client that disconnects while
  waiting cancels its wait and so gives its place up at once.
- A call with no place goes to the dispatcher marked (``Caller.busy``) without a
  slot, and the runner's ``limit`` step answers it 503 with ``Retry-After``: like
  every call it is timed, measured and leaves a receipt (``refused``,
  ``trio_mcp.Busy``). It takes no rate-limit token.
- With a ``RateLimit``, a call that has a place then takes a token from its
  caller's bucket (in the server's store); without one it gives its place back and
  goes to the dispatcher marked (``Caller.retry_after``), and the runner's
  ``limit`` step answers it 429 with ``Retry-After`` and a ``refused`` receipt. A
  store that cannot be reached does not refuse: the bucket of this process stands in.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
import trio

from .. import _metrics
from .._dispatch import Caller
from .._dispatch._runner import BUSY_RETRY_AFTER
from .._limits import Limits
from .._protocol._jsonrpc import Request
from .._rate_limit import RateLimit
from .._store import MemoryStore
from ._forwarded import caller_key

if TYPE_CHECKING:
    from .._dispatch import Dispatcher

__all__ = ["BUSY_RETRY_AFTER", "Gate", "retry_after_header"]

log = logging.getLogger("trio_mcp.http")


def retry_after_header(seconds: float) -> tuple[bytes, bytes]:
    """``Retry-After`` in whole seconds (RFC 9110 §10.2.3), at least one."""
    return (b"retry-after", str(max(1, math.ceil(seconds))).encode("ascii"))


class Gate:
    """The call slots of one HTTP app, and the places to wait for one.

    Args:
        limits: ``max_concurrent`` and ``max_waiting`` are read from it.
        dispatcher: Whose store holds the buckets, whose receipts record refusals.
        rate_limit: The token bucket per caller, or None for no limit.
    """

    def __init__(
        self,
        limits: Limits,
        dispatcher: Dispatcher | None = None,
        rate_limit: RateLimit | None = None,
    ) -> None:
        self.limits = limits
        self.dispatcher = dispatcher
        self.rate_limit = rate_limit
        self.admitted = 0
        """Calls running or waiting for a slot now."""
        self.busy = 0
        """Calls answered "busy" so far."""
        self.limited = 0
        """Calls answered "rate limited" so far."""
        self._fallback = MemoryStore()
        """The buckets used while the server's store cannot be reached."""
        # Made on first use: a CapacityLimiter needs a running Trio loop, and the
        # app may be built before one exists.
        self._limiter: trio.CapacityLimiter | None = None

    @property
    def limiter(self) -> trio.CapacityLimiter:
        """The ``max_concurrent`` slots (FIFO: waiting calls keep their order)."""
        if self._limiter is None:
            self._limiter = trio.CapacityLimiter(self.limits.max_concurrent)
        return self._limiter

    async def admit(
        self, request: Request, caller: Caller, scope: Mapping[str, Any]
    ) -> tuple[Caller, bool]:
        """Take a place for the call ``request``: its caller, and whether it holds a
        place (then run it in a slot, and call ``leave()`` when it ends).

        Without a place, the caller is marked ``busy``; over its rate limit, the
        place is given back and the caller is marked ``retry_after``. Either way
        the runner's ``limit`` step answers the call, and no slot is needed.
        (Plain calls, not an async context manager: this runs for every call.)
        """
        limits = self.limits
        if self.admitted >= limits.max_concurrent + limits.max_waiting:
            self.busy += 1
            reason = (
                f"{limits.max_concurrent} calls are running and "
                f"{limits.max_waiting} are waiting"
            )
            return attrs.evolve(caller, busy=reason), False
        self.admitted += 1
        try:
            wait = await self.over_limit(request, caller, scope)
        except BaseException:
            self.admitted -= 1
            raise
        if wait is not None:
            self.admitted -= 1
            return attrs.evolve(caller, retry_after=wait), False
        return caller, True

    def leave(self) -> None:
        """A call that ``admit`` placed has ended, however: its place is free."""
        self.admitted -= 1

    async def acquire_slot(self) -> None:
        """Take a call slot, waiting for one (cancellable, FIFO) if none is free.

        A free slot is taken without a scheduler pass (``acquire_nowait`` refuses
        while others wait, so the order holds); a cancelled call raises here either
        way. Only for a call ``admit`` placed; ``release_slot()`` when it ends.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            self.limiter.acquire_nowait()
        except trio.WouldBlock:
            await self.limiter.acquire()

    def release_slot(self) -> None:
        """Give back the slot ``acquire_slot`` took."""
        self.limiter.release()

    async def over_limit(
        self, request: Request, caller: Caller, scope: Mapping[str, Any]
    ) -> float | None:
        """The seconds until ``request``'s caller may call again, if its bucket is
        empty (the runner's ``limit`` step then answers 429), else None."""
        limit = self.rate_limit
        if limit is None or self.dispatcher is None:
            return None
        key = caller_key(caller.principal, scope, caller.headers or {}, limit)
        try:
            wait = await self.dispatcher.store.take(key, limit)
        except Exception as exc:  # the store is down: limit in this process alone
            log.warning("rate limit: the store failed (%s); limiting locally", exc)
            wait = self._fallback.take_now(key, limit)
        if wait <= 0:
            return None
        self.limited += 1
        _metrics.count("rate_limited", request.method)
        return wait
