"""The official Python SDK (``mcp`` 2.3.0) as a server, for tests/client: its
``MCPServer`` with the tools the client tests call (echo, add, fail, count,
wait_cancel), served over stdio (``python tests/support/sdk_upstream.py``) or
mounted as its Streamable HTTP app (``app()``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

__all__ = ["app", "make_server", "stdio_command"]


class Sum(BaseModel):
    """The sum of two numbers."""

    total: int


def make_server() -> MCPServer:
    """The SDK's server with the client tests' tools."""
    server = MCPServer("sdk-upstream", version="2.3.0", instructions="The mcp SDK.")

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two numbers."""
        return Sum(total=a + b)

    @server.tool()
    def fail(why: str) -> str:
        """Fail as a tool does."""
        raise ToolError(why)

    @server.tool()
    async def count(to: int, ctx: Context) -> str:
        """Count with progress."""
        for done in range(1, to + 1):
            await ctx.report_progress(done, to, f"step {done}")
        return f"counted to {to}"

    @server.tool()
    async def wait_cancel(mark: str) -> str:
        """Write 'started' to ``mark``, wait until cancelled, then append 'cancelled'."""
        path = anyio.Path(mark)
        await path.write_text("started\n")
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await path.write_text("started\ncancelled\n")
        return "never"

    return server


def app() -> Any:
    """The server's Streamable HTTP app (Starlette), at ``/mcp``."""
    return make_server().streamable_http_app()


def stdio_command() -> list[str]:
    """The command that serves it over stdio."""
    return [sys.executable, str(Path(__file__).resolve())]


if __name__ == "__main__":
    make_server().run()
