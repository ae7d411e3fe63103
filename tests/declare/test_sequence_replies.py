"""F17 (issue 34): a tuple returned for ``-> list[str]``, decided and consistent.

Decided: accepted. A ``list`` and a ``tuple`` are the same JSON array, so a handler
may return either where either is declared, at any depth (inside a dict, an attrs
class, a dataclass); the client receives the array. What changes when encoded
stays refused by the reply guard (-32603, an ``internal`` receipt whose
``error_type`` is ``trio_mcp.InvalidReply``, the log saying why): a set (no order)
or a string for a list, a dict for a tuple, a generator.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trio_mcp import Receipt, Server, Tool, tool
from trio_mcp.testing import McpTestClient, ProtocolError


@attrs.frozen
class Box:
    items: list[str]


@dataclasses.dataclass
class Crate:
    rows: list[tuple[str, ...]]


returned: list[Any] = []


@tool
def nested() -> list[list[str]]:
    """Return what the test put there."""
    return returned[0]  # type: ignore[no-any-return]


@tool
def boxed() -> Box:
    """Return what the test put there."""
    return returned[0]  # type: ignore[no-any-return]


@tool
def crated() -> Crate:
    """Return what the test put there."""
    return returned[0]  # type: ignore[no-any-return]


@tool
def mapping() -> dict[str, list[str]]:
    """Return what the test put there."""
    return returned[0]  # type: ignore[no-any-return]


TOOLS: list[Tool] = [nested, boxed, crated, mapping]
WORDS = st.lists(st.text(max_size=3), max_size=3)
ROWS = st.lists(
    st.one_of(WORDS, WORDS.map(tuple)), max_size=3
)  # lists and tuples mixed


async def call(name: str, value: Any, receipts: list[Receipt]) -> Any:
    returned[:] = [value]
    async with McpTestClient(
        Server("s", "1", tools=TOOLS, receipts=receipts.append)
    ) as c:
        try:
            return (await c.call_tool(name)).structured
        except ProtocolError as exc:
            return exc


def listed(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [listed(v) for v in value]
    if isinstance(value, dict):
        return {k: listed(v) for k, v in value.items()}
    return value


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(rows=ROWS, outer_tuple=st.booleans())
async def test_lists_and_tuples_are_one_array_at_any_depth(
    rows: list[Any], outer_tuple: bool
) -> None:
    receipts: list[Receipt] = []
    value = tuple(rows) if outer_tuple else rows
    results = [
        await call("nested", value, receipts),
        await call("crated", Crate([tuple(r) for r in rows]), receipts),
        # A dataclass holding lists where tuples are declared, and the reverse.
        await call("crated", Crate(value), receipts),  # type: ignore[arg-type]
        await call("mapping", {"k": tuple(rows[0]) if rows else ()}, receipts),
    ]

    assert listed(value) == results[0]
    assert {"rows": listed(rows)} == results[1] == results[2]
    assert {"k": listed(rows[0]) if rows else []} == results[3]
    assert ["ok"] * 4 == [r.outcome for r in receipts]


async def test_a_tuple_inside_an_attrs_value_is_accepted() -> None:
    receipts: list[Receipt] = []
    assert {"items": ["a", "b"]} == await call("boxed", Box(("a", "b")), receipts)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("nested", [{"a"}], "a list is not a list[list[str]]"),
        ("nested", ["ab"], "a list is not a list[list[str]]"),
        ("nested", (x for x in [["a"]]), "a generator is not a list[list[str]]"),
        ("mapping", {"k": "ab"}, "a dict is not a dict[str, list[str]]"),
        ("crated", Crate([{"a"}]), "a Crate is not a "),  # type: ignore[list-item]
        ("crated", Crate(["ab"]), "a Crate is not a "),  # type: ignore[list-item]
        ("boxed", Box({"a"}), "a Box is not a "),  # type: ignore[arg-type]
    ],
)
async def test_what_changes_when_encoded_is_still_refused_by_the_reply_guard(
    name: str, value: Any, says: str, caplog: pytest.LogCaptureFixture
) -> None:
    receipts: list[Receipt] = []
    result = await call(name, value, receipts)

    assert isinstance(result, ProtocolError)
    assert -32603 == result.code
    assert [("internal", "trio_mcp.InvalidReply")] == [
        (r.outcome, r.error_type) for r in receipts
    ]
    assert says in caplog.text
