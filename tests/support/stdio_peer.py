"""The client side of a real stdio server subprocess, shared by the stdio tests.

Every line the server writes is decoded as strict UTF-8 (a lone surrogate written raw
would fail here), parsed, and validated against the revision's schema
(``check_message``) as it arrives; stderr lines are kept for tests that wait on what
a handler reports. Tests wait on messages or stderr lines, never on time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import trio

from trio_mcp.testing import check_message

from . import META, subprocess_env

__all__ = ["WAIT", "StdioPeer", "cancel_message", "request_message", "running"]

WAIT = 30.0
"""A bound on any single wait: a loaded machine starts Python slowly."""
ROOT = Path(__file__).resolve().parents[2]

P = TypeVar("P", bound="StdioPeer")


def request_message(
    request_id: Any,
    method: str,
    params: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A request whose params carry ``meta`` (``support.META`` by default)."""
    params = {**(params or {}), "_meta": META if meta is None else meta}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def cancel_message(request_id: Any) -> dict[str, Any]:
    """The ``notifications/cancelled`` for ``request_id``."""
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "test"},
    }


class StdioPeer:
    """Write messages to the server's stdin; collect its messages and stderr lines."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.messages: list[dict[str, Any]] = []
        """Every message the server wrote, in order."""
        self.stderr: list[str] = []
        self.methods: dict[Any, str] = {}
        """The method of each request id sent, to check its reply's shape."""
        self._changed = trio.Event()

    def _note(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def read_stdout(self) -> None:
        """Read, check and keep every message until the server's stdout ends."""
        assert self.process.stdout is not None
        buffer = b""
        try:
            async for chunk in self.process.stdout:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                self._take(lines)
        except trio.ClosedResourceError:
            return  # the test closed our end on purpose
        assert buffer == b"", f"a partial line at the end of the output: {buffer!r}"
        self._note()

    def _take(self, lines: list[bytes]) -> None:
        for line in lines:
            message = json.loads(line.decode("utf-8"))  # strict: no surrogates
            assert isinstance(message, dict), line
            check_message(message, self.methods.get(message.get("id")))
            self.messages.append(message)
        self._note()

    async def read_stderr(self) -> None:
        """Keep every stderr line (decoded leniently: it is for people)."""
        assert self.process.stderr is not None
        buffer = b""
        async for chunk in self.process.stderr:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            self.stderr.extend(line.decode(errors="replace") for line in lines)
            self._note()

    async def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send_all(data)

    async def send(self, *messages: dict[str, Any]) -> None:
        """Write ``messages`` in one write, so the server reads them together."""
        for message in messages:
            if "id" in message and "method" in message:
                self.methods[message["id"]] = message["method"]
        await self.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    async def cancel(self, request_id: Any) -> None:
        await self.send(cancel_message(request_id))

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        with trio.fail_after(WAIT):
            while not predicate():
                await self._changed.wait()

    def find(self, request_id: Any) -> dict[str, Any] | None:
        """The response to ``request_id``, if it came."""
        for message in self.messages:
            if message.get("id") == request_id and "method" not in message:
                return message
        return None

    async def reply(self, request_id: Any) -> dict[str, Any]:
        """Wait for the response to ``request_id`` and return it."""
        await self.wait_for(lambda: self.find(request_id) is not None)
        found = self.find(request_id)
        assert found is not None
        return found

    async def stderr_line(self, text: str) -> None:
        """Wait for the stderr line ``text``."""
        await self.wait_for(lambda: text in self.stderr)

    async def close_stdin_and_wait(self) -> int:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()
        with trio.fail_after(WAIT):
            return await self.process.wait()


@asynccontextmanager
async def running(
    peer_type: type[P],
    command: Sequence[str],
    *,
    stderr: bool = True,
    close_at_end: bool = True,
) -> AsyncIterator[P]:
    """Run ``python *command`` (from the repository root) with a ``peer_type`` on its
    pipes. At the end close stdin and wait for the process to exit and its output to
    end (``close_at_end``), or cancel the readers; kill the process if it still runs."""
    process = await trio.lowlevel.open_process(
        [sys.executable, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr else subprocess.DEVNULL,
        cwd=ROOT,
        env=subprocess_env(),
    )
    peer = peer_type(process)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(peer.read_stdout)
            if stderr:
                nursery.start_soon(peer.read_stderr)
            yield peer
            if not close_at_end:
                nursery.cancel_scope.cancel()
            else:
                with trio.fail_after(WAIT):
                    if process.stdin is not None:
                        await process.stdin.aclose()
                    await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()
