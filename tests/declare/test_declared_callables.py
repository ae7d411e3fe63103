"""What may be declared: functions, async functions, bound methods; how they describe
themselves (Google, NumPy and reST docstrings); and that they stay directly callable.
"""

from __future__ import annotations

import attrs
from support import wire

from trio_mcp import Server, Tool, ToolHints, prompt, resource, tool
from trio_mcp.testing import McpTestClient


@tool
def add(a: int, b: int = 1) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool
async def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a * b


@attrs.define
class Counter:
    start: int

    @tool(name="count_up")
    def up(self, by: int) -> int:
        """Count up from this counter's start.

        Args:
            by: How far.
        """
        return self.start + by


@attrs.define
class Greeter:
    greeting: str

    @tool
    async def greet(self, name: str) -> str:
        """Greet someone.

        Args:
            name: Whom.
        """
        return f"{self.greeting}, {name}"

    @resource("greetings://{name}")
    def greeting_for(self, name: str) -> str:
        """The greeting for one person."""
        return f"{self.greeting}, {name}"

    @prompt
    def invite(self, name: str) -> str:
        """Invite someone.

        Args:
            name: Whom.
        """
        return f"{self.greeting} {name}, come in"


async def test_functions_async_functions_and_methods_of_different_classes_mix() -> None:
    """api.md: one list may hold every kind of callable; each runs as written."""
    ten = Counter(10)
    hello = Greeter("hello")
    server = Server("mixed", "1", tools=[add, multiply, ten.up, hello.greet])
    async with McpTestClient(server) as client:
        results = [
            (await client.call_tool("add", {"a": 2})).structured,
            (await client.call_tool("multiply", {"a": 3, "b": 4})).structured,
            (await client.call_tool("count_up", {"by": 5})).structured,
            (await client.call_tool("greet", {"name": "ana"})).structured,
        ]

    assert [3, 12, 15, "hello, ana"] == results


async def test_two_instances_of_one_class_serve_their_own_state() -> None:
    """api.md: a bound method carries its instance."""
    first, second = Greeter("hi"), Greeter("ahoy")
    server = Server(
        "two",
        "1",
        resources=[first.greeting_for],
        prompts=[second.invite],
    )
    async with McpTestClient(server) as client:
        read = await client.read_resource("greetings://bo")
        got = await client.get_prompt("invite", {"name": "cy"})

    assert "hi, bo" == wire(read)["contents"][0]["text"]
    assert "ahoy cy, come in" == wire(got)["messages"][0]["content"]["text"]


async def test_decorated_functions_stay_directly_callable() -> None:
    """api.md: the decorated object returns what the function returns."""
    assert 5 == add(2, b=3)
    assert 12 == await multiply(3, 4)


async def test_bound_methods_stay_directly_callable_with_their_own_arguments() -> None:
    """api.md: desk.search_tickets("refund", limit=5) returns what the method returns."""
    counter = Counter(7)
    greeter = Greeter("hey")

    assert 10 == counter.up(3)
    assert 10 == counter.up(by=3)
    assert "hey, di" == await greeter.greet("di")
    assert "hey, di" == greeter.greeting_for("di")
    assert "hey di, come in" == greeter.invite("di")


def test_accessing_a_method_declaration_on_the_class_gives_the_declaration() -> None:
    """Our choice: Counter.up is the unbound Tool, usable to build others."""
    assert isinstance(Counter.up, Tool)
    assert Counter.up.bound_to is None  # type: ignore[attr-defined]
    counter = Counter(1)
    assert counter is counter.up.bound_to


def test_the_wire_name_defaults_to_the_function_name_and_may_be_overridden() -> None:
    """api.md: the wire name defaults to __name__."""
    server = Server("names", "1", tools=[add, Counter(0).up])

    assert ["add", "count_up"] == [s.name for s in server.catalog()]


def test_a_direct_call_outside_a_server_needs_no_context() -> None:
    """api.md: direct calls work in plain tests (no Server, no client)."""

    @tool(caps=(), timeout=1)
    def whoami() -> str:
        """Say who is calling."""
        from trio_mcp import ToolContext

        ctx = ToolContext.current()
        return f"{ctx.request_id} {ctx.principal}"

    assert "None None" == whoami()


# -- docstring styles ---------------------------------------------------------------------


@tool
def google_style(query: str, limit: int = 5) -> list[str]:
    """Search the archive.

    Longer text that explains more and must not reach the description.

    Args:
        query: Words to look for,
            continued on a second line.
        limit: Most results.

    Returns:
        The matches.
    """
    return [query] * limit


@tool
def numpy_style(query: str, limit: int = 5) -> list[str]:
    """Search the archive.

    Longer text that explains more and must not reach the description.

    Parameters
    ----------
    query : str
        Words to look for,
        continued on a second line.
    limit : int
        Most results.

    Returns
    -------
    list of str
        The matches.
    """
    return [query] * limit


@tool
def rest_style(query: str, limit: int = 5) -> list[str]:
    """Search the archive.

    Longer text that explains more and must not reach the description.

    :param query: Words to look for,
        continued on a second line.
    :param limit: Most results.
    :returns: The matches.
    """
    return [query] * limit


async def test_google_numpy_and_rest_docstrings_describe_a_tool_alike() -> None:
    """api.md: the description is the first paragraph; params come from any style."""
    server = Server("docs", "1", tools=[google_style, numpy_style, rest_style])
    async with McpTestClient(server) as client:
        listed = await client.list_tools()

    described = {
        (
            t["description"],
            wire(t)["inputSchema"]["properties"]["query"]["description"],
            wire(t)["inputSchema"]["properties"]["limit"]["description"],
        )
        for t in listed
    }
    assert {
        (
            "Search the archive.",
            "Words to look for, continued on a second line.",
            "Most results.",
        )
    } == described


def test_a_summary_wrapped_over_two_lines_is_one_description() -> None:
    """Our choice: the first paragraph is joined into one line."""

    @tool
    def wrapped() -> None:
        """Do something that takes more words than fit
        on one line of the docstring.

        Then details.
        """

    (spec,) = Server("w", "1", tools=[wrapped]).catalog()

    assert (
        "Do something that takes more words than fit on one line of the docstring."
        == spec.description
    )


async def test_hints_and_title_reach_the_wire_as_annotations() -> None:
    """api.md: ToolHints maps to readOnlyHint and friends; hints grant nothing."""

    @tool(
        title="Peek",
        hints=ToolHints(
            read_only=True, destructive=False, idempotent=True, open_world=False
        ),
    )
    def peek() -> str:
        """Peek at the state."""
        return "ok"

    async with McpTestClient(Server("h", "1", tools=[peek])) as client:
        (listed,) = await client.list_tools()

    assert "Peek" == listed["title"]
    assert {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    } == listed["annotations"]
