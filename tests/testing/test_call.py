"""``trio_mcp.testing.call_for``: the call a middleware step receives, built without
a server, is the call the server hands the step (api.md "The house, round two")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_mcp import (
    Call,
    Capability,
    Ending,
    InvalidArgument,
    Next,
    Secret,
    Server,
    ToolContext,
    tool,
)
from trio_mcp.testing import McpTestClient, call_for

WRITE = Capability("notes.write", description="Write notes.")


@tool(caps=[WRITE], timeout=30)
def note(text: str, pin: Secret[str], tags: list[str] | None = None) -> str:
    """Write a note.

    Args:
        text: The note.
        pin: The writer's PIN.
        tags: Labels for the note.
    """
    return text


def seen(call: Call) -> dict[str, Any]:
    """What a step reads of a call, secrets as the masks they show."""
    return {
        "method": call.method,
        "name": call.name,
        "arguments": {k: repr(v) for k, v in call.arguments.items()},
        "principal": call.principal,
        "request_id": call.request_id,
        "spec": call.spec,
        "required": call.required,
        "granted": call.granted,
        "context": (
            call.context.request_id,
            call.context.principal,
            call.context.declared,
            call.context.deadline is not None,
        ),
    }


async def served_call(arguments: dict[str, Any], principal: str) -> Call:
    """The call a step of a real server receives, over the in-process client."""
    calls: list[Call] = []

    async def record(call: Call, next: Next) -> Ending:
        calls.append(call)
        return await next(call)

    server = Server("notes", "1.0", tools=[note], middleware=[record])
    async with McpTestClient(
        server, principal=principal, allow=["notes.write"]
    ) as client:
        await client.call_tool("note", arguments)
    (call,) = calls
    return call


@settings(max_examples=25, deadline=None)
@given(
    text=st.text(max_size=20),
    pin=st.text(min_size=1, max_size=8),
    tags=st.none() | st.lists(st.text(max_size=5), max_size=3),
    principal=st.sampled_from(["ada", "staff:bo"]),
)
async def test_the_built_call_is_the_served_one(
    text: str, pin: str, tags: list[str] | None, principal: str
) -> None:
    arguments: dict[str, Any] = {"text": text, "pin": pin}
    if tags is not None:
        arguments["tags"] = tags
    served = await served_call(arguments, principal)

    built = call_for(
        server=Server("notes", "1.0", tools=[note]),
        tool="note",
        arguments=arguments,
        principal=principal,
        allow=["notes.write"],
        request_id=served.request_id,
    )

    assert seen(served) == seen(built)
    assert isinstance(built.arguments["pin"], Secret)
    assert pin == built.arguments["pin"].reveal()


async def test_a_step_runs_on_the_built_call_with_its_own_next() -> None:
    async def only_tagged(call: Call, next: Next) -> Ending:
        if not call.arguments.get("tags"):
            return Ending.refused("tag the note", http_status=400)
        return await next(call)

    async def rest(call: Call) -> Ending:
        return Ending(outcome="ok", result={"content": [], "seen": call.name})

    server = Server("notes", "1.0", tools=[note])
    untagged = call_for(server, "note", {"text": "a", "pin": "1"})
    tagged = call_for(server, "note", {"text": "a", "pin": "1", "tags": ["x"]})

    refused = await only_tagged(untagged, rest)
    ok = await only_tagged(tagged, rest)

    assert ("refused", {"code": -31403, "message": "tag the note"}) == (
        refused.outcome,
        refused.error,
    )
    assert ("ok", "note") == (ok.outcome, (ok.result or {})["seen"])
    assert frozenset() == untagged.granted  # nothing granted unless allow= says so
    assert ToolContext.current().request_id is None  # nothing was installed


def test_a_tool_the_server_lacks_is_named_with_those_it_has() -> None:
    server = Server("notes", "1.0", tools=[note])

    with pytest.raises(InvalidArgument) as refused:
        call_for(server, "nope", {})

    assert "serves no tool 'nope' (its tools: note)" in str(refused.value)


def test_arguments_that_are_not_an_object_are_refused() -> None:
    server = Server("notes", "1.0", tools=[note])

    with pytest.raises(InvalidArgument, match="must be an object"):
        call_for(server, "note", ["text"])  # type: ignore[arg-type]
