"""Content blocks, prompt messages and resource contents that break the revision's
schema never reach the wire (api.md "The way out": conformance by construction).

``TextContent(5)`` or ``PromptMessage("system", ...)`` used to be encoded as they
were, so the client received ``{"type": "text", "text": 5}``, which the revision's
schema refuses. Now such a value cannot be built (TypeError or ValueError where the
handler builds it), and the request ends with -32603 alone. ``McpTestClient``
validates every message it receives, so a malformed one fails these tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from support.internal import fails_internally, quiet_client
from support.receipts import Sink

from trio_mcp import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    Receipt,
    ResourceLink,
    Server,
    TextContent,
    TextResourceContents,
    ToolCall,
    ToolReply,
    ToolSpec,
    prompt,
    resource,
    tool,
)
from trio_mcp.testing import McpTestClient

MALFORMED: dict[str, Callable[[], Any]] = {
    "text_not_str": lambda: [TextContent(5)],  # type: ignore[arg-type]
    "text_none": lambda: TextContent(None),  # type: ignore[arg-type]
    "link_uri_not_str": lambda: ResourceLink(5, "name"),  # type: ignore[arg-type]
    "link_name_none": lambda: ResourceLink("file:///a", None),  # type: ignore[arg-type]
    "link_mime_not_str": lambda: ResourceLink("file:///a", "a", mime_type=3),  # type: ignore[arg-type]
    "image_data_str": lambda: ImageContent("aGk=", "image/png"),  # type: ignore[arg-type]
    "image_mime_none": lambda: ImageContent(b"hi", None),  # type: ignore[arg-type]
    "embedded_not_contents": lambda: EmbeddedResource(TextContent("x")),  # type: ignore[arg-type]
    "embedded_text_not_str": lambda: EmbeddedResource(
        TextResourceContents("file:///a", 5)  # type: ignore[arg-type]
    ),
    "embedded_blob_str": lambda: EmbeddedResource(
        BlobResourceContents("file:///a", "aGk=")  # type: ignore[arg-type]
    ),
}


def _returning(name: str, build: Callable[[], Any]) -> Callable[[], list[TextContent]]:
    def handler() -> list[TextContent]:
        """Return content built wrongly."""
        value = build()
        return value if isinstance(value, list) else [value]

    handler.__name__ = handler.__qualname__ = name
    return handler


def make_server(receipts: list[Receipt]) -> Server:
    """One tool per malformed content value, beside an adopter and a prompt."""
    tools = [tool(_returning(name, build)) for name, build in MALFORMED.items()]

    @tool
    def fine() -> list[TextContent]:
        """Return one good text block."""
        return [TextContent("fine")]

    class Adopter:
        def spec(self) -> ToolSpec:
            return ToolSpec(
                "adopter", "Reply with a malformed block.", {"type": "object"}
            )

        async def dispatch(self, call: ToolCall) -> ToolReply:
            return ToolReply.ok(content=TextContent(["not", "a", "str"]))  # type: ignore[arg-type]

    @prompt
    def system_role() -> PromptMessage:
        """A prompt message with a role the revision does not have."""
        return PromptMessage("system", TextContent("x"))  # type: ignore[arg-type]

    @prompt
    def str_content() -> PromptMessage:
        """A prompt message whose content is a str, not a block."""
        return PromptMessage("user", "plain")  # type: ignore[arg-type]

    @resource(uri="bad://contents")
    def contents() -> list[TextResourceContents]:
        """Contents whose text is not a str."""
        return [TextResourceContents("bad://contents", 5)]  # type: ignore[arg-type]

    return Server(
        "content-guard",
        "1",
        tools=[*tools, fine, Adopter()],
        prompts=[system_role, str_content],
        resources=[contents],
        receipts=receipts.append,
    )


@pytest.fixture
async def client(sink: Sink) -> AsyncIterator[McpTestClient]:
    """The server's client; ``sink`` holds its receipts."""
    async with quiet_client(make_server(sink.receipts)) as client:
        yield client


@pytest.mark.parametrize("name", [*MALFORMED, "adopter"])
async def test_a_malformed_content_block_is_internal_and_the_next_call_answered(
    name: str, client: McpTestClient, sink: Sink
) -> None:
    await fails_internally(client.call_tool(name, {}))
    after = await client.call_tool("fine", {})

    assert after.text == "fine"
    assert [r.outcome for r in sink.receipts] == ["internal", "ok"]


@pytest.mark.parametrize("name", ["system_role", "str_content"])
async def test_a_malformed_prompt_message_is_internal(
    name: str, client: McpTestClient, sink: Sink
) -> None:
    await fails_internally(client.get_prompt(name))

    assert sink.receipts[0].outcome == "internal"


async def test_malformed_resource_contents_are_internal(
    client: McpTestClient, sink: Sink
) -> None:
    await fails_internally(client.read_resource("bad://contents"))

    assert sink.receipts[0].outcome == "internal"


def test_well_formed_values_still_build() -> None:
    blob = BlobResourceContents("file:///b", b"\x00\x01", "a/b")

    assert TextContent("x").to_wire() == {"type": "text", "text": "x"}
    assert ImageContent(b"hi", "image/png").to_wire()["data"] == "aGk="
    assert EmbeddedResource(blob).to_wire()["resource"]["blob"] == "AAE="  # type: ignore[index,call-overload]
    assert PromptMessage.assistant("a").role == "assistant"
    assert ResourceLink("file:///a", "a", "d", "text/plain").to_wire()["name"] == "a"
