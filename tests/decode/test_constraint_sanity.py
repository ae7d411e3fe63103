"""Constraint metadata is honoured or refused by name, never dropped, and never
contradicts itself (api.md "Types in signatures"; issue 29 item 5, the review's
follow-ups): a non-Field under ``metadata={"trio_mcp": ...}`` of an attrs field or
dataclass field, annotated-types predicates, negative lengths, bounds that admit no
value; and a dataclass ``__post_init__`` refusal reaches the caller."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import annotated_types as at
import attrs
import pydantic
import pytest

from trio_mcp import InvalidDeclaration, Server, tool


def declare(tp: object) -> None:
    """Declare a tool with one parameter ``v: tp`` and serve it."""

    def pick(v):  # type: ignore[no-untyped-def]
        """Pick one.

        Args:
            v: Which.
        """
        return "ok"

    pick.__annotations__ = {"v": tp, "return": str}
    Server("s", "1", tools=[tool(pick)])


def refusal(tp: object) -> str:
    with pytest.raises(InvalidDeclaration) as info:
        declare(tp)
    return str(info.value)


@attrs.frozen
class PydanticInAttrs:
    x: int = attrs.field(metadata={"trio_mcp": pydantic.Field(ge=1)})


@attrs.frozen
class BoundInAttrs:
    x: int = attrs.field(metadata={"trio_mcp": at.Ge(1)})


@attrs.frozen
class TextInAttrs:
    x: int = attrs.field(metadata={"trio_mcp": "positive"})


@dataclasses.dataclass
class PydanticInDataclass:
    x: int = dataclasses.field(metadata={"trio_mcp": pydantic.Field(ge=1)})


@pytest.mark.parametrize(
    ("cls", "named"),
    [
        (PydanticInAttrs, "pydantic.fields.FieldInfo"),
        (BoundInAttrs, "annotated_types.Ge"),
        (TextInAttrs, "str"),
        (PydanticInDataclass, "pydantic.fields.FieldInfo"),
    ],
)
def test_what_field_metadata_holds_besides_a_field_is_refused_by_name(
    cls: type, named: str
) -> None:
    message = refusal(cls)

    assert "parameter 'v' at 'x'" in message
    assert "metadata['trio_mcp']" in message
    assert named in message
    assert "trio_mcp.Field(" in message


def test_an_annotated_types_predicate_alias_is_named() -> None:
    message = refusal(Annotated[str, at.LowerCase])

    assert "annotated_types.LowerCase" in message
    assert "_AnnotatedAlias" not in message
