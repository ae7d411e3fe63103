"""A dynamic server for the listen tests; ``python listen_server.py`` serves it on stdio.

Tools change the catalog (``toggle_tool``, ``toggle_prompt``), publish resource
updates (``touch``) or wait to be cancelled (``block``), so a test can drive every
kind of listen notification from ordinary requests, in-process or over a pipe.
"""

from __future__ import annotations

import sys

import trio
from support.tools import echo

from trio_mcp import (
    Limits,
    Prompt,
    Resource,
    Server,
    Tool,
    ToolContext,
    prompt,
    resource,
    tool,
)


@tool
async def block() -> str:
    """Wait until cancelled (or for a minute)."""
    await trio.sleep(60)
    return "unblocked"


@tool
async def report(steps: int = 2) -> str:
    """Send progress and a log line, then finish.

    Args:
        steps: How many progress notifications to send.
    """
    ctx = ToolContext.current()
    for step in range(1, steps + 1):
        await ctx.progress(step, steps)
    await ctx.log("info", "reported")
    return "reported"


@tool
def extra() -> str:
    """A tool that comes and goes."""
    return "extra"


@prompt
def greeting() -> str:
    """Say hello."""
    return "Hello"


@prompt
def farewell() -> str:
    """Say goodbye."""
    return "Goodbye"


@resource(uri="test://watched", updatable=True)
def watched() -> str:
    """A resource that changes."""
    return "watched"


@resource(uri="test://other", updatable=True)
def other() -> str:
    """Another resource that changes."""
    return "other"


@resource(uri="test://fixed")
def fixed() -> str:
    """A resource that never changes."""
    return "fixed"


@resource(uri="ticket://{ticket_id}", updatable=True)
def ticket(ticket_id: str) -> str:
    """One ticket.

    Args:
        ticket_id: The ticket's id.
    """
    return f"ticket {ticket_id}"


BASE_TOOLS: list[Tool] = [echo, block, report]
BASE_PROMPTS: list[Prompt] = [greeting]
RESOURCES: list[Resource] = [watched, other, fixed, ticket]
URIS = ["test://watched", "test://other", "ticket://1", "ticket://2", "ticket://3"]


def make_server() -> Server:
    """Build a fresh dynamic server whose tools change its own catalog."""
    state = {"tool": False, "prompt": False}
    server: Server

    @tool
    async def toggle_tool() -> str:
        """Add or remove the tool 'extra', announcing the change."""
        state["tool"] = not state["tool"]
        extras: list[Tool] = [extra] if state["tool"] else []
        tools = [*BASE_TOOLS, *CHANGERS, *extras]
        server.replace(tools=tools)
        return "toggled"

    @tool
    async def toggle_prompt() -> str:
        """Add or remove the prompt 'farewell', announcing the change."""
        state["prompt"] = not state["prompt"]
        server.replace(
            prompts=[*BASE_PROMPTS, *([farewell] if state["prompt"] else [])]
        )
        return "toggled"

    @tool
    async def touch(uri: str) -> str:
        """Publish an update of one resource.

        Args:
            uri: The resource that changed.
        """
        await server.notify_updated(uri)
        return "touched"

    CHANGERS: list[Tool] = [toggle_tool, toggle_prompt, touch]
    server = Server(
        "listen-test",
        "1.0",
        tools=[*BASE_TOOLS, *CHANGERS],
        resources=RESOURCES,
        prompts=BASE_PROMPTS,
        dynamic=True,
    )
    return server


if __name__ == "__main__":
    grace = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    trio.run(lambda: make_server().serve_stdio(limits=Limits(grace_period=grace)))
