"""A handshake-era client in-process: ``initialize``, then requests without ``_meta``.

``LegacyPeer`` drives ``Server.serve_messages`` (a dual-era server: ``legacy=True``)
through real JSON text, as ``McpTestClient`` does for 2026-07-28, and validates every
message the server emits against the negotiated revision's official schema
(``legacy_schema.check_legacy``). The server's own requests (``elicitation/create``,
``sampling/createMessage``, ``roots/list``) are answered by ``answer(method, params)``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Self

import trio

from trio_mcp import Limits, Server
from trio_mcp.testing import check_message

from .legacy_schema import check_legacy

__all__ = [
    "Answerer",
    "LegacyError",
    "LegacyPeer",
    "WAIT",
    "client_reply",
    "initialize_params",
    "initialize_request",
    "refuse",
]

WAIT = 10.0
_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
Answerer = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class LegacyError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.code = error.get("code")
        self.message = error.get("message")
        self.data = error.get("data")
        super().__init__(f"{self.code}: {self.message}")


def initialize_params(
    revision: str = "2025-11-25",
    capabilities: dict[str, Any] | None = None,
    name: str = "x",
    **params: Any,
) -> dict[str, Any]:
    """The params of a client's ``initialize``: its revision, capabilities and name."""
    return {
        "protocolVersion": revision,
        "capabilities": capabilities or {},
        "clientInfo": {"name": name, "version": "1"},
        **params,
    }


def initialize_request(request_id: int = 1, **params: Any) -> dict[str, Any]:
    """A client's ``initialize`` request (``initialize_params`` takes ``params``)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": initialize_params(**params),
    }


async def refuse(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The answerer of a client that declared no capability: -32601 to everything."""
    raise LegacyError({"code": -32601, "message": f"this client answers no {method}"})


async def client_reply(answer: Answerer, request: dict[str, Any]) -> dict[str, Any]:
    """The client's reply to the server's ``request``: what ``answer`` returns as the
    result, or the error it raises (``LegacyError``)."""
    try:
        result = await answer(request["method"], request.get("params", {}))
    except LegacyError as exc:
        error = {"code": exc.code, "message": exc.message}
        return {"jsonrpc": "2.0", "id": request["id"], "error": error}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


class LegacyPeer:
    """One handshake-era client of ``server`` over an in-process message stream."""

    def __init__(
        self,
        server: Server,
        *,
        revision: str = "2025-11-25",
        capabilities: dict[str, Any] | None = None,
        answer: Answerer = refuse,
        principal: object | None = None,
        allow: Any = (),
        limits: Limits | None = None,
    ) -> None:
        self.server = server
        self.revision = revision
        """The revision messages are validated against (the negotiated one, once known)."""
        self.capabilities = capabilities or {}
        self.answer = answer
        self.principal = principal
        self.allow = allow
        self.limits = limits
        self.messages: list[dict[str, Any]] = []
        """Every message the server emitted, in order."""
        self.notifications: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []
        """Every request the server sent the client."""
        self._ids = itertools.count(1)
        self._pending: dict[Any, tuple[str, trio.Event, bool]] = {}
        """Requests waiting for replies: method, event, and whether it was modern."""
        self._replies: dict[Any, dict[str, Any]] = {}
        self._arrived = trio.Event()

    async def __aenter__(self) -> Self:
        self._send, receive = trio.open_memory_channel[str](64)
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        self._nursery.start_soon(
            self._serve_until_closed, receive, name="LegacyPeer server"
        )
        return self

    async def _serve_until_closed(
        self, receive: trio.MemoryReceiveChannel[str]
    ) -> None:
        await self.server.serve_messages(
            receive,
            self._on_message,
            allow=self.allow,
            principal=self.principal,
            limits=self.limits,
        )
        # The server is done: answers the client was still preparing are moot.
        self._nursery.cancel_scope.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self._send.close()
        if exc is not None:
            self._nursery.cancel_scope.cancel()
        return await self._nursery_cm.__aexit__(exc_type, exc, tb)

    # -- the server's messages ------------------------------------------------------
    async def _on_message(self, text: str) -> None:
        assert "\n" not in text, "a message must be one line"
        message = json.loads(text)
        pending = (
            self._pending.get(message.get("id")) if "method" not in message else None
        )
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if (pending is not None and pending[2]) or (
            isinstance(meta, dict) and _SUBSCRIPTION in meta
        ):
            # A modern request's reply or listen notification: 2026-07-28.
            check_message(message, pending[0] if pending else None)
        else:
            check_legacy(message, self.revision, pending[0] if pending else None)
        self.messages.append(message)
        self._arrived.set()
        self._arrived = trio.Event()
        if "method" in message and "id" in message:
            self.asked.append(message)
            self._nursery.start_soon(self._answer, message)
        elif "method" in message:
            self.notifications.append(message)
        elif pending is not None:
            self._replies[message["id"]] = message
            pending[1].set()

    async def _answer(self, request: dict[str, Any]) -> None:
        await self.send_raw(await client_reply(self.answer, request))

    # -- the client's messages ------------------------------------------------------
    async def send_raw(self, message: dict[str, Any] | str) -> None:
        """Write one message as it is (a dict is encoded as JSON)."""
        text = message if isinstance(message, str) else json.dumps(message)
        await self._send.send(text)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send_raw(message)

    async def exchange(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        request_id: Any = None,
    ) -> dict[str, Any]:
        """Send a request; return the whole response message."""
        request_id = next(self._ids) if request_id is None else request_id
        done = trio.Event()
        meta = params.get("_meta") if isinstance(params, dict) else None
        modern = (
            isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta
        )
        self._pending[request_id] = (method, done, modern)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send_raw(message)
        with trio.fail_after(WAIT):
            await done.wait()
        del self._pending[request_id]
        return self._replies.pop(request_id)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """Send a request; return its result or raise ``LegacyError``."""
        reply = await self.exchange(method, params, **kw)
        if "error" in reply:
            raise LegacyError(reply["error"])
        result: dict[str, Any] = reply["result"]
        return result

    async def initialize(
        self, protocol_version: str | None = None, **params: Any
    ) -> dict[str, Any]:
        """The handshake: ``initialize``, then ``notifications/initialized``."""
        requested = protocol_version or self.revision
        result = await self.request(
            "initialize",
            initialize_params(requested, self.capabilities, "legacy-peer", **params),
        )
        self.revision = result["protocolVersion"]
        await self.notify("notifications/initialized")
        return result

    async def next_notification(self, method: str, start: int = 0) -> dict[str, Any]:
        """Wait for a notification of ``method`` at index ``start`` or later."""
        with trio.fail_after(WAIT):
            while True:
                for note in self.notifications[start:]:
                    if note["method"] == method:
                        return note
                await self._arrived.wait()

    async def wait_asked(self, count: int) -> list[dict[str, Any]]:
        """Wait until the server has sent the client ``count`` requests."""
        with trio.fail_after(WAIT):
            while len(self.asked) < count:
                await self._arrived.wait()
        return self.asked

    async def wait_notifications(self, method: str, count: int) -> list[dict[str, Any]]:
        """Wait until ``count`` notifications of ``method`` arrived; return them all."""
        with trio.fail_after(WAIT):
            while True:
                found = [n for n in self.notifications if n["method"] == method]
                if len(found) >= count:
                    return found
                await self._arrived.wait()
