"""Admission of HTTP calls: a step of the app's edge that finds the call a place.

Streamable HTTP has no stream to pace: each call is its own request, so a burst of
slow calls would queue without end. The gate bounds it as the stream loop does for
stdio and WebSocket: at most ``max_concurrent`` calls run and ``max_waiting`` more
wait for a slot across every connection of the app; one more is answered at once
with HTTP 503, ``Retry-After`` and a JSON-RPC -32000 body.

``Gate.admit`` is a step of the HTTP app's edge (``Dispatcher.edge``): it runs
after ``account`` (so every answer it gives is timed, measured and leaves a
receipt) and before ``grant``.

Invariants:
- Only calls (``tools/call``, ``prompts/get``, ``resources/read``,
  ``completion/complete``) pass the gate; discovery, lists, the tasks methods and
  listen streams never wait and are never refused here.
- A call takes its place before anything else, and keeps its place and its slot
  until its request is answered: when the call ends (the step gives them back), or
  when it becomes a task, which runs on without a slot (the edge gives them back
  once the request is answered: ``Gate.answered``, idempotent). A client that disconnects while
  waiting cancels its wait and so gives its place up at once.
- A call with no place is answered 503 with ``Retry-After`` (``refused``,
  ``trio_mcp.Busy``) and takes no rate-limit token.
- With a ``RateLimit``, a call that has a place then takes a token from its
  caller's bucket (in the server's store); without one it gives its place back and
  is answered 429 with ``Retry-After`` (``refused``, ``trio_mcp.RateLimit``). A
  store that cannot be reached does not refuse: the bucket of this process stands in.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import attrs
import trio

from .. import _metrics
from .._dispatch import Call, Caller, Ending, Next
from .._dispatch._call import busy
from .._limits import Limits
from .._protocol import _wire as wire
from .._rate_limit import RateLimit
from .._store import MemoryStore
from ._forwarded import caller_key

if TYPE_CHECKING:
    from .._dispatch import Dispatcher

__all__ = ["RATE_LIMITED_TYPE", "Gate", "RateLimiter", "rate_limited"]

log = logging.getLogger("trio_mcp.http")

#: The receipt's ``error_type`` of a call refused by its rate limit.
RATE_LIMITED_TYPE = "trio_mcp.RateLimit"


def rate_limited(wait: float) -> Ending:
    """-32000 with HTTP 429 and ``Retry-After``: the caller's rate limit is spent."""
    after = max(1, math.ceil(wait))
    ending = Ending.refused(
        f"rate limited: this caller has used its calls for now; retry after {after} s",
        data={"retryable": True, "retryAfterSeconds": after},
        http_status=429,
        headers=(("retry-after", str(after)),),
        code=wire.SERVER_BUSY,
    )
    return attrs.evolve(ending, error_type=RATE_LIMITED_TYPE)


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
        self.rate_limiter = (
            None
            if rate_limit is None or dispatcher is None
            else RateLimiter(rate_limit, dispatcher)
        )
        """The caller's token bucket, taken once the call has a place."""
        self.admitted = 0
        """Calls running or waiting for a slot now."""
        # Made on first use: a CapacityLimiter needs a running Trio loop, and the
        # app may be built before one exists.
        self._limiter: trio.CapacityLimiter | None = None
        self._holding: set[trio.CancelScope] = set()
        """The requests whose calls hold a slot and a place now."""

    @property
    def limiter(self) -> trio.CapacityLimiter:
        """The ``max_concurrent`` slots (FIFO: waiting calls keep their order)."""
        if self._limiter is None:
            self._limiter = trio.CapacityLimiter(self.limits.max_concurrent)
        return self._limiter

    async def admit(self, call: Call, next: Next) -> Ending:
        """The step: a place, a rate-limit token and a slot for the call, held
        until its request is answered; or the answer that it has none."""
        limits = self.limits
        if self.admitted >= limits.max_concurrent + limits.max_waiting:
            return busy(
                f"{limits.max_concurrent} calls are running and "
                f"{limits.max_waiting} are waiting"
            )
        self.admitted += 1
        held = False
        try:
            limiter = self.rate_limiter
            wait = None if limiter is None else await limiter.over_limit(call)
            if wait is not None:
                return rate_limited(wait)
            request = call.request.scope
            assert request is not None  # the edge gives every request one
            await self._take_slot(request)
            held = True
            return await next(call)
        finally:
            if held:
                self.answered(call.request.scope)
            else:
                self.admitted -= 1

    async def _take_slot(self, request: trio.CancelScope) -> None:
        """A call slot for the request whose scope is ``request``: at once when one is free, else waiting for
        one (cancellable, FIFO).

        On behalf of the request, not of this task: a call that becomes a task goes
        on in another, and the slot is given back once the request is answered. A
        free slot is taken without a scheduler pass (``acquire_nowait`` refuses
        while others wait, so the order holds; a cancelled call raises at the
        checkpoint either way): the pass ``acquire_on_behalf_of`` makes costs
        4.7 % of an HTTP call's instructions (docs/design.md, "Devices that stay").
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            self.limiter.acquire_on_behalf_of_nowait(request)
        except trio.WouldBlock:
            await self.limiter.acquire_on_behalf_of(request)
        self._holding.add(request)

    def answered(self, request: trio.CancelScope | None) -> None:
        """The request whose scope is ``request`` is answered, or its call ended:
        if this gate still holds a slot and a place for it, they are free (once;
        later calls do nothing)."""
        if request in self._holding:
            self._holding.discard(request)
            self.limiter.release_on_behalf_of(request)
            self.admitted -= 1


class RateLimiter:
    """A token bucket per caller (its principal, else its client address), kept
    in the dispatcher's store: HTTP's gate takes a token for each call it places,
    and a stream transport (WebSocket) runs ``step`` in its edge.

    Args:
        limit: The bucket.
        dispatcher: Whose store holds the buckets.
    """

    def __init__(self, limit: RateLimit, dispatcher: Dispatcher) -> None:
        self.rate_limit = limit
        self.dispatcher = dispatcher
        self._fallback = MemoryStore()
        """The buckets used while the server's store cannot be reached."""

    async def step(self, call: Call, next: Next) -> Ending:
        """The step: a token from the caller's bucket, or -32000 with its wait."""
        wait = await self.over_limit(call)
        if wait is not None:
            return rate_limited(wait)
        return await next(call)

    async def over_limit(self, call: Call) -> float | None:
        """The seconds until the call's caller may call again, if its bucket is
        empty, else None (a token was taken)."""
        return await self.wait_for(call.caller, call.method)

    async def wait_for(self, caller: Caller, method: str) -> float | None:
        """``over_limit`` for a request that is no call of the edge (a
        handshake-era ``initialize``, a session's ``GET`` or ``DELETE``)."""
        limit = self.rate_limit
        key = caller_key(caller.principal, caller.peer)
        try:
            wait = await self.dispatcher.store.take(key, limit)
        except Exception as exc:  # the store is down: limit in this process alone
            log.warning("rate limit: the store failed (%s); limiting locally", exc)
            wait = self._fallback.take_now(key, limit)
        if wait <= 0:
            return None
        _metrics.count("rate_limited", method)
        return wait
