"""Masking by the shape of each reply, through real JSON: completion values, and
structured content in lists and tuples, where an ``enum`` member the output schema
declares is public vocabulary and kept."""

from __future__ import annotations

from typing import Literal

from support import wire

from trio_mcp import Secret, Server, prompt, tool
from trio_mcp.testing import McpTestClient

Colour = Literal["red", "blue"]


@tool
def paint(token: Secret[str]) -> tuple[str, Colour]:
    """Paint a car in the colour the token names.

    Args:
        token: A colour, kept secret.
    """
    return f"my {token.reveal()} car", "red"


@tool
def palette(token: Secret[str]) -> list[Colour]:
    """The palette, whatever the token.

    Args:
        token: A colour, kept secret.
    """
    return ["red", "blue"]


@tool
def words(token: Secret[str]) -> list[str]:
    """The token as a word, and another.

    Args:
        token: A colour, kept secret.
    """
    return [token.reveal(), "green"]


def projects(value: str, filled: dict[str, str]) -> list[str]:
    key = Secret("sk-77-key")
    return ["alpha", f"beta {key.reveal()}"]


@prompt(complete={"project": projects})
def ticket(project: str) -> str:
    """Open a ticket.

    Args:
        project: Which project.
    """
    return project


@prompt
def rotate(key: str) -> str:
    """Rotate the vault key.

    Args:
        key: Which key.
    """
    Secret("vault")  # constructed in the call: the call's secrets know it
    return f"rotate the vault key {key}"


def make_server() -> Server:
    return Server(
        "shapes", "1", tools=[paint, palette, words], prompts=[ticket, rotate]
    )


async def test_completion_values_are_masked_with_the_completers_secrets() -> None:
    async with McpTestClient(make_server()) as client:
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "ticket"},
                "argument": {"name": "project", "value": ""},
            },
        )

    assert ["alpha", "beta **********"] == wire(result)["completion"]["values"]


async def test_a_tuples_declared_enum_member_is_kept_and_its_text_masked() -> None:
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("paint", {"token": "red"})

    assert ["my ********** car", "red"] == result.structured


async def test_list_items_are_walked_beside_their_item_schema() -> None:
    async with McpTestClient(make_server()) as client:
        declared = await client.call_tool("palette", {"token": "red"})
        free = await client.call_tool("words", {"token": "red"})

    assert ["red", "blue"] == declared.structured
    assert ["**********", "green"] == free.structured


async def test_a_prompts_description_and_messages_are_masked() -> None:
    async with McpTestClient(make_server()) as client:
        result = await client.request(
            "prompts/get", {"name": "rotate", "arguments": {"key": "k1"}}
        )

    assert {
        "description": "Rotate the ********** key.",
        "messages": [
            {
                "role": "user",
                "content": {"type": "text", "text": "rotate the ********** key k1"},
            }
        ],
        "resultType": "complete",
        "_meta": {
            "io.modelcontextprotocol/serverInfo": {"name": "shapes", "version": "1"}
        },
    } == result
