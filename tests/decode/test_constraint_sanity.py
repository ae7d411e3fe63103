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
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from trio_mcp import (
    DecodeError,
    Field,
    InvalidDeclaration,
    Secret,
    Server,
    decode,
    json_schema,
    tool,
)
from trio_mcp.testing import McpTestClient


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


@pytest.mark.parametrize(
    "tp",
    [
        Annotated[str, at.MinLen(-1)],
        Annotated[str, at.MaxLen(-2)],
        Annotated[list[int], at.Len(-1, 3)],
        Annotated[str, Field(min_length=-1)],
        Annotated[list[int], Field(max_items=-1)],
    ],
)
def test_a_negative_length_is_refused(tp: object) -> None:
    message = refusal(tp)

    assert "parameter 'v'" in message
    assert "-1" in message or "-2" in message
    assert "negative" in message


@pytest.mark.parametrize(
    ("tp", "bounds"),
    [
        (Annotated[int, at.Ge(5), at.Le(1)], ("ge=5", "le=1")),
        (Annotated[float, at.Gt(1), at.Lt(1)], ("gt=1", "lt=1")),
        (Annotated[float, at.Ge(1), at.Lt(1)], ("ge=1", "lt=1")),
        (Annotated[int, Field(gt=3, le=3)], ("gt=3", "le=3")),
        (Annotated[str, at.Len(2, 1)], ("min_length=2", "max_length=1")),
        (Annotated[str, Field(min_length=3, max_length=2)], ("min_length=3",)),
        (Annotated[list[int], at.MinLen(4), at.MaxLen(1)], ("min_items=4",)),
    ],
)
def test_bounds_that_admit_no_value_are_refused_naming_them(
    tp: object, bounds: tuple[str, ...]
) -> None:
    message = refusal(tp)

    assert "parameter 'v'" in message
    for bound in bounds:
        assert bound in message


@attrs.frozen
class ContradictoryAttrs:
    x: int = attrs.field(validator=[attrs.validators.ge(5), attrs.validators.le(1)])


def test_contradictory_attrs_validators_are_refused_naming_the_field() -> None:
    message = refusal(ContradictoryAttrs)

    assert "parameter 'v' at 'x'" in message
    assert "ge=5" in message
    assert "le=1" in message


@pytest.mark.parametrize(
    "tp",
    [
        Annotated[int, at.Ge(1), at.Le(1)],
        Annotated[str, at.Len(0, 0)],
        Annotated[float, at.Gt(0), at.Le(0.5)],
    ],
)
def test_bounds_that_admit_a_value_are_accepted(tp: object) -> None:
    declare(tp)


@dataclasses.dataclass
class Order:
    quantity: int
    code: Secret[str]

    def __post_init__(self) -> None:
        if self.quantity < 0:
            raise ValueError("quantity must not be negative")
        if self.quantity > 1000:
            raise ValueError(f"quantity {self.quantity} is too many")
        if not self.code.reveal().startswith("OK"):
            raise ValueError(f"code {self.code.reveal()} is not a known code")


@tool
def place(order: Order) -> str:
    """Place an order.

    Args:
        order: The order.
    """
    return "placed"


async def test_a_post_init_refusal_reaches_the_caller_without_the_value() -> None:
    async with McpTestClient(Server("o", "1", tools=[place])) as client:
        negative = await client.call_tool(
            "place", {"order": {"quantity": -1, "code": "OK1"}}
        )
        unknown = await client.call_tool(
            "place", {"order": {"quantity": 1, "code": "hunter2"}}
        )
        many = await client.call_tool(
            "place", {"order": {"quantity": 5000, "code": "OK1"}}
        )
        placed = await client.call_tool(
            "place", {"order": {"quantity": 1, "code": "OK1"}}
        )

    assert negative.is_error
    assert "order: quantity must not be negative" in negative.text
    assert unknown.is_error
    assert "hunter2" not in unknown.text
    assert "order: is not valid" in unknown.text
    assert "5000" not in many.text
    assert "order: is not valid" in many.text
    assert "placed" == placed.structured


_BOUND = st.one_of(
    st.integers(-5, 5), st.floats(-5, 5, allow_nan=False, allow_infinity=False)
)


@given(
    lower=st.sampled_from(["ge", "gt"]),
    upper=st.sampled_from(["le", "lt"]),
    low=_BOUND,
    high=_BOUND,
)
@settings(max_examples=150, deadline=None)
def test_two_bounds_are_refused_exactly_when_no_number_fits(
    lower: str, upper: str, low: float, high: float
) -> None:
    tp = Annotated[float, Field(**{lower: low, upper: high})]
    fits = low < high or (low == high and (lower, upper) == ("ge", "le"))

    if not fits:
        with pytest.raises(TypeError, match="admit no value"):
            json_schema(tp)
        return
    middle = (low + high) / 2
    # Between two neighbouring subnormals (0 and 5e-324) the mean rounds to an end.
    assume(low == high or low < middle < high)
    assert middle == decode(tp, middle)


@dataclasses.dataclass
class Coded:
    code: str

    def __post_init__(self) -> None:
        raise ValueError(f"code {self.code!r} is refused")


@given(st.text(min_size=1))
@settings(max_examples=100, deadline=None)
def test_a_post_init_message_never_quotes_what_was_sent(code: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(Coded, {"code": code})

    assert [("", "is not valid")] == [
        (p.path, p.message) for p in caught.value.problems
    ]
