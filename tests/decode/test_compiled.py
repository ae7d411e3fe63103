"""The compiled validity check agrees with ``jsonschema`` on every schema it compiles
(a differential Hypothesis property over random schemas of its keyword subset and
random JSON values), and refuses to compile what it does not know."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from trio_mcp._decode._compiled import compile_valid
from trio_mcp._decode._verbatim import _format_checks, _formats

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 12)
    | st.sampled_from([0.0, 1.0, 2.5, -1.0, 0.5, 1e300, 10**400, math.inf, -math.inf])
    | st.sampled_from(
        [
            "2024-02-29",
            "2023-02-29",
            "2024-02-29T12:00:00Z",
            "2024-02-29T12:00:00",
            "12345678-1234-5678-1234-567812345678",
        ]
    )
    | st.text(alphabet="abAB1 ", max_size=4)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "zz"]), inner, max_size=3)
    ),
    max_leaves=8,
)
TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]
COUNT = st.integers(0, 3)
BOUND = st.sampled_from([0, 1, 2.5, -1, 10, 1e300])

LEAF: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(TYPES)),
    st.builds(lambda t: {"type": t}, st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True)),
    st.builds(lambda v: {"enum": v}, st.lists(SCALARS, min_size=1, max_size=3)),
    st.builds(lambda v: {"const": v}, JSON),
    st.builds(lambda n: {"minLength": n}, COUNT),
    st.builds(lambda n: {"maxLength": n}, COUNT),
    st.builds(lambda p: {"pattern": p}, st.sampled_from(["^a", "b", "^[a-z]+$", "1"])),
    st.builds(lambda b: {"minimum": b}, BOUND),
    st.builds(lambda b: {"maximum": b}, BOUND),
    st.builds(lambda b: {"exclusiveMinimum": b}, BOUND),
    st.builds(lambda b: {"exclusiveMaximum": b}, BOUND),
    st.builds(lambda m: {"multipleOf": m}, st.sampled_from([1, 2, 3])),
    st.builds(lambda n: {"minItems": n}, COUNT),
    st.builds(lambda n: {"maxItems": n}, COUNT),
    st.builds(lambda u: {"uniqueItems": u}, st.booleans()),
    st.builds(lambda f: {"format": f}, st.sampled_from(["date", "date-time", "uuid", "email"])),
    st.builds(lambda t: {"title": t, "description": t, "x-kind": t}, st.text(max_size=2)),
)  # fmt: skip


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


def _nested(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    names = st.sampled_from(["a", "b", "c"])
    return st.one_of(
        st.builds(lambda s: {"items": s}, inner),
        st.builds(
            lambda p, s: {"prefixItems": p, "items": s},
            st.lists(inner, min_size=1, max_size=2),
            inner | st.just(False),
        ),
        st.builds(
            lambda p, r, a: {"properties": p, "required": r, "additionalProperties": a},
            st.dictionaries(names, inner, max_size=3),
            st.lists(names, max_size=2, unique=True),
            st.booleans() | inner,
        ),
        st.builds(
            lambda p: {"properties": p}, st.dictionaries(names, inner, max_size=2)
        ),
        st.builds(lambda b: {"anyOf": b}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda b: {"oneOf": b}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda b: {"allOf": b}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda s: {"not": s}, inner),
        st.builds(lambda s: {"propertyNames": s}, inner),
    )


SCHEMAS = st.recursive(
    st.lists(LEAF, min_size=1, max_size=3).map(_merge),
    lambda inner: st.lists(_nested(inner) | LEAF, min_size=1, max_size=3).map(_merge),
    max_leaves=6,
)


@settings(max_examples=600, deadline=None)
@given(SCHEMAS, st.lists(JSON, min_size=1, max_size=4), st.booleans())
def test_the_compiled_check_agrees_with_jsonschema(
    schema: dict[str, Any], values: list[Any], formats: bool
) -> None:
    valid = compile_valid(schema, _format_checks() if formats else None)
    validator = Draft202012Validator(
        schema, format_checker=_formats() if formats else None
    )

    assert valid is not None, schema
    assert [validator.is_valid(v) for v in values] == [valid(v) for v in values]


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/a", "$defs": {"a": {"type": "string"}}},
        {"patternProperties": {"^a": {"type": "string"}}},
        {"if": {"type": "string"}, "then": {"minLength": 1}},
        {"type": "string", "dependentRequired": {"a": ["b"]}},
        {"items": {"contains": {"type": "string"}}},
        {"type": "text"},
        {"minLength": -1},
        {"multipleOf": 0},
        {"pattern": "("},
    ],
)
def test_a_schema_beyond_the_subset_is_left_to_jsonschema(schema: Any) -> None:
    assert compile_valid(schema) is None
