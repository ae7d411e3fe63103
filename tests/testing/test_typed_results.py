"""``read_resource`` and ``get_prompt`` return typed views that are still the result dicts."""

from __future__ import annotations

import pytest

from trio_mcp import PromptMessage, Server, ToolHints, prompt, resource, tool
from trio_mcp.testing import (
    ListedTool,
    McpTestClient,
    PromptResult,
    ProtocolError,
    ResourceResult,
)


@resource("notes://{name}", mime_type="text/markdown")
def note(name: str) -> str:
    """
    One note.

    Args:
        name: The note's name.
    """
    return f"# {name}\nWritten down."


@resource("logo://png", mime_type="image/png")
def logo() -> bytes:
    """The logo."""
    return b"\x89PNG"


@prompt
def greet(person: str) -> list[PromptMessage]:
    """
    Greet someone.

    Args:
        person: Who to greet.
    """
    return [PromptMessage.user(f"Say hello to {person}.")]


SERVER = Server("notes", "1.0", resources=[note, logo], prompts=[greet])


async def test_read_resource_gives_contents_text_and_blobs() -> None:
    async with McpTestClient(SERVER) as client:
        text = await client.read_resource("notes://todo")
        binary = await client.read_resource("logo://png")

    assert isinstance(text, ResourceResult)
    assert "# todo\nWritten down." == text.text
    assert "notes://todo" == text["contents"][0]["uri"]  # type: ignore[index, call-overload]
    assert [b"\x89PNG"] == binary.blobs
    assert "" == binary.text


async def test_get_prompt_gives_messages_and_their_text() -> None:
    async with McpTestClient(SERVER) as client:
        result = await client.get_prompt("greet", {"person": "Ana"})

    assert isinstance(result, PromptResult)
    assert "Say hello to Ana." == result.text
    assert ["user"] == [message["role"] for message in result.messages]
    assert "Greet someone." == result.description


async def test_a_failure_shows_the_public_protocol_error() -> None:
    async with McpTestClient(SERVER) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.get_prompt("missing")

    assert "trio_mcp.testing" == type(caught.value).__module__
    assert "trio_mcp.testing.ProtocolError" in repr(caught.type)


@tool(hints=ToolHints(read_only=True), title="Add")
def add(a: int, b: int) -> int:
    """
    Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


async def test_list_entries_are_values_and_still_the_wire_dicts() -> None:
    """Issue 45, item 8: as ``call_tool`` returns a value, so do the lists."""
    server = Server("all", "1.0", tools=[add], resources=[note, logo], prompts=[greet])
    async with McpTestClient(server) as client:
        (tool_entry,) = await client.list_tools()
        (prompt_entry,) = await client.list_prompts()
        (resource_entry,) = await client.list_resources()
        (template_entry,) = await client.list_resource_templates()

    assert isinstance(tool_entry, ListedTool)
    assert "add" == tool_entry.name == tool_entry["name"]
    assert "Add" == tool_entry.title
    assert "Add two numbers." == tool_entry.description
    assert ["a", "b"] == tool_entry.input_schema["required"]
    assert tool_entry.output_schema is not None
    assert tool_entry.annotations["readOnlyHint"] is True
    assert "greet" == prompt_entry.name
    assert ["person"] == [a["name"] for a in prompt_entry.arguments]
    assert "logo://png" == resource_entry.uri
    assert "image/png" == resource_entry.mime_type
    assert resource_entry.uri_template is None
    assert "notes://{name}" == template_entry.uri_template
    assert isinstance(tool_entry.meta, dict)
