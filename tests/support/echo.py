"""The echo tool: the one tool most test servers need, declared once.

Servers run as subprocesses import it too: ``subprocess_env()`` (support) puts
``tests/`` on their ``PYTHONPATH``.
"""

from __future__ import annotations

from trio_mcp import tool

__all__ = ["echo"]


@tool
def echo(text: str) -> str:
    """Return the text unchanged.

    Args:
        text: What to echo.
    """
    return text
