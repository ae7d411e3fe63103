"""Driving an ASGI app in process, as an ASGI server would, for one request."""

from __future__ import annotations

from typing import Any

import trio


def http_scope(headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """The ASGI scope of a ``POST /mcp`` from 127.0.0.1 with ``headers``, as Hypercorn gives it."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def asgi_exchange(
    app: Any, scope: dict[str, Any], body: bytes
) -> list[dict[str, Any]]:
    """Send ``body`` as the whole request to ``app`` and return what it sent.

    After the body the client stays connected (``receive`` never reports a
    disconnect), so the app answers on its own; ten seconds bound the exchange.
    """
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with trio.fail_after(10):
        await app(scope, receive, send)
    return sent
