"""pydantic tools end to end through real JSON (api.md "Where Python users already
are", issue 35): listed and decoded as attrs tools are, every bad input in one
``isError`` reply, a returned model checked against the output schema, secrets inside
models masked, ``pydantic.Field(description=...)`` documenting a parameter."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import attrs
import pydantic
import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel
from pydantic_server import Condition
from support import wire

from trio_mcp import (
    Field,
    InvalidDeclaration,
    Receipt,
    Secret,
    Server,
    ToolError,
    resource,
    tool,
)
from trio_mcp.testing import McpTestClient, ProtocolError


class Search(BaseModel):
    conditions: list[Condition]
    limit: int = pydantic.Field(10, ge=1, le=50, description="Most results.")


class Ticket(BaseModel):
    id: str
    title: str
    score: float = pydantic.Field(ge=0)


class Login(BaseModel):
    user: str
    token: Secret[str]


class Session(BaseModel):
    user: str
    token: Secret[str]
    note: str


@attrs.frozen
class Page:
    tickets: list[Ticket]
    next: Search | None = None


TICKETS = [Ticket(id="T-1", title="Refund", score=1.5)]


@tool
def search(
    search: Search,
    page: Annotated[int, pydantic.Field(ge=1, description="The page, from 1.")] = 1,
) -> Page:
    """
    Search tickets.

    Args:
        search: What to look for.
    """
    found = [t for t in TICKETS if any("refund" in c.words for c in search.conditions)]
    return Page(tickets=found)


@tool
def broken(kind: Literal["wrong-field", "dict", "ok"]) -> Ticket:
    """
    Return a ticket, or something that is not one.

    Args:
        kind: Which reply.
    """
    ticket = Ticket(id="T-1", title="Refund", score=1.0)
    if kind == "wrong-field":
        ticket.score = -1.0  # no validate_assignment: the output check sees it
    if kind == "dict":
        return {"id": "T-1", "title": "Refund", "score": 1.0}  # type: ignore[return-value]
    return ticket


@tool
def log_in(login: Login) -> Session:
    """
    Open a session and echo the token (masked on the way out).

    Args:
        login: Who and with what.
    """
    if login.token.reveal() != "hunter2":
        raise ToolError(f"{login.token.reveal()} is not the token")
    return Session(user=login.user, token=login.token, note=login.token.reveal())


@resource(uri="tickets://first")
def first() -> Ticket:
    """The first ticket."""
    return TICKETS[0]


def make_server(receipts: list[Receipt] | None = None) -> Server:
    return Server(
        "desk",
        "1",
        tools=[search, broken, log_in],
        resources=[first],
        receipts=None if receipts is None else receipts.append,
    )


async def test_a_pydantic_tool_lists_its_schemas_from_the_models() -> None:
    async with McpTestClient(make_server()) as client:
        listed = {t["name"]: t for t in wire(await client.list_tools())}

    schema = listed["search"]["inputSchema"]
    condition = schema["properties"]["search"]["properties"]["conditions"]["items"]
    page = schema["properties"]["page"]
    output = listed["search"]["outputSchema"]
    assert "One condition on a ticket." == condition["description"]
    assert ["title", "owner"] == condition["properties"]["field"]["enum"]
    assert {"description": "The page, from 1.", "minimum": 1, "default": 1} == {
        k: page[k] for k in ("description", "minimum", "default")
    }
    assert "What to look for." == schema["properties"]["search"]["description"]
    assert (
        0 == output["properties"]["tickets"]["items"]["properties"]["score"]["minimum"]
    )
    for each in (schema, output):
        Draft202012Validator.check_schema(each)


async def test_every_bad_input_is_listed_in_one_reply() -> None:
    arguments = {
        "search": {
            "conditions": [{"field": "body", "words": []}, {"words": ["a"]}],
            "limit": 0,
            "sort": "new",
        },
        "page": 0,
    }
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("search", arguments)

    assert result.is_error
    assert [
        "- page: must be at least 1",
        '- search.conditions.0.field: must be one of: "title", "owner"',
        "- search.conditions.0.words: must have at least 1 item",
        "- search.conditions.1.field: this field is required",
        "- search.limit: must be at least 1",
        "- search.sort: unknown field",
    ] == sorted(line for line in result.text.splitlines() if line.startswith("- "))
    detail = wire(result.meta)["dev.trio-mcp/error"]
    assert "search.sort" in {p["path"] for p in detail["problems"]}


async def test_a_good_call_decodes_into_models_and_returns_one() -> None:
    arguments = {"search": {"conditions": [{"field": "title", "words": ["refund"]}]}}
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("search", arguments)
        read = await client.read_resource("tickets://first")

    expected = {"id": "T-1", "title": "Refund", "score": 1.5}
    assert not result.is_error
    assert {"tickets": [expected], "next": None} == result.structured
    assert expected == json.loads(wire(read)["contents"][0]["text"])


@pytest.mark.parametrize(
    ("kind", "why"),
    [("wrong-field", "score: must be at least 0"), ("dict", "a dict cannot be")],
)
async def test_a_returned_model_that_breaks_its_schema_is_an_internal_error(
    kind: str, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts)) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("broken", {"kind": kind})
        fine = await client.call_tool("broken", {"kind": "ok"})

    assert -32603 == caught.value.code
    assert ("internal", "trio_mcp.InvalidReply") == (
        receipts[0].outcome,
        receipts[0].error_type,
    )
    assert why in caplog.text
    assert 1.0 == wire(fine.structured)["score"]


async def test_a_secret_inside_a_model_never_leaves_the_server() -> None:
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts)) as client:
        opened = await client.call_tool(
            "log_in", {"login": {"user": "ann", "token": "hunter2"}}
        )
        refused = await client.call_tool(
            "log_in", {"login": {"user": "ann", "token": "letmein"}}
        )
        listed = {t["name"]: t for t in wire(await client.list_tools())}

    assert {"user": "ann", "token": "**********", "note": "**********"} == (
        opened.structured
    )
    assert "hunter2" not in str(opened.raw)
    assert refused.is_error
    assert "letmein" not in str(refused.raw)
    assert "hunter2" not in repr(receipts)
    assert "letmein" not in repr(receipts)
    token = listed["log_in"]["inputSchema"]["properties"]["login"]["properties"]
    assert {"type": "string", "writeOnly": True} == token["token"]


async def test_a_pydantic_field_description_documents_a_parameter() -> None:
    @tool
    def rate(
        stars: Annotated[int, pydantic.Field(ge=1, le=5, description="1 to 5.")],
    ) -> int:
        """Rate the answer."""
        return stars

    async with McpTestClient(Server("r", "1", tools=[rate])) as client:
        stars = wire(await client.list_tools())[0]["inputSchema"]["properties"]["stars"]
        low = await client.call_tool("rate", {"stars": 0})

    assert {
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
        "description": "1 to 5.",
    } == stars
    assert "- stars: must be at least 1" in low.text


def test_a_parameter_without_any_description_is_still_refused() -> None:
    @tool
    def rate(stars: Annotated[int, pydantic.Field(ge=1)]) -> int:
        """Rate the answer."""
        return stars

    with pytest.raises(
        InvalidDeclaration, match="parameter 'stars' has no description"
    ):
        Server("r", "1", tools=[rate])


def test_a_docstring_entry_wins_over_a_field_description() -> None:
    @tool
    def rate(stars: Annotated[int, pydantic.Field(description="From Field.")]) -> int:
        """
        Rate the answer.

        Args:
            stars: From the docstring.
        """
        return stars

    listed: Any = rate.spec().input_schema
    assert "From the docstring." == listed["properties"]["stars"]["description"]


@pytest.mark.parametrize(
    ("default", "named"),
    [
        (pydantic.Field(description="Most results.", ge=1), "pydantic.Field(...)"),
        (pydantic.Field(20, ge=1), "pydantic.Field(...)"),
        (Field(ge=1), "trio_mcp.Field(...)"),
    ],
)
def test_a_field_as_a_default_points_at_the_annotation(
    default: object, named: str
) -> None:
    """FastMCP's ``limit: int = Field(...)`` would leave a FieldInfo as the value."""

    def top(limit: int = default) -> int:  # type: ignore[assignment]
        """
        Top results.

        Args:
            limit: Most results.
        """
        return limit

    with pytest.raises(InvalidDeclaration) as caught:
        tool(top)

    assert f"parameter 'limit' has a {named} as its default" in str(caught.value)
    assert "'limit: Annotated[int, Field(...)]'" in str(caught.value)
