"""Constraints are shown in the schema and enforced by decoding, with fixed messages."""

from __future__ import annotations

import re
from typing import Annotated, Any

import attrs
import pytest
from decoding import problems

from trio_mcp._decode import decode
from trio_mcp._errors import DecodeError
from trio_mcp._schema import Field, described, json_schema


@pytest.mark.parametrize(
    ("field", "base", "value", "messages"),
    [
        (Field(ge=1), int, 0, ["must be at least 1"]),
        (Field(le=100), int, 101, ["must be at most 100"]),
        (Field(gt=0), float, 0, ["must be greater than 0"]),
        (Field(lt=1.5), float, 1.5, ["must be less than 1.5"]),
        (Field(min_length=2), str, "a", ["must have at least 2 characters"]),
        (Field(max_length=1), str, "ab", ["must have at most 1 character"]),
        (Field(pattern="^[a-z]+$"), str, "A1", ["must match the pattern ^[a-z]+$"]),
        (Field(min_items=2), list[int], [1], ["must have at least 2 items"]),
        (Field(max_items=3), set[int], [1, 2, 3, 4], ["must have at most 3 items"]),
        (
            Field(min_length=3, pattern="^b"),
            str,
            "a",
            ["must have at least 3 characters", "must match the pattern ^b"],
        ),
    ],
)
def test_each_constraint_is_enforced(
    field: Field, base: object, value: object, messages: list[str]
) -> None:
    tp = Annotated[base, field]  # type: ignore[valid-type]

    assert [("", m) for m in messages] == problems(tp, value)


def test_pattern_searches_like_json_schema() -> None:
    tp = Annotated[str, Field(pattern="[0-9]")]

    assert decode(tp, "abc1def") == "abc1def"


def test_values_within_bounds_decode() -> None:
    tp = Annotated[int, Field(ge=1, le=3)]

    assert [1, 3] == [decode(tp, 1), decode(tp, 3)]


def test_constraints_apply_inside_containers_and_optionals() -> None:
    tp = list[Annotated[int, Field(ge=0)] | None]

    assert [("1", "must be at least 0")] == problems(tp, [None, -1])


def test_attrs_metadata_field_is_enforced() -> None:
    @attrs.define
    class Page:
        size: int = attrs.field(default=10, metadata={"trio_mcp": Field(ge=1)})

    assert [("size", "must be at least 1")] == problems(Page, {"size": 0})


def test_attrs_builtin_validators_become_keywords() -> None:
    @attrs.define
    class Box:
        width: int = attrs.field(validator=[attrs.validators.ge(1)])
        label: str = attrs.field(validator=attrs.validators.max_len(3))
        tags: list[str] = attrs.field(validator=attrs.validators.min_len(1))

    expected = {
        "width": {"type": "integer", "minimum": 1},
        "label": {"type": "string", "maxLength": 3},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    }

    assert expected == json_schema(Box)["properties"]
    assert [
        ("width", "must be at least 1"),
        ("label", "must have at most 3 characters"),
        ("tags", "must have at least 1 item"),
    ] == problems(Box, {"width": 0, "label": "long", "tags": []})


@described("must be an even number")
def _even(_instance: object, _attribute: object, value: int) -> None:
    if value % 2:
        msg = f"{value} is odd"
        raise ValueError(msg)


def _known_region(_instance: object, _attribute: object, value: str) -> None:
    """Must be a known region code.

    More text that is not shown.
    """
    if value not in {"eu", "us"}:
        msg = f"unknown region {value}"
        raise ValueError(msg)


@attrs.define
class Shipment:
    count: int = attrs.field(validator=_even)
    region: str = attrs.field(
        default="eu",
        validator=_known_region,
        metadata={"trio_mcp": Field(description="Where it goes")},
    )


def test_described_validators_are_appended_to_the_description() -> None:
    properties = json_schema(Shipment)["properties"]

    assert {"type": "integer", "description": "must be an even number"} == (
        properties["count"]  # type: ignore[index,call-overload]
    )
    assert (
        "Where it goes (Must be a known region code.)"
        == (
            properties["region"]["description"]  # type: ignore[index,call-overload]
        )
    )


def test_failing_validators_are_all_reported_with_their_message() -> None:
    expected = [
        ("count", "must be an even number"),
        ("region", "Must be a known region code."),
    ]

    assert expected == problems(Shipment, {"count": 3, "region": "mars"})


def test_validator_failure_never_shows_the_exception_text() -> None:
    with pytest.raises(DecodeError) as caught:
        decode(Shipment, {"count": 12345677})

    assert "12345677" not in str(caught.value)


def test_passing_validators_construct_the_object() -> None:
    assert Shipment(4, "us") == decode(Shipment, {"count": 4, "region": "us"})


def test_validator_without_a_message_names_the_check() -> None:
    """Issue 24 class 7: an undocumented validator is described by its name."""

    def anonymous(_i: object, _a: object, value: int) -> None:
        if value < 0:
            raise ValueError

    @attrs.define
    class Thing:
        n: int = attrs.field(validator=anonymous)

    assert [("n", "must pass the check 'anonymous'")] == problems(Thing, {"n": -1})
    assert (
        "must pass the check 'anonymous'"
        == (
            json_schema(Thing)["properties"]["n"]["description"]  # type: ignore[index,call-overload]
        )
    )


def test_nested_validator_failure_has_the_full_path() -> None:
    @attrs.define
    class Order:
        shipments: list[Shipment]

    value = {"shipments": [{"count": 2}, {"count": 1}]}

    assert [("shipments.1.count", "must be an even number")] == problems(Order, value)


def _undocumented(_i: object, _a: object, value: int) -> None:
    if value < 0:
        raise ValueError


@attrs.define
class Account:
    code: str = attrs.field(validator=attrs.validators.matches_re(r"[A-Z]{2}[0-9]+"))
    prefix: str = attrs.field(
        default="ab", validator=attrs.validators.matches_re("ab", func=re.match)
    )
    word: str = attrs.field(
        default="x1", validator=attrs.validators.matches_re("[0-9]", func=re.search)
    )
    region: str = attrs.field(
        default="eu", validator=attrs.validators.in_(["eu", "us"])
    )
    level: int = attrs.field(default=1, validator=attrs.validators.in_((1, 2, 3)))
    count: int = attrs.field(default=0, validator=_undocumented)
    folded: str = attrs.field(
        default="A", validator=attrs.validators.matches_re("a", flags=re.IGNORECASE)
    )


def test_matches_re_and_in_are_projected_into_the_schema() -> None:
    """Issue 24 class 7: attrs validators JSON Schema can express are shown."""
    properties: Any = json_schema(Account)["properties"]

    assert {"type": "string", "pattern": "^(?:[A-Z]{2}[0-9]+)$"} == properties["code"]
    assert "^(?:ab)" == properties["prefix"]["pattern"]
    assert "[0-9]" == properties["word"]["pattern"]
    assert ["eu", "us"] == properties["region"]["enum"]
    assert [1, 2, 3] == properties["level"]["enum"]


def test_a_validator_the_schema_cannot_show_is_described_even_undocumented() -> None:
    properties: Any = json_schema(Account)["properties"]

    assert "must pass the check '_undocumented'" == properties["count"]["description"]
    assert "pattern" not in properties["folded"]
    assert "matches_re" in properties["folded"]["description"]


def test_projected_validators_are_enforced_with_the_schemas_words() -> None:
    value = {"code": "x", "prefix": "cab", "word": "xy", "region": "mars", "level": 4}

    assert [
        ("code", "must match the pattern ^(?:[A-Z]{2}[0-9]+)$"),
        ("prefix", "must match the pattern ^(?:ab)"),
        ("word", "must match the pattern [0-9]"),
        ("region", 'must be one of: "eu", "us"'),
        ("level", "must be one of: 1, 2, 3"),
    ] == problems(Account, value)
    assert [("count", "must pass the check '_undocumented'")] == problems(
        Account, {"code": "AB1", "count": -1}
    )
