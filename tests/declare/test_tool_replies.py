"""The return type decides the reply (api.md "Replies"), and failures become results.

Every exchange is validated against the official schema by ``McpTestClient``; the
structured results are also validated against each tool's advertised outputSchema.
"""

from __future__ import annotations

import datetime
import enum
import json
from typing import Annotated, Literal

import attrs
import jsonschema
import pytest
from support import wire

from trio_mcp import (
    AudioContent,
    EmbeddedResource,
    Field,
    ImageContent,
    ResourceLink,
    Server,
    TextContent,
    TextResourceContents,
    ToolError,
    tool,
)
from trio_mcp.testing import McpTestClient, ProtocolError, ToolResult

ERROR_KEY = "dev.trio-mcp/error"


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


@attrs.frozen
class Line:
    sku: str
    quantity: int


@attrs.frozen
class Order:
    id: str
    placed: datetime.datetime
    priority: Priority
    lines: list[Line]
    note: str | None = None
    tags: frozenset[str] = frozenset()


class BillingError(ToolError):
    """A billing failure the model may read."""


@tool
def get_order(order_id: str) -> Order:
    """Fetch an order.

    Args:
        order_id: The order.
    """
    return Order(
        id=order_id,
        placed=datetime.datetime(2026, 7, 28, 12, 30, tzinfo=datetime.UTC),
        priority=Priority.HIGH,
        lines=[Line("A-1", 2), Line("B-7", 1)],
        tags=frozenset({"gift"}),
    )


@tool
def find_order(order_id: str) -> Order | None:
    """Find an order, if there is one.

    Args:
        order_id: The order.
    """
    return None


@tool
def count_words(text: str) -> int:
    """Count the words of a text.

    Args:
        text: The text.
    """
    return len(text.split())


@tool
def forget(order_id: str) -> None:
    """Forget an order.

    Args:
        order_id: The order.
    """


@tool
def banner(text: str) -> TextContent:
    """Render a banner.

    Args:
        text: The banner's text.
    """
    return TextContent(f"*** {text} ***")


@tool
def media() -> list[
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
]:
    """Return one block of every kind."""
    return [
        TextContent("hello"),
        ImageContent(b"\x89PNG", "image/png"),
        AudioContent(b"RIFF", "audio/wav"),
        ResourceLink("notes://today", "today"),
        EmbeddedResource(
            TextResourceContents("notes://today", "buy milk", "text/plain")
        ),
    ]


@tool
def refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: The order.
    """
    try:
        try:
            raise ConnectionError("gateway unreachable")
        except ConnectionError as exc:
            raise ValueError("card network refused") from exc
    except ValueError as exc:
        raise BillingError(f"could not refund {order_id}") from exc


@tool(errors=(BillingError, LookupError))
def charge(order_id: str) -> str:
    """Charge an order.

    Args:
        order_id: The order.
    """
    if order_id == "missing":
        raise KeyError("no such order")
    if order_id == "plain":
        raise ToolError("a plain tool error")
    raise BillingError("card declined")


@tool
def place(
    customer: Annotated[str, Field(min_length=3)],
    quantity: Annotated[int, Field(ge=1, le=10)],
    lines: list[Line],
    mode: Literal["fast", "slow"] = "slow",
) -> str:
    """Place an order.

    Args:
        customer: Who orders.
        quantity: How many.
        lines: What.
        mode: How quickly.
    """
    return "placed"


def make_server() -> Server:
    return Server(
        "replies",
        "1",
        tools=[
            get_order,
            find_order,
            count_words,
            forget,
            banner,
            media,
            refund,
            charge,
            place,
        ],
    )


async def call(name: str, arguments: dict[str, object] | None = None) -> ToolResult:
    async with McpTestClient(make_server()) as client:
        return await client.call_tool(name, arguments)


async def output_schema_of(name: str) -> dict[str, object] | None:
    async with McpTestClient(make_server()) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
    schema: dict[str, object] | None = wire(tools[name].get("outputSchema"))
    return schema


# -- values --------------------------------------------------------------------------


async def test_a_value_becomes_structured_content_and_one_json_text_block() -> None:
    """api.md: R -> structuredContent + one text block with the JSON."""
    result = await call("get_order", {"order_id": "o-1"})

    assert not result.is_error
    assert 1 == len(result.content)
    assert "text" == result.content[0]["type"]
    assert result.structured == json.loads(wire(result.content)[0]["text"])
    assert {
        "id": "o-1",
        "placed": "2026-07-28T12:30:00+00:00",
        "priority": "high",
        "lines": [{"sku": "A-1", "quantity": 2}, {"sku": "B-7", "quantity": 1}],
        "note": None,
        "tags": ["gift"],
    } == result.structured


async def test_structured_content_validates_against_the_advertised_output_schema() -> (
    None
):
    """Spec-mandated (mcp §6.3): structuredContent MUST conform to outputSchema."""
    schema = await output_schema_of("get_order")
    result = await call("get_order", {"order_id": "o-1"})

    assert schema is not None
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.FormatChecker()
    ).validate(result.structured)


async def test_a_scalar_value_is_structured_content_too() -> None:
    """api.md: R may be any supported type, not only objects."""
    schema = await output_schema_of("count_words")
    result = await call("count_words", {"text": "one two three"})

    assert 3 == result.structured
    assert "3" == result.text
    assert {"type": "integer"} == schema


@tool
def shout(text: str) -> str:
    """
    Return the text in capitals.

    Args:
        text: What to shout.
    """
    return text.upper()


@tool
def welcome(name: str | None = None) -> Annotated[str, Field(max_length=80)] | None:
    """
    Welcome someone, or nobody.

    Args:
        name: Whom to welcome.
    """
    return None if name is None else f"# Hello\nWelcome, {name}."


async def test_a_str_value_is_structured_content_and_the_text_itself() -> None:
    """api.md "Replies" (issue 29 item 4): when R is str the text block is the
    string itself, no JSON quotes or escapes; structuredContent stays the string."""
    async with McpTestClient(Server("str", "1", tools=[shout, welcome])) as client:
        tools = await client.list_tools()
        result = await client.call_tool("shout", {"text": 'say "hi"\nthere'})
        markdown = await client.call_tool("welcome", {"name": "Ana"})
        nobody = await client.call_tool("welcome")

    assert {"type": "string"} == tools[0]["outputSchema"]
    assert 'SAY "HI"\nTHERE' == result.structured
    assert [{"type": "text", "text": 'SAY "HI"\nTHERE'}] == result.content
    assert "# Hello\nWelcome, Ana." == markdown.text == markdown.structured
    assert (None, "null") == (nobody.structured, nobody.text)


async def test_an_optional_value_that_is_none_is_structured_content_null() -> None:
    """api.md: R | None returning None -> structuredContent null, not an error."""
    schema = await output_schema_of("find_order")
    result = await call("find_order", {"order_id": "o-404"})

    assert not result.is_error
    assert "structuredContent" in result.raw
    assert result.raw["structuredContent"] is None
    assert schema is not None
    jsonschema.Draft202012Validator(schema).validate(None)


async def test_a_tool_returning_none_has_no_output_schema_and_no_content() -> None:
    """Our choice: -> None means there is nothing to report."""
    schema = await output_schema_of("forget")
    result = await call("forget", {"order_id": "o-1"})

    assert schema is None
    assert [] == result.content
    assert not result.is_error
    assert "structuredContent" not in result.raw


# -- content blocks --------------------------------------------------------------------


async def test_a_content_block_is_sent_as_is_without_an_output_schema() -> None:
    """api.md: Content -> those blocks, no output schema."""
    schema = await output_schema_of("banner")
    result = await call("banner", {"text": "sale"})

    assert schema is None
    assert [{"type": "text", "text": "*** sale ***"}] == result.content
    assert "structuredContent" not in result.raw


async def test_a_list_of_content_blocks_of_every_kind_is_sent_in_order() -> None:
    """api.md: list[Content] -> those blocks; binary data is base64."""
    schema = await output_schema_of("media")
    result = await call("media")

    assert schema is None
    assert ["text", "image", "audio", "resource_link", "resource"] == [
        b["type"] for b in result.content
    ]
    assert "iVBORw==" == result.content[1]["data"]
    assert "image/png" == result.content[1]["mimeType"]
    assert "buy milk" == wire(result.content)[4]["resource"]["text"]


# -- errors for the model --------------------------------------------------------------


async def test_a_tool_error_is_an_error_result_with_its_cause_chain() -> None:
    """api.md: isError with the message chain (__cause__s) and structured detail."""
    result = await call("refund", {"order_id": "o-1"})

    assert result.is_error
    assert [
        "could not refund o-1",
        "caused by: card network refused",
        "caused by: gateway unreachable",
    ] == result.text.splitlines()
    detail = result.meta[ERROR_KEY]
    assert "error" == wire(detail)["kind"]
    assert "BillingError" == wire(detail)["type"]
    assert [
        "could not refund o-1",
        "card network refused",
        "gateway unreachable",
    ] == wire(detail)["messages"]


async def test_an_exception_listed_in_errors_is_an_error_result() -> None:
    """api.md: any exception listed in errors= is for the model, ToolError or not."""
    result = await call("charge", {"order_id": "missing"})

    assert result.is_error
    assert "no such order" in result.text
    assert "KeyError" == wire(result.meta)[ERROR_KEY]["type"]


async def test_a_tool_error_not_listed_in_a_custom_errors_is_an_internal_error() -> (
    None
):
    """api.md: errors= replaces the default (ToolError); anything else is -32603."""
    with pytest.raises(ProtocolError) as info:
        await call("charge", {"order_id": "plain"})

    assert -32603 == info.value.code
    assert "a plain tool error" not in info.value.message


# -- arguments -------------------------------------------------------------------------


async def test_bad_arguments_are_one_error_result_listing_every_input() -> None:
    """api.md: bad arguments -> isError listing every bad input, with paths."""
    secret_ish = "top-secret-value-42"
    result = await call(
        "place",
        {
            "customer": "al",
            "quantity": secret_ish,
            "lines": [{"sku": "A", "quantity": 1}, {"sku": 5, "quantity": "x"}],
            "mode": "warp",
        },
    )

    assert result.is_error
    problems = wire(result.meta)[ERROR_KEY]["problems"]
    paths = {wire(p)["path"] for p in problems}
    assert {"customer", "quantity", "lines.1.sku", "lines.1.quantity", "mode"} <= paths
    assert "invalid_arguments" == wire(result.meta)[ERROR_KEY]["kind"]
    for path in ("customer", "quantity", "lines.1.sku", "lines.1.quantity", "mode"):
        assert f"- {path}: " in result.text
    assert secret_ish not in json.dumps(result.raw)
    assert "warp" not in json.dumps(result.raw)


async def test_a_missing_required_argument_is_listed() -> None:
    """api.md: every bad input is listed, missing ones included."""
    result = await call("place", {"customer": "ana"})

    assert result.is_error
    paths = {wire(p)["path"] for p in wire(result.meta)[ERROR_KEY]["problems"]}
    assert {"quantity", "lines"} <= paths


async def test_an_unknown_argument_is_listed_with_the_others() -> None:
    """api.md: unknown keys are rejected (additionalProperties: false)."""
    result = await call("count_words", {"text": "a b", "language": "en", "tone": "dry"})

    assert result.is_error
    text = result.text
    assert "language" in text
    assert "tone" in text


async def test_missing_arguments_mean_an_empty_object() -> None:
    """Spec: arguments is optional; we read it as {}."""
    result = await call("media", None)
    also_missing = await call("place", None)

    assert not result.is_error
    assert also_missing.is_error
    assert {"customer", "quantity", "lines"} <= {
        wire(p)["path"] for p in wire(also_missing.meta)[ERROR_KEY]["problems"]
    }


async def test_defaults_apply_to_arguments_left_out() -> None:
    """Our choice: a parameter with a default is not required in the schema."""
    result = await call(
        "place",
        {"customer": "ana", "quantity": 1, "lines": [{"sku": "A", "quantity": 1}]},
    )

    assert not result.is_error
    assert "placed" == result.structured
