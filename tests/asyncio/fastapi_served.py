"""A FastAPI app with a route of its own and a trio_mcp server at /mcp.

``test_asyncio_hosts.py`` serves it with the uvicorn command line in a child process:
``python -m uvicorn fastapi_served:app --app-dir tests/asyncio``.
"""

from __future__ import annotations

import trio
from fastapi import FastAPI

from trio_mcp import Server, tool
from trio_mcp.asyncio import mount


@tool
async def add(a: int, b: int) -> int:
    """Add two integers after a Trio checkpoint.

    Args:
        a: The first addend.
        b: The second addend.
    """
    await trio.lowlevel.checkpoint()
    return a + b


server = Server("served", "1.0", tools=[add])
mcp_app = mount(server, path="/")
app = FastAPI(lifespan=mcp_app.lifespan)
app.mount("/mcp", mcp_app)


@app.get("/hello")
async def hello() -> dict[str, str]:
    """The app's own route."""
    return {"hello": "world"}
