"""``Server(middleware=[...])``: the public chain every call runs through (api.md
"Middleware"), through real JSON and, for HTTP statuses and headers, real Hypercorn."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import trio
import trio.testing
from support import META, VERSION, serving, wire
from support.tools import echo

from trio_mcp import (
    Call,
    Capability,
    Ending,
    Next,
    Receipt,
    Secret,
    Server,
    ToolContext,
    ToolError,
    prompt,
    resource,
    tool,
)
from trio_mcp.testing import McpTestClient, ProtocolError, check_message

write = Capability("write", description="Change things")


@tool
def login(user: str, token: Secret[str]) -> str:
    """Log in.

    Args:
        user: Who.
        token: Their token.
    """
    return f"{user} in ({len(token.reveal())} characters)"


@tool(caps=[write])
def erase() -> str:
    """Erase everything."""
    return "erased"


@tool
def broken() -> str:
    """Fail."""
    raise RuntimeError("the handler broke")


@tool
def refuses() -> str:
    """Fail as the model may read."""
    raise ToolError("not today")


@prompt(complete={"topic": lambda value, context: ["trio", "trees"]})
def haiku(topic: str) -> str:
    """A haiku.

    Args:
        topic: About what.
    """
    return f"Write a haiku about {topic}."


@resource(uri="notes://{name}")
def note(name: str) -> str:
    """A note.

    Args:
        name: Which note.
    """
    return f"note {name}"


class Recorder:
    """A step that records what it saw, before and after the rest of the chain."""

    def __init__(self, label: str, trail: list[str]) -> None:
        self.label, self.trail = label, trail
        self.calls: list[Call] = []
        self.endings: list[Ending] = []
        self.contexts: list[bool] = []

    async def __call__(self, call: Call, next: Next) -> Ending:
        self.trail.append(f"{self.label} in")
        self.calls.append(call)
        self.contexts.append(ToolContext.current() is call.context)
        ending = await next(call)
        self.endings.append(ending)
        self.trail.append(f"{self.label} out")
        return ending


def make_server(*steps: Any, receipts: list[Receipt] | None = None) -> Server:
    return Server(
        "mw",
        "1",
        tools=[echo, login, erase, broken, refuses],
        prompts=[haiku],
        resources=[note],
        middleware=steps,
        receipts=None if receipts is None else receipts.append,
    )


async def test_steps_run_in_order_around_the_handler() -> None:
    trail: list[str] = []
    outer, inner = Recorder("outer", trail), Recorder("inner", trail)
    async with McpTestClient(make_server(outer, inner)) as client:
        result = await client.call_tool("echo", {"text": "hi"})

    assert "hi" == result.structured
    assert ["outer in", "inner in", "inner out", "outer out"] == trail
    assert [True] == outer.contexts == inner.contexts


async def test_every_call_method_passes_through_with_its_values() -> None:
    seen = Recorder("seen", [])
    async with McpTestClient(make_server(seen), principal="ada") as client:
        await client.call_tool("echo", {"text": "hi"})
        await client.get_prompt("haiku", {"topic": "rain"})
        await client.read_resource("notes://n1")
        await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "haiku"},
                "argument": {"name": "topic", "value": "t"},
            },
        )

    assert [
        ("tools/call", "echo", {"text": "hi"}),
        ("prompts/get", "haiku", {"topic": "rain"}),
        ("resources/read", "notes://n1", {"name": "n1"}),
        ("completion/complete", "haiku", {"topic": "t"}),
    ] == [(c.method, c.name, dict(c.arguments)) for c in seen.calls]
    assert {"ada"} == {c.principal for c in seen.calls}
    assert ["ok"] * 4 == [e.outcome for e in seen.endings]


async def test_a_step_sees_secrets_only_as_secret() -> None:
    seen = Recorder("seen", [])
    async with McpTestClient(make_server(seen)) as client:
        result = await client.call_tool("login", {"user": "ada", "token": "hunter22"})

    arguments = seen.calls[0].arguments
    assert isinstance(arguments["token"], Secret)
    assert "hunter22" not in repr(seen.calls[0])
    assert "ada in (8 characters)" == result.structured


async def test_a_step_sees_failures_as_endings() -> None:
    seen = Recorder("seen", [])
    async with McpTestClient(make_server(seen)) as client:
        await client.call_tool("refuses")
        with pytest.raises(ProtocolError):
            await client.call_tool("broken")

    assert ["error", "internal"] == [e.outcome for e in seen.endings]


async def test_a_caller_without_the_grants_never_reaches_a_step() -> None:
    """The grants come first: a step (a cache) never answers a refused caller."""
    seen = Recorder("seen", [])
    async with McpTestClient(make_server(seen)) as client:
        refused = await client.call_tool("erase")
    async with McpTestClient(make_server(seen), allow=[write]) as client:
        allowed = await client.call_tool("erase")

    assert refused.is_error
    assert "erased" == allowed.structured
    assert ["erase"] == [c.name for c in seen.calls]


async def test_a_step_refuses_before_the_handler_with_a_receipt() -> None:
    ran: list[str] = []

    async def nobody_echoes(call: Call, next: Next) -> Ending:
        if call.name == "echo":
            return Ending.refused("echo is switched off", data={"why": "policy"})
        ran.append(call.name)
        return await next(call)

    receipts: list[Receipt] = []
    async with McpTestClient(make_server(nobody_echoes, receipts=receipts)) as client:
        with pytest.raises(ProtocolError) as refused:
            await client.call_tool("echo", {"text": "hi"})

    assert (-31403, "echo is switched off") == (
        refused.value.code,
        refused.value.message,
    )
    assert {"why": "policy"} == refused.value.data
    assert [] == ran
    assert [("echo", "refused")] == [(r.name, r.outcome) for r in receipts]


async def test_a_refusal_carries_its_http_status_and_headers() -> None:
    challenge = 'Bearer error="insufficient_scope", scope="notes:write"'

    async def scope_check(call: Call, next: Next) -> Ending:
        return Ending.refused(
            "this call needs the scope notes:write",
            http_status=403,
            headers=(("WWW-Authenticate", challenge),),
        )

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": META, "name": "echo", "arguments": {"text": "x"}},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": "echo",
    }
    async with serving(make_server(scope_check)) as url, httpx.AsyncClient() as c:
        with trio.fail_after(10):
            response = await c.post(url + "/mcp", json=body, headers=headers)

    message = response.json()
    check_message(message, "tools/call")
    assert 403 == response.status_code
    assert challenge == response.headers["www-authenticate"]
    assert -31403 == message["error"]["code"]


async def test_an_ending_can_be_returned_again_for_another_request() -> None:
    kept: dict[str, Ending] = {}

    async def cache(call: Call, next: Next) -> Ending:
        if call.name not in kept:
            kept[call.name] = await next(call)
        return kept[call.name]

    async with McpTestClient(make_server(cache)) as client:
        first = await client.call_tool("echo", {"text": "once"})
        second = await client.call_tool("echo", {"text": "twice"})

    assert "once" == first.structured == second.structured


async def test_a_step_that_raises_ends_its_call_only() -> None:
    async def clumsy(call: Call, next: Next) -> Ending:
        if call.name == "echo":
            raise ValueError("the step broke")
        return await next(call)

    receipts: list[Receipt] = []
    async with McpTestClient(make_server(clumsy, receipts=receipts)) as client:
        with pytest.raises(ProtocolError) as failed:
            await client.call_tool("echo", {"text": "hi"})
        after = await client.read_resource("notes://n2")

    assert -32603 == failed.value.code
    assert "note n2" == wire(after)["contents"][0]["text"]
    assert ["internal", "ok"] == [r.outcome for r in receipts]
    assert "builtins.ValueError" == receipts[0].error_type


async def test_a_step_runs_under_the_calls_cancellation(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A step awaits inside the call: a timed-out handler is still its ending."""
    outcomes: list[str] = []

    @tool(timeout=0.05)
    async def slow() -> str:
        """Sleep."""
        await trio.sleep(5)
        return "late"

    async def watch(call: Call, next: Next) -> Ending:
        ending = await next(call)
        outcomes.append(ending.outcome)
        return ending

    server = Server("slow", "1", tools=[slow], middleware=[watch])
    async with McpTestClient(server) as client:
        result = await client.call_tool("slow")

    assert result.is_error
    assert ["timeout"] == outcomes


def test_a_step_that_is_not_callable_is_refused_at_construction() -> None:
    with pytest.raises(TypeError, match="middleware"):
        Server("bad", "1", tools=[echo], middleware=["not a step"])  # type: ignore[list-item]
