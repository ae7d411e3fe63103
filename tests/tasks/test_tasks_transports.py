"""The tasks extension over real transports: Hypercorn on 127.0.0.1, a stdio subprocess.

Over HTTP the task methods are routed by ``Mcp-Name`` (the taskId), and a task
outlives the POST that created it; a mounted app gets its task nursery from the ASGI
lifespan. Over stdio the server is ``tasks_server.py`` in a child process. Every
message is validated as the test client validates it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import support
import trio
from support import serving, serving_app
from support.mcp_http import headers_for, request_body
from support.stdio_peer import StdioPeer, running
from tasks_server import TASKS, WITH_TASKS, make_server

from trio_mcp import Server
from trio_mcp.testing import check_message

WAIT = 10.0
SERVER = Path(__file__).with_name("tasks_server.py")
META = {**support.META, "io.modelcontextprotocol/clientCapabilities": WITH_TASKS}
ACCEPT = {"action": "accept", "content": {"ok": True}}


class Http:
    """Posts JSON-RPC requests with the routing headers, checking each reply."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.ids = 0

    async def post(
        self, method: str, routed: str | None = None, **params: Any
    ) -> httpx.Response:
        self.ids += 1
        with trio.fail_after(WAIT):
            response = await self.client.post(
                self.url,
                json=request_body(method, params, self.ids, META),
                headers=headers_for(method, routed),
            )
        check_message(response.json(), method)
        return response

    async def result(self, method: str, routed: str, **params: Any) -> dict[str, Any]:
        response = await self.post(method, routed, **params)
        assert 200 == response.status_code, response.text
        result: dict[str, Any] = response.json()["result"]
        return result

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return await self.result("tools/call", tool, name=tool, arguments=arguments)

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        with trio.fail_after(WAIT):
            while True:
                task = await self.result("tasks/get", task_id, taskId=task_id)
                if task["status"] in statuses:
                    return task
                await trio.sleep(0.01)


@asynccontextmanager
async def over_http(server: Server) -> AsyncIterator[Http]:
    async with serving(server) as base, httpx.AsyncClient() as client:
        yield Http(client, f"{base}/mcp")


async def test_a_task_over_http_is_routed_by_its_id_and_outlives_its_post() -> None:
    """SEP-2663 "Streamable HTTP: Routing Headers": tasks/* carry Mcp-Name = taskId;
    the CreateTaskResult answers the POST at once and the task runs on."""
    async with over_http(make_server()) as http:
        created = await http.call("sleepy", seconds=0.2)
        task_id = created["taskId"]
        working = await http.result("tasks/get", task_id, taskId=task_id)
        done = await http.until(task_id, "completed")

    assert "task" == created["resultType"]
    assert "working" == working["status"]
    assert "slept 0.2" == done["result"]["content"][0]["text"]


async def test_task_methods_over_http_need_the_matching_mcp_name() -> None:
    """SEP-2243 with SEP-2663: a missing or different Mcp-Name is 400 with -32020."""
    async with over_http(make_server()) as http:
        task_id = (await http.call("sleepy", seconds=60))["taskId"]
        missing = await http.post("tasks/get", taskId=task_id)
        wrong = await http.post("tasks/cancel", "another-task", taskId=task_id)
        ack = await http.result("tasks/cancel", task_id, taskId=task_id)
        cancelled = await http.until(task_id, "cancelled")

    assert (400, -32020) == (missing.status_code, missing.json()["error"]["code"])
    assert (400, -32020) == (wrong.status_code, wrong.json()["error"]["code"])
    assert {"resultType"} == set(ack) - {"_meta"}
    assert "cancelled" == cancelled["status"]


async def test_input_inside_a_task_over_http() -> None:
    """SEP-2663 "Task Update Requests" across separate POSTs: input_required,
    tasks/update per key, then completed."""
    async with over_http(make_server()) as http:
        task_id = (await http.call("two_questions"))["taskId"]
        asked = await http.until(task_id, "input_required")
        for key in asked["inputRequests"]:
            await http.result(
                "tasks/update", task_id, taskId=task_id, inputResponses={key: ACCEPT}
            )
        again = await http.until(task_id, "input_required")
        (key,) = again["inputRequests"]
        await http.result(
            "tasks/update", task_id, taskId=task_id, inputResponses={key: ACCEPT}
        )
        done = await http.until(task_id, "completed")

    assert {"first", "second"} == set(asked["inputRequests"])
    assert "sure: True" == done["result"]["content"][0]["text"]


async def test_a_mounted_app_runs_tasks_in_its_lifespan() -> None:
    """api.md: mount() gets its task nursery from the ASGI lifespan, which Hypercorn
    runs for the life of the server."""
    server = make_server()
    async with serving_app(server.mount()) as base, httpx.AsyncClient() as client:
        http = Http(client, f"{base}/mcp")
        created = await http.call("sleepy", seconds=0.05)
        done = await http.until(created["taskId"], "completed")

    assert "task" == created["resultType"]
    assert "completed" == done["status"]


# -- stdio --------------------------------------------------------------------------------
class Peer(StdioPeer):
    """The client side of ``tasks_server.py`` over its stdin and stdout."""

    ids = 0

    async def request(self, method: str, **params: Any) -> dict[str, Any]:
        self.ids += 1
        await self.send(request_body(method, params, self.ids, META))
        reply = await self.reply(self.ids)
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    async def until(self, task_id: str, status: str) -> dict[str, Any]:
        with trio.fail_after(WAIT):
            while (task := await self.request("tasks/get", taskId=task_id))[  # noqa: ASYNC110 - polling is the protocol
                "status"
            ] != status:
                await trio.sleep(0.01)
        return task


@asynccontextmanager
async def spawn() -> AsyncIterator[Peer]:
    command = [str(SERVER)]
    async with running(Peer, command, stderr=False, close_at_end=False) as peer:
        yield peer


async def test_a_task_over_stdio_runs_while_other_requests_are_answered() -> None:
    """serve_stdio owns a task nursery: the task runs on while the same pipe
    answers other requests, and discovery advertises the extension."""
    async with spawn() as peer:
        discovered = await peer.request("server/discover")
        created = await peer.request(
            "tools/call", name="sleepy", arguments={"seconds": 0.2}
        )
        echoed = await peer.request(
            "tools/call", name="plain", arguments={"text": "hi"}
        )
        done = await peer.until(created["taskId"], "completed")

    assert {TASKS: {}} == discovered["capabilities"]["extensions"]
    assert "task" == created["resultType"]
    assert "hi" == echoed["content"][0]["text"]
    assert "slept 0.2" == done["result"]["content"][0]["text"]
