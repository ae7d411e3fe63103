"""A return value must be what its annotation says, not merely something that
encodes into the schema: a str is not a list[str], a dict is not a tuple, a list is
not a prompt's str."""

from __future__ import annotations

import attrs
import pytest

from trio_mcp import PromptMessage, Receipt, Secret, Server, prompt, tool
from trio_mcp.testing import McpTestClient, ProtocolError


@tool
def letters() -> list[str]:
    """Return letters (but returns a str)."""
    return "ab"  # type: ignore[return-value]


@tool
def pair() -> tuple[str, ...]:
    """Return strings (but returns a dict)."""
    return {"a": 1}  # type: ignore[return-value]


@attrs.frozen
class Token:
    name: str
    value: Secret[str]


@tool
def token() -> Token:
    """Return a token whose secret is masked on the wire."""
    return Token("api", Secret("s3cr3t-value"))


@prompt
def listed() -> str:
    """A prompt declared -> str that returns a list."""
    return [PromptMessage.user("hi")]  # type: ignore[return-value]


def make_server(receipts: list[Receipt]) -> Server:
    return Server(
        "shapes",
        "1",
        tools=[letters, pair, token],
        prompts=[listed],
        receipts=receipts.append,
    )


@pytest.mark.parametrize("name", ["letters", "pair"])
async def test_a_value_that_changes_shape_when_encoded_is_refused(name: str) -> None:
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts)) as client:
        with pytest.raises(ProtocolError) as info:
            await client.call_tool(name)
        after = await client.call_tool("token")

    assert -32603 == info.value.code
    assert ("internal", "trio_mcp.InvalidReply") == (
        receipts[0].outcome,
        receipts[0].error_type,
    )
    assert {"name": "api", "value": "**********"} == after.structured


async def test_a_prompt_must_return_what_it_declares() -> None:
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts)) as client:
        with pytest.raises(ProtocolError) as info:
            await client.get_prompt("listed")

    assert -32603 == info.value.code
    assert "trio_mcp.InvalidReply" == receipts[0].error_type
