"""An upstream that misbehaves on purpose, as a raw ASGI app (no trio_mcp server
behind it, so nothing checks what it sends).

It speaks 2026-07-28 (``server/discover``, ``tools/list``) and lists four tools;
calling each misbehaves one way:

* ``broken``: a result whose structured content breaks the tool's own output schema;
* ``garbage``: a response body that is not JSON;
* ``huge``: a JSON response past the client's 4 MiB limit;
* ``fine``: a correct result (the gateway keeps serving).

``Liar(redirect=True)`` answers every request with a 307 to another URL instead.
``headers`` keeps the headers of every request, as the upstream received them.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["Liar"]

_SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}
_TOOLS = [
    {
        "name": name,
        "description": f"The {name} tool.",
        "inputSchema": {"type": "object"},
        "outputSchema": _SCHEMA,
    }
    for name in ("broken", "garbage", "huge", "fine")
]


class Liar:
    """See the module docstring."""

    def __init__(self, *, redirect: bool = False) -> None:
        self.redirect = redirect
        self.headers: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rpartition(".")[2]  # startup, shutdown
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.headers.append(headers)
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if self.redirect:
            await _send(
                send, 307, b"", [(b"location", b"http://127.0.0.1:1/elsewhere")]
            )
            return
        if scope["method"] != "POST":
            await _send(send, 405, b"")
            return
        request = json.loads(body)
        if "id" not in request:
            await _send(send, 202, b"")
            return
        await _send(send, 200, self._answer(request))

    def _answer(self, request: dict[str, Any]) -> bytes:
        method = request["method"]
        name = request.get("params", {}).get("name")
        if method == "server/discover":
            result: Any = {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "liar", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": _TOOLS}
        elif method != "tools/call":
            error = {"code": -32601, "message": f"no {method} here"}
            return json.dumps(
                {"jsonrpc": "2.0", "id": request["id"], "error": error}
            ).encode()
        elif name == "garbage":
            return b"this is not JSON {"
        elif name == "huge":
            text = "x" * (5 * 1024 * 1024)
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        elif name == "broken":
            result = {
                "content": [{"type": "text", "text": "n is a word"}],
                "structuredContent": {"n": "a word"},
                "isError": False,
            }
        else:
            result = {
                "content": [{"type": "text", "text": '{"n": 1}'}],
                "structuredContent": {"n": 1},
                "isError": False,
            }
        result.setdefault("resultType", "complete")
        message = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        return json.dumps(message).encode()


async def _send(
    send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", b"application/json"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
