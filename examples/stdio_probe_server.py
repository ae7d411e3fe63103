"""A server whose tools misbehave on purpose, to probe the stdio and WebSocket transports.

The transport tests run it as a real subprocess and talk to it over pipes. Its tools
sleep (and record how many run at once), wait to be cancelled, write to fd 1 in
every way a program can (``print``, ``os.write``, C's ``puts``, a child process),
report progress and logs, fail, and block in synchronous code.

    python examples/stdio_probe_server.py [--max-concurrent N]
        [--max-message-bytes N] [--max-depth N] [--grace SECONDS]

Lines starting with ``probe:`` on stderr tell a test what a handler saw
(``probe: started wait-1``, ``probe: cancelled wait-1``), so tests wait on events
instead of sleeping.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
import threading
import time

import trio

from trio_mcp import Limits, Server, ToolContext, ToolError, tool

_running = 0
_max_running = 0
_release = threading.Event()


def probe(event: str) -> None:
    """Tell the test what happened, on stderr (never the protocol stream)."""
    sys.stderr.write(f"probe: {event}\n")
    sys.stderr.flush()


@tool
async def nap(seconds: float) -> int:
    """
    Sleep, counting how many naps run at the same time.

    Args:
        seconds: How long to sleep.
    """
    global _running, _max_running  # the probe counts across calls
    _running += 1
    _max_running = max(_max_running, _running)
    try:
        await trio.sleep(seconds)
    finally:
        _running -= 1
    return _max_running


@tool
def most_at_once() -> int:
    """Return the largest number of naps that ever ran at the same time."""
    return _max_running


@tool
async def wait_until_cancelled(label: str) -> str:
    """
    Wait until the call is cancelled, saying so on stderr.

    Args:
        label: Names this call in the stderr lines.
    """
    probe(f"started {label}")
    try:
        await trio.sleep_forever()
    except trio.Cancelled:
        probe(f"cancelled {label}")
        raise
    raise AssertionError("unreachable")


@tool
async def noisy(text: str) -> str:
    """
    Write text to file descriptor 1 in every way a program can, then echo it.

    Args:
        text: What to write.
    """
    print(f"print {text}")  # must land on stderr
    sys.stdout.flush()
    os.write(1, f"os.write {text}\n".encode())
    libc = ctypes.CDLL(None)
    libc.puts(f"puts {text}".encode())
    libc.fflush(None)
    await trio.run_process(["echo", f"child {text}"])
    await trio.run_process(["sh", "-c", "cat; echo child stdin done"])
    return text


@tool
async def report(steps: int) -> str:
    """
    Report progress for each step and log at debug and info level.

    Args:
        steps: How many progress notifications to send.
    """
    ctx = ToolContext.current()
    for step in range(1, steps + 1):
        await ctx.progress(step, total=steps, message=f"step {step}")
    await ctx.log("debug", "a debug line")
    await ctx.log("info", "an info line")
    return "reported"


class ProbeError(ToolError):
    """A failure the model may read."""


@tool
def fail_for_model() -> str:
    """Fail with a message the model may read."""
    raise ProbeError("the probe failed on purpose")


@tool
def crash() -> str:
    """Fail with an unexpected exception (an internal error for the client)."""
    raise RuntimeError("an unexpected failure")


@tool
def block_in_sync_code() -> str:
    """Block a worker thread until ``release`` is called (at most ten seconds)."""
    probe("blocking")
    released = _release.wait(timeout=10)
    return "released" if released else "timed out"


@tool
def poll_cancel() -> str:
    """Poll ``ctx.cancel`` from a worker thread until it fires (at most 60 s)."""
    ctx = ToolContext.current()
    probe("polling")
    for _ in range(6000):
        if ctx.cancel.cancelled:
            probe("sync saw cancel")
            return "stopped"
        time.sleep(0.01)
    return "never cancelled"


@tool
def release() -> str:
    """Let ``block_in_sync_code`` return."""
    _release.set()
    return "released"


@tool
def echo(text: str) -> str:
    """
    Return the text unchanged.

    Args:
        text: What to return.
    """
    return text


server = Server(
    name="stdio-probe",
    version="1.0.0",
    tools=[
        nap,
        most_at_once,
        wait_until_cancelled,
        noisy,
        report,
        fail_for_model,
        crash,
        block_in_sync_code,
        poll_cancel,
        release,
        echo,
    ],
)


async def main(argv: list[str] | None = None) -> None:
    """Serve the probe over stdin and stdout with limits from the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-concurrent", type=int, default=16)
    parser.add_argument("--max-message-bytes", type=int, default=4 * 1024 * 1024)
    parser.add_argument("--max-depth", type=int, default=128)
    parser.add_argument("--grace", type=float, default=5.0)
    args = parser.parse_args(argv)
    await server.serve_stdio(
        limits=Limits(
            max_concurrent=args.max_concurrent,
            max_message_bytes=args.max_message_bytes,
            max_depth=args.max_depth,
            grace_period=args.grace,
        )
    )
    probe("served")


if __name__ == "__main__":
    trio.run(main)
