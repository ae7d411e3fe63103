"""Masking by the shape of each reply, through real JSON: completion values, and
structured content in lists and tuples, where an ``enum`` member the output schema
declares is public vocabulary and kept."""

from __future__ import annotations

from typing import Any, Literal

from support import wire

from trio_mcp import (
    ResourceLink,
    Secret,
    Server,
    ToolCall,
    ToolReply,
    ToolSpec,
    prompt,
    tool,
)
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


# -- a hand-written output schema: $ref, anyOf, const, required-only keys ----------------
def _chain(hops: int) -> dict[str, Any]:
    """``C1`` -> ``C2`` -> ... -> ``Shade``: ``hops`` references in a row."""
    defs = {f"C{i}": {"$ref": f"#/$defs/C{i + 1}"} for i in range(1, hops)}
    defs[f"C{hops}"] = {"$ref": "#/$defs/Shade"}
    return defs


HAND_OUTPUT: dict[str, Any] = {
    "$defs": {
        "Shade": {"type": "string", "enum": ["red", "blue"]},
        "Alias": {"$ref": "#/$defs/Shade"},
        "Item": {
            "type": "object",
            "properties": {
                "shade": {"$ref": "#/$defs/Alias"},
                "label": {"type": "string"},
            },
            "required": ["shade", "label"],
        },
        **_chain(8),
    },
    "type": "object",
    "properties": {
        "main": {"$ref": "#/$defs/Item"},
        "reddish": {"type": "string"},
        "either": {"anyOf": [{"const": "red"}, {"type": "integer"}]},
        "pick": {"oneOf": [{"type": "integer"}, {"const": "red"}]},
        "both": {"allOf": [{"$ref": "#/$defs/Shade"}]},
        "after": {"anyOf": [{"const": "red"}, True]},
        "free": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Shade"}},
        "line": {
            "type": "array",
            "prefixItems": [{"$ref": "#/$defs/Shade"}, {"type": "string"}],
        },
        "near": {"$ref": "#/$defs/C2"},
        "far": {"$ref": "#/$defs/C1"},
    },
    "required": ["main", "red"],
}


class Painter:
    """A hand-written tool whose output schema is written out, not derived."""

    def spec(self) -> ToolSpec:
        return ToolSpec(
            "painter",
            "Paint with a secret colour.",
            {"type": "object", "properties": {"far": {"type": "boolean"}}},
            output_schema=HAND_OUTPUT,
        )

    async def dispatch(self, call: ToolCall) -> ToolReply:
        red = Secret("red").reveal()  # the call's secret: its plaintext is "red"
        far = {"far": red} if call.arguments.get("far") else {}
        return ToolReply.ok(
            {
                "main": {"shade": red, "label": f"a {red} car"},
                "red": f"{red} paint",
                "reddish": "pink",
                "either": red,
                "pick": red,
                "both": red,
                "after": red,
                "free": {red: "blue", "mine": red},
                "line": [red, f"{red} line"],
                "near": red,
                **far,
            }
        )


async def test_a_hand_written_schema_is_followed_through_refs_and_branches() -> None:
    """What the schema declares where it stands (an enum behind a ``$ref`` chain,
    a ``const`` in ``anyOf``, a property or a required key) is kept; the rest of
    the handler's strings and undeclared keys are masked. A chain of more than
    eight references is not followed: its value would be masked, which breaks the
    schema's ``const``, so that reply is withheld (the safe side)."""
    async with McpTestClient(Server("hand", "1", tools=[Painter()])) as client:
        result = await client.call_tool("painter", {})
        beyond = await client.call_tool("painter", {"far": True})

    assert {
        "main": {"shade": "red", "label": "a ********** car"},
        "red": "********** paint",
        "reddish": "pink",
        "either": "red",
        "pick": "red",
        "both": "red",
        "after": "red",
        "free": {"**********": "blue", "mine": "red"},
        "line": ["red", "********** line"],
        "near": "red",
    } == result.structured
    assert beyond.is_error
    assert beyond.text.startswith("a secret was withheld: ")
    assert "(far: enum)" in beyond.text


class Failing:
    """A hand-written tool that fails with a detail of lists and nested objects."""

    def spec(self) -> ToolSpec:
        return ToolSpec("failing", "Fail.", {"type": "object", "properties": {}})

    async def dispatch(self, call: ToolCall) -> ToolReply:
        red = Secret("red").reveal()
        return ToolReply.error(
            f"no {red} left",
            {"kind": red, "tried": [f"{red} one", {"kind": red, "why": red}]},
        )


async def test_an_error_detail_is_masked_at_every_depth_but_its_kinds() -> None:
    async with McpTestClient(Server("hand", "1", tools=[Failing()])) as client:
        result = await client.call_tool("failing", {})

    assert {
        "content": [{"type": "text", "text": "no ********** left"}],
        "isError": True,
        "resultType": "complete",
        "_meta": {
            "dev.trio-mcp/error": {
                "kind": "red",
                "tried": ["********** one", {"kind": "red", "why": "**********"}],
            },
            "io.modelcontextprotocol/serverInfo": {"name": "hand", "version": "1"},
        },
    } == result.raw


@tool
def relative(token: Secret[str]) -> ResourceLink:
    """Link to a path without a scheme, under a name that looks like one.

    Args:
        token: Part of the path, kept secret.
    """
    t = token.reveal()
    return ResourceLink(uri=f"notes/{t}", name=f"{t}: a note")


async def test_a_uri_without_a_scheme_is_masked_whole_and_a_name_is_no_uri() -> None:
    async with McpTestClient(Server("rel", "1", tools=[relative])) as client:
        result = await client.call_tool("relative", {"token": "red"})

    assert [
        {
            "type": "resource_link",
            "uri": "notes/**********",
            "name": "**********: a note",
        }
    ] == result.content
