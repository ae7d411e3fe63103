"""A pydantic model as an elicitation form (issue 35: FastMCP's ``ctx.elicit(...,
response_type=Model)`` habit): ``Elicit(message, Model)`` lists the model's flat fields
and the accepted answer decodes into the model, every problem under ``content``."""

from __future__ import annotations

import datetime
from typing import Any, Literal

import pydantic
import pytest
from pydantic import BaseModel
from support import wire

from trio_mcp import (
    DecodeError,
    Elicit,
    ElicitResult,
    NeedsInput,
    Server,
    ToolContext,
    tool,
)
from trio_mcp._declare import read_response
from trio_mcp.testing import McpTestClient, ProtocolError


class Contact(BaseModel):
    """How to reach you."""

    email: str = pydantic.Field(max_length=80, description="Where replies go.")
    age: int = pydantic.Field(ge=0, le=150)
    subscribe: bool = False
    channel: Literal["mail", "phone"] = "mail"
    since: datetime.date | None = None


class Nested(BaseModel):
    contact: Contact


def test_a_model_is_a_form_of_its_flat_fields() -> None:
    params = Elicit("Contact?", Contact).to_wire()["params"]
    assert isinstance(params, dict)

    assert {
        "type": "object",
        "properties": {
            "email": {
                "type": "string",
                "maxLength": 80,
                "description": "Where replies go.",
            },
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "subscribe": {"type": "boolean", "default": False},
            "channel": {"type": "string", "enum": ["mail", "phone"], "default": "mail"},
            "since": {"type": "string", "format": "date"},
        },
        "required": ["email", "age"],
    } == params["requestedSchema"]


def test_an_accepted_answer_decodes_into_the_model() -> None:
    form = Elicit("Contact?", Contact)

    answer = read_response(
        form.descriptor(), {"action": "accept", "content": {"email": "a@b.c", "age": 3}}
    )

    assert ElicitResult("accept", Contact(email="a@b.c", age=3)) == answer


def test_a_wrong_answer_lists_every_problem_under_content() -> None:
    form = Elicit("Contact?", Contact)

    with pytest.raises(DecodeError) as caught:
        read_response(
            form.descriptor(),
            {"action": "accept", "content": {"age": -1, "channel": "fax", "x": 1}},
        )

    assert [
        ("content.age", "must be at least 0"),
        ("content.channel", 'must be one of: "mail", "phone"'),
        ("content.email", "this field is required"),
        ("content.x", "unknown field"),
    ] == sorted((p.path, p.message) for p in caught.value.problems)


def test_a_nested_model_is_not_a_form() -> None:
    with pytest.raises(TypeError, match="not a flat form field"):
        Elicit("?", Nested)


@tool
def subscribe() -> str | NeedsInput:
    """Subscribe the caller, asking how to reach them."""
    answer = ToolContext.current().input_responses.get("contact")
    if answer is None:
        return NeedsInput(requests={"contact": Elicit("How to reach you?", Contact)})
    assert isinstance(answer, ElicitResult)
    if not answer.accepted:
        return "not subscribed"
    contact = answer.content
    assert isinstance(contact, Contact)
    return f"{contact.email} by {contact.channel}"


async def test_a_tool_asks_with_a_model_and_gets_one_back() -> None:
    capabilities: dict[str, Any] = {"elicitation": {}}
    server = Server("forms", "1", tools=[subscribe])
    async with McpTestClient(server, client_capabilities=capabilities) as client:
        first = await client.call_tool("subscribe")
        state = wire(first.raw)["requestState"]
        with pytest.raises(ProtocolError) as wrong:
            await client.call_tool(
                "subscribe",
                input_responses={
                    "contact": {"action": "accept", "content": {"age": 1}}
                },
                request_state=state,
            )
        done = await client.call_tool(
            "subscribe",
            input_responses={
                "contact": {"action": "accept", "content": {"email": "a@b.c", "age": 9}}
            },
            request_state=state,
        )

    assert "input_required" == wire(first.raw)["resultType"]
    assert -32602 == wrong.value.code
    assert "inputResponses.contact.content.email: this field is required" in (
        wrong.value.message
    )
    assert "a@b.c by mail" == done.structured
