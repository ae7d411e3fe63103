"""What a handshake-era HTTP answer is made of: the JSON-RPC result or error in a
response, the 404 of a session that is gone, the 503 of a store that did not answer,
and the statuses a legacy reply keeps.

MCP revision 2025-11-25, Streamable HTTP: a handshake-era client reads 404 as
"session gone" and drops other bodies, so a JSON-RPC error is sent with 200 unless
its status says what to do (authenticate, wait).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final

import trio

from .._dispatch import Reply
from .._http._disconnect import cancel_on_disconnect, watch
from .._http._response import Receive, Response, Send, send_fault, send_json
from .._json import JsonObject, JsonValue, encode_message
from .._protocol import _wire as wire
from .._store import StoreUnavailable

__all__ = [
    "KEPT",
    "http_reply",
    "is_response",
    "request_id_of",
    "respond",
    "send_error",
    "send_gone",
    "send_result",
    "send_unavailable",
]

log = logging.getLogger("trio_mcp.http")

#: Statuses a legacy reply keeps: each says what to do (authenticate, wait).
KEPT: Final = frozenset({401, 403, 429, 503})
_GONE: Final = (
    "not found: this session does not exist (it expired, was ended, or was opened "
    "by someone else); send initialize for a new one"
)


async def respond(
    run: Callable[[], Awaitable[Reply]], response: Response, receive: Receive
) -> None:
    """Run ``run`` (returning the ``Reply``) under the response's scope, cancelled
    if the client disconnects, and send its reply (as the app's ``_dispatch``)."""
    scope = response.scope
    watched = watch(receive, scope)
    if watched is None:  # the run is ending: watch it with a task of its own
        async with trio.open_nursery() as nursery:
            nursery.start_soon(cancel_on_disconnect, receive, scope)
            with scope:
                reply = await run()
                await response.finish(reply, shield=True)
            nursery.cancel_scope.cancel()
        return
    with scope:
        try:
            reply = await run()
        finally:
            watched.done()
        await response.finish(reply)
    scope.cancel()


def request_id_of(value: JsonValue) -> str | int | None:
    """The id of a request (a message with a method), if ``value`` is one."""
    if not isinstance(value, dict) or "method" not in value:
        return None
    found = value.get("id")
    return (
        found if isinstance(found, str | int) and not isinstance(found, bool) else None
    )


async def send_gone(send: Send, request_id: str | int | None) -> None:
    """404: the session is unknown, expired, ended or another principal's. The body
    is a JSON-RPC error naming the request, if there is one (the 2025-06-18 and
    2025-03-26 schemas require an id on every error)."""
    error = wire.error_message(request_id, wire.INVALID_REQUEST, _GONE)
    await send_json(send, 404, encode_message(error))


def is_response(value: JsonObject) -> bool:
    return (
        "method" not in value
        and "id" in value
        and ("result" in value or "error" in value)
    )


def http_reply(message: JsonObject, reply: Reply) -> Reply:
    """The HTTP reply carrying ``message``: 200 unless ``reply``'s status says what
    to do (401, 403, 429, 503, with their headers)."""
    body = encode_message(message)
    if reply.http_status in KEPT:
        return Reply(body, reply.http_status, reply.headers)
    return Reply(body)


async def send_result(send: Send, request_id: str | int, result: JsonObject) -> None:
    await send_json(send, 200, encode_message(wire.result_message(request_id, result)))


async def send_error(
    send: Send,
    request_id: str | int | None,
    code: int,
    message: str,
    data: JsonValue = None,
    *,
    status: int = 200,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    error = wire.error_message(request_id, code, message, data)
    await send_json(send, status, encode_message(error), headers)


async def send_unavailable(send: Send, exc: StoreUnavailable) -> None:
    log.warning("handshake-era session: the store failed: %s", exc)
    await send_fault(
        send,
        503,
        "service unavailable: the session store did not answer; retry shortly",
        wire.SERVER_BUSY,
        [(b"retry-after", b"1")],
    )
