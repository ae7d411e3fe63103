"""The plain tools most test servers need, declared once: ``echo``, ``add``, ``steps``.

Servers run as subprocesses import them too: ``subprocess_env()`` (support) puts
``tests/`` on their ``PYTHONPATH``.
"""

from __future__ import annotations

from trio_mcp import ToolContext, tool

__all__ = ["add", "echo", "steps"]


@tool
def echo(text: str) -> str:
    """Return the text unchanged.

    Args:
        text: What to echo.
    """
    return text


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
