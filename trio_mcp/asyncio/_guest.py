"""Trio as the guest of an asyncio loop: one run per loop, shared by the apps on it.

``trio.lowlevel.start_guest_run`` runs Trio's scheduler as callbacks of the asyncio
loop, on the loop's own thread. Trio allows one run per thread, and a loop owns its
thread, so every ``trio_mcp.asyncio`` app served on one loop lives in the same run:
the first app to start starts it, and it ends when the last app's service has
stopped. Each app's service is a task of the run's main nursery (``_service.py``).

Invariants:
- The guest never touches process-wide signal state: the host (uvicorn, Hypercorn,
  ``asyncio.run``) owns SIGINT and SIGTERM and ``signal.set_wakeup_fd``.
- The loop is never closed under a live run. A keeper task lives as long as the run;
  when ``asyncio.run`` ends (it cancels every task left), the keeper stops every
  service and waits for the run to end. A host that passes no lifespan therefore
  still ends the run cleanly, at the end of its loop.
- A crash of the run itself is logged once, settles every request still waiting on
  it (500), and leaves its services failed: their apps answer 503 from then on
  (``/healthz`` included, so an orchestrator restarts the process).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from typing import TYPE_CHECKING, Final

import outcome
import trio

from .._errors import McpError

if TYPE_CHECKING:
    from ._service import Service

__all__ = ["GuestRun", "settled"]

log = logging.getLogger("trio_mcp.http")

_RUNS: Final[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, GuestRun]] = (
    weakref.WeakKeyDictionary()
)


class GuestRun:
    """The Trio run hosted by one asyncio loop; ``of(loop)`` finds or starts it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.services: set[Service] = set()
        self.failure: BaseException | None = None
        """What ended the run, if it crashed."""
        self.ending = False
        self.finished: asyncio.Future[None] = loop.create_future()
        self._ready: asyncio.Future[None] = loop.create_future()
        self._end = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._keeper: asyncio.Task[None] | None = None
        self.token = self._start()

    @classmethod
    async def of(cls, loop: asyncio.AbstractEventLoop) -> GuestRun:
        """The loop's run, started if there is none (or the last one is ending).

        Raises:
            McpError: if this thread already runs Trio otherwise, or the run
                crashed as it started.
        """
        run = _RUNS.get(loop)
        if run is not None and run.ending:
            await settled(run.finished)
            run = _RUNS.get(loop)
        if run is None:
            run = cls(loop)
            _RUNS[loop] = run
        await settled(run._ready)
        if run._nursery is None:
            raise McpError(
                "the Trio run serving trio_mcp on this asyncio loop crashed as it "
                "started; the log has its traceback"
            ) from run.failure
        return run

    def _start(self) -> trio.lowlevel.TrioToken:
        if trio.lowlevel.in_trio_run():
            raise McpError(
                "trio_mcp.asyncio.mount() starts Trio as a guest of the asyncio loop, "
                "but this thread already runs Trio (trio.run, trio-asyncio or another "
                "guest run); serve server.mount() from that Trio run instead"
            )
        trio.lowlevel.start_guest_run(
            self._main,
            run_sync_soon_threadsafe=self.loop.call_soon_threadsafe,
            run_sync_soon_not_threadsafe=self.loop.call_soon,
            done_callback=self._done,
            host_uses_signal_set_wakeup_fd=True,
        )
        self._keeper = self.loop.create_task(self._keep(), name="trio_mcp guest run")
        return trio.lowlevel.current_trio_token()

    def start(self, service: Service) -> None:
        """Run ``service`` in the run's nursery (from the asyncio side).

        Raises:
            trio.RunFinishedError: if the run has ended meanwhile.
        """
        assert self._nursery is not None
        self.services.add(service)
        self.token.run_sync_soon(self._nursery.start_soon, service.run)

    def release(self, service: Service | None) -> None:
        """``service`` has stopped; the run ends with the last one (either side)."""
        if service is not None:
            self.services.discard(service)
        if not self.services and not self.ending:
            self.ending = True
            with contextlib.suppress(trio.RunFinishedError):
                self.token.run_sync_soon(self._end.set)

    async def _main(self) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._ready.set_result(None)
            await self._end.wait()
            nursery.cancel_scope.cancel()  # every service has stopped by now

    def _done(self, result: outcome.Outcome[None]) -> None:
        """The done callback: the run is over, cleanly or not."""
        self.ending = True
        if _RUNS.get(self.loop) is self:
            del _RUNS[self.loop]
        if isinstance(result, outcome.Error):
            self.failure = result.error
            log.error(
                "the Trio run serving trio_mcp on this asyncio loop crashed: its "
                "requests get 500, and its apps answer 503 from now on; restart the "
                "process",
                exc_info=result.error,
            )
            for service in list(self.services):
                service.crashed(result.error)
        if not self._ready.done():
            self._ready.set_result(None)
        self.finished.set_result(None)

    async def _keep(self) -> None:
        """Hold the loop open until the run has ended (see the module docstring)."""
        try:
            await asyncio.shield(self.finished)
        except asyncio.CancelledError:
            for service in list(self.services):
                service.request_stop()
            self.release(None)
            await settled(self.finished)
            raise


async def settled(future: asyncio.Future[None]) -> None:
    """Wait for ``future`` even if the waiting task is cancelled meanwhile.

    A cancellation that arrived while waiting is raised once the future is settled,
    so what waits on the Trio side is never abandoned half-way.
    """
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
