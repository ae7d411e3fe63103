"""``input_required`` never leaks (api.md "Trust"; issue 24 class 3), through real
JSON: the questions are masked like any reply, and ``requestState`` is sealed, so
the client cannot read what ``NeedsInput(state=...)`` carries."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import attrs
from support import wire

from trio_mcp import (
    Elicit,
    ElicitResult,
    NeedsInput,
    Sample,
    Secret,
    Server,
    ToolContext,
    tool,
)
from trio_mcp.testing import McpTestClient

TOKEN = "tok-9f3a-sealed"
CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}}


@attrs.frozen
class Confirm:
    ok: bool


@tool
def deploy(token: Secret[str]) -> str | NeedsInput:
    """Deploy with a token, after asking.

    Args:
        token: The deploy token.
    """
    ctx = ToolContext.current()
    answer = ctx.input_responses.get("confirm")
    if isinstance(answer, ElicitResult) and isinstance(ctx.state, dict):
        carried = ctx.state["token"]
        return f"deployed ({'same' if carried == token.reveal() else 'other'} token)"
    t = token.reveal()
    return NeedsInput(
        {
            "confirm": Elicit(f"Deploy with {t}?", schema=Confirm),
            "why": Sample(f"Explain why {t} is needed", max_tokens=20),
        },
        state={"token": t, "step": 1},
    )


def decoded_parts(state: str) -> list[bytes]:
    found = []
    for part in state.split("."):
        try:
            found.append(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
        except (binascii.Error, ValueError):
            continue
    return found


async def test_the_questions_are_masked_and_the_state_is_unreadable() -> None:
    server = Server("deploys", "1", tools=[deploy])
    async with McpTestClient(server, client_capabilities=CAPS) as client:
        first = wire((await client.call_tool("deploy", {"token": TOKEN})).raw)
        second = await client.call_tool(
            "deploy",
            {"token": TOKEN},
            input_responses={"confirm": {"action": "accept", "content": {"ok": True}}},
            request_state=first["requestState"],
        )

    requests = first["inputRequests"]
    assert "Deploy with **********?" == requests["confirm"]["params"]["message"]
    sampled = requests["why"]["params"]["messages"][0]["content"]["text"]
    assert "Explain why ********** is needed" == sampled
    assert TOKEN not in repr(first)
    assert all(
        TOKEN.encode() not in part for part in decoded_parts(first["requestState"])
    )
    assert all(b'"step"' not in part for part in decoded_parts(first["requestState"]))
    assert "deployed (same token)" == second.structured


@tool
def explain(token: Secret[str]) -> str | NeedsInput:
    """Ask the client's model to explain a token, with a system prompt.

    Args:
        token: The token.
    """
    t = token.reveal()
    return NeedsInput(
        {
            "why": Sample(
                [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": f"Why {t}?"},
                            {"type": "text", "text": "Be brief."},
                        ],
                    }
                ],
                max_tokens=20,
                system_prompt=f"You guard {t}.",
            )
        }
    )


async def test_a_sampling_questions_system_prompt_and_content_list_are_masked() -> None:
    server = Server("explains", "1", tools=[explain])
    async with McpTestClient(server, client_capabilities=CAPS) as client:
        first = wire((await client.call_tool("explain", {"token": TOKEN})).raw)

    assert {
        "method": "sampling/createMessage",
        "params": {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Why **********?"},
                        {"type": "text", "text": "Be brief."},
                    ],
                }
            ],
            "maxTokens": 20,
            "systemPrompt": "You guard **********.",
        },
    } == first["inputRequests"]["why"]
