"""The client side of ``wayout_server.py`` as a real stdio subprocess (the way out).

Every line the server writes is decoded as strict UTF-8 (a lone surrogate written
raw would fail here), parsed, and validated against the revision's schema
(``check_message``) as it arrives. Handlers report on stderr (``probe: ...``), and
tests wait on those lines or on replies, never on time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from support import META as META
from support.stdio_peer import WAIT as WAIT
from support.stdio_peer import (
    StdioPeer,
    cancel_message,
    request_message,
    running,
)

__all__ = [
    "META",
    "ROOT",
    "WAIT",
    "Peer",
    "cancel_message",
    "error_code",
    "request_message",
    "spawn",
]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SERVER = HERE / "wayout_server.py"


class Peer(StdioPeer):
    """Write requests to the server's stdin; collect its replies and stderr lines."""

    async def send_together(self, *messages: dict[str, Any]) -> None:
        """Write several messages in one write, so the server reads them together."""
        await self.send(*messages)

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

    async def probe(self, event: str) -> None:
        """Wait for the stderr line ``probe: <event>``."""
        await self.stderr_line(f"probe: {event}")


@asynccontextmanager
async def spawn(*args: str) -> AsyncIterator[Peer]:
    """Run ``wayout_server.py`` with ``args``; at the end close stdin, then wait."""
    async with running(Peer, [str(SERVER), *args]) as peer:
        yield peer


def error_code(reply: dict[str, Any]) -> int | None:
    """The JSON-RPC error code of a reply, or None for a result."""
    error = reply.get("error")
    return None if error is None else int(error["code"])
