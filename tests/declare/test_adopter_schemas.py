"""A hand-written tool's schemas follow the same rules as a decorated tool's (api.md
"Calls as values"; the revision's ``Tool``: the input schema is an object schema,
the output schema any JSON Schema 2020-12).

A decorated ``-> int`` lists ``outputSchema: {"type": "integer"}``, but an adopter
with that output schema was refused ("must be a JSON Schema object with 'type':
'object'"), so a proxy could not mirror such a tool. And a schema that is not
valid JSON Schema was accepted and listed, failing only when a call was checked
against it. Now any valid 2020-12 output schema is served and enforced, and an
invalid input or output schema is an InvalidDeclaration at ``Server(...)``.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from trio_mcp import (
    InvalidDeclaration,
    Server,
    ToolCall,
    ToolReply,
    ToolSpec,
    tool,
)
from trio_mcp._json import JsonValue
from trio_mcp.testing import McpTestClient, ProtocolError

OBJECT: dict[str, Any] = {"type": "object"}


@attrs.define
class Returns:
    """A hand-written tool that returns the structured value it was built with."""

    output_schema: dict[str, Any]
    value: JsonValue = None

    def spec(self) -> ToolSpec:
        return ToolSpec("returns", "Return a value.", OBJECT, self.output_schema)

    async def dispatch(self, call: ToolCall) -> ToolReply:
        return ToolReply.ok(call.arguments.get("value", self.value))


@tool
def count() -> int:
    """Return a count."""
    return 3


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"type": "integer"}, 3, "three"),
        ({"oneOf": [{"type": "string"}, {"type": "null"}]}, None, 1),
        ({"type": "array", "items": {"type": "number"}}, [1.5], [True]),
    ],
)
async def test_an_adopter_may_declare_any_valid_output_schema(
    schema: dict[str, Any], good: JsonValue, bad: JsonValue
) -> None:
    server = Server("s", "1", tools=[Returns(schema), count])

    async with McpTestClient(server) as client:
        listed = {t["name"]: t for t in await client.list_tools()}
        served = await client.call_tool("returns", {"value": good})
        with pytest.raises(ProtocolError) as refused:
            await client.call_tool("returns", {"value": bad})

    assert listed["returns"]["outputSchema"] == schema
    assert listed["count"]["outputSchema"] == {"type": "integer"}
    assert served.structured == good
    assert refused.value.code == -32603


@pytest.mark.parametrize(
    ("input_schema", "output_schema"),
    [
        ({"type": "object", "properties": 5}, None),
        ({"type": "object", "required": "name"}, None),
        (OBJECT, {"type": "integer", "minimum": "zero"}),
        (OBJECT, {"type": "nothing"}),
    ],
)
def test_an_invalid_json_schema_is_refused_at_server_construction(
    input_schema: dict[str, Any], output_schema: dict[str, Any] | None
) -> None:
    class Broken:
        def spec(self) -> ToolSpec:
            return ToolSpec("broken", "Broken schemas.", input_schema, output_schema)

        async def dispatch(self, call: ToolCall) -> ToolReply:
            return ToolReply.ok(1)

    with pytest.raises(InvalidDeclaration) as caught:
        Server("s", "1", tools=[Broken()])

    (problem,) = caught.value.problems
    assert "tool 'broken'" in problem
    assert "not a valid JSON Schema" in problem


def test_the_input_schema_must_still_be_an_object_schema() -> None:
    flat = ToolSpec("flat", "d", {"type": "integer"})

    class Flat(Returns):
        def spec(self) -> ToolSpec:
            return flat

    with pytest.raises(InvalidDeclaration, match="input schema must be"):
        Server("s", "1", tools=[Flat(OBJECT)])
