"""F11 (issue 34): a declaration's ``timeout=`` is finite seconds above zero, or None.

NaN, infinity, a negative or zero value, a bool, a string: each would break every
call of the declaration rather than one, so each is refused where it is declared
(``InvalidDeclaration`` for a decorator, ``InvalidArgument`` for a hand-written
spec, reported by ``Server(...)`` as ``InvalidDeclaration``).
"""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp import (
    InvalidArgument,
    InvalidDeclaration,
    Server,
    ToolReply,
    ToolSpec,
    prompt,
    resource,
    tool,
)

VALUES = (
    st.floats()
    | st.integers(-(10**400), 10**400)
    | st.booleans()
    | st.timedeltas().map(lambda d: d)
    | st.sampled_from(["5", None, 0, 0.0, -0.0, math.nan, math.inf])
)


def acceptable(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    elif isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        number = float(value)
    except OverflowError:
        return False
    return math.isfinite(number) and number > 0


@given(value=VALUES)
def test_a_decorator_takes_exactly_finite_positive_seconds(value: Any) -> None:
    def handler() -> str:
        """Answer."""
        return ""

    for decorate in (
        lambda: tool(timeout=value)(handler),
        lambda: prompt(timeout=value)(handler),
        lambda: resource(uri="t://x", timeout=value)(handler),
    ):
        try:
            decorate()
        except InvalidDeclaration:
            assert not acceptable(value)
        else:
            assert acceptable(value)


class Adopter:
    def __init__(self, timeout: Any) -> None:
        self.timeout = timeout

    def spec(self) -> ToolSpec:
        return ToolSpec("a", "An adopter.", {"type": "object"}, timeout=self.timeout)

    async def dispatch(self, call: object) -> ToolReply:
        return ToolReply.ok()


@given(value=VALUES)
def test_a_hand_written_spec_takes_the_same(value: Any) -> None:
    try:
        ToolSpec("a", "An adopter.", {"type": "object"}, timeout=value)
    except InvalidArgument:
        assert not acceptable(value)
        with pytest.raises(InvalidDeclaration, match="timeout"):
            Server("s", "1", tools=[Adopter(value)])
    else:
        assert acceptable(value)


def test_the_message_says_what_to_give() -> None:
    with pytest.raises(InvalidDeclaration, match="more than 0 seconds, or None"):

        @tool(timeout=0)
        def instant() -> str:
            """Answer."""
            return ""
