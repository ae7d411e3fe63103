"""One HTTP request carried from an asyncio ASGI server to the Trio app and back.

The host (uvicorn, say) calls the asyncio app with its ``receive`` and ``send``; the
request is served by trio_mcp's own ASGI app in a Trio task of the guest run. The
Trio side's ``receive`` and ``send`` call the host's in asyncio tasks (so host code
runs as asyncio code: its current task, its context variables, its cancellation).
No thread is involved: both loops run on the loop's thread, Trio's ticks being
callbacks of the asyncio loop. Trio code may set an asyncio future or make a task
directly; asyncio code wakes a Trio task with ``TrioToken.run_sync_soon``.

That wake is the costly crossing: when Trio is idle its scheduler waits in its I/O
thread, which the wake must interrupt. So a request crosses as few times as it can:

- the first ``receive()`` is started when the request arrives, before the Trio side
  starts; its message is usually there when the Trio app asks (no wake);
- sends are queued, in order, each in an asyncio task that awaits the one before:
  the Trio side goes on at once and waits (one wake) only while more than
  ``QUEUED_MESSAGES`` messages or ``QUEUED_BYTES`` bytes are queued, which bounds
  what a slow client can make it hold. A plain JSON reply needs one wake in all.

Messages pass through as they are: the same dicts, the same bytes, in order.

Invariants:
- The Trio task never outlives the host's call, and the host's call returns only
  once every queued send has been made (or dropped, once the host gave up).
- When the host cancels its call (uvicorn's graceful-shutdown timeout), the Trio app
  reads ``http.disconnect`` from then on, as for a client that went away (its
  watcher cancels the request, so ``ctx.cancel`` fires), and its sends go nowhere;
  what has not ended ``HOST_GONE_GRACE`` seconds later is cancelled.
- A host ``receive()`` that the Trio side abandons (its cancel scope fired) is
  cancelled and waited for; a message it returned anyway is kept for the next one.
- An exception of the Trio app, or of a host send, reaches the host unchanged, as
  any app's would (the host logs it and answers 500 if nothing was sent). A request
  the Trio side could not finish (its app stopped, or the guest run crashed) is
  answered here: 503 or 500 before the response started, else the response is ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Awaitable, Callable, MutableMapping
from functools import partial
from typing import Any, Final

import trio

from .._json import encode_message
from .._protocol import _wire as wire

__all__ = ["Exchange", "Message", "Receive", "Scope", "Send", "answer"]

# ASGI messages and scopes are plain dicts whose values vary by key; the ASGI
# specification, not us, forces this Any.
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_DISCONNECT: Final = {"type": "http.disconnect"}

#: Seconds a call the host abandoned may take to end after its disconnect, before it
#: is cancelled outright.
HOST_GONE_GRACE: Final = 1.0
#: Sends queued for the host beyond which the Trio side waits for them to be made.
QUEUED_MESSAGES: Final = 16
#: Body bytes queued for the host beyond which the Trio side waits likewise.
QUEUED_BYTES: Final = 65_536


class _Stopped(Exception):
    """The Trio side ended the request without finishing it (the reason says why)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Exchange:
    """One ASGI call, as the host made it, and its Trio side's state.

    The asyncio side calls ``serve``; the Trio side (the service) calls ``run``.
    """

    def __init__(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        *,
        loop: asyncio.AbstractEventLoop,
        token: trio.lowlevel.TrioToken,
    ) -> None:
        self.scope = scope
        self.host_receive = receive
        self.host_send = send
        self.loop = loop
        self.token = token
        # Host calls run in the context of the host's own call of the app.
        self.context = contextvars.copy_context()
        self.done: asyncio.Future[None] = loop.create_future()
        """Settled by the Trio side when it is done: None, the app's error, _Stopped."""
        self.trio_scope = trio.CancelScope()
        self.started = False
        """Whether ``http.response.start`` was sent (queued) to the host."""
        self.complete = False
        """Whether the last body message was sent (queued) to the host."""
        self.gone = False
        """Whether the Trio side is to read a disconnect and send nowhere."""
        self.left_with: tuple[int, str] | None = None
        """How the host call answers after ``leave(reply)``."""
        self.receiving: asyncio.Task[Message] | None = None
        """The host ``receive()`` under way or done and not yet handed over."""
        self.last_send: asyncio.Task[None] | None = None
        self.sending: set[asyncio.Task[None]] = set()
        """The queued sends not made yet."""
        self.send_error: Exception | None = None
        self.queued = 0
        self.queued_bytes = 0
        self.drain_waiter: trio.lowlevel.Task | None = None

    # -- the asyncio side --------------------------------------------------------
    async def serve(self, spawn: Callable[[Exchange], object]) -> None:
        """Have ``spawn`` start the Trio side, and return once it is done.

        Raises:
            Exception: the Trio app's own error, or a host send's, unchanged.
        """
        self.receiving = self._host_task(self.host_receive)
        try:
            self.token.run_sync_soon(spawn, self)
        except trio.RunFinishedError:
            self.stop(503, "the Trio run serving this app has ended")
        cancelled = await self._wait_for(self.done)
        if self.last_send is not None:
            cancelled = await self._wait_for(self.last_send) or cancelled
        if self.receiving is not None and not self.receiving.done():
            self.receiving.cancel()
            await asyncio.wait((self.receiving,))
        if cancelled:
            raise asyncio.CancelledError
        failure = self.done.exception() or self.send_error
        if failure is None and self.left_with is not None:
            failure = _Stopped(*self.left_with)
        if isinstance(failure, _Stopped):
            await self._end(failure)
        elif failure is not None:
            raise failure

    async def _wait_for(self, future: asyncio.Future[Any]) -> bool:
        """Wait for ``future`` whatever happens; whether the host cancelled meanwhile.

        The first cancellation tells the Trio side the host is gone.
        """
        cancelled = False
        while not future.done():
            try:
                # Neither raises the future's exception nor cancels the future.
                await asyncio.wait((future,))
            except asyncio.CancelledError:
                if not cancelled and not self.gone:
                    self._host_left()
                cancelled = True
        return cancelled

    def stop(self, status: int, reason: str) -> None:
        """Settle the request as not finished by the Trio side (from either side)."""
        if not self.done.done():
            self.done.set_exception(_Stopped(status, reason))

    def _host_left(self) -> None:
        """The host cancelled its call: ``leave()``, and cut what has not ended
        ``HOST_GONE_GRACE`` seconds later."""
        self.leave()
        if self.done.done():
            return
        try:
            self.token.run_sync_soon(self._give_up_soon)
        except trio.RunFinishedError:
            self.stop(500, "the Trio run serving this app has ended")

    def leave(self, reply: tuple[int, str] | None = None) -> None:
        """Tell the Trio side the client is gone, as a disconnect would (either side).

        The app reads ``http.disconnect`` from now on (its watcher cancels the
        request, so the handler's ``ctx.cancel`` fires) and its sends go nowhere.
        With ``reply`` (the app is stopping; the client is still there) the host
        call then answers it: that status and reason, or the end of the stream.
        """
        self.gone = True
        self.left_with = reply
        if self.receiving is not None:
            self.receiving.cancel()
        for sending in self.sending:
            sending.cancel()

    def _give_up_soon(self) -> None:
        self.trio_scope.deadline = min(
            self.trio_scope.deadline, trio.current_time() + HOST_GONE_GRACE
        )

    async def _end(self, stopped: _Stopped) -> None:
        """Answer a request the Trio side left: a JSON-RPC error, or end the stream.

        Only HTTP is answered: a websocket the Trio app did not accept is closed by
        the host when the call returns.
        """
        if self.scope["type"] != "http":
            return
        if not self.started:
            await answer(self.host_send, stopped.status, stopped.reason)
        elif not self.complete:
            await self.host_send(
                {"type": "http.response.body", "body": b"", "more_body": False}
            )

    def _host_task(
        self, fn: Callable[..., Awaitable[Any]], *args: Any
    ) -> asyncio.Task[Any]:
        """``fn(*args)`` awaited in an asyncio task, in the host call's context."""
        return self.loop.create_task(_call(fn, *args), context=self.context)

    # -- the Trio side -----------------------------------------------------------
    async def run(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        cut: Callable[[], tuple[int, str]],
    ) -> None:
        """Serve the request with the Trio ASGI ``app``; settle ``done`` however it ends.

        ``cut()`` says how to answer if the request is cancelled from outside (its
        app stopping, or failing) before it finished.
        """
        failure: Exception | None = None
        finished = False
        try:
            with self.trio_scope:
                await app(self.scope, self.receive, self.send)
            finished = True
        except Exception as exc:  # the app's own error: the host reports it
            failure = exc
            finished = True
        finally:
            if not finished:  # cancelled from outside: the app stops or failed
                self.stop(*cut())
            elif not self.done.done():
                if failure is None:
                    self.done.set_result(None)
                else:
                    self.done.set_exception(failure)

    async def receive(self) -> Message:
        """The host's next message; ``http.disconnect`` once the host gave up."""
        await trio.lowlevel.checkpoint_if_cancelled()
        if self.gone:
            await trio.lowlevel.cancel_shielded_checkpoint()
            return _DISCONNECT
        call = self.receiving
        if call is None:
            call = self.receiving = self._host_task(self.host_receive)
        if call.done():
            await trio.lowlevel.cancel_shielded_checkpoint()
        else:
            try:
                await _wait_task(call, self.token)
            finally:
                if call.cancelled():  # nothing was read: the next call reads anew
                    self.receiving = None
        self.receiving = None
        if call.cancelled():  # the host gave up (or its loop is being torn down)
            return _DISCONNECT
        return call.result()

    async def send(self, message: Message) -> None:
        """Queue ``message`` for the host; wait only while too much is queued.

        Raises:
            Exception: what an earlier host send raised.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self.send_error is not None:
            raise self.send_error
        if self.gone:
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        kind = message["type"]
        if kind == "http.response.start":
            self.started = True
        elif kind == "http.response.body" and not message.get("more_body", False):
            self.complete = True
        size = len(message.get("body", b""))
        sending = self._host_task(self._send_after, self.last_send, message)
        sending.add_done_callback(partial(self._sent, size))
        self.last_send = sending
        self.sending.add(sending)
        self.queued += 1
        self.queued_bytes += size
        if self.queued > QUEUED_MESSAGES or self.queued_bytes > QUEUED_BYTES:
            await self._drained()
        else:
            await trio.lowlevel.cancel_shielded_checkpoint()

    async def _send_after(
        self, previous: asyncio.Task[None] | None, message: Message
    ) -> None:
        """The host's send of ``message``, once the one before it was made."""
        if previous is not None and not previous.done():
            await asyncio.wait((previous,))
        if not self.gone and self.send_error is None:
            await self.host_send(message)

    def _sent(self, size: int, sending: asyncio.Task[None]) -> None:
        """A queued send is over (asyncio side): account for it, wake a waiter."""
        self.sending.discard(sending)
        self.queued -= 1
        self.queued_bytes -= size
        if not sending.cancelled():
            error = sending.exception()
            if isinstance(error, Exception) and self.send_error is None:
                self.send_error = error
        waiter = self.drain_waiter
        if waiter is not None and (
            self.send_error is not None
            or (self.queued <= QUEUED_MESSAGES and self.queued_bytes <= QUEUED_BYTES)
        ):
            self.drain_waiter = None
            _wake(self.token, waiter)

    async def _drained(self) -> None:
        """Wait until the queue is back within its bounds (or a send failed)."""
        task = trio.lowlevel.current_task()
        self.drain_waiter = task

        def abort(_: trio.lowlevel.RaiseCancelT) -> trio.lowlevel.Abort:
            if self.drain_waiter is task:
                self.drain_waiter = None
                return trio.lowlevel.Abort.SUCCEEDED
            return trio.lowlevel.Abort.FAILED  # its wake-up is already on the way

        await trio.lowlevel.wait_task_rescheduled(abort)
        if self.send_error is not None:
            raise self.send_error


async def _wait_task(call: asyncio.Task[Any], token: trio.lowlevel.TrioToken) -> None:
    """Sleep (in Trio) until the asyncio task ``call`` is done.

    A Trio cancellation cancels ``call`` and still waits for it to be done; then it
    raises ``Cancelled`` only if ``call`` did not finish anyway.
    """
    task = trio.lowlevel.current_task()
    raise_cancel: list[trio.lowlevel.RaiseCancelT] = []
    call.add_done_callback(lambda _: _wake(token, task))

    def abort(cancel: trio.lowlevel.RaiseCancelT) -> trio.lowlevel.Abort:
        raise_cancel.append(cancel)
        call.cancel()
        return trio.lowlevel.Abort.FAILED

    await trio.lowlevel.wait_task_rescheduled(abort)
    if raise_cancel and call.cancelled():
        raise_cancel[0]()


def _wake(token: trio.lowlevel.TrioToken, task: trio.lowlevel.Task) -> None:
    """Reschedule a Trio task from the asyncio side."""
    # A finished run has settled the request already (see GuestRun._done).
    with contextlib.suppress(trio.RunFinishedError):
        token.run_sync_soon(trio.lowlevel.reschedule, task)


async def _call(fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return await fn(*args)


async def answer(send: Send, status: int, reason: str) -> None:
    """Refuse a request: ``status`` with a JSON-RPC error without id (-32603)."""
    body = encode_message(wire.error_message(None, wire.INTERNAL_ERROR, reason))
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if status == 503:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
