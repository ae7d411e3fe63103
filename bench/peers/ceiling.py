"""The ceilings: the least a Trio server can do per call, with no framework at all.

    python bench/peers/ceiling.py stdio
    python bench/peers/ceiling.py stdio-tasks
    python bench/peers/ceiling.py http PORT [--set FIELD=VALUE ...]
    python bench/peers/ceiling.py http-asyncio PORT     (Hypercorn's asyncio worker)

``stdio`` is a raw Trio loop: read stdin, split lines, parse each JSON-RPC request,
answer the three benchmark tools, write the replies back in one write per read.
``stdio-tasks`` is the least a Trio server that can cancel a call and keep reading
while calls run must add: one task per request in its own cancel scope under a
``CapacityLimiter``, the reply handed to one writer task over an unbuffered channel
(the writer joins what waits into one write). It is not a target, it measures what
that structure costs by itself (docs/performance.md). ``http``
is a bare ASGI app (one POST in, one JSON reply out) on Hypercorn's Trio worker, the
stack ``serve_http`` uses; ``--set`` overrides a ``hypercorn.config.Config`` field (the
value is parsed as JSON when it can be, e.g. ``keep_alive_timeout=60``), which is how
``bench/hypercorn_study.py`` measures Hypercorn's settings. Neither checks anything a
real server must: that is the point of a ceiling. Replies have the shape trio_mcp's
have (text content plus ``structuredContent``), so both encode the same bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

import trio
from tools import records

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _value(name: str, arguments: dict[str, Any]) -> Any:
    """The benchmark tools' answers."""
    if name == "echo":
        return arguments["text"]
    if name == "add":
        return arguments["a"] + arguments["b"]
    return records(arguments["query"], arguments.get("limit", 20))


def answer(line: bytes) -> bytes:
    """One JSON-RPC ``tools/call`` request in, its reply out (no trailing newline)."""
    message = json.loads(line)
    params = message["params"]
    value = _value(params["name"], params["arguments"])
    result = {
        "content": [{"type": "text", "text": _dumps(value)}],
        "structuredContent": value,
        "isError": False,
    }
    return _dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()


async def serve_stdio() -> None:
    """Answer newline-delimited requests on stdin until it closes."""
    stdin = trio.lowlevel.FdStream(os.dup(0))
    stdout = trio.lowlevel.FdStream(os.dup(1))
    pending = b""
    while chunk := await stdin.receive_some(1 << 16):
        *lines, pending = (pending + chunk).split(b"\n")
        replies = [answer(line) + b"\n" for line in lines if line.strip()]
        if replies:
            await stdout.send_all(b"".join(replies))


async def serve_stdio_tasks() -> None:
    """The raw loop with a task, a cancel scope and a limiter slot per request."""
    stdin = trio.lowlevel.FdStream(os.dup(0))
    stdout = trio.lowlevel.FdStream(os.dup(1))
    slots = trio.CapacityLimiter(16)
    to_writer, from_calls = trio.open_memory_channel[bytes](0)

    async def write_all() -> None:
        async for data in from_calls:
            batch = [data]
            with contextlib.suppress(trio.WouldBlock):
                while True:
                    batch.append(from_calls.receive_nowait())
            await stdout.send_all(b"".join(batch))

    async def call(line: bytes, scope: trio.CancelScope) -> None:
        with scope:
            async with slots:
                reply = answer(line) + b"\n"
            try:
                to_writer.send_nowait(reply)
            except trio.WouldBlock:
                await to_writer.send(reply)

    async with trio.open_nursery() as writing:
        writing.start_soon(write_all)
        async with trio.open_nursery() as nursery:
            pending = b""
            while chunk := await stdin.receive_some(1 << 16):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if line.strip():
                        nursery.start_soon(call, line, trio.CancelScope())
        writing.cancel_scope.cancel()


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A bare ASGI app: the POSTed JSON-RPC request in, its reply as JSON out."""
    if scope["type"] == "lifespan":
        while (event := await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body", False):
            break
    reply = answer(body)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(reply)).encode()),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": reply})


def hypercorn_config(port: int, overrides: list[str]) -> Any:
    """Hypercorn's ``Config`` as ``serve_http`` sets it, plus ``FIELD=VALUE`` overrides."""
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.graceful_timeout = 1.0
    for item in overrides:
        field, _, text = item.partition("=")
        if not hasattr(config, field):
            raise SystemExit(f"ceiling: hypercorn Config has no field {field!r}")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        setattr(config, field, value)
    return config


def main(argv: list[str]) -> None:
    """Run the ceiling named by the first argument."""
    mode = argv[1]
    if mode == "stdio":
        trio.run(serve_stdio)
        return
    if mode == "stdio-tasks":
        trio.run(serve_stdio_tasks)
        return
    overrides = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--set"]
    config = hypercorn_config(int(argv[2]), overrides)
    if mode == "http":
        from hypercorn.trio import serve

        trio.run(serve, app, config)
    elif mode == "http-asyncio":
        import asyncio

        from hypercorn.asyncio import serve as serve_asyncio

        asyncio.run(serve_asyncio(app, config))
    else:
        raise SystemExit(
            f"ceiling: unknown mode {mode!r}; use stdio, stdio-tasks, http or http-asyncio"
        )


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # the bench stops HTTP with SIGINT
        main(sys.argv)
