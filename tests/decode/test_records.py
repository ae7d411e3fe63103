"""Dataclasses and TypedDicts work like attrs classes (api.md "Types in signatures",
issue 29 item 5): the same schema, strict decoding that lists every problem,
encoding, and tools that take and return them over real JSON."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, NotRequired, Required, TypedDict

import attrs
import decoding
import pytest
from support import wire

from trio_mcp import (
    Field,
    InvalidDeclaration,
    Secret,
    Server,
    decode,
    encode,
    json_schema,
    tool,
)
from trio_mcp.testing import McpTestClient, ProtocolError


@attrs.frozen
class LineA:
    sku: Annotated[str, Field(min_length=1)]
    quantity: int = 1
    note: str | None = None


@dataclasses.dataclass(frozen=True)
class LineD:
    sku: Annotated[str, Field(min_length=1)]
    quantity: int = 1
    note: str | None = None


class LineT(TypedDict, total=False):
    sku: Required[Annotated[str, Field(min_length=1)]]
    quantity: int
    note: str | None


class Point(TypedDict):
    x: int
    y: NotRequired[int]


@dataclasses.dataclass
class Order:
    lines: list[LineD]
    point: Point
    tags: list[str] = dataclasses.field(default_factory=list)
    size: int = dataclasses.field(default=3, metadata={"trio_mcp": Field(ge=1)})


def problems(tp: object, value: object) -> list[tuple[str, str]]:
    """Each problem of decoding ``value`` as ``tp``, sorted."""
    return sorted(decoding.problems(tp, value))


def test_a_dataclass_has_the_schema_of_the_same_attrs_class() -> None:
    assert json_schema(LineA) == json_schema(LineD)


def test_a_typeddict_lists_its_required_keys_and_no_defaults() -> None:
    schema = json_schema(LineT)
    expected: Any = json_schema(LineA)
    for prop in expected["properties"].values():
        prop.pop("default", None)

    assert expected == schema
    assert ["x"] == json_schema(Point)["required"]


@pytest.mark.parametrize("tp", [LineD, LineT])
def test_a_record_decodes_strictly_listing_every_problem(tp: Any) -> None:
    value = {"sku": "", "quantity": "two", "colour": "red"}

    assert [
        ("colour", "unknown field"),
        ("quantity", "expected an integer"),
        ("sku", "must have at least 1 character"),
    ] == problems(tp, value)
    assert [("sku", "this field is required")] == problems(tp, {"quantity": 2})
    assert [("", "expected an object")] == problems(tp, ["sku"])


def test_records_decode_into_their_own_types_and_encode_back() -> None:
    value: Any = {
        "lines": [{"sku": "a", "quantity": 2}],
        "point": {"x": 1},
        "size": 5,
    }
    order = decode(Order, value)

    assert Order([LineD("a", 2)], {"x": 1}, [], 5) == order
    assert {
        **value,
        "tags": [],
        "lines": [{"sku": "a", "quantity": 2, "note": None}],
    } == (encode(order, Order))
    assert [
        ("lines.0.quantity", "expected an integer"),
        ("size", "must be at least 1"),
    ] == (
        problems(
            Order,
            {"lines": [{"sku": "a", "quantity": None}], "point": {"x": 1}, "size": 0},
        )
    )


class Login(TypedDict):
    user: str
    token: Secret[str]


@dataclasses.dataclass
class Session:
    user: str
    token: Secret[str]


def test_secrets_in_records_are_masked_when_encoded() -> None:
    login = decode(Login, {"user": "ana", "token": "sk-1"})

    assert "sk-1" == login["token"].reveal()
    assert {"user": "ana", "token": "**********"} == encode(login, Login)
    assert {"user": "ana", "token": "**********"} == encode(
        Session("ana", Secret("sk-1")), Session
    )


@tool
def total(order: Order, where: LineT | None = None) -> Point:
    """Count the items of an order.

    Args:
        order: The order.
        where: A line to add.
    """
    extra = where.get("quantity", 0) if where is not None else 0
    return {"x": sum(line.quantity for line in order.lines) + extra}


async def test_a_tool_takes_and_returns_records_over_the_wire() -> None:
    async with McpTestClient(Server("r", "1", tools=[total])) as client:
        listed = await client.list_tools()
        served = await client.call_tool(
            "total",
            {
                "order": {"lines": [{"sku": "a", "quantity": 2}], "point": {"x": 0}},
                "where": {"sku": "b", "quantity": 3},
            },
        )
        refused = await client.call_tool("total", {"order": {"lines": [{}]}})

    spec: Any = wire(listed)[0]
    assert {"type": "object"} == {"type": spec["outputSchema"]["type"]}
    assert ["x"] == spec["outputSchema"]["required"]
    assert {"x": 5} == served.structured
    assert refused.is_error
    assert "- order.lines.0.sku: this field is required" in refused.text
    assert "- order.point: this field is required" in refused.text


@dataclasses.dataclass
class WithInitVar:
    name: str
    seed: dataclasses.InitVar[int]


def test_a_dataclass_with_an_initvar_is_refused_naming_it() -> None:
    with pytest.raises(InvalidDeclaration, match="InitVar"):

        @tool
        def use(value: WithInitVar) -> str:
            """Use it.

            Args:
                value: The value.
            """
            return value.name


@dataclasses.dataclass(eq=False)
class Opaque:
    name: str


@tool
def sessions() -> list[Session | None]:
    """Open sessions."""
    return [Session("ana", Secret("sk-1")), None]


@tool
def opaque() -> Opaque:
    """An opaque value."""
    return Opaque("x")


@tool
def wrong() -> Point:
    """A point that is not one."""
    return {"x": "one"}  # type: ignore[typeddict-item]


async def test_record_replies_are_checked_and_secrets_masked() -> None:
    server = Server("r", "1", tools=[sessions, opaque, wrong])
    async with McpTestClient(server) as client:
        masked = await client.call_tool("sessions")
        plain = await client.call_tool("opaque")
        with pytest.raises(ProtocolError) as info:
            await client.call_tool("wrong")

    assert [{"user": "ana", "token": "**********"}, None] == masked.structured
    assert {"name": "x"} == plain.structured
    assert -32603 == info.value.code


@tool
def echo_token(session: Session) -> str:
    """Echo a session's token, which redaction must mask.

    Args:
        session: The session.
    """
    return f"{session.user} holds {session.token.reveal()}"


@tool
def echo_login(login: Login) -> str:
    """Echo a login's token, which redaction must mask.

    Args:
        login: The login.
    """
    return f"{login['user']} holds {login['token'].reveal()}"


@pytest.mark.parametrize("name", ["echo_token", "echo_login"])
async def test_a_secret_inside_a_record_argument_is_masked_in_the_reply(
    name: str,
) -> None:
    """Trust: a record's secret is registered like an attrs field's."""
    argument = "session" if name == "echo_token" else "login"
    async with McpTestClient(Server("r", "1", tools=[echo_token, echo_login])) as c:
        result = await c.call_tool(name, {argument: {"user": "ana", "token": "sk-9"}})

    assert "sk-9" not in str(result.raw)
    assert "ana holds **********" == result.structured


@dataclasses.dataclass(frozen=True)
class Circle:
    radius: float


@dataclasses.dataclass(frozen=True)
class Square:
    side: int


@dataclasses.dataclass
class Loose:
    name: str


def test_a_union_of_dataclasses_is_tagged_like_attrs_classes() -> None:
    tp = Circle | Square
    schema: Any = json_schema(tp)

    assert ["Circle", "Square"] == [
        next(iter(b["properties"])) for b in schema["oneOf"]
    ]
    assert Square(2) == decode(tp, {"Square": {"side": 2}})
    assert {"Circle": {"radius": 1.5}} == encode(Circle(1.5), tp)
    assert {Circle(1.0)} == decode(set[Circle], [{"radius": 1.0}])
    with pytest.raises(InvalidDeclaration, match="hashable"):

        @tool
        def names(items: set[Loose]) -> int:
            """Count.

            Args:
                items: The items.
            """
            return len(items)
