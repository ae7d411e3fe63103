"""Newline-delimited JSON-RPC on stdin and stdout, with fd 1 diverted to stderr.

This module owns only the framing and the file descriptors; parsing, the
concurrency cap, cancellation and replies are ``serve_messages``'s business.

File descriptor invariants while ``serve_stdio`` runs (POSIX and Windows):

- The protocol is read from a private duplicate of the original fd 0 and written
  to a private duplicate of the original fd 1. Both are non-inheritable, so no
  child process holds the protocol stream, and only this module writes to the
  output one: whole messages, one compact JSON text per line.
- fd 1 is a duplicate of fd 2, and ``sys.stdout`` is ``sys.stderr``. So ``print()``,
  C code writing to its stdout and child processes all land on stderr, which the
  client must tolerate (spec §13), never on the protocol stream.
- fd 0 is ``/dev/null``, so a child process that reads its stdin cannot steal
  protocol bytes, and the stream's non-blocking mode (set by ``FdStream`` on the
  shared open file description) is never seen by children.
- On POSIX the duplicates are ``FdStream``s (non-blocking, on Trio's I/O loop). On
  Windows, which has no non-blocking pipes, or with ``TRIO_MCP_STDIO_THREADS=1``,
  they are read and written by blocking calls in worker threads (``_threads``);
  the invariants above are the same. A serve cancelled while stdin is still open
  leaves one reader thread blocked until the next chunk arrives or stdin closes;
  that chunk is discarded.
- Python's and C's stdio buffers are flushed right after fd 1 is diverted (output
  written before serving lands on stderr) and right before it is restored (output
  written while serving cannot reach the protocol stream later).
- When serving ends, however it ends, fd 0, fd 1 and ``sys.stdout`` are restored
  and the private duplicates are closed. Only one ``serve_stdio`` runs per process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator

import attrs
import trio

from .._authority import Grants
from .._declare._threads import thread_budget
from .._dispatch import Dispatcher
from .._errors import Transport
from .._limits import Limits
from ._stream import (
    MakeFront,
    Oversized,
    Received,
    first_exception,
    serve_messages,
    stream_caller,
)

__all__ = ["THREADS_ENV", "serve_stdio", "stdio_streams", "use_threads"]

#: How much is read from stdin at once; lines are assembled from these chunks.
READ_CHUNK_BYTES = 64 * 1024
#: What RFC 8259 §2 calls whitespace; ``bytes.strip()`` would also drop \v and \f.
JSON_WHITESPACE = b" \t\r\n"

#: Set to ``1`` to read and write stdio in worker threads on POSIX too (as on
#: Windows, where it is the only way); the test suite runs stdio both ways.
THREADS_ENV = "TRIO_MCP_STDIO_THREADS"

log = logging.getLogger("trio_mcp")

_serving = False

#: Seconds, at most, that ``serve_stdio`` waits after the stream ended for the
#: threads of cancelled synchronous handlers to return: their ``ctx.cancel`` has
#: fired, and a handler that polls it sees so while the run is still alive, instead
#: of being cut off by the process's exit.
THREADS_EXIT_WAIT = 2.0


async def serve_stdio(
    dispatcher: Dispatcher,
    *,
    limits: Limits,
    allow: Grants = (),
    front: MakeFront | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve newline-delimited JSON-RPC on the process's stdin and stdout.

    Returns when stdin reaches end of file and the requests still running have
    finished or, after ``limits.grace_period`` seconds, been cancelled (then up to
    ``THREADS_EXIT_WAIT`` more seconds for the threads of cancelled synchronous
    handlers, which see ``ctx.cancel`` fired, to return).

    Raises:
        McpError.Transport: if stdin or stdout is not open, cannot be read or
            written (for example the client closed the protocol stream), or
            ``serve_stdio`` is already running in this process.
    """
    global _serving
    if _serving:
        raise Transport(
            "serve_stdio is already running in this process; stdin and stdout "
            "carry one protocol stream, so serve it once"
        )
    _serving = True
    try:
        with _diverted_stdio() as (in_fd, out_fd):
            reader, writer = stdio_streams(in_fd, out_fd)
            async with reader, writer, dispatcher.broadcast.running():
                await _serve(
                    dispatcher,
                    reader,
                    writer,
                    limits=limits,
                    allow=allow,
                    front=front,
                    task_status=task_status,
                )
        await _handler_threads_returned(THREADS_EXIT_WAIT)
    finally:
        _serving = False


async def _handler_threads_returned(wait: float) -> None:
    """Wait up to ``wait`` seconds until no handler thread of this run is running."""
    limiter = thread_budget().limiter
    with trio.move_on_after(wait):
        while limiter.borrowed_tokens:  # noqa: ASYNC110 - worker threads return it
            await trio.sleep(0.01)


def use_threads() -> bool:
    """Whether stdio reads and writes in worker threads: on Windows, or when
    ``TRIO_MCP_STDIO_THREADS=1``."""
    return sys.platform == "win32" or os.environ.get(THREADS_ENV) == "1"


def stdio_streams(
    in_fd: int, out_fd: int
) -> tuple[trio.abc.ReceiveStream, trio.abc.SendStream]:
    """The protocol streams over the private duplicates; each owns its fd."""
    if use_threads():
        from ._threads import thread_streams

        log.debug("stdio reads and writes in worker threads")
        return thread_streams(in_fd, out_fd)
    if sys.platform == "win32":  # pragma: no cover - use_threads() is true there
        raise AssertionError("FdStream is POSIX only")
    return trio.lowlevel.FdStream(in_fd), trio.lowlevel.FdStream(out_fd)


async def _serve(
    dispatcher: Dispatcher,
    reader: trio.abc.ReceiveStream,
    writer: trio.abc.SendStream,
    *,
    limits: Limits,
    allow: Grants,
    front: MakeFront | None,
    task_status: trio.TaskStatus[None],
) -> None:
    """Run the line reader and the message loop; surface a transport failure alone."""
    # Capacity 0: the reader hands over the lines of one read at a time, so when
    # the loop stops taking messages (backpressure) the reader stops reading and
    # the pipe fills, which blocks the client instead of growing our memory.
    send_channel, receive_channel = trio.open_memory_channel[list[Received]](0)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                read_lines, reader, send_channel, limits.max_message_bytes
            )
            task_status.started()
            await serve_messages(
                dispatcher,
                receive_channel,
                _WriteLines(writer),
                caller=stream_caller(allow),
                limits=limits,
                front=front,
            )
    except* Transport as group:
        # A new exception: re-raising a member of the group would re-wrap it.
        failure = first_exception(group)
        raise Transport(str(failure)) from failure.__cause__


@attrs.frozen(eq=False)
class _WriteLines:
    """The loop's ``Write`` on stdout: a batch of messages as lines, in one send."""

    writer: trio.abc.SendStream

    async def __call__(self, batch: list[bytes]) -> None:
        try:
            await self.writer.send_all(b"\n".join(batch) + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise Transport(
                "cannot write to stdout, the protocol stream: the client closed it "
                "or went away; restart the server from the client"
            ) from exc


async def read_lines(
    stream: trio.abc.ReceiveStream,
    out: trio.MemorySendChannel[list[Received]],
    limit: int,
) -> None:
    """Send the lines of each read of ``stream`` (without newlines) to ``out``.

    A line longer than ``limit`` bytes is never held whole: once the buffer would
    exceed the limit it is dropped, the rest of the line is skipped up to its
    newline, and ``Oversized(limit)`` is sent in its place. Blank lines (nothing
    but JSON whitespace: space, tab, CR) are ignored (our choice: a stray newline
    from a client is not worth an error reply); any other byte, a form feed or a
    vertical tab included, makes a message, which then gets its parse error.
    ``out`` is closed at end of file.

    Raises:
        McpError.Transport: if reading fails for a reason other than end of file.
    """
    lines = _Lines(limit)
    try:
        async with out:
            while chunk := await _receive(stream):
                if batch := lines.split(chunk):
                    await out.send(batch)
            if batch := lines.end():
                await out.send(batch)
    except trio.BrokenResourceError:
        # The message loop has stopped (it failed); its error is the one to report.
        return


async def _receive(stream: trio.abc.ReceiveStream) -> bytes:
    try:
        return bytes(await stream.receive_some(READ_CHUNK_BYTES))
    except (trio.BrokenResourceError, OSError) as exc:
        raise Transport(
            "cannot read stdin, the protocol stream; launch the server with a pipe "
            "on stdin"
        ) from exc


@attrs.define(eq=False)
class _Lines:
    """Splits chunks into lines, never buffering more than ``limit`` bytes of one."""

    limit: int
    buffer: bytearray = attrs.field(factory=bytearray)
    skipping: bool = False
    """The current line has outgrown the limit: drop it up to its newline."""

    def split(self, chunk: bytes) -> list[Received]:
        """The lines this chunk completes, an ``Oversized`` for each too long."""
        found: list[Received] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            piece = chunk[start:end]
            start = end + 1
            if self.skipping or len(self.buffer) + len(piece) > self.limit:
                self.skipping = False
                found.append(Oversized(self.limit))
            else:
                self.buffer += piece
                found.append(bytes(self.buffer))
            self.buffer.clear()
        rest = chunk[start:]
        if not self.skipping and len(self.buffer) + len(rest) > self.limit:
            self.skipping = True
            self.buffer.clear()
        elif not self.skipping:
            self.buffer += rest
        return [line for line in found if not _blank(line)]

    def end(self) -> list[Received]:
        """At end of file a last line without its newline still counts."""
        if self.skipping:
            return [Oversized(self.limit)]
        last = bytes(self.buffer)
        return [] if _blank(last) else [last]


def _blank(line: Received) -> bool:
    return isinstance(line, bytes) and not line.strip(JSON_WHITESPACE)


@contextlib.contextmanager
def _diverted_stdio() -> Iterator[tuple[int, int]]:
    """Divert fds 0 and 1 as the module docstring states; yield the private dups."""
    try:
        saved_in, saved_out = os.dup(0), os.dup(1)
    except OSError as exc:
        raise Transport(
            "stdin or stdout is not open; launch the server with pipes on both"
        ) from exc
    in_fd, out_fd = os.dup(0), os.dup(1)
    saved_sys_stdout = sys.stdout
    try:
        os.dup2(2, 1)
        _flush_stdio(saved_sys_stdout)
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        sys.stdout = sys.stderr
        yield in_fd, out_fd
    finally:
        # The FdStreams own in_fd and out_fd and have closed them by now.
        _flush_stdio(sys.stdout)
        sys.stdout = saved_sys_stdout
        _flush_stdio(sys.stdout)
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


def _flush_stdio(stream: object) -> None:
    """Flush a Python text stream and every C stdio buffer to wherever fd 1 points now."""
    flush = getattr(stream, "flush", None)
    if flush is not None:
        with contextlib.suppress(OSError, ValueError):
            flush()
    _flush_c_stdio()


def _flush_c_stdio() -> None:
    """Call C's ``fflush(NULL)``, so C extensions' buffered stdout goes where fd 1 is."""
    import ctypes

    # Windows has no CDLL(None) (TypeError); its C runtime flushes at exit.
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).fflush(None)
