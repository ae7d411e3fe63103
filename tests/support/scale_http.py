"""A small Streamable HTTP client for the scale-out tests.

Every call opens a new connection (``connection: close``), so with several
workers on one port each call may land on any of them. A listen is read from a
raw socket line by line, as the listen tests do.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import trio

import support
from trio_mcp.testing import check_message

WAIT = 15.0
META = {
    **support.META,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def headers(method: str, name: str | None = None) -> dict[str, str]:
    out = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        "connection": "close",
    }
    if name is not None:
        out["mcp-name"] = name
    return out


async def call(
    url: str, name: str, arguments: dict[str, Any] | None = None, **params: Any
) -> dict[str, Any]:
    """Call a tool on a fresh connection; return the JSON-RPC result, checked."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": META, "name": name, "arguments": arguments or {}, **params},
    }
    with trio.fail_after(WAIT):
        async with httpx.AsyncClient(timeout=WAIT) as client:
            response = await client.post(
                url, json=body, headers=headers("tools/call", name)
            )
    message = response.json()
    check_message(message, "tools/call")
    result: dict[str, Any] = message["result"]
    return result


class Listen:
    """One listen response (SSE over chunked HTTP/1.1), read message by message."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.raw = b""
        self.text = ""
        self.eof = False

    async def _more(self) -> None:
        data = await self.stream.receive_some()
        self.eof = not data
        self.raw += data

    async def start(self) -> None:
        while b"\r\n\r\n" not in self.raw:
            await self._more()
            assert not self.eof, "the server closed before answering"
        head, _, self.raw = self.raw.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head

    async def _line(self) -> str | None:
        while "\n" not in self.text:
            size_line, sep, rest = self.raw.partition(b"\r\n")
            if sep:
                size = int(size_line, 16)
                if size == 0:
                    return None
                if len(rest) >= size + 2:
                    self.text += rest[:size].decode()
                    self.raw = rest[size + 2 :]
                    continue
            if self.eof:
                return None
            await self._more()
        line, _, self.text = self.text.partition("\n")
        return line

    async def next_message(self, wait: float = WAIT) -> dict[str, Any] | None:
        """The next ``data:`` message (keep-alives skipped); None when the stream ends."""
        with trio.fail_after(wait):
            while (line := await self._line()) is not None:
                if line.startswith("data: "):
                    message: dict[str, Any] = json.loads(line[len("data: ") :])
                    is_result = "id" in message and "method" not in message
                    check_message(
                        message, "subscriptions/listen" if is_result else None
                    )
                    return message
        return None


@asynccontextmanager
async def listening(
    url: str, *, meta: dict[str, Any] = META, **notifications: Any
) -> AsyncIterator[Listen]:
    """POST ``subscriptions/listen`` and yield the stream once its ack arrived."""
    parts = urlsplit(url)
    assert parts.port is not None
    payload = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": "listen",
            "method": "subscriptions/listen",
            "params": {"_meta": meta, "notifications": notifications},
        }
    ).encode()
    fields = {
        "host": parts.netloc,
        "content-type": "application/json",
        "content-length": str(len(payload)),
        **headers("subscriptions/listen"),
    }
    head = f"POST {parts.path} HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in fields.items()
    )
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream("127.0.0.1", parts.port)
    async with stream:
        await stream.send_all(head.encode() + b"\r\n" + payload)
        listen = Listen(stream)
        with trio.fail_after(WAIT):
            await listen.start()
        ack = await listen.next_message()
        assert ack is not None
        assert "notifications/subscriptions/acknowledged" == ack["method"]
        yield listen


TASK_META = {
    **support.META,
    "io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    },
}


async def rpc(url: str, method: str, routed: str | None = None, **params: Any) -> Any:
    """Send one request as a client of the tasks extension; return the whole
    message (result or error), checked against the schema, and the HTTP status."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"_meta": TASK_META, **params},
    }
    with trio.fail_after(WAIT):
        async with httpx.AsyncClient(timeout=WAIT) as client:
            response = await client.post(
                url, json=body, headers=headers(method, routed)
            )
    message: dict[str, Any] = response.json()
    check_message(message, method)
    return response.status_code, message


async def task_until(url: str, task_id: str, *statuses: str) -> dict[str, Any]:
    """Poll ``tasks/get`` on ``url`` until the task has one of ``statuses``."""
    with trio.fail_after(WAIT):
        while True:
            _, message = await rpc(url, "tasks/get", task_id, taskId=task_id)
            task: dict[str, Any] = message["result"]
            if task["status"] in statuses:
                return task
            await trio.sleep(0.05)
