"""Tools that wait for the test: until their call is cancelled, or until released.

The events a test awaits are of its own loop's kind: ``trio.Event`` under Trio,
``asyncio.Event`` beside an asyncio host (the Trio guest run shares the host's
thread, so the tool may set an asyncio event). What the tool itself awaits is Trio's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import trio

from trio_mcp import ToolContext, tool

__all__ = ["Event", "Forever", "Held"]


class Event(Protocol):
    """What ``trio.Event`` and ``asyncio.Event`` share."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...

    async def wait(self) -> object: ...


class Forever:
    """The tool ``forever``: a call that waits until it is cancelled.

    ``started`` is set as a call begins and ``ended`` once it has stopped;
    ``cancelled`` holds, per call, whether its ``ctx.cancel`` had fired by then.
    """

    def __init__(self, event: Callable[[], Event] = trio.Event) -> None:
        self.started = event()
        self.ended = event()
        self.cancelled: list[bool] = []

        @tool
        async def forever() -> str:
            """Wait until cancelled."""
            self.started.set()
            try:
                await trio.sleep_forever()
            finally:
                self.cancelled.append(ToolContext.current().cancel.cancelled)
                self.ended.set()

        self.tool = forever


class Held:
    """A tool named ``name`` that holds its call until the test releases it.

    ``started`` is set as a call begins; once ``release`` is set the call answers
    ``reply``. A server with one call slot is busy while it is held.
    """

    def __init__(
        self,
        name: str = "hold",
        reply: str = "done",
        event: Callable[[], Event] = trio.Event,
    ) -> None:
        self.started = event()
        self.release = trio.Event()

        @tool(name=name)
        async def hold() -> str:
            """Hold the call until the test releases it."""
            self.started.set()
            await self.release.wait()
            return reply

        self.tool = hold
