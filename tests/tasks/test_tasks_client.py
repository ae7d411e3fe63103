"""The tasks extension (SEP-2663) in-process through McpTestClient.

Every message the server emits is validated: core results against the 2026-07-28
schema, the extension's (``CreateTaskResult``, ``tasks/get``, the acknowledgements)
against the shapes the extension defines.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
from support import wire
from tasks_server import TASKS, WITH_TASKS, gate, make_server, seen

from trio_mcp import (
    Receipt,
    Server,
    TextContent,
    ToolCall,
    ToolContext,
    ToolReply,
    ToolSpec,
    tool,
)
from trio_mcp._tasks import TaskRunner
from trio_mcp.testing import McpTestClient, ProtocolError

WAIT = 10.0

#: Every test here runs in-process on Trio's mock clock: polls, TTLs and handler
#: pauses take no real time (the memory store keeps time by Trio's clock).
pytestmark = pytest.mark.usefixtures("autojump_clock")


def client(
    server: Server, caps: dict[str, Any] | None = None, **kwargs: Any
) -> McpTestClient:
    return McpTestClient(server, WITH_TASKS if caps is None else caps, **kwargs)


async def call(c: McpTestClient, tool_name: str, **arguments: Any) -> dict[str, Any]:
    result: dict[str, Any] = await c.request(
        "tools/call", {"name": tool_name, "arguments": arguments}
    )
    return result


async def get(c: McpTestClient, task_id: str) -> dict[str, Any]:
    result: dict[str, Any] = await c.request("tasks/get", {"taskId": task_id})
    return result


async def until(c: McpTestClient, task_id: str, *statuses: str) -> dict[str, Any]:
    """Poll ``tasks/get`` until the task reaches one of ``statuses`` (bounded)."""
    with trio.fail_after(WAIT):
        while (task := await get(c, task_id))["status"] not in statuses:  # noqa: ASYNC110 - polling is the protocol
            await trio.sleep(0.005)
    return task


# -- negotiation ------------------------------------------------------------------------
async def test_discover_advertises_the_extension_only_with_a_task_tool() -> None:
    """SEP-2663 "Capability Negotiation": under capabilities.extensions, never a
    v1-style capabilities.tasks slot; a server without task tools says nothing."""

    @tool
    def only_plain() -> str:
        """A plain tool."""
        return "x"

    async with client(make_server()) as c:
        caps = wire(await c.discover())["capabilities"]
    async with client(Server("p", "1", tools=[only_plain])) as c:
        plain_caps = wire(await c.discover())["capabilities"]

    assert {TASKS: {}} == wire(caps)["extensions"]
    assert "tasks" not in caps
    assert "extensions" not in plain_caps


async def test_a_task_tool_answers_a_declaring_client_with_a_flat_create_task_result() -> (
    None
):
    """SEP-2663 "Task Creation": resultType task, the Task fields at the top level
    (ttlMs, pollIntervalMs: integers), nothing of the result; durable at once."""
    async with client(make_server()) as c:
        created = await call(c, "sleepy", seconds=0.01)
        task_id = created["taskId"]
        immediately = await get(c, task_id)
        done = await until(c, task_id, "completed")

    assert "task" == created["resultType"]
    assert "working" == created["status"]
    assert isinstance(created["ttlMs"], int)
    assert isinstance(created["pollIntervalMs"], int)
    assert not {"result", "error", "inputRequests", "task", "ttl"} & set(created)
    assert task_id == immediately["taskId"]
    assert "complete" == done["resultType"]
    assert [{"type": "text", "text": "slept 0.01"}] == done["result"]["content"]
    assert "resultType" not in done["result"]
    assert "_meta" not in done["result"]  # no serverInfo, no related-task key


async def test_a_client_without_the_extension_gets_the_plain_result_or_minus_32021() -> (
    None
):
    """SEP-2663: never a CreateTaskResult without the extension on the request; a
    task-required tool answers -32021 naming the extension in requiredCapabilities."""
    async with client(make_server(), {"elicitation": {}}) as c:
        plain = await call(c, "sleepy", seconds=0)
        with pytest.raises(ProtocolError) as refused:
            await call(c, "must_be_task")

    assert "complete" == plain["resultType"]
    assert "taskId" not in plain
    assert -32021 == refused.value.code
    assert {"extensions": {TASKS: {}}} == wire(refused.value.data)[
        "requiredCapabilities"
    ]


async def test_the_extension_can_be_declared_for_one_request() -> None:
    """SEP-2575: capabilities are per request, so one tools/call may opt in."""
    async with client(make_server(), {}) as c:
        meta = c.meta()
        meta["io.modelcontextprotocol/clientCapabilities"] = {"extensions": {TASKS: {}}}
        created = await c.request(
            "tools/call",
            {"name": "sleepy", "arguments": {"seconds": 0}, "_meta": meta},
        )

    assert "task" == created["resultType"]


async def test_a_plain_tool_stays_plain_even_with_a_legacy_task_param() -> None:
    """SEP-2663: the server alone decides; a v1 ``task`` param is ignored."""
    async with client(make_server()) as c:
        result = await c.request(
            "tools/call",
            {"name": "plain", "arguments": {"text": "hi"}, "task": {"ttl": 1000}},
        )

    assert "complete" == result["resultType"]
    assert "taskId" not in result


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tasks/get", {"taskId": "x"}),
        ("tasks/update", {"taskId": "x", "inputResponses": {}}),
        ("tasks/cancel", {"taskId": "x"}),
    ],
)
async def test_task_methods_need_the_extension_then_a_known_task(
    method: str, params: dict[str, Any]
) -> None:
    """SEP-2663 "Error Handling": -32021 for a client without the extension,
    -32602 for an unknown taskId."""
    async with client(make_server(), {}) as plain, client(make_server()) as c:
        with pytest.raises(ProtocolError) as undeclared:
            await plain.request(method, params)
        with pytest.raises(ProtocolError) as unknown:
            await c.request(method, params)

    assert -32021 == undeclared.value.code
    assert -32602 == unknown.value.code


@pytest.mark.parametrize("method", ["tasks/list", "tasks/result"])
async def test_the_removed_v1_methods_stay_removed(method: str) -> None:
    """SEP-2663: tasks/list and tasks/result are gone (-32601)."""
    async with client(make_server()) as c:
        with pytest.raises(ProtocolError) as caught:
            await c.request(method, {"taskId": "x"})

    assert -32601 == caught.value.code


class HandWritten:
    """A Tool adopter (not a decorated function) that opts in through its spec."""

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="hand_written",
            description="Answer from a task.",
            input_schema={"type": "object"},
            task="required",
        )

    async def dispatch(self, call: ToolCall) -> ToolReply:
        await trio.lowlevel.checkpoint()
        task_id = ToolContext.current().task_id
        return ToolReply.ok(content=TextContent(f"in task {task_id is not None}"))


async def test_a_hand_written_tool_opts_in_through_its_spec() -> None:
    """api.md: ToolSpec(task=...) gives an adopter what @tool(task=...) gives."""
    server = Server("h", "1", tools=[HandWritten()])
    async with client(server) as c, client(server, {}) as plain:
        created = await call(c, "hand_written")
        done = await until(c, created["taskId"], "completed")
        with pytest.raises(ProtocolError) as refused:
            await call(plain, "hand_written")

    assert "in task True" == done["result"]["content"][0]["text"]
    assert -32021 == refused.value.code


def test_a_task_declaration_is_checked_when_declared() -> None:
    """Our rule: a bad task= or task_start= fails at declaration, naming it."""
    from trio_mcp import InvalidDeclaration

    with pytest.raises(InvalidDeclaration, match="task= takes"):

        @tool(task="always")  # type: ignore[call-overload,untyped-decorator]
        def bad() -> str:
            """Bad."""
            return ""

    with pytest.raises(ValueError, match="task"):
        ToolSpec(name="x", description=None, input_schema={}, task="yes")  # type: ignore[arg-type]


# -- how tasks end ------------------------------------------------------------------------
async def test_a_tool_error_completes_and_a_crash_fails_with_the_json_rpc_error() -> (
    None
):
    """SEP-2663 "Task Execution Errors": isError results are completed; failed
    carries the JSON-RPC error (here -32603 with its log reference) and no result."""
    async with client(make_server()) as c:
        errored = await until(
            c, (await call(c, "tool_error"))["taskId"], "completed", "failed"
        )
        crashed = await until(
            c, (await call(c, "crash"))["taskId"], "completed", "failed"
        )

    assert "completed" == errored["status"]
    assert errored["result"]["isError"] is True
    assert "failed" == crashed["status"]
    assert -32603 == crashed["error"]["code"]
    assert "reference" in crashed["error"]["data"]
    assert "result" not in crashed


async def test_the_tools_timeout_is_the_tasks_deadline() -> None:
    """api.md: a task runs under its deadline; running past it is an isError result."""
    async with client(make_server()) as c:
        done = await until(c, (await call(c, "too_slow"))["taskId"], "completed")

    assert done["result"]["isError"] is True
    assert "timed out" in done["result"]["content"][0]["text"]


async def test_cancel_stops_the_handler_and_is_idempotent() -> None:
    """SEP-2663 "Task Cancellation": an empty ack; the task's own scope is
    cancelled (the handler sees trio.Cancelled); cancelling again acks again."""
    seen["cancelled"].clear()
    async with client(make_server()) as c:
        task_id = (await call(c, "sleepy", seconds=60))["taskId"]
        ack = await c.request("tasks/cancel", {"taskId": task_id})
        cancelled = await until(c, task_id, "cancelled", "completed")
        again = await c.request("tasks/cancel", {"taskId": task_id})

    assert {"resultType"} == set(ack) - {"_meta"}
    assert "cancelled" == cancelled["status"]
    assert [task_id] == seen["cancelled"]
    assert {"resultType"} == set(again) - {"_meta"}


async def test_leaving_the_task_nursery_fails_running_tasks() -> None:
    """api.md: tasks live in the server's nursery; when serving ends, a task that
    is not durable fails (its process stopped: "failed when their process dies"),
    never left working, and not "cancelled", which only tasks/cancel does."""
    server = make_server()
    async with client(server) as c:
        task_id = (await call(c, "gated", name="never"))["taskId"]

    view = server._dispatcher.tasks.view(task_id)
    assert view is not None
    assert "failed" == view["status"]
    assert "stopped before the task finished" in str(view["error"])


async def test_a_task_outlives_the_request_that_created_it() -> None:
    """The task goes on after its tools/call has been answered, and ends when the
    work ends, not when the request did."""
    gate["outlive"] = trio.Event()
    async with client(make_server()) as c:
        task_id = (await call(c, "gated", name="outlive"))["taskId"]
        working = await get(c, task_id)
        gate["outlive"].set()
        done = await until(c, task_id, "completed")

    assert "working" == working["status"]
    assert "through outlive" == done["result"]["content"][0]["text"]


async def test_tasks_belong_to_the_principal_that_created_them() -> None:
    """Our rule: another principal cannot read or cancel a task (-32602, as if it
    did not exist)."""
    server = make_server()
    async with (
        client(server, principal="alice") as alice,
        client(server, principal="bob") as bob,
    ):
        task_id = (await call(alice, "sleepy", seconds=60))["taskId"]
        with pytest.raises(ProtocolError) as reading:
            await get(bob, task_id)
        with pytest.raises(ProtocolError) as cancelling:
            await bob.request("tasks/cancel", {"taskId": task_id})
        still = await get(alice, task_id)
        await alice.request("tasks/cancel", {"taskId": task_id})

    assert -32602 == reading.value.code
    assert -32602 == cancelling.value.code
    assert "working" == still["status"]


def with_ttl(ttl_ms: int) -> Server:
    """The test server, its tasks kept (and allowed to run) ``ttl_ms``."""
    server = make_server()
    tasks = server._dispatcher.tasks
    assert isinstance(tasks, TaskRunner)
    tasks.ttl_ms = ttl_ms
    return server


async def test_a_finished_task_is_forgotten_after_its_ttl() -> None:
    """SEP-2663: a task stays readable for ttlMs; afterwards -32602."""
    async with client(with_ttl(200)) as c:
        task_id = (await call(c, "sleepy", seconds=0))["taskId"]
        await until(c, task_id, "completed")
        await trio.sleep(0.25)
        with pytest.raises(ProtocolError) as gone:
            await get(c, task_id)

    assert -32602 == gone.value.code


async def test_a_task_running_past_its_ttl_fails() -> None:
    """SEP-2663: a server may fail a task after its TTL; ours is its deadline."""
    async with client(with_ttl(100)) as c:
        created = await call(c, "gated", name="ttl")
        failed = await until(c, created["taskId"], "failed")

    assert 100 == created["ttlMs"]
    assert -32603 == failed["error"]["code"]
    assert "ttlMs" in failed["error"]["message"]


async def test_one_receipt_per_task_when_the_task_ends() -> None:
    """api.md: a receipt per task, left by the task's own call, not by the
    request that created it."""
    receipts: list[Receipt] = []
    async with client(make_server(receipts)) as c:
        task_id = (await call(c, "sleepy", seconds=0.01))["taskId"]
        await until(c, task_id, "completed")

    assert [("sleepy", "ok")] == [(r.name, r.outcome) for r in receipts]


# -- input inside a task ---------------------------------------------------------------
async def test_input_requests_are_answered_by_tasks_update_in_parts() -> None:
    """SEP-2663 "Task Update Requests": input_required with inputRequests; a
    partial update is acked and leaves the other key pending; unknown keys are
    ignored; a key asked again gets a wire key never used before in the task."""
    seen["answers"].clear()
    accept = {"action": "accept", "content": {"ok": True}}
    async with client(make_server()) as c:
        task_id = (await call(c, "two_questions"))["taskId"]
        asked = await until(c, task_id, "input_required")
        ack = await c.request(
            "tasks/update",
            {"taskId": task_id, "inputResponses": {"first": accept, "nope": {}}},
        )
        partial = await get(c, task_id)
        await c.request(
            "tasks/update", {"taskId": task_id, "inputResponses": {"second": accept}}
        )
        again = await until(c, task_id, "input_required")
        (key,) = again["inputRequests"]
        await c.request(
            "tasks/update", {"taskId": task_id, "inputResponses": {key: accept}}
        )
        done = await until(c, task_id, "completed")

    assert {"first", "second"} == set(asked["inputRequests"])
    assert "elicitation/create" == asked["inputRequests"]["first"]["method"]
    assert {"resultType"} == set(ack) - {"_meta"}
    assert "input_required" == partial["status"]
    assert ["second"] == list(partial["inputRequests"])
    assert key not in {"first", "second"}
    assert [["first", "second"], ["first"]] == seen["answers"]
    assert "sure: True" == done["result"]["content"][0]["text"]


async def test_a_response_that_does_not_fit_is_refused_and_nothing_is_taken() -> None:
    """Our rule: tasks/update with a response that does not fit its request is
    -32602 listing the problem; the other responses of that update are not taken."""
    accept = {"action": "accept", "content": {"ok": True}}
    async with client(make_server()) as c:
        task_id = (await call(c, "two_questions"))["taskId"]
        await until(c, task_id, "input_required")
        with pytest.raises(ProtocolError) as bad:
            await c.request(
                "tasks/update",
                {
                    "taskId": task_id,
                    "inputResponses": {
                        "first": accept,
                        "second": {"action": "accept", "content": {"ok": "yes"}},
                    },
                },
            )
        after = await get(c, task_id)
        await c.request("tasks/cancel", {"taskId": task_id})

    assert -32602 == bad.value.code
    assert "inputResponses.second" in bad.value.message
    assert {"first", "second"} == set(after["inputRequests"])


async def test_input_a_client_cannot_give_fails_the_task_with_minus_32021() -> None:
    """mcp-2026-07-28 §7.2 rule 3, inside a task: a request the client did not
    declare the capability for fails the task with -32021."""
    async with client(make_server(), {"extensions": {TASKS: {}}}) as c:
        task_id = (await call(c, "two_questions"))["taskId"]
        failed = await until(c, task_id, "failed")

    assert -32021 == failed["error"]["code"]


async def test_multi_round_trip_first_then_a_task() -> None:
    """SEP-2663 "Task Creation": input gathered by multi round-trip on tools/call
    before the task exists (round one has no taskId), then a CreateTaskResult
    without requestState, and a result that used the answer."""
    async with client(make_server()) as c:
        first = await call(c, "name_then_task")
        second = await c.request(
            "tools/call",
            {
                "name": "name_then_task",
                "arguments": {},
                "inputResponses": {
                    "user_name": {"action": "accept", "content": {"name": "Ada"}}
                },
                "requestState": first["requestState"],
            },
        )
        done = await until(c, wire(second)["taskId"], "completed")

    assert "input_required" == first["resultType"]
    assert "taskId" not in first
    assert "task" == second["resultType"]
    assert "requestState" not in second
    assert "Hello, Ada (task True)" == done["result"]["content"][0]["text"]


async def test_a_handler_started_task_may_answer_at_once_instead() -> None:
    """task_start="handler": a call that never awaits task_started() is answered
    synchronously, even for a client that declared the extension."""
    async with client(make_server()) as c:
        quick = await call(c, "maybe_task", slow=False)
        slow = await call(c, "maybe_task", slow=True)

    assert "complete" == quick["resultType"]
    assert "slow=False" == quick["content"][0]["text"]
    assert "task" == slow["resultType"]


async def test_a_failure_before_the_task_exists_is_the_requests_own_error() -> None:
    """task_start="handler": a handler that fails before task_started() ends the
    tools/call itself with -32603 (no task is created)."""
    async with client(make_server()) as c:
        with pytest.raises(ProtocolError) as caught:
            await call(c, "early_crash")

    assert -32603 == caught.value.code
    assert "reference" in wire(caught.value.data)


# -- notifications/tasks -----------------------------------------------------------------
async def test_a_listen_stream_follows_the_tasks_it_names() -> None:
    """SEP-2663 "Task Status Notifications": listen with taskIds; the ack lists the
    ids honoured (known ones of this caller); each notification is the full
    DetailedTask as tasks/get would show it then, ending with the result."""
    gate["listen"] = trio.Event()
    async with client(make_server()) as c:
        task_id = (await call(c, "gated", name="listen"))["taskId"]
        async with c.listen(notifications={"taskIds": [task_id, "unknown"]}) as sub:
            gate["listen"].set()
            with trio.fail_after(WAIT):
                note = await sub.next()
                while wire(note)["params"]["status"] != "completed":
                    note = await sub.next()

    assert {"taskIds": [task_id]} == sub.honoured
    assert "notifications/tasks" == note["method"]
    assert task_id == wire(note)["params"]["taskId"]
    assert "through listen" == wire(note)["params"]["result"]["content"][0]["text"]


async def test_listening_for_tasks_needs_the_extension() -> None:
    """SEP-2663: task notifications for a client without the extension: -32021."""
    async with client(make_server(), {}) as c:
        with pytest.raises(ProtocolError) as caught:
            async with c.listen(notifications={"taskIds": ["x"]}):
                pass

    assert -32021 == caught.value.code
