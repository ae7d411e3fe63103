"""Hand-written adopters of Tool, Resource and Prompt beside decorated declarations
(api.md "Calls as values", RFC 156 "Catalog" 1-2, issue 12).

A tool object written by hand (as one generated from an OpenAPI operation or a
proxy to another server would be) is served in one list with decorated functions
and bound methods, and gets what they get: listing, caps with receipts, its
deadline, ``isError`` replies, the reply guard against its own output schema, and
validation of its spec when the Server is built.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest
import trio
from support import wire

from trio_mcp import (
    Capability,
    DecodeError,
    DuplicateName,
    InvalidDeclaration,
    Problem,
    PromptArgument,
    PromptGet,
    PromptMessage,
    PromptReply,
    PromptSpec,
    Receipt,
    Resource,
    ResourceNotFound,
    ResourceRead,
    ResourceReply,
    ResourceSpec,
    Server,
    TextResourceContents,
    Tool,
    ToolCall,
    ToolContext,
    ToolHints,
    ToolReply,
    ToolSpec,
    tool,
)
from trio_mcp.testing import McpTestClient, ProtocolError

INTERNAL_ERROR = -32603
forecast_cap = Capability("forecast", description="Ask the weather service")

CITY_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "Where."}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
    "additionalProperties": False,
}

Answer = Callable[[ToolCall], Awaitable[ToolReply]]


async def _forecast(call: ToolCall) -> ToolReply:
    city = call.arguments["city"]
    assert isinstance(city, str)
    if city == "Atlantis":
        return ToolReply.error(f"no forecast for {city}", {"kind": "unknown_city"})
    if city == "Lemuria":
        # Breaks its own output schema: celsius must be a number.
        return ToolReply.ok({"city": city, "celsius": "warm"})
    if city == "Mu":
        await trio.sleep_forever()
    return ToolReply.ok({"city": city, "celsius": 21.5})


@attrs.define
class HandTool:
    """A tool written by hand: a spec and one dispatch."""

    the_spec: ToolSpec
    answer: Answer = _forecast
    calls: list[ToolCall] = attrs.field(factory=list)

    def spec(self) -> ToolSpec:
        return self.the_spec

    async def dispatch(self, call: ToolCall) -> ToolReply:
        self.calls.append(call)
        return await self.answer(call)


def weather(**changes: Any) -> HandTool:
    spec = ToolSpec(
        name="weather",
        description="The forecast for a city.",
        input_schema=CITY_INPUT,
        output_schema=WEATHER_OUTPUT,
        annotations=ToolHints(read_only=True),
    )
    return HandTool(attrs.evolve(spec, **changes))


class Notes:
    """A resource template written by hand."""

    def spec(self) -> ResourceSpec:
        return ResourceSpec(
            uri="notes://{name}",
            name="notes",
            description="A note, by name.",
            mime_type="text/plain",
        )

    async def dispatch(self, read: ResourceRead) -> ResourceReply:
        name = read.variables["name"]
        if name == "missing":
            raise ResourceNotFound(read.uri)
        return ResourceReply(
            TextResourceContents(read.uri, f"note {name}", "text/plain")  # type: ignore[arg-type]
        )


class Haiku:
    """A prompt written by hand."""

    def spec(self) -> PromptSpec:
        return PromptSpec(
            name="haiku",
            description="Ask for a haiku.",
            arguments=(PromptArgument("topic", "What about.", required=True),),
        )

    async def dispatch(self, get: PromptGet) -> PromptReply:
        return PromptReply(
            PromptMessage.user(f"Write a haiku about {get.arguments['topic']}."),  # type: ignore[arg-type]
            description="a haiku",
        )


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@attrs.define
class Desk:
    prefix: str

    @tool(hints=ToolHints(read_only=True))
    def label(self, text: str) -> str:
        """
        Label a text with the desk's prefix.

        Args:
            text: What to label.
        """
        return f"{self.prefix}: {text}"


def served(*tools: Tool, receipts: list[Receipt] | None = None) -> Server:
    return Server(
        "adopters",
        "1",
        tools=[*tools, ping, Desk("desk").label],
        resources=[Notes()],
        prompts=[Haiku()],
        receipts=None if receipts is None else receipts.append,
    )


# -- one list, served alike -------------------------------------------------------------
async def test_hand_written_adopters_are_listed_beside_decorated_ones() -> None:
    forecast = weather()
    assert isinstance(forecast, Tool)
    assert isinstance(Notes(), Resource)

    async with McpTestClient(served(forecast)) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()

    assert list(tools) == ["weather", "ping", "label"]
    assert tools["weather"] == {
        "name": "weather",
        "description": "The forecast for a city.",
        "inputSchema": CITY_INPUT,
        "outputSchema": WEATHER_OUTPUT,
        "annotations": {"readOnlyHint": True},
    }
    assert tools["label"]["annotations"] == {"readOnlyHint": True}
    assert "annotations" not in tools["ping"]
    assert [(t["uriTemplate"], t["name"]) for t in templates] == [
        ("notes://{name}", "notes")
    ]
    assert prompts == [
        {
            "name": "haiku",
            "description": "Ask for a haiku.",
            "arguments": [
                {"name": "topic", "description": "What about.", "required": True}
            ],
        }
    ]


async def test_hand_written_adopters_are_called_beside_decorated_ones() -> None:
    forecast = weather()
    receipts: list[Receipt] = []

    async with McpTestClient(served(forecast, receipts=receipts)) as client:
        result = await client.call_tool("weather", {"city": "Oslo"})
        pong = await client.call_tool("ping")
        label = await client.call_tool("label", {"text": "hi"})
        note = await client.read_resource("notes://groceries")
        haiku = await client.get_prompt("haiku", {"topic": "rain"})

    assert result.structured == {"city": "Oslo", "celsius": 21.5}
    assert result.text == '{"city":"Oslo","celsius":21.5}'
    assert not result.is_error
    (call,) = forecast.calls
    assert (call.name, call.arguments) == ("weather", {"city": "Oslo"})
    assert (pong.structured, label.structured) == ("pong", "desk: hi")
    assert note["contents"] == [
        {"uri": "notes://groceries", "mimeType": "text/plain", "text": "note groceries"}
    ]
    assert haiku["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "Write a haiku about rain."},
        }
    ]
    assert [(r.kind, r.name, r.outcome) for r in receipts] == [
        ("tool", "weather", "ok"),
        ("tool", "ping", "ok"),
        ("tool", "label", "ok"),
        ("resource", "notes://groceries", "ok"),
        ("prompt", "haiku", "ok"),
    ]
    assert receipts[0].declaration == "test_adopters:HandTool"


async def test_a_hand_written_resource_not_found_is_invalid_params() -> None:
    async with McpTestClient(served(weather())) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.read_resource("notes://missing")

    assert caught.value.code == -32602
    assert caught.value.data == {"uri": "notes://missing"}


# -- the same rules -----------------------------------------------------------------------
async def test_caps_in_the_spec_are_enforced_with_a_receipt() -> None:
    forecast = weather(caps=[forecast_cap])
    receipts: list[Receipt] = []

    async with McpTestClient(served(forecast, receipts=receipts)) as client:
        refused = await client.call_tool("weather", {"city": "Oslo"})
    async with McpTestClient(
        served(forecast, receipts=receipts), allow=[forecast_cap]
    ) as client:
        granted = await client.call_tool("weather", {"city": "Oslo"})

    assert refused.is_error
    assert wire(refused.meta)["dev.trio-mcp/error"]["kind"] == "refused"
    assert "forecast" in refused.text
    assert len(forecast.calls) == 1  # the refused call never reached dispatch
    assert granted.structured == {"city": "Oslo", "celsius": 21.5}
    assert [(r.outcome, r.required, r.granted) for r in receipts] == [
        ("refused", frozenset({"forecast"}), frozenset()),
        ("ok", frozenset({"forecast"}), frozenset({"forecast"})),
    ]


async def test_caps_in_the_spec_bound_ctx_require() -> None:
    async def require(call: ToolCall) -> ToolReply:
        ToolContext.current().require(forecast_cap)
        return ToolReply.ok({"city": "here", "celsius": 1})

    forecast = HandTool(weather(caps=[forecast_cap]).the_spec, require)
    async with McpTestClient(served(forecast), allow=[forecast_cap]) as client:
        result = await client.call_tool("weather", {"city": "x"})

    assert result.structured == {"city": "here", "celsius": 1}


async def test_the_timeout_in_the_spec_becomes_the_deadline() -> None:
    receipts: list[Receipt] = []
    forecast = weather(timeout=0.05)

    async with McpTestClient(served(forecast, receipts=receipts)) as client:
        with trio.fail_after(20):  # liveness: Mu never answers by itself
            result = await client.call_tool("weather", {"city": "Mu"})

    assert result.is_error
    assert result.meta["dev.trio-mcp/error"] == {"kind": "timeout", "seconds": 0.05}
    assert receipts[0].outcome == "timeout"


async def test_an_error_reply_is_is_error_with_outcome_error() -> None:
    receipts: list[Receipt] = []

    async with McpTestClient(served(weather(), receipts=receipts)) as client:
        result = await client.call_tool("weather", {"city": "Atlantis"})

    assert result.is_error
    assert result.text == "no forecast for Atlantis"
    assert result.meta["dev.trio-mcp/error"] == {"kind": "unknown_city"}
    assert "structuredContent" not in result.raw
    assert receipts[0].outcome == "error"


async def test_a_reply_breaking_its_own_output_schema_is_internal() -> None:
    receipts: list[Receipt] = []

    async with McpTestClient(served(weather(), receipts=receipts)) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("weather", {"city": "Lemuria"})
        after = await client.call_tool("weather", {"city": "Oslo"})

    assert caught.value.code == INTERNAL_ERROR
    assert (receipts[0].outcome, receipts[0].error_type) == (
        "internal",
        "trio_mcp.InvalidReply",
    )
    assert after.structured == {"city": "Oslo", "celsius": 21.5}


@pytest.mark.parametrize(
    "wrong",
    [{"city": "x", "celsius": 1}, PromptReply(PromptMessage.user("hi")), None],  # type: ignore[arg-type]
    ids=["dict", "PromptReply", "None"],
)
async def test_a_dispatch_returning_no_tool_reply_is_internal(wrong: object) -> None:
    async def answer(call: ToolCall) -> ToolReply:
        return wrong  # type: ignore[return-value]

    receipts: list[Receipt] = []
    forecast = HandTool(weather().the_spec, answer)
    async with McpTestClient(served(forecast, receipts=receipts)) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("weather", {"city": "x"})

    assert caught.value.code == INTERNAL_ERROR
    assert receipts[0].error_type == "trio_mcp.InvalidReply"


async def test_a_structured_reply_without_the_declared_schema_is_internal() -> None:
    async def no_structured(call: ToolCall) -> ToolReply:
        return ToolReply.ok()

    forecast = HandTool(weather().the_spec, no_structured)
    async with McpTestClient(served(forecast)) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("weather", {"city": "x"})

    assert caught.value.code == INTERNAL_ERROR


# -- specs are validated when the Server is built -------------------------------------------
def test_invalid_adopter_specs_are_all_named_at_server_construction() -> None:
    nameless = weather(description=None)
    badly_named = weather(name="has spaces")
    flat_input = weather(name="flat", input_schema={"type": "string"})

    with pytest.raises(InvalidDeclaration) as caught:
        served(nameless, badly_named, flat_input)

    message = str(caught.value)
    assert "test_adopters:HandTool" in message
    assert "tool 'weather'" in message
    assert "has no description" in message
    assert "tool 'has spaces'" in message
    assert "the name must be" in message
    assert "tool 'flat'" in message
    assert "input schema must be a JSON Schema object" in message
    assert len(caught.value.problems) == 3


def test_an_object_that_adopts_nothing_is_refused_naming_it() -> None:
    class NoDispatch:
        def spec(self) -> ToolSpec:
            return weather().the_spec

    with pytest.raises(InvalidDeclaration, match="NoDispatch"):
        served(NoDispatch())  # type: ignore[arg-type]


def test_adopter_resources_and_prompts_need_a_description() -> None:
    class Silent(Notes):
        def spec(self) -> ResourceSpec:
            return attrs.evolve(super().spec(), description=None)

    class Mute(Haiku):
        def spec(self) -> PromptSpec:
            return attrs.evolve(super().spec(), description=None)

    with pytest.raises(InvalidDeclaration) as caught:
        Server("s", "1", resources=[Silent()], prompts=[Mute()])

    resource_problem, prompt_problem = caught.value.problems
    assert resource_problem.startswith("resource 'notes://{name}' (test_adopters:")
    assert prompt_problem.startswith("prompt 'haiku' (test_adopters:")
    assert "no description" in resource_problem
    assert "no description" in prompt_problem


def test_an_adopter_named_like_a_decorated_tool_is_a_duplicate() -> None:
    with pytest.raises(DuplicateName) as caught:
        served(weather(name="ping"))

    assert "'ping'" in str(caught.value)
    assert "test_adopters:HandTool" in str(caught.value)
    assert "test_adopters:ping" in str(caught.value)


async def test_an_adopter_raising_decode_error_lists_every_problem() -> None:
    async def strict(call: ToolCall) -> ToolReply:
        raise DecodeError(
            [Problem("city", "expected a string"), Problem("days", "unknown key")]
        )

    receipts: list[Receipt] = []
    forecast = HandTool(weather().the_spec, strict)
    async with McpTestClient(served(forecast, receipts=receipts)) as client:
        # Valid against the schema (F8 refuses anything else before dispatch): the
        # adopter's own checks find the problems.
        result = await client.call_tool("weather", {"city": "Paris"})

    assert result.is_error
    assert result.text.splitlines()[1:] == [
        "- city: expected a string",
        "- days: unknown key",
    ]
    assert wire(result.meta)["dev.trio-mcp/error"]["kind"] == "invalid_arguments"
    assert receipts[0].outcome == "invalid"


async def test_an_adopter_may_ask_ctx_require_and_be_refused() -> None:
    async def require(call: ToolCall) -> ToolReply:
        ToolContext.current().require(forecast_cap)
        return ToolReply.ok({"city": "x", "celsius": 0})

    receipts: list[Receipt] = []
    # Declared, not granted: refused before dispatch runs.
    forecast = HandTool(weather(caps=[forecast_cap]).the_spec, require)
    async with McpTestClient(served(forecast, receipts=receipts)) as client:
        result = await client.call_tool("weather", {"city": "x"})
    # Not even declared in the spec: require() refuses whatever the host grants.
    undeclared = HandTool(weather().the_spec, require)
    async with McpTestClient(
        served(undeclared, receipts=receipts), allow=[forecast_cap]
    ) as client:
        not_declared = await client.call_tool("weather", {"city": "x"})

    assert result.is_error
    assert not_declared.is_error
    assert [r.outcome for r in receipts] == ["refused", "refused"]


@pytest.mark.parametrize(
    ("arguments", "problems"),
    [
        ({"city": 1}, ["- city: must be of type string"]),
        ({}, ["- arguments: 'city' is a required property"]),
    ],
)
async def test_an_adopter_receives_only_arguments_its_schema_admits(
    arguments: dict[str, Any], problems: list[str]
) -> None:
    """F8 (issue 44): a hand-written tool decodes nothing itself, so the arguments
    are checked against the input schema it publishes before ``dispatch`` runs:
    what does not fit is the same ``isError`` result a decorated tool gives, every
    problem listed, and the value never echoed."""
    seen: list[dict[str, Any]] = []

    async def record(call: ToolCall) -> ToolReply:
        seen.append(dict(call.arguments))
        return await _forecast(call)

    receipts: list[Receipt] = []
    forecast = HandTool(weather().the_spec, record)
    async with McpTestClient(served(forecast, receipts=receipts)) as client:
        refused = await client.call_tool("weather", arguments)
        served_ = await client.call_tool("weather", {"city": "Paris"})

    assert refused.is_error
    assert problems == refused.text.splitlines()[1:]
    assert wire(refused.meta)["dev.trio-mcp/error"]["kind"] == "invalid_arguments"
    assert ["invalid", "ok"] == [r.outcome for r in receipts]
    assert [{"city": "Paris"}] == seen
    assert not served_.is_error
