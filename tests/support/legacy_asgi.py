"""A handshake-era HTTP client of an ASGI app in process, for properties.

``AsgiLegacyClient`` drives a mounted app as an ASGI server would (no sockets, so
Hypothesis can run many examples): each POST is one app call whose sent messages
are read as they come; a server-to-client request on a response's event stream is
answered at once by another POST, as a real client does. Every message the app
sends is validated against the session's revision (``check_legacy``).
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import trio

from .asgi import http_scope
from .legacy import initialize_request
from .legacy_schema import check_legacy

__all__ = ["AsgiLegacyClient", "Answered"]


@attrs.define
class Answered:
    """One HTTP exchange: the status, the response headers, the messages sent."""

    status: int
    headers: dict[str, str]
    messages: list[dict[str, Any]]


async def _answer(request: dict[str, Any]) -> dict[str, Any]:
    method = request.get("method")
    if method == "elicitation/create":
        result: dict[str, Any] = {"action": "decline"}
    elif method == "roots/list":
        result = {"roots": []}
    else:
        result = {
            "role": "assistant",
            "content": {"type": "text", "text": "ok"},
            "model": "m",
        }
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


class AsgiLegacyClient:
    """One session's client of ``app`` (``revision`` once ``initialize`` says so)."""

    def __init__(self, app: Any, revision: str = "2025-11-25") -> None:
        self.app = app
        self.revision = revision
        self.sid: str | None = None

    async def send(
        self,
        body: bytes,
        headers: dict[str, str] | None = None,
        *,
        method: str = "POST",
        request_method: str | None = None,
    ) -> Answered:
        """One request (``headers`` replace the session's); its answer, checked
        against the revision (a reply as one to ``request_method``)."""
        if headers is None:
            headers = self.headers()
        scope = http_scope(
            [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        )
        scope["method"] = method
        delivered = False
        done = trio.Event()
        answered = Answered(0, {}, [])

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async with trio.open_nursery() as nursery:

            async def send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    answered.status = message["status"]
                    answered.headers = {
                        k.decode("latin-1"): v.decode("latin-1")
                        for k, v in message.get("headers", [])
                    }
                    return
                for frame in self._frames(message.get("body", b""), answered):
                    self._check(frame, request_method)
                    answered.messages.append(frame)
                    if "method" in frame and "id" in frame:
                        nursery.start_soon(self._reply, frame)

            with trio.fail_after(10):
                await self.app(scope, receive, send)
            done.set()
        return answered

    def _frames(self, chunk: bytes, answered: Answered) -> list[dict[str, Any]]:
        if not chunk.strip():
            return []
        if answered.headers.get("content-type") != "text/event-stream":
            return [json.loads(chunk)]
        return [
            json.loads(event[len(b"data: ") :])
            for event in chunk.split(b"\n\n")
            if event.startswith(b"data: ")
        ]

    def _check(self, message: dict[str, Any], request_method: str | None) -> None:
        is_reply = "method" not in message and "id" in message
        if "id" in message or "method" in message:
            check_legacy(message, self.revision, request_method if is_reply else None)

    async def _reply(self, request: dict[str, Any]) -> None:
        answered = await self.send(json.dumps(await _answer(request)).encode())
        assert answered.status in (202, 400), answered

    def headers(self) -> dict[str, str]:
        out = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "host": "127.0.0.1:8000",
            "mcp-protocol-version": self.revision,
        }
        if self.sid is not None:
            out["mcp-session-id"] = self.sid
        return out

    async def initialize(self, revision: str, capabilities: dict[str, Any]) -> Answered:
        body = initialize_request(
            0, revision=revision, capabilities=capabilities, name="asgi-peer"
        )
        headers = self.headers()
        headers.pop("mcp-session-id", None)
        answered = await self.send(
            json.dumps(body).encode(), headers, request_method="initialize"
        )
        if answered.status == 200 and "result" in answered.messages[0]:
            self.revision = answered.messages[0]["result"]["protocolVersion"]
            self.sid = answered.headers["mcp-session-id"]
        return answered

    async def request(self, request_id: Any, method: str, params: Any) -> Answered:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        return await self.send(json.dumps(body).encode(), request_method=method)
