"""One app's serving inside the guest run: the Trio app's lifespan and its requests.

A service is a task of the guest run. It drives the Trio ASGI app's own lifespan
(which holds the server's broadcast and the nursery that task tools run in, for
exactly the service's life), then serves requests in a nursery of its own until
asked to stop. Stopping is graceful, as under ``serve_http``: open listen streams
get their result (``app.close()``), running requests have ``SHUTDOWN_GRACE`` seconds
to finish, then the rest end as if their clients had left (their handlers see
``ctx.cancel`` fire) and are cut ``LEAVING_GRACE`` seconds later at most, and the
lifespan ends last, so running tasks are cancelled only then.

Invariants:
- Once stopping, the service takes no new request (503).
- A failure of the lifespan (a broadcast that cannot connect, say) fails the service:
  it is logged, the requests in flight are cancelled, later ones get 503.
- ``stopped`` is settled exactly once, whatever ends the service; the asyncio side
  waits on it and never on a Trio event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Final, Literal, Protocol

import trio

from .._errors import McpError
from ._bridge import Exchange, Message, Receive, Scope, Send, answer
from ._guest import GuestRun, settled

__all__ = ["SHUTDOWN_GRACE", "Service", "TrioApp"]

log = logging.getLogger("trio_mcp.http")

#: Seconds running requests have to finish once the app stops (Hypercorn's
#: ``graceful_timeout`` under ``serve_http``).
SHUTDOWN_GRACE: Final = 1.0
#: Seconds the requests still running then have to end as for a client that left.
LEAVING_GRACE: Final = 0.25

State = Literal["new", "starting", "serving", "stopping", "stopped", "failed"]


class TrioApp(Protocol):
    """The Trio ASGI app ``Server.mount`` returns, as the service uses it."""

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        """Serve one ASGI connection scope (under Trio)."""
        ...

    def close(self) -> None:
        """End open listen streams gracefully."""
        ...


class Service:
    """One app served on one asyncio loop, through that loop's guest run."""

    def __init__(self, app: TrioApp, loop: asyncio.AbstractEventLoop) -> None:
        self.app = app
        self.loop = loop
        self.state: State = "new"
        self.failure: BaseException | None = None
        self.holds = 0
        """Lifespans entered and not yet left: the last one to leave stops it."""
        self.ready: asyncio.Future[None] = loop.create_future()
        self.stopped: asyncio.Future[None] = loop.create_future()
        self.exchanges: set[Exchange] = set()
        self._run: GuestRun | None = None
        self._stop = trio.Event()
        self._requests: trio.Nursery | None = None
        self._active = 0
        self._idle: trio.Event | None = None

    # -- the asyncio side --------------------------------------------------------
    async def start(self) -> None:
        """Start serving, or wait for the start already under way.

        Raises:
            McpError: if the guest run or the app's lifespan could not start.
        """
        if self.state == "new":
            self.state = "starting"
            try:
                run = await GuestRun.of(self.loop)
                if self.state == "starting":  # not stopped meanwhile
                    self._run = run
                    run.start(self)
            except (McpError, trio.RunFinishedError) as exc:
                self._fail(exc)
            if self._run is None and not self.ready.done():
                self.ready.set_result(None)
        await settled(self.ready)
        if self.failure is not None:
            cause = _leaf(self.failure)
            raise McpError(
                "the trio_mcp app could not start serving: "
                f"{type(cause).__name__}: {cause}"
            ) from cause

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI call of the host through the Trio app."""
        run = self._run
        if self.state != "serving" or run is None:
            await refuse(scope, send, self.refusal())
            return
        exchange = Exchange(scope, receive, send, loop=self.loop, token=run.token)
        self.exchanges.add(exchange)
        try:
            await exchange.serve(self._spawn)
        finally:
            self.exchanges.discard(exchange)

    def refusal(self) -> str:
        """Why this service takes no request now."""
        if self.state == "failed":
            return (
                "this MCP server failed and no longer serves; its log says why "
                "(restart the process)"
            )
        return "this MCP server is shutting down"

    async def stop(self) -> None:
        """Stop gracefully and wait until the service has ended.

        When it was the last service of its guest run, wait for the run to end too,
        so nothing of Trio is left running once the host's lifespan is over.
        """
        self.request_stop()
        await settled(self.stopped)
        run = self._run
        if run is not None and run.ending:
            await settled(run.finished)

    def request_stop(self) -> None:
        """Begin the graceful stop (from the asyncio side)."""
        if self.state in ("new", "starting", "serving"):
            self.state = "stopping"
        run = self._run
        if run is None:  # it never reached the guest run
            for future in (self.ready, self.stopped):
                if not future.done():
                    future.set_result(None)
            return
        with contextlib.suppress(trio.RunFinishedError):
            run.token.run_sync_soon(self._stop.set)

    def crashed(self, error: BaseException) -> None:
        """The guest run died under the service: settle everything still waiting."""
        self._fail(error)
        for exchange in list(self.exchanges):
            exchange.stop(500, "the Trio run serving this MCP server crashed")
        if not self.stopped.done():
            self.stopped.set_result(None)

    def _fail(self, error: BaseException) -> None:
        self.state = "failed"
        if self.failure is None:
            self.failure = error
        if not self.ready.done():
            self.ready.set_result(None)

    # -- the Trio side -----------------------------------------------------------
    async def run(self) -> None:
        """The service's task in the guest run: lifespan, requests, graceful stop."""
        clean = False
        try:
            async with trio.open_nursery() as outer:
                shutdown: trio.Event = await outer.start(_lifespan, self.app)
                async with trio.open_nursery() as requests:
                    self._requests = requests
                    if self.state == "starting":
                        self.state = "serving"
                    self.ready.set_result(None)
                    await self._stop.wait()
                    self.app.close()  # listen streams get their result and end
                    with trio.move_on_after(SHUTDOWN_GRACE):
                        await self._drained()
                    # What still runs is told its client left (ctx.cancel fires),
                    # then cut.
                    for exchange in list(self.exchanges):
                        exchange.leave((503, self.refusal()))
                    with trio.move_on_after(LEAVING_GRACE):
                        await self._drained()
                    requests.cancel_scope.cancel()
                shutdown.set()
            clean = True
        except Exception as exc:  # the app's lifespan failed: fail the service
            if self.ready.done():  # a failed start is reported by whoever started it
                log.error(
                    "the trio_mcp app stopped serving: its lifespan failed; later "
                    "requests get 503",
                    exc_info=exc,
                )
            self._fail(exc)
        finally:
            self._requests = None
            if not clean:  # cancelled from outside: the guest run is crashing
                self.state = "failed"
            elif self.state != "failed":
                self.state = "stopped"
            if not self.ready.done():
                self.ready.set_result(None)
            if not self.stopped.done():
                self.stopped.set_result(None)
            assert self._run is not None
            self._run.release(self)

    def _spawn(self, exchange: Exchange) -> None:
        """Start the Trio side of ``exchange`` (run by the guest's entry queue)."""
        if self._requests is None or self._stop.is_set():
            exchange.stop(503, self.refusal())
            return
        self._requests.start_soon(self._one, exchange)

    async def _one(self, exchange: Exchange) -> None:
        self._active += 1
        try:
            await exchange.run(self.app, self._cut)
        finally:
            self._active -= 1
            if not self._active and self._idle is not None:
                self._idle.set()

    def _cut(self) -> tuple[int, str]:
        """How to answer a request cancelled before it finished."""
        if self._stop.is_set():
            return 503, self.refusal()
        return 500, "this MCP server failed while serving the request; its log says why"

    async def _drained(self) -> None:
        while self._active:
            self._idle = trio.Event()
            await self._idle.wait()


async def _lifespan(
    app: Callable[[Scope, Receive, Send], Awaitable[None]],
    *,
    task_status: trio.TaskStatus[trio.Event],
) -> None:
    """Run the Trio app's ASGI lifespan; report an event that ends it once started."""
    shutdown = trio.Event()
    asked = False

    async def receive() -> Message:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "lifespan.startup"}
        await shutdown.wait()
        return {"type": "lifespan.shutdown"}

    async def send(message: Message) -> None:
        if message["type"] == "lifespan.startup.complete":
            task_status.started(shutdown)
        elif message["type"] == "lifespan.startup.failed":
            raise McpError(f"the app's lifespan failed: {message.get('message', '')}")
        await trio.lowlevel.checkpoint()

    scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}}
    await app(scope, receive, send)


async def refuse(scope: Scope, send: Send, reason: str) -> None:
    """Answer a call this app cannot serve now: 503 (HTTP) or a closed websocket."""
    if scope["type"] == "http":
        await answer(send, 503, reason)
    elif scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1013})


def _leaf(error: BaseException) -> BaseException:
    """The one exception inside nested single-exception groups (Trio's nurseries)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
