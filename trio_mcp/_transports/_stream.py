"""A stream of whole messages in, a stream of messages out: the shared serving loop.

stdio (lines), WebSocket (text frames) and the in-process test client (memory
channels) differ only in framing; this loop does the rest for all of them:
parsing with the depth limit, one task per request in a nursery, the concurrency
cap, ``notifications/cancelled``, and writing replies as whole messages.

Invariants:
- At most ``max_concurrent`` handlers run at once; at most ``max_pending`` further
  requests wait for a slot. Past that the loop stops reading (backpressure), so
  memory stays bounded; cancellations of waiting requests are still honoured.
- A cancelled request gets no reply and nothing more is sent for it. A message
  handed to the writer task is written whole, even if its request is cancelled
  meanwhile: a write cut short would leave half a line on the stream and corrupt
  every later message (the ``send`` callable is never cancelled per request).
- ``subscriptions/listen`` streams are long-lived: they take no ``max_concurrent``
  slot (only an admission slot). When the input ends they receive their result
  (graceful shutdown, spec §8) before the grace period starts running out.
- Nothing a handler does can end the loop: the dispatcher turns failures into replies.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TypeVar

import attrs
import trio

from .._authority import Grants
from .._dispatch import LISTEN_METHOD, Caller, Dispatcher
from .._json import JsonObject, dumps
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault, Notification, Request, parse_message

__all__ = ["Oversized", "first_exception", "serve_messages"]

Send = Callable[[str], Awaitable[None]]
_E = TypeVar("_E", bound=BaseException)


def first_exception(group: BaseExceptionGroup[_E]) -> _E:
    """Return the first leaf of a (possibly nested) exception group.

    Transports raise one ``McpError.Transport`` to their caller even when nested
    nurseries wrapped it in groups: one failure of the medium is the whole story.
    """
    while True:
        first = group.exceptions[0]
        if not isinstance(first, BaseExceptionGroup):
            return first
        group = first


@attrs.frozen
class Oversized:
    """A message the framing layer skipped because it exceeded ``max_message_bytes``."""

    size_limit: int


def oversized_fault(limit: int) -> Fault:
    """Return the -32600 reply for a message too large to read (its id is unknown)."""
    return Fault(
        wire.INVALID_REQUEST,
        f"invalid request: the message exceeds the {limit}-byte limit and was skipped",
        http_status=413,
    )


async def serve_messages(
    dispatcher: Dispatcher,
    incoming: trio.abc.ReceiveChannel[str | bytes | Oversized],
    send: Send,
    *,
    allow: Grants = (),
    principal: object | None = None,
    max_depth: int = 128,
    max_concurrent: int = 16,
    max_pending: int | None = None,
    grace_period: float = 5.0,
) -> None:
    """Serve messages from ``incoming`` until it ends, writing replies with ``send``.

    When ``incoming`` ends, requests still running get ``grace_period`` seconds to
    finish and are then cancelled.
    """
    if max_concurrent < 1:
        raise ValueError("max_concurrent must be at least 1")
    pending_cap = max_pending if max_pending is not None else 4 * max_concurrent
    running = trio.CapacityLimiter(max_concurrent)
    admitted = trio.Semaphore(max_concurrent + pending_cap)
    in_flight: dict[str | int, trio.CancelScope] = {}
    closing = trio.Event()
    caller = Caller(principal=principal, allow=allow, closing=closing)
    # One writer task owns ``send``: a request's cancel scope can stop it from
    # handing a message over, never interrupt the write of one already handed over.
    to_writer, from_requests = trio.open_memory_channel[str](0)

    async def write(message: JsonObject) -> None:
        await to_writer.send(dumps(message))

    async def writer() -> None:
        # Not closed on failure: senders then wait to be cancelled rather than
        # raise BrokenResourceError beside the transport's own error.
        async for text in from_requests:
            await send(text)

    async def run_request(request: Request, scope: trio.CancelScope) -> None:
        try:
            with scope:

                async def emit(note: JsonObject) -> None:
                    if not scope.cancel_called:
                        await write(note)

                if request.method == LISTEN_METHOD:
                    reply = await dispatcher.handle(request, caller, emit, scope=scope)
                else:
                    async with running:
                        reply = await dispatcher.handle(
                            request, caller, emit, scope=scope
                        )
                if not scope.cancel_called:
                    await write(reply.message)
        finally:
            if in_flight.get(request.id) is scope:
                del in_flight[request.id]
            admitted.release()

    async with (
        trio.open_nursery() as writing,
        to_writer,
        trio.open_nursery() as nursery,
    ):
        writing.start_soon(writer)
        async with incoming:
            async for raw in incoming:
                if isinstance(raw, Oversized):
                    await write(oversized_fault(raw.size_limit).to_message())
                    continue
                message = parse_message(raw, max_depth=max_depth)
                if isinstance(message, Fault):
                    await write(message.to_message())
                elif isinstance(message, Notification):
                    _notify(message, in_flight)
                else:
                    await admitted.acquire()
                    scope = trio.CancelScope()
                    # Ids must be unique among outstanding requests; a duplicate
                    # is answered but cannot be cancelled separately.
                    in_flight.setdefault(message.id, scope)
                    nursery.start_soon(run_request, message, scope)
        # Input ended: listen streams end with their result; let what runs finish,
        # within the grace period.
        closing.set()
        # The writer gets the same deadline: a client that stops reading cannot
        # keep us past the grace period (the stream ends then anyway).
        deadline = trio.current_time() + grace_period
        if math.isinf(grace_period):
            deadline = math.inf
        nursery.cancel_scope.deadline = deadline
        writing.cancel_scope.deadline = deadline


def _notify(
    message: Notification, in_flight: dict[str | int, trio.CancelScope]
) -> None:
    """Act on a client notification; only cancellation means anything here."""
    if message.method != "notifications/cancelled" or not isinstance(
        message.params, dict
    ):
        return
    request_id = message.params.get("requestId")
    if not isinstance(request_id, str | int):
        return
    scope = in_flight.get(request_id)
    if scope is not None:
        scope.cancel()
