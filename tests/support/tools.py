"""The plain declarations most test servers need, declared once: the tools ``echo``,
``add``, ``steps`` and ``locate`` (``x-mcp-header`` parameters), the prompt ``greet``.

Servers run as subprocesses import them too: ``subprocess_env()`` (support) puts
``tests/`` on their ``PYTHONPATH``.
"""

from __future__ import annotations

from typing import Annotated

from trio_mcp import Field, FunctionTool, ToolContext, prompt, tool

__all__ = ["add", "echo", "echo_as", "greet", "locate", "steps"]


def _echo(text: str) -> str:
    """Return the text unchanged.

    Args:
        text: What to echo.
    """
    return text


def echo_as(name: str) -> FunctionTool[[str], str]:
    """``echo`` under another name: a test whose records outlive it (the process's
    Prometheus registry) keeps its own series apart by its tool names."""
    return tool(name=name)(_echo)


echo = echo_as("echo")


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool
async def steps(count: int = 3) -> str:
    """Report progress once per step, then finish.

    Args:
        count: How many steps to take.
    """
    ctx = ToolContext.current()
    for done in range(1, count + 1):
        await ctx.progress(done, count)
    return f"{count} steps"


@prompt
def greet(name: str) -> str:
    """
    Greet someone.

    Args:
        name: Who.
    """
    return f"hello {name}"


@tool
def locate(
    region: Annotated[str, Field(json_schema={"x-mcp-header": "Region"})],
    shard: Annotated[int | None, Field(json_schema={"x-mcp-header": "Shard"})] = None,
    fast: Annotated[bool, Field(json_schema={"x-mcp-header": "Fast"})] = False,
) -> str:
    """
    Say where a call was routed.

    Args:
        region: The region to route to.
        shard: The shard within the region.
        fast: Whether to take the fast path.
    """
    return f"{region}/{shard}/{fast}"
