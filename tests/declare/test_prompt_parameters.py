"""Prompt parameters are walked like a tool's (issue 24 class 7), through real JSON.

``str | None`` without a default is not required and arrives as None; ``*args``,
``**kwargs``, positional-only and unannotated parameters are refused by
``Server(...)`` (an ``InvalidDeclaration`` naming the parameter), never at
``prompts/get`` time.
"""

from __future__ import annotations

from typing import Optional

import pytest
from support import wire

from trio_mcp import InvalidDeclaration, Server, prompt
from trio_mcp.testing import McpTestClient


@prompt
def greet(who: str, mood: str | None, tone: Optional[str]) -> str:  # noqa: UP045
    """Greet someone.

    Args:
        who: Whom to greet.
        mood: How (optional, with no default).
        tone: Which tone (optional, with no default).
    """
    return f"hello {who} {mood} {tone}"


async def test_str_or_none_without_a_default_is_not_required_and_arrives_as_none() -> (
    None
):
    async with McpTestClient(Server("p", "1", prompts=[greet])) as client:
        listed = await client.list_prompts()
        got = await client.get_prompt("greet", {"who": "ana"})
        given = await client.get_prompt("greet", {"who": "ana", "mood": "glad"})

    assert [("who", True), ("mood", False), ("tone", False)] == [
        (a["name"], a["required"]) for a in wire(listed)[0]["arguments"]
    ]
    assert "hello ana None None" == wire(got)["messages"][0]["content"]["text"]
    assert "hello ana glad None" == wire(given)["messages"][0]["content"]["text"]


def _star_args(*names: str) -> str:
    """Greet several.

    Args:
        names: Whom to greet.
    """
    return " ".join(names)


def _star_kwargs(**names: str) -> str:
    """Greet several.

    Args:
        names: Whom to greet.
    """
    return " ".join(names)


def _positional_only(who: str, /) -> str:
    """Greet someone.

    Args:
        who: Whom to greet.
    """
    return who


def _unannotated(who) -> str:  # type: ignore[no-untyped-def]
    """Greet someone.

    Args:
        who: Whom to greet.
    """
    return str(who)


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (_star_args, "parameter 'names' is *args/**kwargs"),
        (_star_kwargs, "parameter 'names' is *args/**kwargs"),
        (_positional_only, "parameter 'who' is positional-only"),
        (_unannotated, "parameter 'who' has no type annotation"),
    ],
)
def test_a_parameter_a_tool_would_refuse_is_refused_by_the_server(
    fn: object, says: str
) -> None:
    declared = prompt(fn)  # type: ignore[call-overload]

    with pytest.raises(InvalidDeclaration) as info:
        Server("p", "1", prompts=[declared])

    assert says in str(info.value)


def _str_with_none(who: str = None) -> str:  # type: ignore[assignment]  # noqa: RUF013
    """Greet.

    Args:
        who: Whom.
    """
    return f"hello {who}"


def _optional_with_none(who: str | None = None) -> str:
    """Greet.

    Args:
        who: Whom.
    """
    return f"hello {who}"


def test_a_str_parameter_defaulting_to_none_is_refused() -> None:
    """F6: ``who: str = None`` promises a string and hands over None; the server
    asks for ``str | None`` (or a string default) before it serves the prompt."""
    with pytest.raises(InvalidDeclaration) as info:
        Server("p", "1", prompts=[prompt(_str_with_none)])

    assert "parameter 'who' is 'str' with the default None" in str(info.value)
    assert "who: str | None = None" in str(info.value)
    Server("p", "1", prompts=[prompt(_optional_with_none)])  # what it asks for
