"""A stream of whole messages in, a stream of messages out: the shared serving loop.

stdio (lines), WebSocket (text frames) and the in-process test client (memory
channels) differ only in framing; this loop does the rest for all of them:
parsing with the depth limit, one task per request in a nursery, the concurrency
cap, ``notifications/cancelled``, and writing replies as whole messages.

Invariants:
- The loop never stops reading because of load: a ``notifications/cancelled`` is
  always read and honoured. At most ``max_concurrent`` calls run at once and at most
  ``max_waiting`` more wait for a slot; a call beyond that is answered at once with
  -32000 ("server busy"), so memory stays bounded; such a call still goes through
  its chain (the busy edge's one step answers it), so it leaves a receipt. Only a client that stops reading
  our output stops the loop (the writer then waits, which is backpressure).
- Discovery, lists and other quick methods are answered by the loop itself, never
  waiting for a call slot. ``subscriptions/listen`` streams take no call or waiting
  slot (at most ``max_listens`` are open). When the input ends they receive their
  result (graceful shutdown) before the grace period starts running out.
- A cancelled request gets no reply and nothing more is sent for it; its place
  (call or listen) is free as soon as the cancellation is read. When a request
  ends without finishing (cancelled, the grace period ran out, the stream failed),
  its cancel scope is cancelled, so ``ctx.cancel`` fires for a worker thread still
  running its handler.
- A message handed to the writer task is written whole, even if its request is
  cancelled meanwhile: a write cut short would leave half a line on the stream and
  corrupt every later message (the ``send`` callable is never cancelled per request).
- Nothing a handler returns or raises can end the loop: the dispatcher turns every
  failure into a reply, and every message is encoded before it reaches the writer.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

import attrs
import trio

from .. import _metrics
from .._authority import Grants
from .._changes import LISTEN_METHOD
from .._context import Emit
from .._dispatch import Call, Caller, Dispatcher, Ending, Next, Reply
from .._dispatch._call import busy
from .._dispatch._dispatcher import Edge as DispatchEdge
from .._json import JsonObject, encode_message
from .._limits import Limits
from .._protocol._jsonrpc import (
    Fault,
    Notification,
    Request,
    busy_fault,
    oversized_fault,
    parse_message,
)

__all__ = [
    "CALL_METHODS",
    "Front",
    "MakeFront",
    "Oversized",
    "first_exception",
    "one_by_one",
    "serve_messages",
    "stream_caller",
]

Send = Callable[[bytes], Awaitable[None]]
"""Writes one whole encoded message (no newline); never cancelled mid-write."""

Write = Callable[[list[bytes]], Awaitable[None]]
"""Writes whole encoded messages in order, as one write where the framing allows."""


def stream_caller(allow: Grants, principal: object | None = None) -> Caller:
    """The caller of a stream transport: its grants, and the event that
    ``serve_messages`` sets when the input ends (listen streams then finish)."""
    return Caller(principal=principal, allow=allow, closing=trio.Event(), stream=True)


def one_by_one(send: Send) -> Write:
    """A ``Write`` for framings that send each message on its own (frames, channels)."""

    async def write(batch: list[bytes]) -> None:
        for data in batch:
            await send(data)

    return write


DEFAULT_LIMITS = Limits()
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


Received = str | bytes | Oversized
"""One message as the framing layer read it."""
Taken = Received | Request | Notification | Fault
"""What the loop takes: a message as read, or as a ``Front`` already parsed it."""
Act = bytes | Oversized | Request | Notification | Fault
"""What a ``Front`` asks of the loop: write the message, or take it."""


class Front(Protocol):
    """Sits in front of the loop, message by message (a dual-era server's legacy
    session, ``_legacy``): what it returns, the loop does, in order."""

    def take(self, raw: Taken) -> Sequence[Act]:
        """The acts for one message the client sent."""

    def reply(self, request: Request, reply: Reply) -> Sequence[Act] | None:
        """The acts for the core's reply to ``request`` (None: write it as it is)."""

    def note(self, request: Request, note: JsonObject) -> Sequence[Act] | None:
        """The acts for a notification of ``request`` (None: write it as it is)."""

    def ended(self) -> Sequence[Act]:
        """The acts once the client's input ended."""


MakeFront = Callable[[Limits], Front]
"""Makes the ``Front`` of one stream, with the stream's limits."""


#: Calls: they run user code, so they take a ``max_concurrent`` slot.
CALL_METHODS = frozenset(
    {"tools/call", "prompts/get", "resources/read", "completion/complete"}
)


@attrs.define(eq=False)
class _Load:
    """What the loop has admitted: call tasks (running or waiting) and listens."""

    limits: Limits
    calls: int = 0
    listens: int = 0

    def admit(self, request: Request) -> str | None:
        """Count ``request`` in, or return why it cannot be admitted now."""
        limits = self.limits
        if request.method == LISTEN_METHOD:
            if self.listens >= limits.max_listens:
                return f"{limits.max_listens} listen streams are open"
            self.listens += 1
        else:
            if self.calls >= limits.max_concurrent + limits.max_waiting:
                return (
                    f"{limits.max_concurrent} calls are running and "
                    f"{limits.max_waiting} are waiting"
                )
            self.calls += 1
        return None

    def release(self, request: Request) -> None:
        """Count ``request`` out."""
        if request.method == LISTEN_METHOD:
            self.listens -= 1
        else:
            self.calls -= 1


async def serve_messages(
    dispatcher: Dispatcher,
    incoming: trio.abc.ReceiveChannel[Taken | list[Received]],
    write: Write,
    *,
    caller: Caller,
    limits: Limits = DEFAULT_LIMITS,
    front: MakeFront | None = None,
    through: DispatchEdge | None = None,
) -> None:
    """Serve messages from ``incoming`` until it ends, writing replies with ``write``.

    An item of ``incoming`` is one message or, from a reader that splits a read
    into lines, every message of one read. When ``incoming`` ends, requests still
    running get ``limits.grace_period`` seconds to finish and are then cancelled.
    ``front`` makes what sits between the client and the loop (a dual-era
    server's legacy session); ``through`` is the dispatcher's edge with the
    transport's own steps (WebSocket's rate limit and token checks), the plain one
    by default.
    """
    made = None if front is None else front(limits)
    loop = _Loop(dispatcher, caller, limits, through or dispatcher.plain, made)
    take = loop.take if made is None else loop.take_front
    # One writer task owns ``write``: a request's cancel scope can stop it from
    # handing a message over, never interrupt the write of one already handed over.
    async with (
        trio.open_nursery() as writing,
        loop.to_writer,
        trio.open_nursery() as nursery,
    ):
        loop.nursery = nursery
        writing.start_soon(loop.write_all, write)
        async with incoming:
            async for item in incoming:
                for raw in item if isinstance(item, list) else (item,):
                    await take(raw, nursery)
        if made is not None:
            await loop.perform(made.ended())
        deadline = loop.input_ended()
        nursery.cancel_scope.deadline = deadline
        # The writer gets the same deadline: a client that stops reading cannot
        # keep us past the grace period (the stream ends then anyway).
        writing.cancel_scope.deadline = deadline


class _Loop:
    """The state of one message loop: what is admitted, running and cancellable."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        caller: Caller,
        limits: Limits,
        through: DispatchEdge,
        front: Front | None = None,
    ) -> None:
        self.dispatcher = dispatcher
        self.front = front
        self.nursery: trio.Nursery
        self.through = through
        """The edge requests come through (the transport's steps)."""
        self.caller = caller
        self.limits = limits
        reason = (
            f"{limits.max_concurrent} calls are running and "
            f"{limits.max_waiting} are waiting"
        )
        self.busy_edge = dispatcher.edge([_Busy(reason)])
        """A call with no place goes through this edge: its one step answers it."""
        self.slots = trio.CapacityLimiter(limits.max_concurrent)
        self.load = _Load(limits)
        self.in_flight: dict[str | int, trio.CancelScope] = {}
        """Cancel scopes by request id, for ``notifications/cancelled``."""
        self.running: dict[trio.CancelScope, Request] = {}
        """Requests still counted in ``load``, by their scope."""
        # Unbuffered: a lagging client holds up the senders, not a queue of ours
        # (a buffer of one message per call slot measured no faster).
        self.to_writer, self.from_requests = trio.open_memory_channel[bytes](0)

    async def write_all(self, write: Write) -> None:
        """The writer task: each message handed over is written whole.

        What other requests handed over meanwhile goes out in the same write: a
        burst of replies costs one system call on stdio, not one each.
        """
        # Not closed on failure: senders then wait to be cancelled rather than
        # raise BrokenResourceError beside the transport's own error.
        async for data in self.from_requests:
            batch = [data]
            while True:
                try:
                    batch.append(self.from_requests.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            await write(batch)

    async def take_front(self, raw: Taken, nursery: trio.Nursery) -> None:
        """Act on one incoming message as the front says."""
        assert self.front is not None
        await self.perform(self.front.take(raw))

    async def perform(self, acts: Sequence[Act]) -> None:
        """Do what a front asked, in order."""
        for act in acts:
            if isinstance(act, bytes):
                await self.hand_over(act)
            else:
                await self.take(act, self.nursery)

    async def deliver(self, request: Request, reply: Reply) -> None:
        """The reply to ``request``: written, or what the front makes of it."""
        acts = None if self.front is None else self.front.reply(request, reply)
        if acts is None:
            await self.hand_over(reply.body)
        else:
            await self.perform(acts)

    async def take(self, raw: Taken, nursery: trio.Nursery) -> None:
        """Act on one incoming message; never waits for a call slot."""
        if isinstance(raw, (str, bytes)):  # a tuple: no union built per message
            message = parse_message(raw, max_depth=self.limits.max_depth)
        else:
            message = _read(raw, self.limits.max_depth)
        if isinstance(message, Fault):
            await self.hand_over(encode_message(message.to_message()))
        elif isinstance(message, Notification):
            self.cancel(message)
        elif message.method not in CALL_METHODS and message.method != LISTEN_METHOD:
            # Quick: no user code runs for it, so the loop answers it itself.
            reply = await self.through.handle(message, self.caller)
            if self.front is None:
                await self.hand_over(reply.body)
            else:
                await self.deliver(message, reply)
        elif (reason := self.load.admit(message)) is not None:
            await self.refuse_busy(message, reason)
        else:
            scope = trio.CancelScope()
            # Ids must be unique among outstanding requests; a duplicate is
            # answered but cannot be cancelled separately.
            self.in_flight.setdefault(message.id, scope)
            if message.method not in CALL_METHODS:
                nursery.start_soon(self.run, message, scope, False)
            elif self._take_slot(scope):
                nursery.start_soon(self.run, message, scope, True)
            else:
                # start, not start_soon: the call is queued for its slot before
                # the next message is taken, so waiting calls keep their order.
                await nursery.start(self.run, message, scope, False)

    async def refuse_busy(self, request: Request, reason: str) -> None:
        """Answer "server busy" at once. A call goes through the busy edge, whose
        one step answers it, so it is measured and leaves a receipt like any call;
        no handler runs, so the loop answers it itself."""
        if request.method in CALL_METHODS:
            reply = await self.busy_edge.handle(request, self.caller)
            await self.hand_over(reply.body)
            return
        _metrics.count("busy", request.method)
        await self.hand_over(encode_message(busy_fault(request, reason).to_message()))

    def _take_slot(self, scope: trio.CancelScope) -> bool:
        """Take a free call slot now, on behalf of the task of ``scope``.

        Fails when none is free or others already wait (the limiter is fair).
        """
        try:
            self.slots.acquire_on_behalf_of_nowait(scope)
        except trio.WouldBlock:
            return False
        return True

    async def hand_over(self, data: bytes) -> None:
        """Give the writer one whole message; without a scheduler pass when it
        is already waiting for one (``send`` always yields)."""
        try:
            self.to_writer.send_nowait(data)
        except trio.WouldBlock:
            await self.to_writer.send(data)

    def cancel(self, message: Notification) -> None:
        """Honour a ``notifications/cancelled``; other notifications mean nothing."""
        cancelled = _notify(message, self.in_flight)
        if cancelled in self.running:
            # Counted out at once, not when its task has unwound: a client may
            # cancel and send another request in the same breath.
            self.load.release(self.running.pop(cancelled))

    async def run(
        self,
        request: Request,
        scope: trio.CancelScope,
        held: bool,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """One admitted request in its own task and cancel scope; ``held``: the
        loop took its call slot for it (``_take_slot``)."""

        async def emit(note: JsonObject) -> None:
            if scope.cancel_called:
                return
            front = self.front
            acts = None if front is None else front.note(request, note)
            if acts is None:
                await self.hand_over(encode_message(note))
            else:
                await self.perform(acts)

        self.running[scope] = request
        try:
            with scope:
                if held or request.method not in CALL_METHODS:
                    # Started with start_soon: no task_status to report to.
                    reply = await self.through.handle(request, self.caller, emit, scope)
                else:
                    reply = await self._queued(request, emit, scope, task_status)
                if scope.cancel_called:
                    pass
                elif self.front is None:
                    await self.hand_over(reply.body)
                else:
                    await self.deliver(request, reply)
        except BaseException:
            # Ended unfinished (the grace period ran out, the stream failed):
            # whatever still runs for it (an abandoned worker thread) now sees
            # ``ctx.cancel`` fire. A request that finished has nothing left to
            # tell, and one cancelled by the client has its scope cancelled.
            scope.cancel()
            raise
        finally:
            if held:
                self.slots.release_on_behalf_of(scope)
            if self.in_flight.get(request.id) is scope:
                del self.in_flight[request.id]
            if self.running.pop(scope, None) is not None:  # not counted out yet
                self.load.release(request)

    async def _queued(
        self,
        request: Request,
        emit: Emit,
        scope: trio.CancelScope,
        task_status: trio.TaskStatus[None],
    ) -> Reply:
        """A call that found no free slot: wait for one in the limiter's queue."""
        # Nothing awaits between started() and the limiter: a call that must wait
        # parks in the limiter's FIFO before the loop takes the next message.
        task_status.started()
        async with self.slots:
            return await self.through.handle(request, self.caller, emit, scope)

    def input_ended(self) -> float:
        """Start the graceful end; return the deadline of what still runs.

        Listen streams end with their result. Each request's own scope gets the
        deadline, so ``ctx.cancel`` has fired by the time its handler sees
        ``Cancelled`` (the nursery's deadline is a backstop).
        """
        assert self.caller.closing is not None
        self.caller.closing.set()
        grace = self.limits.grace_period
        deadline = math.inf if math.isinf(grace) else trio.current_time() + grace
        for scope in self.running:
            scope.deadline = deadline
        return deadline


class _Busy:
    """The one step of a loop's busy edge: the call has no place, so it is
    answered "server busy" (-32000) without running."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def __call__(self, call: Call, next: Next) -> Ending:
        return busy(self.reason)


def _read(raw: Taken, max_depth: int) -> Request | Notification | Fault:
    if isinstance(raw, Oversized):
        return oversized_fault(raw.size_limit)
    if isinstance(raw, Request | Notification | Fault):
        return raw  # parsed (depth limit included) by an edge
    return parse_message(raw, max_depth=max_depth)


def _notify(
    message: Notification, in_flight: dict[str | int, trio.CancelScope]
) -> trio.CancelScope | None:
    """Act on a client notification; only cancellation means anything here.

    Returns the scope it cancelled. Its id is forgotten at once, so the client
    may reuse it for a new request.
    """
    if message.method != "notifications/cancelled" or not isinstance(
        message.params, dict
    ):
        return None
    request_id = message.params.get("requestId")
    if not isinstance(request_id, str | int):
        return None
    scope = in_flight.pop(request_id, None)
    if scope is not None:
        scope.cancel()
    return scope
