"""Redaction is structural (api.md "Trust"; issue 24 class 1), through real JSON.

Masking changes only string values the handler produced, never keys or protocol
fields; a reply is valid against the revision's schema and its output schema
whatever a secret's value is, and one client's secret never changes another's
replies. Hypothesis draws secret values from the reply's own vocabulary: every key
and enum string of the revision's schema.
"""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import Any, Literal

import attrs
import jsonschema
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import wire
from support.tools import echo
from support.vocabulary import VOCABULARY

from trio_mcp import (
    Elicit,
    EmbeddedResource,
    NeedsInput,
    ResourceLink,
    Secret,
    Server,
    TextContent,
    TextResourceContents,
    ToolError,
    prompt,
    resource,
    tool,
)
from trio_mcp.testing import McpTestClient

NEUTRAL = "zq9-neutral-secret-zq9"


@attrs.frozen
class Report:
    kind: Literal["text", "image", "resource"]
    note: str
    tags: dict[str, str]


@attrs.frozen
class Confirm:
    ok: bool


@tool
def report(token: Secret[str], kind: Literal["text", "image", "resource"]) -> Report:
    """Report on a token.

    Args:
        token: The secret.
        kind: A word from the output schema's own enum.
    """
    t = token.reveal()
    return Report(kind=kind, note=f"the token is {t}.", tags={"seen": f"<{t}>"})


@tool
def blocks(token: Secret[str]) -> list[TextContent | ResourceLink | EmbeddedResource]:
    """Answer with every kind of block a handler writes text into.

    Args:
        token: The secret.
    """
    t = token.reveal()
    return [
        TextContent(f"text holds {t}"),
        ResourceLink(uri="notes://link", name=f"name {t}", description=f"about {t}"),
        EmbeddedResource(TextResourceContents(uri="notes://inner", text=f"inner {t}")),
    ]


@tool
def fails(token: Secret[str]) -> str:
    """Fail with the secret in the message.

    Args:
        token: The secret.
    """
    raise ToolError(f"could not use {token.reveal()}")


@tool
def asks(token: Secret[str]) -> str | NeedsInput:
    """Ask the user about the token.

    Args:
        token: The secret.
    """
    return NeedsInput(
        {"confirm": Elicit(f"use the token {token.reveal()}?", schema=Confirm)}
    )


@prompt
def recall(word: str) -> str:
    """A prompt that keeps its argument secret.

    Args:
        word: Treated as a secret inside the call.
    """
    Secret(word)  # registered for this call only
    return f"Remember {word}, always."


@resource(uri="vault://{word}")
def vault(word: str) -> str:
    """A resource whose variable is a secret inside the call.

    Args:
        word: Treated as a secret inside the call.
    """
    Secret(word)
    return f"the vault holds {word}"


@tool
async def hold(token: Secret[str]) -> str:
    """Hold the secret a while.

    Args:
        token: The secret.
    """
    await trio.sleep(0.2)
    return f"held {token.reveal()}"


SERVER = Server(
    "masks",
    "1.0",
    tools=[report, blocks, fails, asks, echo, hold],
    prompts=[recall],
    resources=[vault],
)
CAPS: dict[str, Any] = {"elicitation": {}}


def shape(value: Any, *, secret: str) -> Any:
    """``value`` with the strings a handler wrote replaced by ``"S"``: keys and
    protocol fields stay, so two shapes are equal when the structure is. The keys of
    ``tags`` (a ``dict[str, str]``: the handler's data, masked too) become a list of their values."""
    if isinstance(value, dict) and "tags" in value and isinstance(value["tags"], dict):
        tags = [shape(v, secret=secret) for v in value["tags"].values()]
        rest = {k: v for k, v in value.items() if k != "tags"}
        return {**shape(rest, secret=secret), "tags": tags}
    if isinstance(value, dict):
        return {
            k: v if k in PROTOCOL_FIELDS else shape(v, secret=secret)
            for k, v in value.items()
            if k not in ("requestState", "_meta")
        }
    if isinstance(value, list):
        return [shape(v, secret=secret) for v in value]
    return "S" if isinstance(value, str) else value


#: Protocol fields (``role`` and ``cacheScope`` hold enum words such as "user" and
#: "private"), and ``kind`` (a value the output schema declares as an enum).
PROTOCOL_FIELDS = {
    "type",
    "role",
    "cacheScope",
    "mimeType",
    "resultType",
    "isError",
    "method",
    "mode",
    "kind",
}


def handler_strings(value: Any) -> list[str]:
    """Every string value except protocol fields, keys and ``_meta``."""
    if isinstance(value, dict):
        return [
            s
            for k, v in value.items()
            if k not in PROTOCOL_FIELDS and k not in ("_meta", "requestState", "uri")
            for s in handler_strings(v)
        ]
    if isinstance(value, list):
        return [s for v in value for s in handler_strings(v)]
    return [value] if isinstance(value, str) else []


async def replies(secret: str, *, read: bool = True) -> list[dict[str, Any]]:
    """One reply of each shape, for ``secret`` (every message is schema-checked)."""
    async with McpTestClient(SERVER, client_capabilities=CAPS) as client:
        out = [
            (await client.call_tool("report", {"token": secret, "kind": "text"})).raw,
            (await client.call_tool("blocks", {"token": secret})).raw,
            (await client.call_tool("fails", {"token": secret})).raw,
            (await client.call_tool("asks", {"token": secret})).raw,
            await client.get_prompt("recall", {"word": secret}),
        ]
        if read:
            out.append(await client.read_resource(f"vault://{secret}"))
    return [wire(r) for r in out]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(secret=st.sampled_from(VOCABULARY))
def test_a_secret_from_the_replys_own_vocabulary_never_changes_its_structure(
    secret: str,
) -> None:
    read = "/" not in secret  # a '/' may not fill a {word} (issue 24 class 5)
    masked = trio.run(partial(replies, secret, read=read))
    neutral = trio.run(partial(replies, NEUTRAL, read=read))

    for got, baseline in zip(masked, neutral, strict=True):
        assert shape(baseline, secret=NEUTRAL) == shape(got, secret=secret)
        assert [] == [s for s in handler_strings(shown(got)) if secret in s]


def shown(reply: dict[str, Any]) -> dict[str, Any]:
    """``reply`` without the text block that shows its structured content: that
    block is made from the masked structured value (issue 34), so it shows what
    the output schema declares (a ``kind`` enum member) as the structured value
    does; the structured value itself is still checked."""
    if "structuredContent" not in reply:
        return reply
    same = json.dumps(reply["structuredContent"], separators=(",", ":"))
    blocks = [b for b in reply["content"] if b.get("text") != same]
    return {**reply, "content": blocks}


@pytest.mark.parametrize("secret", ["e", "t", "o", "content", "_meta", "**"])
async def test_short_and_protocol_secrets_keep_every_reply_valid(secret: str) -> None:
    """The audit's "e": it must not turn ``content`` into ``cont**********nt``."""
    masked = await replies(secret)
    neutral = await replies(NEUTRAL)

    for got, baseline in zip(masked, neutral, strict=True):
        assert shape(baseline, secret=NEUTRAL) == shape(got, secret=secret)


def test_the_vocabulary_is_the_schemas() -> None:
    assert {"text", "content", "type", "resultType", "user", "assistant"} <= set(
        VOCABULARY
    )
    assert len(VOCABULARY) > 200


async def test_a_secret_named_text_leaves_the_content_block_a_text_block() -> None:
    """The audit's example: a secret "text" must not become the block's type."""
    async with McpTestClient(SERVER) as client:
        result = await client.call_tool("blocks", {"token": "text"})

    assert ["text", "resource_link", "resource"] == [b["type"] for b in result.content]
    assert "********** holds **********" == result.content[0]["text"]


async def test_an_enum_value_of_the_output_schema_is_kept_and_the_reply_fits() -> None:
    async with McpTestClient(SERVER) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        result = await client.call_tool("report", {"token": "image", "kind": "image"})

    assert "image" == wire(result.structured)["kind"]
    assert "the token is **********." == wire(result.structured)["note"]
    jsonschema.validate(result.structured, tools["report"]["outputSchema"])


async def test_one_clients_living_secret_never_changes_another_clients_reply() -> None:
    """A Secret held by one caller (here: alive in this test) is not masked in the
    replies of calls that never saw it."""
    held = Secret("content")
    async with McpTestClient(SERVER) as client:
        result = await client.call_tool("echo", {"text": "content is king"})

    assert "content is king" == result.structured
    assert "content is king" == result.content[0]["text"]
    assert "content" == held.reveal()


@tool
def logs_and_echoes(text: str) -> str:
    """Log a line (rebuilding the living secrets' masks), then echo.

    Args:
        text: What to echo.
    """
    logging.getLogger("trio_mcp.tests").warning("echoing %s", text)
    return text


async def test_a_log_record_inside_a_call_does_not_bring_living_secrets_in() -> None:
    """Masking a log record reads the living secrets; that must not make them this
    call's secrets (their plaintext would then be masked in its reply)."""
    server = Server("logs", "1", tools=[logs_and_echoes])
    held = Secret("kingdom")
    async with McpTestClient(server) as client:
        result = await client.call_tool("logs_and_echoes", {"text": "a kingdom"})

    assert "a kingdom" == result.structured
    assert "kingdom" == held.reveal()


async def test_a_concurrent_calls_secret_never_changes_another_reply() -> None:
    """While one call holds the secret "king", another call's "king" is its own."""
    seen: dict[str, Any] = {}

    async def holding(client: McpTestClient) -> None:
        seen["hold"] = (await client.call_tool("hold", {"token": "king"})).structured

    async with McpTestClient(SERVER) as client, trio.open_nursery() as nursery:
        nursery.start_soon(holding, client)
        await trio.testing.wait_all_tasks_blocked()  # "hold" has the secret now
        seen["echo"] = (
            await client.call_tool("echo", {"text": "content is king"})
        ).structured

    assert "content is king" == seen["echo"]
    assert "held **********" == seen["hold"]
