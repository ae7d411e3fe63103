"""Smaller promises of the declarations: optional parameters, stale ``Args:`` entries,
hints listed as declared, and the test client's raw access to notifications."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support import wire

from trio_mcp import InvalidDeclaration, Server, ToolHints, prompt, resource, tool
from trio_mcp.testing import McpTestClient


@tool
def greet(name: str, title: str | None) -> str:
    """
    Greet someone.

    Args:
        name: Who to greet.
        title: How to address them, if at all.
    """
    return f"Hello, {title + ' ' if title else ''}{name}"


@tool(hints=ToolHints(read_only=True))
def peek() -> int:
    """Look without touching anything."""
    return 1


async def test_an_optional_parameter_without_a_default_is_not_required() -> None:
    """api.md type table: ``T | None`` is never required; missing decodes to None."""
    async with McpTestClient(Server("s", "1", tools=[greet, peek])) as client:
        (entry, _) = await client.list_tools()
        result = await client.call_tool("greet", {"name": "Ada"})

    assert ["name"] == wire(entry)["inputSchema"]["required"]
    assert "Hello, Ada" == result.structured
    assert not result.is_error


async def test_hints_list_only_what_the_author_declared() -> None:
    """Issue 12: a read-only tool is not also listed as destructive."""
    async with McpTestClient(Server("s", "1", tools=[greet, peek])) as client:
        tools = {t["name"]: t for t in await client.list_tools()}

    assert {"readOnlyHint": True} == tools["peek"]["annotations"]
    assert "annotations" not in tools["greet"]


@pytest.mark.parametrize("kind", ["tool", "prompt", "resource"])
def test_an_args_entry_that_names_no_parameter_is_refused(kind: str) -> None:
    """api.md "Command line and hosts": stale ``Args:`` entries are problems."""

    def handler(city: str) -> str:
        """
        Weather for a city.

        Args:
            city: The city.
            country: Left over from an older signature.
        """
        return city

    makers: dict[str, Callable[[], Server]] = {
        "tool": lambda: Server("s", "1", tools=[tool(handler)]),
        "prompt": lambda: Server("s", "1", prompts=[prompt(handler)]),
        "resource": lambda: Server(
            "s", "1", resources=[resource(uri="weather://{city}")(handler)]
        ),
    }
    declared = makers[kind]

    with pytest.raises(InvalidDeclaration) as info:
        declared()

    assert 1 == len(info.value.problems)
    assert "'country'" in info.value.problems[0]
    assert "no such parameter" in info.value.problems[0]


async def test_send_raw_of_a_notification_returns_nothing_after_settling() -> None:
    """api.md "Precise shapes": a notification gets no reply, so ``[]`` (no timeout)."""
    async with McpTestClient(Server("s", "1", tools=[peek]), timeout=2) as client:
        emitted = await client.send_raw(
            '{"jsonrpc":"2.0","method":"notifications/cancelled",'
            '"params":{"requestId":99}}'
        )
        still = await client.call_tool("peek")

    assert [] == emitted
    assert 1 == still.structured


def test_every_exception_of_ours_is_in_one_tree() -> None:
    """Issue 12: one exception tree under McpError, the stdlib bases kept."""
    import trio_mcp

    ours = [
        value
        for value in vars(trio_mcp).values()
        if isinstance(value, type) and issubclass(value, BaseException)
    ]

    assert {
        "AlreadyRunning",
        "DecodeError",
        "DuplicateName",
        "InsecureBinding",
        "InvalidArgument",
        "InvalidDeclaration",
        "InvalidReply",
        "McpError",
        "MissingClientCapability",
        "Refusal",
        "ResourceNotFound",
        "StateKeyRequired",
        "ToolError",
        "Transport",
        "UnsupportedType",
    } == {cls.__name__ for cls in ours}
    assert all(issubclass(cls, trio_mcp.McpError) for cls in ours)
    assert issubclass(trio_mcp.DecodeError, ValueError)
    assert issubclass(trio_mcp.ResourceNotFound, LookupError)


@resource("note://{name}", ttl=5, mime_type="text/plain")
def note(name: str) -> str:
    """
    A note by name.

    Args:
        name: The note's name.
    """
    return f"note {name}"


async def test_a_resource_takes_its_uri_positionally_with_options() -> None:
    """The positional URI and keyword options type-check (mypy runs on tests)."""
    async with McpTestClient(Server("s", "1", resources=[note])) as client:
        read = await client.read_resource("note://a")

    assert 5000 == read["ttlMs"]
    assert "note a" == wire(read)["contents"][0]["text"]
