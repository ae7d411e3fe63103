"""A task never leaks a call's secret (api.md "Trust"; issue 24): its
``inputRequests``, result and error are masked before they are kept or sent, in
memory as in a ``RedisStore``. Through real JSON (the test client)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import attrs
import trio
import trio.testing
from support.scale_procs import RedisServer

from trio_mcp import (
    Elicit,
    NeedsInput,
    RedisStore,
    Secret,
    Server,
    ToolContext,
    ToolError,
    tool,
)
from trio_mcp.testing import McpTestClient

SECRET = "PLAINTEXT-SEKRIT"
CAPS: dict[str, Any] = {
    "extensions": {"io.modelcontextprotocol/tasks": {}},
    "elicitation": {},
}


@attrs.frozen
class Confirm:
    ok: bool


@tool(task="optional")
async def tleak(s: Secret[str], mode: str) -> str | NeedsInput:
    """A task that writes its secret everywhere it can.

    Args:
        s: The secret.
        mode: ``ask``, ``err`` or ``ok``.
    """
    if mode == "err":
        raise ToolError("bad " + s.reveal())
    if mode == "ask" and "c" not in ToolContext.current().input_responses:
        return NeedsInput(
            requests={"c": Elicit("confirm " + s.reveal(), schema=Confirm)},
            state={"k": s.reveal()},
        )
    return "v=" + s.reveal()


async def settled(client: McpTestClient, task_id: str) -> dict[str, Any]:
    with trio.fail_after(5):
        while True:
            task: dict[str, Any] = await client.request(
                "tasks/get", {"taskId": task_id}
            )
            if task["status"] != "working":
                return task
            await trio.sleep(0.01)


async def views(
    server: Server, kept: Callable[[], str] = lambda: ""
) -> list[dict[str, Any]]:
    """Each mode's task as ``tasks/get`` shows it once settled, and (``kept``) what
    the store holds at that moment."""
    seen = []
    async with McpTestClient(server, client_capabilities=CAPS) as client:
        for mode in ("ask", "err", "ok"):
            created = await client.request(
                "tools/call",
                {"name": "tleak", "arguments": {"s": SECRET, "mode": mode}},
            )
            seen.append(await settled(client, str(created["taskId"])))
            seen[-1]["kept"] = await trio.to_thread.run_sync(kept)
    return seen


async def test_a_task_masks_its_questions_result_and_error(
    autojump_clock: trio.testing.MockClock,
) -> None:
    asking, failed, done = await views(Server("t", "1", tools=[tleak]))

    assert "input_required" == asking["status"], asking
    assert "confirm **********" == asking["inputRequests"]["c"]["params"]["message"]
    assert failed["result"]["isError"], failed
    assert "v=**********" == done["result"]["content"][0]["text"], done
    assert SECRET not in json.dumps([asking, failed, done])


async def test_a_redis_store_never_holds_the_plaintext(
    redis_server: RedisServer,
) -> None:
    cli = ["redis-cli", "-p", str(redis_server.port)]

    def kept() -> str:
        keys = subprocess.run([*cli, "--scan"], capture_output=True, text=True)
        return "".join(
            subprocess.run(
                [*cli, "hgetall", key], capture_output=True, text=True
            ).stdout
            for key in keys.stdout.split()
            if ":task:" in key
        )

    store = RedisStore(redis_server.url)
    seen = await views(Server("t", "1", tools=[tleak], store=store), kept)

    assert "input_required" == seen[0]["status"]
    assert "confirm **********" in seen[0]["kept"], seen[0]["kept"]
    assert not [task for task in seen if "SEKRIT" in json.dumps(task)], seen
