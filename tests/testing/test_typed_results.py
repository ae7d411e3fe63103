"""``read_resource`` and ``get_prompt`` return typed views that are still the result dicts."""

from __future__ import annotations

import pytest

from trio_mcp import PromptMessage, Server, prompt, resource
from trio_mcp.testing import McpTestClient, PromptResult, ProtocolError, ResourceResult


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
