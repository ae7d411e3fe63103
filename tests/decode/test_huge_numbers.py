"""Numbers beyond a double (issue 24 class 7): the schema and decoding agree.

JSON has no infinity, but a literal such as ``1e400`` is a valid JSON number that
every JSON parser Python has reads as infinity, the nearest double. JSON Schema's
``number`` accepts it, so decoding accepts it too, for ``float``: the handler receives
``math.inf`` (declare ``Field(le=...)`` to refuse it). ``integer`` refuses it on both
sides (infinity has no zero fraction), and a reply can never carry it (JSON cannot).
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

import pytest
from jsonschema import Draft202012Validator
from support import META, wire

from trio_mcp import Field, Server, decode, json_schema, tool
from trio_mcp.testing import McpTestClient


@tool
def scale(x: float) -> str:
    """Describe a number.

    Args:
        x: Any number.
    """
    return repr(x)


@tool
def count(n: int) -> str:
    """Describe a whole number.

    Args:
        n: Any integer.
    """
    return repr(n)


@tool
def bounded(x: Annotated[float, Field(le=1e300)]) -> str:
    """Describe a bounded number.

    Args:
        x: A number up to 1e300.
    """
    return repr(x)


def _call(name: str, literal: str) -> str:
    return (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
        f'{{"name": "{name}", "arguments": {{"{next(iter(_PARAM[name]))}": {literal}}}, '
        f'"_meta": {json.dumps(META)}}}}}'
    )


_PARAM = {"scale": ["x"], "count": ["n"], "bounded": ["x"]}


@pytest.mark.parametrize(
    ("name", "literal", "served"),
    [
        ("scale", "1e400", "inf"),
        ("scale", "-1e400", "-inf"),
        ("scale", "1" + "0" * 400, "inf"),
        ("scale", "1e300", "1e+300"),
        ("count", "1e400", None),
        ("count", "1e2", "100"),
        ("bounded", "1e400", None),
    ],
)
async def test_a_huge_number_is_served_exactly_when_the_schema_accepts_it(
    name: str, literal: str, served: str | None
) -> None:
    async with McpTestClient(Server("n", "1", tools=[scale, count, bounded])) as c:
        (reply,) = await c.send_raw(_call(name, literal))
        schema = {t["name"]: t["inputSchema"] for t in await c.list_tools()}[name]
    arguments = json.loads(_call(name, literal))["params"]["arguments"]
    result: Any = wire(reply)["result"]

    assert Draft202012Validator(schema).is_valid(arguments) == (served is not None)
    assert result.get("isError", False) == (served is None)
    if served is not None:
        assert served == result["structuredContent"]


@pytest.mark.parametrize("value", [math.inf, -math.inf, 10**400, -(10**400)])
def test_decode_agrees_with_the_schema_for_non_finite_numbers(value: object) -> None:
    for tp in (float, int, float | None):
        accepted = Draft202012Validator(json_schema(tp)).is_valid(value)
        try:
            decode(tp, value)  # type: ignore[call-overload]
        except Exception:
            decoded = False
        else:
            decoded = True

        assert accepted == decoded, (tp, value)
