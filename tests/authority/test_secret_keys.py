"""A Secret never participates in a key (api.md: "... or cache keys").

``requestState`` binds a retry to the request's arguments; the binding digests the
arguments with every write-only (``Secret``) value masked, so the secret is in no
digest and no token, while the other arguments still bind.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from support import wire

from trio_mcp import Elicit, ElicitResult, NeedsInput, Secret, Server, ToolContext, tool
from trio_mcp._authority import mask_write_only
from trio_mcp._json import JsonValue
from trio_mcp.testing import McpTestClient, ProtocolError

MASK = "**********"
CAPS: dict[str, Any] = {"elicitation": {}}


@attrs.frozen
class Confirm:
    ok: bool


@tool
def transfer(account: str, token: Secret[str]) -> str | NeedsInput:
    """
    Transfer after confirmation.

    Args:
        account: Where to.
        token: The bank token.
    """
    answer = ToolContext.current().input_responses.get("confirm")
    if not isinstance(answer, ElicitResult):
        return NeedsInput({"confirm": Elicit("Sure?", schema=Confirm)})
    return f"sent to {account} with a {len(token.reveal())}-character token"


YES = {"action": "accept", "content": {"ok": True}}


def test_write_only_values_are_masked_at_any_depth() -> None:
    """Our choice: masking follows properties, additionalProperties, items, oneOf."""
    schema: JsonValue = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "token": {"type": "string", "writeOnly": True},
            "keys": {"type": "object", "additionalProperties": {"writeOnly": True}},
            "logins": {
                "type": "array",
                "items": {
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": {
                                "Basic": {
                                    "type": "object",
                                    "properties": {"password": {"writeOnly": True}},
                                }
                            },
                        },
                    ]
                },
            },
        },
    }
    value: JsonValue = {
        "name": "ada",
        "token": "t1",
        "keys": {"a": "k1"},
        "logins": [{"Basic": {"password": "p1"}}],
    }

    assert {
        "name": "ada",
        "token": MASK,
        "keys": {"a": MASK},
        "logins": [{"Basic": {"password": MASK}}],
    } == mask_write_only(value, schema)


async def test_request_state_holds_no_secret_and_does_not_bind_it() -> None:
    """The token is in no requestState; a retry binds to the other arguments only."""
    async with McpTestClient(
        Server("keys", "1", tools=[transfer]), client_capabilities=CAPS
    ) as client:
        first = await client.call_tool(
            "transfer", {"account": "acc-1", "token": "tok-aaaa"}
        )
        state = wire(first.raw)["requestState"]
        same = await client.call_tool(
            "transfer",
            {"account": "acc-1", "token": "tok-bbbb"},
            input_responses={"confirm": YES},
            request_state=state,
        )
        with pytest.raises(ProtocolError) as other:
            await client.call_tool(
                "transfer",
                {"account": "acc-2", "token": "tok-aaaa"},
                input_responses={"confirm": YES},
                request_state=state,
            )

    assert "tok-aaaa" not in state
    assert "sent to acc-1 with a 8-character token" == same.structured
    assert -32602 == other.value.code
