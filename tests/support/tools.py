"""The plain tools most test servers need, declared once: ``echo`` and ``add``.

Servers run as subprocesses import them too: ``subprocess_env()`` (support) puts
``tests/`` on their ``PYTHONPATH``.
"""

from __future__ import annotations

from trio_mcp import tool

__all__ = ["add", "echo"]


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
