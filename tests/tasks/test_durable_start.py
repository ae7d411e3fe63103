"""A durable task's start (``_tasks/_durable.py``) and durable tools in one process:
the start is sealed and bound to its task, principals come back as they were, a
durable tool without a shared store is an ordinary task tool, and two servers
sharing a real redis-server hand a task over when one's task nursery closes."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st
from support.scale_procs import RedisServer
from support.strategies import json_trees

from trio_mcp import InvalidDeclaration, RedisStore, Secret, Server, ToolContext, tool
from trio_mcp._protocol._state import InvalidState, StateSealer
from trio_mcp._tasks._durable import (
    DurableStart,
    open_start,
    principal_from_json,
    principal_to_json,
    seal_start,
)
from trio_mcp.auth import TokenPrincipal
from trio_mcp.testing import McpTestClient

KEY = "durable-tests-shared-state-key-0123456789"
CAPS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
gate: dict[str, trio.Event] = {}


@tool(task="optional", durable=True, max_attempts=2)
async def slow_count(n: int, key: Secret[str]) -> str:
    """Wait for the test's gate (the first attempt only), then answer.

    Args:
        n: Echoed back.
        key: A secret the handler reads.
    """
    ctx = ToolContext.current()
    if ctx.attempt == 1:
        await gate["first"].wait()
    return f"{n}:{len(key.reveal())}:attempt {ctx.attempt}"


json_values = json_trees(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8), max_leaves=8
)


@given(value=st.none() | st.text() | st.dictionaries(st.text(), json_values))
def test_a_plain_principal_comes_back_as_it_was(value: object) -> None:
    assert value == principal_from_json(principal_to_json(value))


@given(
    sub=st.text(min_size=1),
    scopes=st.frozensets(st.text(max_size=6)),
    claims=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
)
def test_a_token_principal_comes_back_with_its_scopes_and_claims(
    sub: str, scopes: frozenset[str], claims: dict[str, Any]
) -> None:
    principal = TokenPrincipal(sub, "client", scopes, claims, "https://issuer")

    back = principal_from_json(principal_to_json(principal))

    assert isinstance(back, TokenPrincipal)
    assert principal == back
    assert dict(principal.claims) == dict(back.claims)


def test_a_principal_json_cannot_carry_is_kept_by_its_id() -> None:
    class Someone:
        id = "u-1"

    assert "u-1" == principal_from_json(principal_to_json(Someone()))


@given(secret=st.text(min_size=4).filter(lambda s: s.isprintable()))
def test_a_start_is_sealed_bound_to_its_task_and_opens_with_the_shared_key(
    secret: str,
) -> None:
    start = DurableStart(
        "slow_count",
        {"n": 1, "key": Secret(secret)},
        "alice",
        frozenset({"files:read"}),
        {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    )
    sealed = seal_start(StateSealer.from_config(KEY), "task-1", start, 60.0)

    opened = open_start(StateSealer.from_config(KEY), "task-1", sealed)

    assert secret not in sealed
    assert {"n": 1, "key": secret} == opened.arguments
    assert ("alice", frozenset({"files:read"})) == (opened.principal, opened.grants)
    with pytest.raises(InvalidState):
        open_start(StateSealer.from_config(KEY), "task-2", sealed)
    with pytest.raises(InvalidState):
        open_start(StateSealer.from_config(KEY + "-other"), "task-1", sealed)


def test_durable_needs_a_task_and_max_attempts_a_count() -> None:
    async def f() -> str:
        """Do nothing."""
        return ""

    with pytest.raises(InvalidDeclaration, match="durable=True needs task="):
        tool(durable=True)(f)
    with pytest.raises(InvalidDeclaration, match="max_attempts= takes an integer"):
        tool(task="optional", durable=True, max_attempts=0)(f)


async def until_done(client: McpTestClient, task_id: str) -> Mapping[str, Any]:
    with trio.fail_after(20):
        while True:
            task = await client.request("tasks/get", {"taskId": task_id})
            if task["status"] not in ("working", "input_required"):
                return task
            await trio.sleep(0.02)


async def test_without_a_shared_store_a_durable_tool_is_an_ordinary_task() -> None:
    gate["first"] = trio.Event()
    gate["first"].set()
    server = Server("t", "1", tools=[slow_count])
    async with McpTestClient(server, client_capabilities=CAPS) as client:
        created = await client.request(
            "tools/call", {"name": "slow_count", "arguments": {"n": 3, "key": "abcd"}}
        )
        done = await until_done(client, str(created["taskId"]))

    assert "completed" == done["status"]
    assert "3:4:attempt 1" == done["result"]["structuredContent"]


async def test_a_closing_task_nursery_hands_its_durable_task_to_another_server(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Heartbeat 30 s: the hand-over is the release, not a lease running out."""
    gate["first"] = trio.Event()
    caplog.set_level(logging.INFO, logger="trio_mcp")

    def server() -> Server:
        store = RedisStore(redis_server.url, heartbeat=30.0)
        return Server("t", "1", tools=[slow_count], store=store, state_key=KEY)

    a, b = server(), server()
    async with McpTestClient(b, client_capabilities=CAPS) as on_b:
        async with McpTestClient(a, client_capabilities=CAPS) as on_a:
            created = await on_a.request(
                "tools/call",
                {"name": "slow_count", "arguments": {"n": 5, "key": "secret"}},
            )
            task_id = str(created["taskId"])
        done = await until_done(on_b, task_id)

    assert "completed" == done["status"], done
    assert "5:6:attempt 2" == done["result"]["structuredContent"]
    said = caplog.text
    assert f"task {task_id}: attempt 1 released by" in said
    assert f"task {task_id}: attempt 2 claimed by" in said
    assert "released it" in said
