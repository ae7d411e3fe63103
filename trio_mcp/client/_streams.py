"""The message streams under ``StreamLink``: a subprocess's stdio and a ``Server``
in this process (the WebSocket is ``_websocket``'s).

Each opener is an async context manager that yields a working ``StreamLink`` and, on
exit, stops what it started within a bounded time, whatever cancelled the block:

* stdio (revision 2026-07-28, "stdio"): one message per line both ways. On exit the
  child's stdin is closed, it gets ``STDIO_GRACE`` seconds to exit, then SIGTERM,
  then after as long again SIGKILL. Its stderr is the client's own (servers log
  there). A line past ``MAX_MESSAGE_BYTES`` breaks the link without being buffered
  whole.
* in process: ``Server.serve_messages`` over memory channels, every message encoded
  to JSON text and decoded again, so the client sees exactly what it would on a wire.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

import trio

from .._errors import Transport
from ._jsonrpc import MAX_MESSAGE_BYTES
from ._link import StreamLink

if TYPE_CHECKING:
    from .._serving import (
        Serving as Server,
    )  # its base: _server reaches this package (upstreams)

__all__ = ["STDIO_GRACE", "open_in_process", "open_stdio"]

#: Seconds a stdio server gets to exit after its stdin closes (then SIGTERM, then as
#: long again before SIGKILL).
STDIO_GRACE = 2.0


class _Lines:
    """Newline-delimited messages from a byte stream, each at most ``limit`` bytes."""

    def __init__(self, stream: trio.abc.ReceiveStream, source: str, limit: int) -> None:
        self._stream = stream
        self._source = source
        self._limit = limit
        self._buffer = bytearray()
        self._searched = 0

    async def next(self) -> bytes | None:
        """The next non-empty line (without its end), or None at end of stream."""
        while True:
            end = self._buffer.find(b"\n", self._searched)
            if end >= 0:
                line = bytes(self._buffer[:end]).rstrip(b"\r")
                del self._buffer[: end + 1]
                self._searched = 0
                if line.strip():
                    return line
                continue
            self._searched = len(self._buffer)
            if len(self._buffer) > self._limit + 1:
                raise Transport(
                    f"{self._source} sent a line past the client's limit of "
                    f"{self._limit} bytes"
                )
            try:
                chunk = await self._stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                chunk = b""
            if not chunk:
                return None
            self._buffer += chunk


def _describe(command: Sequence[str]) -> str:
    """The command as named in errors: its program only (arguments may hold secrets)."""
    return f"the stdio server {command[0]!r}" if command else "the stdio server"


@contextlib.asynccontextmanager
async def open_stdio(command: Sequence[str]) -> AsyncIterator[StreamLink]:
    """Start ``command`` and yield a link over its stdin and stdout."""
    source = _describe(command)
    try:
        process = await trio.lowlevel.open_process(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
    except OSError as exc:
        raise Transport(f"could not start {source}: {exc.strerror or exc}") from exc
    assert process.stdin is not None
    assert process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def send_text(text: str) -> None:
        await stdin.send_all(text.encode("utf-8", "surrogatepass") + b"\n")

    try:
        async with trio.open_nursery() as nursery:
            link = StreamLink(send_text, nursery, source=source)
            lines = _Lines(stdout, source, MAX_MESSAGE_BYTES)
            nursery.start_soon(link.read, lines.next)
            try:
                yield link
            finally:
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await _stop(process, stdin)


async def _stop(process: trio.Process, stdin: trio.abc.SendStream) -> None:
    """Close stdin, wait ``STDIO_GRACE``, terminate, wait as long again, kill."""
    with contextlib.suppress(
        trio.BrokenResourceError, trio.ClosedResourceError, OSError
    ):
        await stdin.aclose()
    for stop in (None, process.terminate, process.kill):
        if stop is not None:
            with contextlib.suppress(ProcessLookupError):
                stop()
        with trio.move_on_after(STDIO_GRACE):
            await process.wait()
            break
    if process.stdout is not None:
        await process.stdout.aclose()


@contextlib.asynccontextmanager
async def open_in_process(server: Server) -> AsyncIterator[StreamLink]:
    """Serve ``server`` in this process and yield a link to it.

    On exit the server's input is closed, as a stdio client closing stdin does, and
    it gets ``STDIO_GRACE`` seconds to finish what is running before it is cancelled.
    """
    source = f"the in-process server {server.name!r}"
    to_server, from_client = trio.open_memory_channel[str | bytes](64)
    to_client, from_server = trio.open_memory_channel[str](64)
    served = trio.Event()

    async def texts() -> str | None:
        try:
            return await from_server.receive()
        except trio.EndOfChannel:
            return None

    async def serve() -> None:
        try:
            async with to_client:
                await server.serve_messages(from_client, to_client.send)
        finally:
            served.set()

    async with trio.open_nursery() as nursery:
        link = StreamLink(to_server.send, nursery, source=source)
        nursery.start_soon(serve)
        nursery.start_soon(link.read, texts)
        try:
            yield link
        finally:
            to_server.close()
            with trio.move_on_after(STDIO_GRACE):
                await served.wait()
            nursery.cancel_scope.cancel()
