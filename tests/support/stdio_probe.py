"""The probe server (examples/stdio_probe_server.py) as a subprocess, and its client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from .stdio_peer import StdioPeer, request_message, running

__all__ = ["PROBE", "Peer", "spawn"]

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "examples" / "stdio_probe_server.py"


class Peer(StdioPeer):
    """The client side of one server subprocess: write lines, collect what comes back."""

    async def call(
        self, request_id: Any, name: str, meta: Any = None, **arguments: Any
    ) -> None:
        """Send a ``tools/call`` without waiting for its reply."""
        params = {"name": name, "arguments": arguments}
        await self.send(request_message(request_id, "tools/call", params, meta))


@asynccontextmanager
async def spawn(*args: str, script: Path | None = PROBE) -> AsyncIterator[Peer]:
    """Run the probe server (or ``python -c`` code) as a subprocess; kill it at the end."""
    command = [str(script), *args] if script else [*args]
    async with running(Peer, command) as peer:
        yield peer
