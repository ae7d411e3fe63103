"""``mount()``: the ASGI app for asyncio servers, and its lifespan.

The app holds the Trio app that ``Server.mount`` builds (every HTTP check, limit
and guarantee lives there) and one ``Service`` per asyncio loop it is served on.
A service starts with the host's lifespan (the ASGI lifespan protocol when the app
is the host's top-level app, or ``mcp_app.lifespan`` given to FastAPI or entered by
the host's own lifespan), else at the first request, and stops with that lifespan,
else when the loop ends.

Invariants:
- Called anywhere but in an asyncio task (under Trio, say), the app raises
  ``McpError`` saying what to use instead; it never half-starts.
- A request that finds no service serving (it failed, or is stopping) is answered
  503 with a JSON-RPC error and never waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Unpack, final

import trio

from .._errors import McpError
from ._bridge import Receive, Scope, Send
from ._service import Service, TrioApp

if TYPE_CHECKING:
    from trio_mcp import HttpOptions, Server

__all__ = ["AsyncioApp", "mount"]

log = logging.getLogger("trio_mcp.http")


def mount(
    server: Server, path: str = "/mcp", **options: Unpack[HttpOptions]
) -> AsyncioApp:
    """Return an ASGI 3 app serving ``server`` from an asyncio ASGI server.

    The app runs under uvicorn, Hypercorn's asyncio worker, or inside FastAPI and
    Starlette (``app.mount("/mcp", mount(server, path="/"))`` serves at ``/mcp``),
    while the server itself runs on Trio, as a guest of the asyncio loop
    (``trio.lowlevel.start_guest_run``). Give ``mcp_app.lifespan`` to the host
    (``FastAPI(lifespan=mcp_app.lifespan)``) to start and stop it with the host;
    without it, it starts at the first request and stops when the loop ends.

    Args:
        server: The server to serve.
        path: The MCP endpoint, as for ``server.mount``.
        **options: The ``HttpOptions``, as for ``server.mount``.

    Raises:
        McpError.InvalidArgument: for an option ``server.mount`` does not take.

    .. versionadded:: 0.2
    """
    return AsyncioApp(server.mount(path, **options))


@final
class AsyncioApp:
    """An ASGI 3 app for asyncio servers, serving a Trio app through a guest run.

    Made by ``trio_mcp.asyncio.mount``.
    """

    def __init__(self, app: TrioApp) -> None:
        self.app = app
        """The Trio ASGI app (``Server.mount``) that serves every request."""
        self._services: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, Service
        ] = weakref.WeakKeyDictionary()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI call of an asyncio server.

        Raises:
            McpError: if called under Trio or outside any asyncio loop.
        """
        loop = _host_loop()
        if scope["type"] == "lifespan":
            await self._asgi_lifespan(receive, send)
            return
        service = self._service(loop)
        if service.state in ("new", "starting"):
            try:
                await service.start()
            except McpError:
                log.exception("the trio_mcp app could not start serving")
        await service.serve(scope, receive, send)

    def lifespan(self, app: object = None) -> AbstractAsyncContextManager[None]:
        """Serve for the duration of the block: a lifespan in FastAPI's shape.

        ``FastAPI(lifespan=mcp_app.lifespan)``, or ``async with
        mcp_app.lifespan(app):`` inside the host's own lifespan. Leaving the block
        stops gracefully: listen streams get their result, running requests have a
        second to finish, and tool calls running as tasks are cancelled.

        Args:
            app: The host application (unused; FastAPI passes it).

        Raises:
            McpError: on entering, if the server could not start (the cause is kept),
                or under Trio.
        """
        return self._lifespan()

    @contextlib.asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[None]:
        service = self._service(_host_loop())
        await service.start()
        service.holds += 1
        try:
            yield
        finally:
            service.holds -= 1
            if not service.holds:
                await service.stop()

    async def _asgi_lifespan(self, receive: Receive, send: Send) -> None:
        """The ASGI lifespan protocol, for a host that runs this app's lifespan."""
        async with contextlib.AsyncExitStack() as stack:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    try:
                        await stack.enter_async_context(self._lifespan())
                    except McpError as exc:
                        await send(
                            {"type": "lifespan.startup.failed", "message": str(exc)}
                        )
                        return
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await stack.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    def _service(self, loop: asyncio.AbstractEventLoop) -> Service:
        """The loop's service: a new one unless one is there that has not stopped."""
        service = self._services.get(loop)
        if service is None or service.state == "stopped":
            service = Service(self.app, loop)
            self._services[loop] = service
        return service


def _host_loop() -> asyncio.AbstractEventLoop:
    """The running asyncio loop, or the McpError saying what to use instead."""
    in_trio_task = True
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        in_trio_task = False
    if in_trio_task:
        raise McpError(
            "trio_mcp.asyncio.mount() makes an app for asyncio servers (uvicorn, "
            "Hypercorn's asyncio worker), and this is Trio: serve server.mount() "
            "directly (Hypercorn's Trio worker, or server.serve_http)"
        )
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise McpError(
            "trio_mcp.asyncio.mount() makes an app for asyncio servers (uvicorn, "
            "Hypercorn's asyncio worker); call it from a running asyncio loop"
        ) from None
