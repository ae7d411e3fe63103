"""Decoding accepts what the schema accepts and reports every problem at once."""

from __future__ import annotations

import datetime
import uuid
from typing import Annotated, Literal, NewType

import attrs
import pytest
from decoding import problems
from support.values import Circle, Color, Square

from trio_mcp._decode import decode
from trio_mcp._errors import DecodeError, Problem
from trio_mcp._schema import Field, UnsupportedType

Handle = NewType("Handle", str)


@attrs.frozen
class Filter:
    name: str
    value: int = 0


@attrs.define
class Query:
    filters: list[Filter]
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    note: str | None = None


@pytest.mark.parametrize(
    ("tp", "value", "expected"),
    [
        (str, "x", "x"),
        (int, 5, 5),
        (int, 5.0, 5),
        (float, 5, 5.0),
        (float, 2.5, 2.5),
        (bool, False, False),
        (list[int], [1, 2], [1, 2]),
        (tuple[int, ...], [1, 2], (1, 2)),
        (set[str], ["a", "b"], {"a", "b"}),
        (frozenset[int], [1], frozenset({1})),
        (tuple[int, str], [1, "a"], (1, "a")),
        (dict[str, int], {"a": 1}, {"a": 1}),
        (int | None, None, None),
        (int | None, 3, 3),
        (Literal["a", "b"], "b", "b"),
        (Color, "blue", Color.BLUE),
        (Handle, "h", "h"),
        (datetime.date, "2024-02-29", datetime.date(2024, 2, 29)),
        (
            datetime.datetime,
            "2024-01-02T03:04:05.5+02:00",
            datetime.datetime(
                2024,
                1,
                2,
                3,
                4,
                5,
                500000,
                tzinfo=datetime.timezone(datetime.timedelta(hours=2)),
            ),
        ),
        (
            uuid.UUID,
            "12345678-1234-5678-1234-567812345678",
            uuid.UUID("12345678-1234-5678-1234-567812345678"),
        ),
        (Circle | Square, {"Square": {"side": 2}}, Square(2.0)),
        (Filter, {"name": "n"}, Filter("n", 0)),
    ],
)
def test_valid_values_decode(tp: object, value: object, expected: object) -> None:
    result = decode(tp, value)  # type: ignore[call-overload]

    assert expected == result
    assert type(expected) is type(result)


@pytest.mark.parametrize(
    ("tp", "value", "message"),
    [
        (str, 1, "expected a string"),
        (int, True, "expected an integer"),
        (int, "5", "expected an integer"),
        (int, 5.5, "expected an integer"),
        (float, "1.0", "expected a number"),
        (float, False, "expected a number"),
        (bool, 1, "expected a boolean"),
        (list[str], "abc", "expected an array"),
        (set[int], [1, 1.0], "items must be unique"),
        (tuple[int, str], [1], "expected an array of 2 items"),
        (dict[str, int], [], "expected an object"),
        (int | None, "x", "expected an integer or null"),
        (Literal["a", "b"], "c", 'must be one of: "a", "b"'),
        (Literal[1], True, "must be one of: 1"),
        (Color, "green", 'must be one of: "red", "blue"'),
        (datetime.datetime, "2024-01-02", "expected a date-time string (RFC 3339)"),
        (
            datetime.datetime,
            "2024-01-02T03:04:05",
            "expected a date-time string (RFC 3339)",
        ),
        (datetime.date, "2024-02-30", "expected a date string (YYYY-MM-DD)"),
        (uuid.UUID, "1234", "expected a UUID string"),
        (Filter, "x", "expected an object"),
        (
            Circle | Square,
            {"Circle": {}, "Square": {}},
            'expected an object with one key, one of: "Circle", "Square"',
        ),
        (
            Circle | Square,
            {"Triangle": {}},
            'expected an object with one key, one of: "Circle", "Square"',
        ),
    ],
)
def test_invalid_values_are_rejected_at_the_root(
    tp: object, value: object, message: str
) -> None:
    assert [("", message)] == problems(tp, value)


def test_every_problem_is_reported_with_its_path() -> None:
    value = {
        "filters": [{"name": "a"}, {"name": 1, "value": "x", "extra": 0}],
        "limit": 0,
        "other": True,
    }

    expected = [
        ("filters.1.name", "expected a string"),
        ("filters.1.value", "expected an integer"),
        ("filters.1.extra", "unknown field"),
        ("limit", "must be at least 1"),
        ("other", "unknown field"),
    ]

    assert expected == problems(Query, value)


def test_a_missing_field_is_required() -> None:
    assert problems(Query, {}) == [("filters", "this field is required")]


def test_dict_values_report_their_key() -> None:
    assert problems(dict[str, int], {"a": 1, "b": "2"}) == [
        ("b", "expected an integer")
    ]


def test_tagged_union_payload_problems_include_the_tag() -> None:
    expected = [("Circle.radius", "expected a number")]

    assert expected == problems(Circle | Square, {"Circle": {"radius": "big"}})


def test_fixed_tuple_items_report_their_index() -> None:
    assert problems(tuple[int, str], [1, 2]) == [("1", "expected a string")]


def test_problems_never_contain_the_value() -> None:
    secret = "hunter2-secret-value"

    with pytest.raises(DecodeError) as caught:
        decode(Query, {"filters": [{"name": secret, "value": secret}], "limit": secret})

    assert secret not in str(caught.value)
    assert Problem("filters.0.value", "expected an integer") in caught.value.problems


def test_decode_refuses_unsupported_types() -> None:
    with pytest.raises(UnsupportedType):
        decode(bytes, "x")
