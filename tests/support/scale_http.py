"""A small Streamable HTTP client for the scale-out tests.

Every call opens a new connection (``connection: close``), so with several
workers on one port each call may land on any of them. A listen is read from a
raw socket line by line, as the listen tests do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import trio

import support
from support import sse
from support.mcp_http import headers_for, request_body
from support.sse import SseStream
from trio_mcp.testing import check_message

WAIT = 15.0
META = {
    **support.META,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def headers(method: str, name: str | None = None) -> dict[str, str]:
    return headers_for(method, name, connection="close")


async def call(
    url: str, name: str, arguments: dict[str, Any] | None = None, **params: Any
) -> dict[str, Any]:
    """Call a tool on a fresh connection; return the JSON-RPC result, checked."""
    params = {"name": name, "arguments": arguments or {}, **params}
    body = request_body("tools/call", params, meta=META)
    with trio.fail_after(WAIT):
        async with httpx.AsyncClient(timeout=WAIT) as client:
            response = await client.post(
                url, json=body, headers=headers("tools/call", name)
            )
    message = response.json()
    check_message(message, "tools/call")
    result: dict[str, Any] = message["result"]
    return result


@asynccontextmanager
async def listening(
    url: str, *, meta: dict[str, Any] = META, **notifications: Any
) -> AsyncIterator[SseStream]:
    """POST ``subscriptions/listen``; yield the stream once its ack arrived."""
    async with sse.listening(url, meta=meta, wait=WAIT, **notifications) as stream:
        ack = await stream.next_message()
        assert "notifications/subscriptions/acknowledged" == ack["method"]
        yield stream


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
    body = request_body(method, params, meta=TASK_META)
    with trio.fail_after(WAIT):
        async with httpx.AsyncClient(timeout=WAIT) as client:
            response = await client.post(
                url, json=body, headers=headers(method, routed)
            )
    message: dict[str, Any] = response.json()
    check_message(message, method)
    return response.status_code, message


async def create_task(url: str, tool: str, **arguments: object) -> str:
    """Call ``tool`` as a task on ``url``; its task id (the call must make one)."""
    status, message = await rpc(url, "tools/call", tool, name=tool, arguments=arguments)
    assert 200 == status, message
    assert "task" == message["result"]["resultType"], message
    task_id: str = message["result"]["taskId"]
    return task_id


async def task_until(
    url: str, task_id: str, *statuses: str, says: str = ""
) -> dict[str, Any]:
    """Poll ``tasks/get`` on ``url`` until the task has one of ``statuses`` (and
    its ``statusMessage`` holds ``says``)."""
    with trio.fail_after(WAIT):
        while True:
            _, message = await rpc(url, "tasks/get", task_id, taskId=task_id)
            task: dict[str, Any] = message["result"]
            said = task.get("statusMessage") or ""
            if task["status"] in statuses and says in said:
                return task
            await trio.sleep(0.05)
