"""A trio_mcp server with one tool: copy it, rename it, make it yours."""

import trio

from trio_mcp import Server, ToolHints, tool


@tool(hints=ToolHints(read_only=True))
def add(a: int, b: int) -> int:
    """
    Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


server = Server("example", "0.1.0", tools=[add])

if __name__ == "__main__":
    trio.run(server.serve_stdio)
