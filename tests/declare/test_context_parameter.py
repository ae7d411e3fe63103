"""The FastMCP habit ``def tool(x: int, ctx: Context)`` is refused kindly (issue 35):
the message names the parameter and points at ``ToolContext.current()`` (RFC 156
chose it over an injected parameter), for tools, resources and prompts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Optional

import pytest

# Under another name: the annotation "Context" below must name nothing.
from mcp.server.mcpserver import Context as McpContext

from trio_mcp import (
    Field,
    InvalidDeclaration,
    Server,
    ToolContext,
    prompt,
    resource,
    tool,
)

HINT = "call ToolContext.current() inside the handler"


def declare(kind: str, annotation: object) -> str:
    """The message of declaring a handler of ``kind`` with ``ctx: annotation``."""

    def handler(name: str, ctx):  # type: ignore[no-untyped-def]
        """Answer.

        Args:
            name: A name.
        """
        return name

    handler.__annotations__ = {"name": str, "ctx": annotation, "return": str}
    build: Callable[[], Server] = {
        "tool": lambda: Server("s", "1", tools=[tool(handler)]),
        "resource": lambda: Server(
            "s", "1", resources=[resource(uri="notes://{name}")(handler)]
        ),
        "prompt": lambda: Server("s", "1", prompts=[prompt(handler)]),
    }[kind]
    with pytest.raises(InvalidDeclaration) as caught:
        build()
    return str(caught.value)


@pytest.mark.parametrize("kind", ["tool", "resource", "prompt"])
@pytest.mark.parametrize(
    ("annotation", "named"),
    [
        (ToolContext, "ToolContext"),
        (McpContext, "mcp's Context"),
        (Optional[McpContext], "mcp's Context"),  # noqa: UP045 - the spelling users write
        (ToolContext | None, "ToolContext"),
        (Annotated[ToolContext, Field(description="The call.")], "ToolContext"),
    ],
)
def test_a_context_parameter_points_at_current(
    kind: str, annotation: object, named: str
) -> None:
    message = declare(kind, annotation)

    assert f"parameter 'ctx' is annotated with {named}, a call context" in message
    assert HINT in message
    assert "cannot be resolved" not in message


def test_an_unresolvable_context_annotation_says_the_same() -> None:
    message = declare("tool", "Context")

    assert "name 'Context' is not defined" in message
    assert HINT in message


def test_current_is_how_a_handler_reads_its_context() -> None:
    @tool
    def who(name: str) -> str:
        """
        Greet, saying whether a call is running.

        Args:
            name: Whom to greet.
        """
        ctx = ToolContext.current()
        return f"{name} ({ctx.request_id})"

    assert "ann (None)" == who("ann")
