"""The client side of a real stdio server subprocess, for the way-out tests.

Every line the server writes is decoded as strict UTF-8 (a lone surrogate written
raw would fail here), parsed, and validated against the revision's schema
(``check_message``) as it arrives. Handlers report on stderr (``probe: ...``), and
tests wait on those lines or on replies, never on time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from trio_mcp.testing import check_message

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SERVER = HERE / "wayout_server.py"
WAIT = 30.0  # a bound on any single wait: a loaded machine starts Python slowly
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "wayout-test", "version": "1"},
}


class Peer:
    """Write requests to the server's stdin; collect its replies and stderr lines."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.messages: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        self.methods: dict[Any, str] = {}
        self._changed = trio.Event()

    def _note(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def read_stdout(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        async for chunk in self.process.stdout:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = json.loads(line.decode("utf-8"))  # strict: no surrogates
                assert isinstance(message, dict), line
                check_message(message, self.methods.get(message.get("id")))
                self.messages.append(message)
                self._note()
        assert buffer == b"", f"a partial line at the end of the output: {buffer!r}"
        self._note()

    async def read_stderr(self) -> None:
        assert self.process.stderr is not None
        buffer = b""
        async for chunk in self.process.stderr:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            self.stderr.extend(line.decode(errors="replace") for line in lines)
            self._note()

    async def send(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            self.methods[message["id"]] = message["method"]
        assert self.process.stdin is not None
        await self.process.stdin.send_all(json.dumps(message).encode() + b"\n")

    async def send_together(self, *messages: dict[str, Any]) -> None:
        """Write several messages in one write, so the server reads them together."""
        for message in messages:
            if "id" in message and "method" in message:
                self.methods[message["id"]] = message["method"]
        assert self.process.stdin is not None
        await self.process.stdin.send_all(
            b"".join(json.dumps(m).encode() + b"\n" for m in messages)
        )

    async def request(
        self, request_id: Any, method: str, params: dict[str, Any] | None = None
    ) -> None:
        """Send a request (``_meta`` added) without waiting for its reply."""
        await self.send(request_message(request_id, method, params))

    async def call(self, request_id: Any, name: str, **arguments: Any) -> None:
        """Send a ``tools/call`` without waiting for its reply."""
        await self.request(
            request_id, "tools/call", {"name": name, "arguments": arguments}
        )

    async def cancel(self, request_id: Any) -> None:
        await self.send(cancel_message(request_id))

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        with trio.fail_after(WAIT):
            while not predicate():
                await self._changed.wait()

    def find(self, request_id: Any) -> dict[str, Any] | None:
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

    async def probe(self, event: str) -> None:
        """Wait for the stderr line ``probe: <event>``."""
        await self.wait_for(lambda: f"probe: {event}" in self.stderr)

    async def close_stdin_and_wait(self) -> int:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()
        with trio.fail_after(WAIT):
            return await self.process.wait()


@asynccontextmanager
async def spawn(*args: str) -> AsyncIterator[Peer]:
    """Run ``wayout_server.py`` with ``args``; at the end close stdin, then wait."""
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SERVER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    peer = Peer(process)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(peer.read_stdout)
            nursery.start_soon(peer.read_stderr)
            yield peer
            with trio.fail_after(WAIT):
                if process.stdin is not None:
                    await process.stdin.aclose()
                await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()


def error_code(reply: dict[str, Any]) -> int | None:
    """The JSON-RPC error code of a reply, or None for a result."""
    error = reply.get("error")
    return None if error is None else int(error["code"])


def request_message(
    request_id: Any, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A request with ``_meta`` added."""
    params = {**(params or {}), "_meta": META}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def cancel_message(request_id: Any) -> dict[str, Any]:
    """The ``notifications/cancelled`` for ``request_id``."""
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "test"},
    }
