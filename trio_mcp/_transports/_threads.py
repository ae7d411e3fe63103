"""Byte streams over a file descriptor with blocking reads and writes in threads.

``trio.lowlevel.FdStream`` needs POSIX non-blocking pipes; Windows has none for the
console or anonymous pipes, so stdio there reads and writes in worker threads
(``trio.to_thread``). The streams are ``trio.abc`` streams, so the line reader and
the message loop do not know which kind they got.

Each stream has its own ``CapacityLimiter(1)``: one read (or one write) at a time,
and a thread abandoned by cancellation keeps its slot until its blocking call
returns, so the next read or write can never run beside it (no interleaved or
lost bytes). The descriptor is closed by whoever finishes last: ``aclose()``, or
the abandoned thread once its call returns.
"""

from __future__ import annotations

import os
import threading

import trio

__all__ = ["ThreadReader", "ThreadWriter", "thread_streams"]

#: Bytes asked of one blocking read.
READ_SIZE = 64 * 1024


class _Fd:
    """A descriptor closed once no thread is using it and ``close`` was asked."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._users = 0
        self._closing = False

    def enter(self) -> int:
        with self._lock:
            if self._closing:
                raise trio.ClosedResourceError("the stream is closed")
            self._users += 1
            return self._fd

    def leave(self) -> None:
        with self._lock:
            self._users -= 1
            last = self._closing and self._users == 0
        if last:
            os.close(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
            idle = self._users == 0
        if idle:
            os.close(self._fd)

    @property
    def closed(self) -> bool:
        return self._closing


class ThreadReader(trio.abc.ReceiveStream):
    """Reads an fd in a worker thread; ``b""`` at end of file."""

    def __init__(self, fd: int) -> None:
        self._fd = _Fd(fd)
        self._limiter = trio.CapacityLimiter(1)

    def _read(self, max_bytes: int) -> bytes:
        fd = self._fd.enter()
        try:
            return os.read(fd, max_bytes)
        finally:
            self._fd.leave()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._fd.closed:
            raise trio.ClosedResourceError("the stream is closed")
        return await trio.to_thread.run_sync(
            self._read,
            READ_SIZE if max_bytes is None else max_bytes,
            abandon_on_cancel=True,
            limiter=self._limiter,
        )

    async def aclose(self) -> None:
        self._fd.close()
        await trio.lowlevel.checkpoint()


class ThreadWriter(trio.abc.SendStream):
    """Writes an fd in a worker thread, each ``send_all`` whole before the next."""

    def __init__(self, fd: int) -> None:
        self._fd = _Fd(fd)
        self._limiter = trio.CapacityLimiter(1)

    def _write_all(self, data: bytes) -> None:
        fd = self._fd.enter()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            self._fd.leave()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._fd.closed:
            raise trio.ClosedResourceError("the stream is closed")
        await trio.to_thread.run_sync(
            self._write_all, bytes(data), abandon_on_cancel=True, limiter=self._limiter
        )

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        self._fd.close()
        await trio.lowlevel.checkpoint()


def thread_streams(in_fd: int, out_fd: int) -> tuple[ThreadReader, ThreadWriter]:
    """The reader of ``in_fd`` and the writer of ``out_fd``; each owns its fd."""
    return ThreadReader(in_fd), ThreadWriter(out_fd)
