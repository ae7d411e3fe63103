"""The loop's input behind a stream's legacy edge: the client's messages as the edge
reads them, and the edge's own.

The loop of a stream transport reads one channel. Behind a dual-era server's edge
it reads this one: each read takes the next message the client sent, which the edge
turns into what the loop serves (the same request for a 2026-07-28 client, a
translated one for a handshake-era client, nothing for what the edge answers
itself), in the loop's own task. No task and no channel stand between the client
and the loop, so a 2026-07-28 request costs what it costs without the edge.

Messages of the edge's own (a round's retry, the internal listen) are queued
(``_Edge.inject``) and taken first at the next read; one that arrives while the loop
waits for the client cuts that wait short (a cancelled receive of a Trio memory
channel takes nothing). Before ``initialize`` nothing is injected, so the read needs
no cancel scope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

if TYPE_CHECKING:
    from .._transports._stream import Taken
    from ._edge import _Edge

__all__ = ["EdgeInput"]


class EdgeInput(trio.abc.ReceiveChannel[Any]):
    """What the loop of one stream reads: lists of the messages it takes."""

    def __init__(self, edge: _Edge, incoming: trio.abc.ReceiveChannel[Any]) -> None:
        self.edge = edge
        self.incoming = incoming

    async def receive(self) -> list[Taken]:
        """The next messages for the loop (never an empty list).

        Raises:
            trio.EndOfChannel: once the client's input ended (the edge is told).
        """
        edge = self.edge
        while True:
            if edge.injected:
                taken = list(edge.injected)
                edge.injected.clear()
                return taken
            if edge.session is None:
                item = await self._next()
            else:
                with trio.CancelScope() as reading:
                    edge.reading = reading
                    item = await self._next()
                edge.reading = None
                if reading.cancelled_caught:
                    continue  # something was injected
            taken = []
            for raw in item if isinstance(item, list) else (item,):
                taken += await edge.take(raw)
            if taken:
                return taken

    async def _next(self) -> Any:
        try:
            return await self.incoming.receive()
        except trio.EndOfChannel:
            self.edge.input_ended()
            raise

    async def aclose(self) -> None:
        await self.incoming.aclose()
