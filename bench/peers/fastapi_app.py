"""Peer: an MCP server mounted in a FastAPI app, under uvicorn on 127.0.0.1.

    python bench/peers/fastapi_app.py trio_mcp PORT     trio_mcp.asyncio.mount
    python bench/peers/fastapi_app.py fastmcp PORT      FastMCP's http_app()
    python bench/peers/fastapi_app.py bare PORT         the FastAPI app alone

Each serves ``POST /mcp/`` (mounted at ``/mcp`` with the server's own path ``/``)
beside an ordinary FastAPI route, ``GET /hello``, and starts and stops the server
with the app's lifespan, as each project's docs say to. trio_mcp's server is
``examples/bench_server.py``'s; FastMCP's is ``fastmcp_peer.py``'s (the same three
tools). ``bare`` answers the MCP request itself with a fixed reply: the floor of
FastAPI, uvicorn and the mount, with no MCP server behind it.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))


def trio_mcp_app() -> FastAPI:
    """FastAPI with trio_mcp's asyncio mount at /mcp."""
    from bench_server import server

    from trio_mcp.asyncio import mount

    mcp_app = mount(server, path="/")
    app = FastAPI(lifespan=mcp_app.lifespan)
    app.mount("/mcp", mcp_app)
    return app


def fastmcp_app() -> FastAPI:
    """FastAPI with FastMCP's Streamable HTTP app at /mcp."""
    from fastmcp_peer import server

    mcp_app = server.http_app(path="/")
    app = FastAPI(lifespan=mcp_app.lifespan)
    app.mount("/mcp", mcp_app)
    return app


def bare_app() -> FastAPI:
    """FastAPI answering every MCP request with one fixed echo reply."""
    app = FastAPI()
    body = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}],"structuredContent":"hello"}}'

    async def fixed(scope: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    app.mount("/mcp", fixed)
    return app


def main(argv: list[str]) -> None:
    """Serve the chosen app on 127.0.0.1:PORT until interrupted."""
    make = {"trio_mcp": trio_mcp_app, "fastmcp": fastmcp_app, "bare": bare_app}
    app = make[argv[1]]()

    @app.get("/hello")
    async def hello() -> dict[str, str]:
        return {"hello": "world"}

    uvicorn.run(app, host="127.0.0.1", port=int(argv[2]), log_level="warning")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    with contextlib.suppress(KeyboardInterrupt):  # the bench stops it with SIGINT
        main(sys.argv)
