"""A TCP server on 127.0.0.1 that answers each connection with fixed bytes: for
clients facing what no real server would send (a redirect, a body past a limit)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from functools import partial

import trio

__all__ = ["answering"]


async def _answer(reply: bytes, stream: trio.SocketStream) -> None:
    async with stream:
        await stream.receive_some(65536)
        # The client may stop reading (at its limit, say) and close first.
        with contextlib.suppress(trio.BrokenResourceError):
            await stream.send_all(reply)


@contextlib.asynccontextmanager
async def answering(reply: bytes) -> AsyncIterator[int]:
    """Serve ``reply`` to every connection (after reading its first bytes), then
    close it; yield the port."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_tcp, partial(_answer, reply), 0, host="127.0.0.1")
        )
        yield listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()
