"""Serving trio_mcp from asyncio hosts: uvicorn, Hypercorn's asyncio worker, FastAPI.

``mount(server, path="/mcp", **options)`` returns an ASGI 3 app that an asyncio ASGI
server runs, alone or mounted in FastAPI or Starlette. The server itself still runs
on Trio, as a guest of the asyncio loop (``trio.lowlevel.start_guest_run``), through
the same app ``server.mount`` returns, so every HTTP guarantee holds. Needs the
``http`` extra; ``import trio_mcp`` never imports this package.
"""

from ._mount import AsyncioApp, mount

__all__ = ["AsyncioApp", "mount"]

AsyncioApp.__module__ = "trio_mcp.asyncio"
mount.__module__ = "trio_mcp.asyncio"
