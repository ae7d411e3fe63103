"""Any parameter name a tool may have: it is served under that name, or refused.

A tool's inputs become fields of an attrs class on the first call. attrs gives
some names meaning (a leading underscore is stripped from ``__init__``'s
argument, ``self`` is ``__init__``'s own, ``__dict__`` and ``__class__`` are the
instance's); such a name is either passed through under its own name or refused
as a declaration problem, never a ``SyntaxError`` at ``@tool`` or a -32603 on the
first call.
"""

from __future__ import annotations

import keyword
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_mcp import McpError, Server, tool
from trio_mcp.testing import McpTestClient


def _handler(names: list[str]) -> Any:
    """``def f(<name>: int, ...) -> list[int]`` returning its inputs in order,
    each documented under ``Args:``."""
    params = ", ".join(f"{name}: int" for name in names)
    args = "".join(f"        {name}: An input.\n" for name in names)
    source = (
        f"def f({params}) -> list[int]:\n"
        f"    '''Echo the inputs.\n\n    Args:\n{args}    '''\n"
        f"    return [{', '.join(names)}]\n"
    )
    namespace: dict[str, Any] = {"__name__": "names"}
    exec(source, namespace)
    return namespace["f"]


def _reserved(name: str) -> bool:
    return name == "self" or (len(name) > 4 and name[:2] == name[-2:] == "__")


@pytest.mark.parametrize(
    "names", [["_"], ["__"], ["_1"], ["_x", "x"], ["__x", "x"], ["_x"], ["x_"]]
)
async def test_names_attrs_would_strip_are_served_under_their_own_names(
    names: list[str],
) -> None:
    """attrs passes '_x' to __init__ as 'x' and '_' as nothing: each input is
    passed under its own name instead."""
    server = Server("names", "1", tools=[tool(_handler(names))])
    values = {name: 10 + i for i, name in enumerate(names)}
    async with McpTestClient(server) as client:
        result = await client.call_tool("f", values)
    assert not result.is_error
    assert list(values.values()) == result.structured


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "self",
            "tool 'f' (names:f): parameter 'self' is not the first parameter; 'self' names "
            "a method's instance, so rename this input",
        ),
        (
            "__dict__",
            "tool 'f' (names:f): parameter '__dict__' has a name Python reserves (leading "
            "and trailing '__'); rename it",
        ),
        (
            "__class__",
            "tool 'f' (names:f): parameter '__class__' has a name Python reserves (leading "
            "and trailing '__'); rename it",
        ),
    ],
)
def test_a_name_the_arguments_class_cannot_hold_is_refused_at_declaration(
    name: str, message: str
) -> None:
    with pytest.raises(McpError.InvalidDeclaration) as info:
        tool(_handler(["q", name]))
    assert message == str(info.value)


_IDENTIFIER = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
_NAME = st.one_of(
    _IDENTIFIER,
    st.sampled_from(
        [
            *("_", "__", "___", "self", "cls", "int", "list", "f", "__dict__"),
            *("__class__", "__init__", "__slots__", "__weakref__", "__new__"),
            *("__qualname__", "__attrs_attrs__", "__attrs_pre_init__"),
            "__attrs_post_init__",
        ]
    ),
    st.builds(
        lambda pre, core, post: "_" * pre + core + "_" * post,
        st.integers(0, 3),
        _IDENTIFIER,
        st.integers(0, 3),
    ),
).filter(lambda name: name.isidentifier() and not keyword.iskeyword(name))


@settings(max_examples=60, deadline=None)
@given(names=st.lists(_NAME.filter(lambda name: name != "q"), max_size=3, unique=True))
def test_any_parameter_name_is_served_under_its_name_or_refused_at_declaration(
    names: list[str],
) -> None:
    # A first parameter named 'self' makes a method; the property is about inputs.
    names = ["q", *names]
    values = {name: 10 + i for i, name in enumerate(names)}

    refused = [name for name in names if _reserved(name)]
    if refused:
        with pytest.raises(
            McpError.InvalidDeclaration, match=f"parameter '{refused[0]}'"
        ):
            Server("names", "1", tools=[tool(_handler(names))])
        return

    async def round_trip() -> None:
        server = Server("names", "1", tools=[tool(_handler(names))])
        async with McpTestClient(server) as client:
            result = await client.call_tool("f", values)
        assert not result.is_error, result
        assert list(values.values()) == result.structured

    trio.run(round_trip)
