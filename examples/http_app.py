"""An HTTP app: the MCP server mounted beside other routes, behind authentication.

Starlette routes ``/status`` and ``/api/mcp``; a small middleware turns a bearer
token into ``scope["user"]``, which trio_mcp reads as the principal
(``require_auth=True`` answers 401 without one). Authentication stays with the
app; trio_mcp only reads its result. Hypercorn's Trio worker serves it:

    python examples/http_app.py --port 8000
"""

from __future__ import annotations

import argparse
import os
from functools import partial
from typing import Any

import attrs
import trio
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from trio_mcp import Server, ToolContext, tool

TOKENS = {os.environ.get("APP_TOKEN", "let-me-in"): "ana"}


@attrs.frozen
class User:
    """The authenticated caller; trio_mcp uses its ``id`` in receipts."""

    id: str
    is_authenticated: bool = True


@tool
def whoami() -> str:
    """Say who is calling, as the app authenticated them."""
    return ToolContext.current().principal_id or "nobody"


mcp_server = Server("app-tools", "1.0", tools=[whoami])


class BearerAuth:
    """ASGI middleware: ``Authorization: Bearer <token>`` -> ``scope["user"]``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"authorization", b"").decode()
            name = TOKENS.get(header.removeprefix("Bearer "))
            scope = {**scope, "user": User(name) if name else None}
        await self.app(scope, receive, send)


async def status(request: Any) -> JSONResponse:
    """A route of the app that has nothing to do with MCP."""
    return JSONResponse({"ok": True})


app = BearerAuth(
    Starlette(
        routes=[
            Route("/status", status),
            Mount("/api", app=mcp_server.mount(require_auth=True)),
        ]
    )
)


async def serve(
    port: int, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve the app on 127.0.0.1 with Hypercorn's Trio worker; report the port."""
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve

    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(partial(hypercorn_serve, app, config))
        task_status.started(int(binds[0].rsplit(":", 1)[1]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8000)
    trio.run(serve, parser.parse_args().port)
