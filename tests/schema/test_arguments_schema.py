"""A declaration's input schema is derived without building its arguments class.

``arguments_schema`` walks a handler's inputs the way ``json_schema`` walks the
attrs class made from them (``ArgumentsOf``, built on the first call): for any mix
of annotations, defaults and descriptions both give the same JSON text, key order
included, or the same error.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Annotated, Any, Literal, TypedDict

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st
from support.values import Color

from trio_mcp import Field, tool
from trio_mcp._authority import Secret
from trio_mcp._declare._signature import Input, Plan, _arguments_class
from trio_mcp._schema import UnsupportedType, arguments_schema, json_schema


@attrs.frozen
class Point:
    x: int
    label: str = attrs.field(default="p", metadata={"trio_mcp": Field(max_length=3)})


@dataclasses.dataclass
class Box:
    side: Annotated[float, Field(gt=0)] = 1.0


class Pin(TypedDict):
    code: str


PASSTHROUGH = Field(
    json_schema={"$defs": {"word": {"type": "string"}}, "$ref": "#/$defs/word"}
)

ANNOTATIONS: list[object] = [
    str,
    int,
    float,
    bool,
    int | None,
    list[str],
    dict[str, int],
    tuple[int, str],
    set[int],
    Literal["a", "b", 1],
    Color,
    Point,
    Point | None,
    Box,
    Pin,
    Secret[str],
    Annotated[str, Field(min_length=1, pattern="^[a-z]")],
    Annotated[int, Field(ge=0, le=9, description="inner")],
    Annotated[list[int], Field(min_items=1)],
    Annotated[Any, PASSTHROUGH],
    Annotated[str, PASSTHROUGH],
    # refused: both ways must raise the same UnsupportedType
    bytes,
    list,
    Annotated[str, Field(ge=1)],
    Annotated[str, "a bare string"],
]

DEFAULTS: st.SearchStrategy[object] = st.sampled_from(
    [
        attrs.NOTHING,
        None,
        "x",
        3,
        2.5,
        True,
        math.nan,
        Color.BLUE,
        attrs.Factory(list),
    ]
)


@st.composite
def inputs(draw: st.DrawFn) -> list[tuple[str, object, object, str | None]]:
    names = draw(
        st.lists(
            st.sampled_from(["query", "limit", "exact", "tags", "when", "k_2"]),
            unique=True,
            max_size=4,
        )
    )
    return [
        (
            name,
            draw(st.sampled_from(ANNOTATIONS)),
            draw(DEFAULTS),
            draw(st.none() | st.sampled_from(["Words to find.", "The 2nd  one"])),
        )
        for name in names
    ]


def _outcome(make: Any) -> str:
    """The schema's JSON text (key order counts), or the error it raised."""
    try:
        return json.dumps(make())
    except UnsupportedType as exc:
        return f"{type(exc).__name__}: {exc} @ {exc.where!r}"


@settings(max_examples=300, deadline=None)
@given(inputs())
def test_the_schema_is_that_of_the_arguments_class(
    drawn: list[tuple[str, object, object, str | None]],
) -> None:
    descriptions = {name: text for name, _, _, text in drawn if text is not None}
    built = [(name, tp, default) for name, tp, default, _ in drawn]
    direct = _outcome(lambda: arguments_schema(drawn))
    walked = _outcome(
        lambda: json_schema(
            _arguments_class("ArgumentsOf_f", _as_inputs(built), descriptions),
            cache=False,
        )
    )
    assert direct == walked


def _as_inputs(built: list[tuple[str, object, object]]) -> list[Input]:
    return [Input(name, tp, default) for name, tp, default in built]


def _built(plan: Plan) -> type | None:
    """The arguments class if it was built, without building it."""
    return plan._arguments_class


def test_a_tool_builds_its_arguments_class_on_the_first_call() -> None:
    @tool
    def find(query: str, limit: int = 10) -> list[str]:
        """Find things.

        Args:
            query: Words to look for.
            limit: Most results.
        """
        return [query] * limit

    assert _built(find.plan) is None
    assert {"query": "a", "limit": 2} == find.decode_arguments(
        {"query": "a", "limit": 2}
    )
    cls = _built(find.plan)
    assert cls is not None
    assert cls.__name__ == "ArgumentsOf_find"
    assert json.dumps(find.plan.input_schema) == json.dumps(
        json_schema(cls, cache=False)
    )
