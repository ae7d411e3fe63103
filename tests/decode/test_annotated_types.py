"""annotated-types constraints are honoured in schema and decoding; other constraint
metadata is refused by name (api.md "Types in signatures", issue 29 item 5)."""

from __future__ import annotations

from typing import Annotated, Any

import annotated_types as at
import pydantic
import pytest
from decoding import problems
from support import wire

from trio_mcp import InvalidDeclaration, Server, decode, json_schema, tool
from trio_mcp.testing import McpTestClient


@pytest.mark.parametrize(
    ("tp", "keywords", "bad", "message"),
    [
        (
            Annotated[int, at.Gt(1)],
            {"exclusiveMinimum": 1},
            1,
            "must be greater than 1",
        ),
        (Annotated[int, at.Ge(1)], {"minimum": 1}, 0, "must be at least 1"),
        (
            Annotated[float, at.Lt(2.5)],
            {"exclusiveMaximum": 2.5},
            2.5,
            "must be less than 2.5",
        ),
        (Annotated[int, at.Le(5)], {"maximum": 5}, 6, "must be at most 5"),
        (
            Annotated[int, at.MultipleOf(3)],
            {"multipleOf": 3},
            4,
            "must be a multiple of 3",
        ),
        (
            Annotated[str, at.MinLen(2)],
            {"minLength": 2},
            "a",
            "must have at least 2 characters",
        ),
        (
            Annotated[str, at.MaxLen(1)],
            {"maxLength": 1},
            "ab",
            "must have at most 1 character",
        ),
        (
            Annotated[list[int], at.MinLen(1)],
            {"minItems": 1},
            [],
            "must have at least 1 item",
        ),
        (
            Annotated[list[int], at.MaxLen(1)],
            {"maxItems": 1},
            [1, 2],
            "must have at most 1 item",
        ),
        (
            Annotated[str, at.Len(2, 3)],
            {"minLength": 2, "maxLength": 3},
            "abcd",
            "must have at most 3 characters",
        ),
        (
            Annotated[int, at.Interval(gt=0, le=10)],
            {"exclusiveMinimum": 0, "maximum": 10},
            0,
            "must be greater than 0",
        ),
    ],
)
def test_each_annotated_types_constraint_is_shown_and_enforced(
    tp: object, keywords: dict[str, object], bad: object, message: str
) -> None:
    schema = json_schema(tp)

    assert keywords == {k: v for k, v in schema.items() if k in keywords}
    assert [("", message)] == problems(tp, bad)


def test_constraints_combine_with_field_and_each_other() -> None:
    from trio_mcp import Field

    tp = Annotated[int, at.Ge(0), Field(description="How many"), at.Lt(10)]

    assert {
        "type": "integer",
        "minimum": 0,
        "exclusiveMaximum": 10,
        "description": "How many",
    } == json_schema(tp)
    assert 9 == decode(tp, 9)


@tool
def rate(stars: Annotated[int, at.Ge(1), at.Le(5)]) -> int:
    """Rate something.

    Args:
        stars: From 1 to 5.
    """
    return stars


async def test_a_tool_enforces_annotated_types_over_the_wire() -> None:
    async with McpTestClient(Server("r", "1", tools=[rate])) as client:
        tools = await client.list_tools()
        refused = await client.call_tool("rate", {"stars": -3})
        served = await client.call_tool("rate", {"stars": 4})

    stars: Any = wire(tools)[0]["inputSchema"]["properties"]["stars"]
    assert (1, 5) == (stars["minimum"], stars["maximum"])
    assert refused.is_error
    assert "- stars: must be at least 1" in refused.text
    assert 4 == served.structured


@pytest.mark.parametrize(
    ("metadata", "named"),
    [
        (pydantic.Field(ge=1, alias="count"), "pydantic.Field(alias=...)"),
        (pydantic.Field(strict=True), "pydantic.Field(strict=...)"),
        (pydantic.Field(max_digits=3), "pydantic.Field(max_digits=...)"),
        (pydantic.Field(default=3), "pydantic.Field(default=...)"),
        (at.Predicate(str.islower), "annotated_types.Predicate"),
        (at.Timezone(None), "annotated_types.Timezone"),
        (lambda v: v > 0, "function"),
        ("positive", "str"),
        (at.Gt("a"), "annotated_types.Gt"),
    ],
)
def test_constraint_metadata_that_cannot_be_honoured_is_refused_by_name(
    metadata: object, named: str
) -> None:
    def pick(n):  # type: ignore[no-untyped-def]
        """Pick one.

        Args:
            n: Which.
        """
        return n

    pick.__annotations__ = {"n": Annotated[int, metadata], "return": int}

    with pytest.raises(InvalidDeclaration) as info:
        tool(pick)

    assert "parameter 'n'" in str(info.value)
    assert named in str(info.value)
    assert "Field(" in str(info.value)
