"""The property tying the layers: decode accepts exactly what the schema accepts.

For a set of representative types, Hypothesis draws JSON values near each type's
shape (right keys, wrong leaves, missing and extra keys, boundary numbers) and
arbitrary JSON; ``decode`` must succeed exactly when a JSON Schema validator
accepts the value against ``json_schema(tp)``.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import math
import uuid
from typing import (
    Annotated,
    Literal,
    NotRequired,
    Required,
    TypedDict,
    get_args,
    get_origin,
)

import annotated_types as at
import attrs
import pydantic
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from trio_mcp._decode import decode
from trio_mcp._errors import DecodeError
from trio_mcp._schema import Field, is_model, is_record, json_schema, record_fields

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 12)
    | st.sampled_from([0.0, 1.0, 2.5, -1.0, 1e300])
    # What JSON parsers make of 1e400 and -1e400, and an integer beyond a double.
    | st.sampled_from([math.inf, -math.inf, 10**400])
    | st.text(alphabet="abAB1 ", max_size=6)
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet="abxyz", max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


class Kind(enum.Enum):
    A = "a"
    B = 2


@attrs.frozen
class Item:
    name: Annotated[str, Field(min_length=1, max_length=5, pattern="^[a-z]")]
    qty: Annotated[int, Field(ge=0, lt=10)] = 0
    tags: frozenset[str] = frozenset()


@attrs.define
class Circle:
    radius: float = attrs.field(metadata={"trio_mcp": Field(gt=0)})


@attrs.define
class Square:
    side: int


@attrs.define
class Order:
    items: list[Item]
    prices: dict[str, float] = attrs.Factory(dict)
    kind: Kind = Kind.A
    note: str | None = None
    mode: Literal["x", "y", 1] = "x"
    pair: tuple[int, bool] | None = None
    shape: Circle | Square | None = None
    day: datetime.date | None = None


@dataclasses.dataclass
class Parcel:
    label: Annotated[str, Field(max_length=3)]
    weight: float = dataclasses.field(default=1.0, metadata={"trio_mcp": Field(gt=0)})
    lines: list[Item] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Box:
    side: Annotated[int, Field(ge=1)]


class Address(TypedDict, total=False):
    street: Required[str]
    number: Annotated[int, Field(ge=1)]
    parcel: Parcel | None


class Pin(TypedDict):
    code: str
    note: NotRequired[str]


class PItem(pydantic.BaseModel):
    """A line of an order, as a pydantic model (issue 35)."""

    name: str = pydantic.Field(min_length=1, max_length=5, pattern="^[a-z]")
    qty: Annotated[int, pydantic.Field(ge=0, lt=10)] = 0
    tags: frozenset[str] = frozenset()


@dataclasses.dataclass
class Dim:
    width: float
    depth: int = 1


class POrder(pydantic.BaseModel):
    items: list[PItem]
    prices: dict[str, float] = {}
    kind: Kind = Kind.A
    note: str | None = None
    mode: Literal["x", "y", 1] = "x"
    pair: tuple[int, bool] | None = None
    day: datetime.date | None = None
    at: datetime.datetime | None = None
    ref: uuid.UUID | None = None
    dim: Dim | None = None
    weight: float = pydantic.Field(1.0, gt=0)


class POpen(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")
    size: int = 0


class PStrict(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(strict=True, extra="forbid")
    count: int
    ratio: float = 0.5


class PAliased(pydantic.BaseModel):
    sender: str = pydantic.Field(alias="from")
    count: Annotated[int, pydantic.Field(ge=1)] = 1


@attrs.define
class Mixed:
    order: POrder
    shape: Circle | Square | None = None
    extra: POpen | None = None


TYPES: list[object] = [
    int,
    float,
    bool,
    str,
    int | None,
    list[Annotated[int, Field(ge=1)]],
    Annotated[list[str], Field(min_items=1, max_items=2)],
    dict[str, bool],
    set[int],
    tuple[int, str],
    Literal["a", 1],
    Kind,
    Annotated[str, Field(min_length=2, pattern="b")],
    Circle | Square,
    datetime.date,
    uuid.UUID,
    Item,
    Order,
    # dataclasses and TypedDicts (issue 29 item 5)
    Parcel,
    Address,
    Parcel | Box | None,
    list[Pin],
    # annotated-types constraints (issue 29 item 5)
    Annotated[int, at.Interval(ge=0, lt=10)],
    Annotated[int, at.MultipleOf(3)],
    Annotated[float, at.Gt(0.5)],
    Annotated[str, at.Len(1, 3)],
    Annotated[list[int], at.MinLen(1), at.MaxLen(2)],
    # pydantic models, alone, nested and inside attrs classes (issue 35)
    PItem,
    POrder,
    POpen,
    PStrict,
    PAliased,
    Mixed,
    list[PItem | None],
    PItem | PStrict,
    Annotated[int, pydantic.Field(ge=1, le=5, description="Stars")],
    Annotated[str, pydantic.Field(min_length=2, pattern="b")],
]

SPECIAL: dict[object, list[object]] = {
    datetime.date: ["2024-02-29", "2023-02-29", "2024-1-01", "2024-01-01T00:00"],
    datetime.datetime: [
        "2024-02-29T12:00:00Z",
        "2024-02-29t12:00:00.5+01:00",
        "2024-02-29T12:00:00",  # no offset: RFC 3339 requires one
        "2024-02-29 12:00:00Z",
        "2024-02-30T12:00:00Z",
        "2024-02-29",
    ],
    uuid.UUID: ["12345678-1234-5678-1234-567812345678", "12345678123456781234"],
}


LEAVES: dict[object, st.SearchStrategy[object]] = {
    int: st.integers(-3, 12),
    float: st.sampled_from([0.0, 0.5, -2.5, 3, math.inf, -(10**400)]),
    bool: st.booleans(),
    type(None): st.none(),
    str: st.text(alphabet="abAB1 ", max_size=6),
}


def near(tp: object) -> st.SearchStrategy[object]:
    """Values shaped like ``tp``, mostly with fitting leaves, or arbitrary JSON."""
    shaped = _shaped(tp)
    return st.one_of(shaped, shaped, shaped, JSON)


def _shaped(tp: object) -> st.SearchStrategy[object]:
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return near(args[0])
    if tp in LEAVES:
        return LEAVES[tp]
    if tp in SPECIAL:
        return st.sampled_from(SPECIAL[tp])
    if origin is Literal:
        return st.sampled_from(args)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return st.sampled_from([m.value for m in tp])
    if origin in (list, set, frozenset) or (origin is tuple and args[-1] is ...):
        return st.lists(near(args[0]), max_size=3)
    if origin is tuple:
        return st.tuples(*(near(a) for a in args)).map(list)
    if origin is dict:
        return st.dictionaries(st.text("ab", max_size=2), near(args[1]), max_size=2)
    if isinstance(tp, type) and attrs.has(tp):
        attrs.resolve_types(tp)
        fields = {a.name: near(a.type) for a in attrs.fields(tp)}
        required = {
            a.name: fields[a.name]
            for a in attrs.fields(tp)
            if a.default is attrs.NOTHING
        }
        optional = {k: v for k, v in fields.items() if k not in required}
        return st.fixed_dictionaries(
            required, optional=optional
        ) | st.fixed_dictionaries({}, optional={**fields, "zz": JSON})
    if is_model(tp):
        return _model_shaped(tp)  # type: ignore[arg-type]
    if is_record(tp):
        keys = record_fields(tp)  # type: ignore[arg-type]
        shaped = {f.name: near(f.type) for f in keys}
        needed = {f.name: shaped[f.name] for f in keys if f.required}
        rest = {k: v for k, v in shaped.items() if k not in needed}
        return st.fixed_dictionaries(needed, optional=rest) | st.fixed_dictionaries(
            {}, optional={**shaped, "zz": JSON}
        )
    if args:  # a union: None, a member, or a member under its tag
        options: list[st.SearchStrategy[object]] = [near(a) for a in args]
        options += [
            st.builds(lambda v, n=a.__name__: {n: v}, near(a))
            for a in args
            if isinstance(a, type)
            and (attrs.has(a) or dataclasses.is_dataclass(a) or is_model(a))
        ]
        return st.one_of(options)
    raise AssertionError(tp)


def _model_shaped(model: type[pydantic.BaseModel]) -> st.SearchStrategy[object]:
    """A model's keys (aliases where given), as for an attrs class."""
    fields = {
        info.alias or name: near(info.annotation)
        for name, info in model.model_fields.items()
    }
    required = {
        info.alias or name: fields[info.alias or name]
        for name, info in model.model_fields.items()
        if info.is_required()
    }
    optional = {k: v for k, v in fields.items() if k not in required}
    return st.fixed_dictionaries(required, optional=optional) | st.fixed_dictionaries(
        {}, optional={**fields, "zz": JSON}
    )


def _cases() -> st.SearchStrategy[tuple[object, object]]:
    # Built once: strategies are costly to construct per example.
    return st.one_of(
        [near(tp).map(functools.partial(lambda t, v: (t, v), tp)) for tp in TYPES]
    )


CASES = _cases()


@functools.cache
def _validator(tp: object) -> Draft202012Validator:
    return Draft202012Validator(
        json_schema(tp), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def _accepted(tp: object, value: object) -> bool:
    return bool(_validator(tp).is_valid(value))


@settings(max_examples=400, deadline=None)
@given(CASES)
def test_decode_accepts_exactly_what_the_schema_accepts(
    case: tuple[object, object],
) -> None:
    tp, value = case
    try:
        decode(tp, value)  # type: ignore[call-overload]
    except DecodeError as exc:
        decoded, problems = False, exc.problems
    else:
        decoded, problems = True, ()

    assert _accepted(tp, value) == decoded, problems
