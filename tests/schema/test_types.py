"""The type table: each supported type's JSON Schema, and what is refused."""

from __future__ import annotations

import datetime
import enum
import inspect
import uuid
from typing import Annotated, Any, Literal, NewType, Optional

import attrs
import pytest
from jsonschema import Draft202012Validator
from support.values import Circle, Square

from trio_mcp._authority import Secret
from trio_mcp._schema import Field, UnsupportedType, json_schema

UserId = NewType("UserId", int)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@attrs.frozen
class Address:
    street: str
    zip: str = "00000"


@attrs.define
class Node:
    children: list[Node]


@attrs.define
class Holder:
    payload: bytes


class Plain:
    pass


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (tuple[str, ...], {"type": "array", "items": {"type": "string"}}),
        (
            set[str],
            {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        ),
        (
            frozenset[int],
            {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        ),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (
            dict[str, float],
            {"type": "object", "additionalProperties": {"type": "number"}},
        ),
        (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (Optional[str], {"anyOf": [{"type": "string"}, {"type": "null"}]}),  # noqa: UP045
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, "a"], {"enum": [1, "a"]}),
        (Color, {"type": "string", "enum": ["red", "blue"]}),
        (Level, {"type": "integer", "enum": [1, 2]}),
        (UserId, {"type": "integer"}),
        (datetime.datetime, {"type": "string", "format": "date-time"}),
        (datetime.date, {"type": "string", "format": "date"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (Secret[str], {"type": "string", "writeOnly": True}),
        (
            Annotated[int, Field(ge=1, le=100)],
            {"type": "integer", "minimum": 1, "maximum": 100},
        ),
        (
            Annotated[float, Field(gt=0, lt=1, description="a share")],
            {
                "type": "number",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1,
                "description": "a share",
            },
        ),
        (
            Annotated[str, Field(min_length=1, max_length=5, pattern="^[a-z]+$")],
            {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
        ),
        (
            Annotated[list[int], Field(min_items=1, max_items=3)],
            {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 1,
                "maxItems": 3,
            },
        ),
        (
            Annotated[str, Field(json_schema={"format": "email", "examples": ["a@b"]})],
            {"type": "string", "format": "email", "examples": ["a@b"]},
        ),
    ],
)
def test_each_row_of_the_table_has_its_schema(tp: object, expected: object) -> None:
    schema = json_schema(tp)

    assert expected == schema
    Draft202012Validator.check_schema(schema)


def test_attrs_class_is_a_closed_object_with_required_fields() -> None:
    expected = {
        "type": "object",
        "properties": {
            "street": {"type": "string"},
            "zip": {"type": "string", "default": "00000"},
        },
        "required": ["street"],
        "additionalProperties": False,
    }

    assert expected == json_schema(Address)


def test_nested_attrs_classes_are_inlined() -> None:
    @attrs.define
    class Order:
        to: Address
        tags: list[str] = attrs.Factory(list)

    schema = json_schema(Order)

    assert json_schema(Address) == schema["properties"]["to"]  # type: ignore[index,call-overload]
    assert "$ref" not in str(schema)
    assert schema["required"] == ["to"]


def test_union_of_attrs_classes_is_tagged_one_of() -> None:
    expected = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"Circle": json_schema(Circle)},
                "required": ["Circle"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"Square": json_schema(Square)},
                "required": ["Square"],
                "additionalProperties": False,
            },
        ]
    }

    assert expected == json_schema(Circle | Square)


def test_attrs_field_metadata_adds_constraints() -> None:
    @attrs.define
    class Page:
        size: int = attrs.field(
            default=10, metadata={"trio_mcp": Field(ge=1, description="Per page")}
        )

    expected = {
        "type": "integer",
        "minimum": 1,
        "description": "Per page",
        "default": 10,
    }

    assert expected == json_schema(Page)["properties"]["size"]  # type: ignore[index,call-overload]


def test_secret_field_never_shows_its_default() -> None:
    @attrs.define
    class Login:
        token: Secret[str] = attrs.field(default=Secret("hunter2"))

    expected = {"type": "string", "writeOnly": True}

    assert expected == json_schema(Login)["properties"]["token"]  # type: ignore[index,call-overload]


def test_schema_is_a_fresh_copy_each_time() -> None:
    first = json_schema(Address)
    first["type"] = "changed"

    assert json_schema(Address)["type"] == "object"


@pytest.mark.parametrize(
    ("tp", "where", "start"),
    [
        (bytes, "", "bytes is not supported: use str"),
        (Any, "", "Any is not supported"),
        (object, "", "object is not supported"),
        (inspect.Parameter.empty, "", "an untyped value is not supported"),
        (Plain, "", "Plain is not supported"),
        (list[bytes], "items", "bytes is not supported at items"),
        (dict[str, list[bytes]], "values.items", "bytes is not supported"),
        (dict[int, str], "", "dict[int, str] is not supported"),
        (int | str, "", "int | str is not supported"),
        (Holder, "payload", "bytes is not supported at payload"),
        (list[Holder], "items.payload", "bytes is not supported"),
        (Node, "children.items", "Node is not supported"),
        (Secret[int], "", "Secret[int] is not supported: use Secret[str]"),
        (list, "", "list is not supported"),
        (Annotated[int, Field(min_length=1)], "", "min_length on int is not supported"),
        (Annotated[str, Field(pattern="(")], "", "the pattern is not supported"),
    ],
)
def test_unsupported_types_name_the_place(tp: object, where: str, start: str) -> None:
    with pytest.raises(UnsupportedType) as caught:
        json_schema(tp)

    assert where == caught.value.where
    assert str(caught.value).startswith(start)
    assert caught.value.reason


def test_unsupported_type_is_a_type_error() -> None:
    assert issubclass(UnsupportedType, TypeError)


def test_a_passthrough_cannot_give_a_secret_an_example() -> None:
    tp = Annotated[
        Secret[str], Field(json_schema={"examples": ["pw"], "default": "pw"})
    ]

    assert {"type": "string", "writeOnly": True} == json_schema(tp)


def test_defaults_json_cannot_show_are_left_out() -> None:
    @attrs.define
    class Tuning:
        ratio: float = float("nan")
        mode: Color = Color.BLUE
        flag: bool = True

    properties = json_schema(Tuning)["properties"]

    assert {"type": "number"} == properties["ratio"]  # type: ignore[index,call-overload]
    assert "blue" == properties["mode"]["default"]  # type: ignore[index,call-overload]
    assert properties["flag"]["default"] is True  # type: ignore[index,call-overload]


def test_reordered_equal_types_keep_their_own_order() -> None:
    first = json_schema(Literal["x", 2])
    second = json_schema(Literal[2, "x"])

    assert (["x", 2], [2, "x"]) == (first["enum"], second["enum"])
