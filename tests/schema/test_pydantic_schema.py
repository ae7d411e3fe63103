"""pydantic models and ``pydantic.Field(...)`` in the type table (api.md "Where Python
users already are", issue 35): the schema comes from the model, flat, closed and
self-contained like every schema trio_mcp lists."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Generic, Literal, TypeVar

import attrs
import pydantic
import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, RootModel

from trio_mcp import Secret
from trio_mcp import json_schema as _json_schema
from trio_mcp._schema import UnsupportedType

T = TypeVar("T")


class Filter(BaseModel):
    """One condition on a ticket."""

    name: str = pydantic.Field(min_length=1, description="The field to compare.")
    value: str = pydantic.Field(pattern="^[a-z]+$")


class Query(BaseModel):
    filters: list[Filter] = []
    limit: int = pydantic.Field(20, ge=1, le=100, title="Most results")
    status: Literal["open", "closed"] | None = None
    primary: Filter | None = pydantic.Field(None, description="The first condition.")


class Forbidding(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


class Allowing(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int


class Node(BaseModel):
    label: str
    children: list[Node] = []


class Holder(BaseModel):
    inner: Node


class Credentials(BaseModel):
    user: str
    token: Secret[str] = Secret("default-token")


class PydanticSecret(BaseModel):
    user: str
    token: pydantic.SecretStr


class DeepPydanticSecret(BaseModel):
    items: list[dict[str, PydanticSecret]]


class Page(BaseModel, Generic[T]):
    items: list[T]


@attrs.frozen
class Envelope:
    query: Query
    by_name: dict[str, Filter] = attrs.Factory(dict)


def json_schema(tp: object) -> Any:
    """The listed schema, for free indexing in asserts (a wrong guess fails anyway)."""
    return _json_schema(tp)


def walk(schema: object) -> Iterator[dict[str, Any]]:
    """Every subschema (dict) of a schema, data values included."""
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from walk(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from walk(item)


def test_the_schema_comes_from_the_model() -> None:
    schema = json_schema(Query)
    filters = schema["properties"]["filters"]["items"]
    limit = schema["properties"]["limit"]

    assert "One condition on a ticket." == filters["description"]
    assert {"description": "The field to compare.", "minLength": 1} == {
        k: filters["properties"]["name"][k] for k in ("description", "minLength")
    }
    assert "^[a-z]+$" == filters["properties"]["value"]["pattern"]
    assert {"minimum": 1, "maximum": 100, "default": 20} == {
        k: limit[k] for k in ("minimum", "maximum", "default")
    }
    assert "Most results" == limit["title"]
    assert ["name", "value"] == filters["required"]
    assert "required" not in schema
    assert "The first condition." == schema["properties"]["primary"]["description"]
    Draft202012Validator.check_schema(schema)


def test_the_schema_is_flat_and_self_contained() -> None:
    text = json.dumps(json_schema(Envelope))

    assert "$ref" not in text
    assert "$defs" not in text


def test_every_object_of_a_model_is_closed_unless_it_allows_extra_keys() -> None:
    objects = [s for s in walk(json_schema(Envelope)) if "properties" in s]

    assert len(objects) >= 4
    assert all(s["additionalProperties"] is False for s in objects)
    assert False is json_schema(Forbidding)["additionalProperties"]
    assert True is json_schema(Allowing)["additionalProperties"]


def test_generated_property_titles_are_left_out_and_given_ones_kept() -> None:
    schema = json_schema(Query)

    assert "title" not in schema["properties"]["filters"]
    assert "Most results" == schema["properties"]["limit"]["title"]
    assert "Query" == schema["title"]


def assert_refused(tp: object, what: str, where: str, reason: str) -> None:
    """``json_schema(tp)`` refuses ``what`` at ``where``, its reason saying ``reason``."""
    with pytest.raises(UnsupportedType) as caught:
        json_schema(tp)

    assert (what, where) == (caught.value.what, caught.value.where)
    assert reason in caught.value.reason


@pytest.mark.parametrize(
    ("tp", "where"),
    [(Node, "children.items"), (list[Holder], "items.inner.children.items")],
)
def test_a_model_that_contains_itself_is_refused_at_its_path(
    tp: object, where: str
) -> None:
    assert_refused(tp, "Node", where, "cannot contain itself")


def test_a_secret_in_a_model_is_write_only_without_its_default() -> None:
    token = json_schema(Credentials)["properties"]["token"]

    assert {"type": "string", "writeOnly": True} == token


@pytest.mark.parametrize(
    ("model", "where"),
    [(PydanticSecret, "token"), (DeepPydanticSecret, "items.token")],
)
def test_pydantic_secret_types_are_refused_for_trio_mcp_secret(
    model: type, where: str
) -> None:
    assert_refused(model, "pydantic.SecretStr", where, "trio_mcp.Secret[str]")


def test_a_secret_of_another_type_fails_when_the_model_is_defined() -> None:
    with pytest.raises(TypeError, match=r"use Secret\[str\]"):

        class Numbered(BaseModel):
            pin: Secret[int]


def test_models_nest_in_containers_and_attrs_classes() -> None:
    schema = json_schema(dict[str, list[Envelope | None]])
    envelope = schema["additionalProperties"]["items"]["anyOf"][0]

    assert ["query"] == envelope["required"]
    assert "Query" == envelope["properties"]["query"]["title"]
    assert (
        "Filter" == envelope["properties"]["by_name"]["additionalProperties"]["title"]
    )


def test_a_union_of_models_is_tagged() -> None:
    schema = json_schema(Filter | Forbidding)

    assert [["Filter"], ["Forbidding"]] == [b["required"] for b in schema["oneOf"]]


def test_a_generic_model_needs_its_parameters() -> None:
    with pytest.raises(UnsupportedType, match="non-generic"):
        json_schema(Page)

    assert "integer" == json_schema(Page[int])["properties"]["items"]["items"]["type"]


def test_a_root_model_is_its_root_type() -> None:
    class Tags(RootModel[list[str]]):
        pass

    assert {"type": "array", "items": {"type": "string"}} == {
        k: v for k, v in json_schema(Tags).items() if k != "title"
    }


def test_a_model_pydantic_cannot_describe_is_refused_naming_it() -> None:
    class Callback(BaseModel):
        run: Callable[[], None]

    with pytest.raises(UnsupportedType) as caught:
        json_schema(Callback)

    assert "Callback" == caught.value.what
    assert "pydantic cannot give its JSON Schema" in caught.value.reason


def test_a_pydantic_field_on_a_plain_type_gives_constraints_and_description() -> None:
    tp = Annotated[
        int,
        pydantic.Field(
            ge=1, lt=10, multiple_of=3, description="Stars", title="S", examples=[3]
        ),
    ]

    assert {
        "type": "integer",
        "minimum": 1,
        "exclusiveMaximum": 10,
        "multipleOf": 3,
        "description": "Stars",
        "title": "S",
        "examples": [3],
    } == json_schema(tp)
    assert {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^a"} == (
        json_schema(
            Annotated[str, pydantic.Field(min_length=2, max_length=4, pattern="^a")]
        )
    )


def test_a_pydantic_field_applies_to_lists_and_extra_keywords() -> None:
    tp = Annotated[
        list[str], pydantic.Field(min_length=1, json_schema_extra={"x-kind": "tags"})
    ]

    assert {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "x-kind": "tags",
    } == json_schema(tp)


@pytest.mark.parametrize(
    ("field", "named"),
    [
        (pydantic.Field(alias="n"), "alias=..."),
        (pydantic.Field(validation_alias="n"), "validation_alias=..."),
        (pydantic.Field(default=1), "default=..."),
        (pydantic.Field(default_factory=int), "default_factory=..."),
        (pydantic.Field(strict=True), "strict=..."),
        (pydantic.Field(allow_inf_nan=False), "allow_inf_nan=..."),
        (pydantic.Field(json_schema_extra=lambda s: None), "json_schema_extra="),
        (pydantic.Field(discriminator="kind"), "discriminator=..."),
        (pydantic.Field(pattern="^a"), "pattern"),  # on an int
    ],
)
def test_what_a_pydantic_field_sets_beyond_that_is_refused_by_name(
    field: object, named: str
) -> None:
    with pytest.raises(UnsupportedType) as caught:
        json_schema(Annotated[int, field])

    assert named in str(caught.value)


def test_an_older_pydantic_is_named_with_the_version_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Fresh(BaseModel):  # not cached by an earlier walk
        a: int

    monkeypatch.setattr(pydantic, "VERSION", "2.11.7")

    with pytest.raises(UnsupportedType) as caught:
        json_schema(Fresh)

    assert "pydantic 2.11.7 is installed; trio_mcp needs pydantic 2.12 or newer" in str(
        caught.value
    )
