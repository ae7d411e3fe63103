"""Asyncio hosts for the tests of ``trio_mcp.asyncio``: uvicorn in process, clean runs.

Every test of this folder is a plain ``def`` that runs its own asyncio loop with
``run_clean``, which also checks that the loop ended cleanly: nothing reached the
loop's exception handler (an exception in a callback, a task destroyed while
pending), no Trio run is left in the thread, and no task but the ones a test allows
was still running when its coroutine returned.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import httpx
import trio
import uvicorn
from fastapi import FastAPI
from support.asgi import Recorder
from support.mcp_http import headers_for, request_body

from trio_mcp import Server, tool
from trio_mcp.asyncio import mount
from trio_mcp.testing import check_message

__all__ = [
    "Listen",
    "add",
    "call_request",
    "fastapi_host",
    "open_listen",
    "post_call",
    "raw_call",
    "run_clean",
    "serving_uvicorn",
    "tasks_left",
]

T = TypeVar("T")

#: How long any one test waits for anything; a hang fails instead of stalling CI.
PATIENCE = 30.0


def run_clean(main: Callable[[], Awaitable[T]]) -> T:
    """``asyncio.run(main())``, checking that the loop and the guest run ended cleanly."""
    problems: list[dict[str, Any]] = []

    async def watched() -> T:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: problems.append(context))
        async with asyncio.timeout(PATIENCE):
            return await main()

    result = asyncio.run(watched())
    assert [] == problems
    assert not trio.lowlevel.in_trio_run()
    return result


def tasks_left() -> list[str]:
    """The names of the loop's tasks other than the current one."""
    current = asyncio.current_task()
    return sorted(t.get_name() for t in asyncio.all_tasks() if t is not current)


@asynccontextmanager
async def serving_uvicorn(app: Any, **config: Any) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 in this loop; yield its base URL.

    Leaving the block stops uvicorn the way Ctrl-C does (``should_exit``) and waits
    for it: open connections are drained, then the lifespan shuts down.
    """
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # log_config=None: uvicorn's records propagate to the root logger (and caplog).
    options = {"log_config": None, "lifespan": "auto", **config}
    server = uvicorn.Server(uvicorn.Config(app, **options))
    serving = asyncio.create_task(server.serve(sockets=[sock]), name="uvicorn")
    try:
        while not server.started:
            if serving.done():
                serving.result()  # its failure, raised
                raise AssertionError("uvicorn stopped before it started")
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
        sock.close()


@tool
async def add(a: int, b: int) -> int:
    """Add two integers after a Trio checkpoint.

    Args:
        a: The first addend.
        b: The second addend.
    """
    await trio.lowlevel.checkpoint()
    return a + b


def fastapi_host(server: Server, **options: Any) -> tuple[FastAPI, Recorder]:
    """FastAPI with a route of its own (``/hello``) and ``server`` mounted at /mcp
    with ``options``, its lifespan given to FastAPI; the recorder sees every
    exchange of the mount."""
    mcp_app = mount(server, path="/", **options)
    app = FastAPI(lifespan=mcp_app.lifespan)

    @app.get("/hello")
    async def hello() -> dict[str, str]:
        return {"hello": "world"}

    recorder = Recorder(mcp_app)
    app.mount("/mcp", recorder)
    return app, recorder


def call_request(name: str, **arguments: Any) -> dict[str, Any]:
    """A ``tools/call`` request of revision 2026-07-28, as JSON."""
    return request_body("tools/call", {"name": name, "arguments": arguments})


async def post_call(
    client: httpx.AsyncClient,
    endpoint: str,
    name: str,
    arguments: dict[str, Any] | None = None,
    /,
    **headers: str,
) -> httpx.Response:
    """POST a ``tools/call`` of ``name`` to ``endpoint``, routed (``headers`` too)."""
    return await client.post(
        endpoint,
        json=call_request(name, **(arguments or {})),
        headers=headers_for("tools/call", name, **headers),
    )


async def raw_call(
    url: str, path: str, name: str, arguments: dict[str, Any]
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Send a ``tools/call`` POST on a new connection; return it, the reply unread."""
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps(call_request(name, **arguments)).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nhost: {host}:{port}\r\n"
        "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
        "mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\n"
        f"mcp-name: {name}\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(head.encode() + body)
    await writer.drain()
    return reader, writer


async def open_listen(url: str, path: str, request_id: int) -> Listen:
    """POST ``subscriptions/listen`` on a new connection; return once it is acknowledged."""
    host, port = url.removeprefix("http://").split(":")
    params = {"notifications": {"toolsListChanged": True}}
    body = json.dumps(request_body("subscriptions/listen", params, request_id)).encode()
    fields = {
        "host": f"{host}:{port}",
        "content-length": str(len(body)),
        **headers_for("subscriptions/listen"),
    }
    head = f"POST {path} HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in fields.items()
    )
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(head.encode() + b"\r\n" + body)
    listen = Listen(reader, writer)
    await listen.next_message()  # the acknowledgement
    return listen


class Listen:
    """One listen response (chunked SSE) read from a raw connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.started = False

    async def next_message(self) -> dict[str, Any]:
        """The next ``data:`` message, checked against the schema; {} at the end."""
        if not self.started:
            head = await self.reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200"), head
            self.started = True
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if not size:
                await self.reader.readuntil(b"\r\n")
                return {}
            chunk = (await self.reader.readexactly(size + 2))[:-2]
            for event in chunk.decode().split("\n\n"):
                if event.startswith("data: "):
                    message: dict[str, Any] = json.loads(event[len("data: ") :])
                    check_message(
                        message, None if "method" in message else "subscriptions/listen"
                    )
                    return message

    def close(self) -> None:
        """Close the connection."""
        self.writer.close()
