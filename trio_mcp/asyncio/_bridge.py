"""One HTTP request carried from an asyncio ASGI server to the Trio app and back.

The host (uvicorn, say) calls the asyncio app with its ``receive`` and ``send``; the
request is served by trio_mcp's own ASGI app in a Trio task of the guest run. That
task's ``receive`` and ``send`` call the host's, each in an asyncio task made for the
call (so host code runs as asyncio code: its current task, its context variables, its
cancellation), and the Trio task sleeps until that asyncio task is done. No thread is
involved: both loops run on the loop's thread, Trio's ticks being callbacks of the
asyncio loop. The crossings are plain calls one way (Trio code may set an asyncio
future) and ``TrioToken.run_sync_soon`` the other (asyncio code wakes a Trio task).

Messages pass through as they are: the same dicts, the same bytes, in order.

Invariants:
- The Trio task never outlives the host's call: ``serve`` returns only once the
  Trio side is done, also when the host cancels it (the Trio side is cancelled
  first, as for a client that went away, so ``ctx.cancel`` fires).
- A host call that the Trio side abandons (its cancel scope fired) is cancelled in
  asyncio and waited for; one that the host itself cancels (the loop being torn
  down) reads as ``http.disconnect`` and a send that did not happen.
- An exception of the Trio app reaches the host unchanged, as any app's would
  (the host logs it and answers 500 if nothing was sent). A request the Trio side
  could not finish (its app stopped, or the guest run crashed) is answered here:
  503 or 500 before the response started, else the response is ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Awaitable, Callable, MutableMapping
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

    __slots__ = (
        "complete",
        "context",
        "done",
        "gone",
        "host_receive",
        "host_send",
        "loop",
        "receiving",
        "scope",
        "started",
        "token",
        "trio_scope",
    )

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
        """Whether ``http.response.start`` went to the host."""
        self.complete = False
        """Whether the last body message went to the host."""
        self.gone = False
        """Whether the host abandoned the call (it cancelled it)."""
        self.receiving: asyncio.Task[Any] | None = None
        """The host ``receive()`` the Trio side is waiting on, if any."""

    # -- the asyncio side --------------------------------------------------------
    async def serve(self, spawn: Callable[[Exchange], object]) -> None:
        """Have ``spawn`` start the Trio side, and return once it is done.

        Raises:
            Exception: the Trio app's own error, unchanged.
        """
        try:
            self.token.run_sync_soon(spawn, self)
        except trio.RunFinishedError:
            self.stop(503, "the Trio run serving this app has ended")
        cancelled = False
        while not self.done.done():
            try:
                # Neither raises the future's exception nor cancels the future.
                await asyncio.wait((self.done,))
            except asyncio.CancelledError:
                # The host abandons the request: end the Trio side as for a client
                # that went away, wait for it, then let the cancellation go on.
                if not cancelled and not self.done.done():
                    self._host_left()
                cancelled = True
        failure = self.done.exception()
        if cancelled:
            raise asyncio.CancelledError
        if isinstance(failure, _Stopped):
            await self._end(failure)
        elif failure is not None:
            raise failure

    def stop(self, status: int, reason: str) -> None:
        """Settle the request as not finished by the Trio side (from either side)."""
        if not self.done.done():
            self.done.set_exception(_Stopped(status, reason))

    def _host_left(self) -> None:
        """Tell the Trio side the client is gone, as a disconnect would.

        The app reads ``http.disconnect`` (its watcher cancels the request, so the
        handler's ``ctx.cancel`` fires) and sends go nowhere; what has not ended
        ``HOST_GONE_GRACE`` seconds later is cancelled.
        """
        self.gone = True
        if self.receiving is not None:
            self.receiving.cancel()
        try:
            self.token.run_sync_soon(self._give_up_soon)
        except trio.RunFinishedError:
            self.stop(500, "the Trio run serving this app has ended")

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
        if self.gone:
            await trio.lowlevel.checkpoint()
            return _DISCONNECT
        message = await self._host_call(self.host_receive, receiving=True)
        return _DISCONNECT if message is None else message

    async def send(self, message: Message) -> None:
        """Pass ``message`` to the host (dropped once the host gave up)."""
        kind = message["type"]
        if kind == "http.response.start":
            self.started = True
        elif kind == "http.response.body" and not message.get("more_body", False):
            self.complete = True
        if self.gone:
            await trio.lowlevel.checkpoint()
            return
        await self._host_call(self.host_send, message)

    async def _host_call(
        self, fn: Callable[..., Awaitable[Any]], *args: Any, receiving: bool = False
    ) -> Any:
        """Await ``fn(*args)`` in an asyncio task; None if the host gave up on it.

        A Trio cancellation cancels the asyncio task and waits for it: if the call
        finished anyway its result is returned (Trio raises at the next checkpoint).
        """
        task = trio.lowlevel.current_task()
        call = self.loop.create_task(_call(fn, *args), context=self.context)
        if receiving:
            self.receiving = call
        wake = _Wake(self.token, task)
        call.add_done_callback(wake)

        def abort(raise_cancel: trio.lowlevel.RaiseCancelT) -> trio.lowlevel.Abort:
            wake.raise_cancel = raise_cancel
            call.cancel()
            return trio.lowlevel.Abort.FAILED

        await trio.lowlevel.wait_task_rescheduled(abort)
        if receiving:
            self.receiving = None
        if not call.cancelled():
            return call.result()
        if wake.raise_cancel is not None:
            wake.raise_cancel()
        return None  # the host gave up on the call (or its loop is being torn down)


class _Wake:
    """An asyncio done callback that reschedules the waiting Trio task."""

    __slots__ = ("raise_cancel", "task", "token")

    def __init__(
        self, token: trio.lowlevel.TrioToken, task: trio.lowlevel.Task
    ) -> None:
        self.token = token
        self.task = task
        self.raise_cancel: trio.lowlevel.RaiseCancelT | None = None

    def __call__(self, _: asyncio.Task[Any]) -> None:
        # A finished run has settled the request already (see GuestRun._done).
        with contextlib.suppress(trio.RunFinishedError):
            self.token.run_sync_soon(trio.lowlevel.reschedule, self.task)


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
