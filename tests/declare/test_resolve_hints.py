"""``resolve_hints`` is ``typing.get_type_hints(fn, include_extras=True)``.

It looks a plain class up by name instead of compiling the annotation; whatever a
handler's annotations are (strings or objects, defined or not, plain classes or
anything else), the result, its order and any error are typing's.
"""

from __future__ import annotations

import enum
import functools
import typing
from typing import Annotated, Any, Generic, NewType, cast

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_mcp import Field
from trio_mcp._declare._signature import resolve_hints


class Color(enum.Enum):
    RED = "red"


@attrs.frozen
class Ticket:
    title: str


T = typing.TypeVar("T")


class Box(Generic[T]):
    pass


NAMESPACE: dict[str, object] = {
    "Ticket": Ticket,
    "Color": Color,
    "Box": Box,
    "Generic": Generic,
    "Any": Any,
    "Annotated": Annotated,
    "Field": Field,
    "UserId": NewType("UserId", int),
    "Alias": list[int],
    "three": 3,
    "nothing": None,
    "str": bytes,  # a module may shadow a builtin
}

SPELLINGS = [
    "str",
    "int",
    "float",
    "None",
    "Ticket",
    "Color",
    "Box",
    "Box[int]",
    "Generic",
    "Any",
    "UserId",
    "Alias",
    "three",
    "nothing",
    "list[str]",
    "dict[str, Ticket]",
    "int | None",
    "Annotated[int, Field(ge=1)]",
    "'Ticket'",
    "Missing",
    "list[Missing]",
    "typing",
    "len",
    "object",
    "type",
    "tuple[int, ...]",
    "tuple[()]",
    "list['Ticket']",
    "set[int] | None",
    "dict[str, list[Ticket]] | Color | None",
    "Alias | None",
    "Box[int] | None",
    "type[int]",
    "three[0]",
    "Ticket()",
    "list[str](",
    "Missing | None",
    "str | three",
]
OBJECTS: list[object] = [
    str,
    int,
    None,
    Ticket,
    Color,
    Generic,
    list[str],
    int | None,
    dict[str, Box[int]],
    tuple[int, ...],
    # *tuple[int, str], which typing turns into Unpack[tuple[int, str]]
    next(iter(cast("Any", tuple[int, str]))),
    3,
    Box,
]


@st.composite
def functions(draw: st.DrawFn) -> Any:
    names = draw(
        st.lists(st.sampled_from(["a", "b", "c", "return"]), unique=True, max_size=4)
    )
    annotations = {
        name: draw(st.sampled_from(SPELLINGS) | st.sampled_from(OBJECTS))
        for name in names
    }
    shadow = draw(st.booleans())
    namespace = dict(NAMESPACE) if shadow else {**NAMESPACE, "str": str}
    exec("def handler(): pass", namespace)
    fn = namespace["handler"]
    fn.__annotations__ = annotations
    return fn


def _outcome(resolve: Any, fn: Any) -> object:
    try:
        hints = resolve(fn)
    except Exception as exc:  # the error itself is compared
        return (type(exc), str(exc))
    return list(hints.items())


@settings(max_examples=400, deadline=None)
@given(functions())
def test_resolve_hints_is_get_type_hints(fn: Any) -> None:
    typing_hints = functools.partial(typing.get_type_hints, include_extras=True)
    assert _outcome(typing_hints, fn) == _outcome(resolve_hints, fn)


def test_wrapped_and_unchecked_functions_go_to_typing() -> None:
    def inner(x: Missing) -> int:  # type: ignore[name-defined]  # noqa: F821
        return 1

    @functools.wraps(inner)
    def outer(x: int) -> int:
        return x

    @typing.no_type_check
    def unchecked(x: Missing) -> int:  # noqa: F821
        return 1

    for fn in (outer, unchecked):
        assert _outcome(typing.get_type_hints, fn) == _outcome(resolve_hints, fn)
