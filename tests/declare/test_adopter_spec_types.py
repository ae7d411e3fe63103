"""A hand-written spec with a field of the wrong type cannot be built, so no listing
breaks the revision's schema (api.md "Calls as values": specs are validated).

``ToolSpec(..., title=5)``, ``ToolHints(read_only="yes")`` or ``Icon(5)`` used to be
accepted, and ``tools/list`` then sent entries the revision's schema refuses. Each
spec value now checks its fields when built (``McpError.InvalidArgument``, also a
TypeError and a ValueError, naming the class and field); well-formed specs are listed and every message validates (the test
client checks each against the revision's schema).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from trio_mcp import (
    Icon,
    InvalidArgument,
    PromptArgument,
    PromptSpec,
    ResourceSpec,
    Server,
    TextContent,
    ToolCall,
    ToolHints,
    ToolReply,
    ToolSpec,
)
from trio_mcp.testing import McpTestClient

OBJECT: dict[str, Any] = {"type": "object"}

BAD: dict[str, tuple[Callable[[], object], str]] = {
    "tool name": (lambda: ToolSpec(5, "d", OBJECT), "name"),  # type: ignore[arg-type]
    "tool description": (lambda: ToolSpec("a", 5, OBJECT), "description"),  # type: ignore[arg-type]
    "tool title": (lambda: ToolSpec("a", "d", OBJECT, title=5), "title"),  # type: ignore[arg-type]
    "tool input schema": (lambda: ToolSpec("a", "d", "object"), "input_schema"),  # type: ignore[arg-type]
    "tool output schema": (
        lambda: ToolSpec("a", "d", OBJECT, output_schema=[]),  # type: ignore[arg-type]
        "output_schema",
    ),
    "tool annotations": (
        lambda: ToolSpec("a", "d", OBJECT, annotations={"readOnlyHint": True}),  # type: ignore[arg-type]
        "annotations",
    ),
    "hint bool": (lambda: ToolHints(read_only="yes"), "read_only"),  # type: ignore[arg-type]
    "hint title": (lambda: ToolHints(title=1), "title"),  # type: ignore[arg-type]
    "icon src": (lambda: Icon(5), "src"),  # type: ignore[arg-type]
    "icon sizes": (lambda: Icon("data:,", sizes=[48]), "sizes"),  # type: ignore[list-item]
    "icon theme": (lambda: Icon("data:,", theme="blue"), "theme"),
    "resource uri": (lambda: ResourceSpec(5, "n"), "uri"),  # type: ignore[arg-type]
    "resource name": (lambda: ResourceSpec("a://b", None), "name"),  # type: ignore[arg-type]
    "resource mime": (
        lambda: ResourceSpec("a://b", "n", mime_type=1),  # type: ignore[arg-type]
        "mime_type",
    ),
    "prompt name": (lambda: PromptSpec(None, "d"), "name"),  # type: ignore[arg-type]
    "prompt arguments": (
        lambda: PromptSpec("p", "d", arguments=["topic"]),  # type: ignore[list-item]
        "arguments",
    ),
    "argument required": (
        lambda: PromptArgument("topic", required="yes"),  # type: ignore[arg-type]
        "required",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_spec_field_of_the_wrong_type_is_refused_naming_it(case: str) -> None:
    build, field = BAD[case]

    with pytest.raises(InvalidArgument, match=rf"\w\.{field} must be "):
        build()


class Full:
    """A tool whose spec sets every optional field, well-formed."""

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="full",
            description="Every field set.",
            input_schema=OBJECT,
            output_schema={"type": "object", "properties": {}},
            title="Full",
            annotations=ToolHints(read_only=True, open_world=False, title="F"),
            icons=(Icon("data:,", "image/png", ("48x48",), "dark"),),
        )

    async def dispatch(self, call: ToolCall) -> ToolReply:
        return ToolReply.ok({}, TextContent("{}"))


async def test_well_formed_specs_with_every_field_are_listed_and_valid() -> None:
    async with McpTestClient(Server("s", "1", tools=[Full()])) as client:
        (listed,) = await client.list_tools()
        called = await client.call_tool("full", {})

    assert listed["annotations"] == {
        "readOnlyHint": True,
        "openWorldHint": False,
        "title": "F",
    }
    assert listed["icons"] == [
        {"src": "data:,", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}
    ]
    assert called.structured == {}
