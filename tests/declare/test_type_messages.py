"""Messages that name types (issue 29 item 10): an unsupported annotation names the
type, and a wrong return value says what came back (its type, never its value)."""

from __future__ import annotations

import logging
from typing import Any

import attrs
import pytest

from trio_mcp import InvalidDeclaration, InvalidReply, Server, tool
from trio_mcp.testing import McpTestClient, ProtocolError


class Gadget:
    """An arbitrary class, outside the type table."""


def _declare(annotations: dict[str, Any]) -> None:
    def handler(x):  # type: ignore[no-untyped-def]
        """Handle.

        Args:
            x: The input.
        """
        return x

    handler.__annotations__ = annotations
    tool(handler)


@pytest.mark.parametrize(
    ("annotation", "says"),
    [
        (bytes, "parameter 'x': bytes is not supported"),
        (Gadget, "parameter 'x': Gadget is not supported"),
        (list[Gadget], "parameter 'x' at 'items': Gadget is not supported"),
        (dict[int, str], "parameter 'x': dict[int, str] is not supported"),
    ],
)
def test_an_unsupported_parameter_type_is_named(annotation: object, says: str) -> None:
    with pytest.raises(InvalidDeclaration) as info:
        _declare({"x": annotation, "return": int})

    assert says in str(info.value)


def test_an_unsupported_return_type_is_named() -> None:
    with pytest.raises(InvalidDeclaration) as info:
        _declare({"x": int, "return": Gadget})

    assert "return type: Gadget is not supported" in str(info.value)


@attrs.frozen
class Ticket:
    id: str


SECRET = "sk-live-0123456789"


@tool
def count() -> int:
    """Return a count (but returns a secret string)."""
    return SECRET  # type: ignore[return-value]


@tool
def counts() -> list[int]:
    """Return counts (one is a string)."""
    return [1, SECRET]  # type: ignore[list-item]


@tool
def ticket() -> Ticket:
    """Return a ticket (but returns a dict)."""
    return {"id": SECRET}  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("name", "says"),
    [
        (
            "count",
            [
                "returned a str where int is declared",
                "expected an integer (got a string)",
            ],
        ),
        (
            "counts",
            [
                "returned a list where list[int] is declared",
                "1: expected an integer (got a string)",
            ],
        ),
        ("ticket", ["a dict cannot be encoded as the declared Ticket"]),
    ],
)
async def test_a_wrong_return_says_what_came_back_never_the_value(
    name: str, says: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="trio_mcp"):
        async with McpTestClient(Server("m", "1", tools=[count, counts, ticket])) as c:
            with pytest.raises(ProtocolError):
                await c.call_tool(name)

    (error,) = [
        r.exc_info[1]
        for r in caplog.records
        if r.exc_info and isinstance(r.exc_info[1], InvalidReply)
    ]
    for text in says:
        assert text in str(error)
    assert SECRET not in str(error)
