"""The official MCP conformance suite's fixture, built with trio_mcp's public API.

The suite (``@modelcontextprotocol/conformance``, run by ``scripts/conformance``)
calls tools, prompts and resources by these exact names and checks their payloads;
the texts below are those of the suite's reference fixtures.

    python examples/conformance_server.py --port 3001   # http://127.0.0.1:3001/mcp

The catalog is assembled from groups (``CONTENT_TOOLS``, ``PROBE_TOOLS``, ...) so
fixtures that need later features (multi round-trip, ``subscriptions/listen``) can
be added as new groups. ``test_simple_text`` must stay the first tool: header
validation probes call the first listed tool with no arguments.
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import signal
from pathlib import Path
from typing import Annotated, Literal

import attrs
import trio

from trio_mcp import (
    AudioContent,
    DecodeError,
    Elicit,
    ElicitResult,
    EmbeddedResource,
    Field,
    ImageContent,
    ListRoots,
    NeedsInput,
    Problem,
    Prompt,
    PromptMessage,
    Resource,
    Root,
    Sample,
    SampleResult,
    Server,
    Skill,
    TextContent,
    TextResourceContents,
    Tool,
    ToolCall,
    ToolContext,
    ToolError,
    ToolReply,
    ToolSpec,
    prompt,
    resource,
    tool,
)

#: 1x1 PNG and a minimal WAV, the suite's shared test data.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")

Content = TextContent | ImageContent | AudioContent | EmbeddedResource


# -- tools: content, errors, progress (§6.1) ------------------------------------------
@tool
def test_simple_text() -> list[Content]:
    """Return one text block; called without arguments."""
    return [TextContent("This is a simple text response for testing.")]


@tool
def test_image_content() -> list[Content]:
    """Return a 1x1 PNG image block."""
    return [ImageContent(PNG, "image/png")]


@tool
def test_audio_content() -> list[Content]:
    """Return a short WAV audio block."""
    return [AudioContent(WAV, "audio/wav")]


@tool
def test_embedded_resource() -> list[Content]:
    """Return an embedded text resource."""
    return [
        EmbeddedResource(
            TextResourceContents(
                "test://embedded-resource",
                "This is an embedded resource content.",
                mime_type="text/plain",
            )
        )
    ]


@tool
def test_multiple_content_types() -> list[Content]:
    """Return text, an image and an embedded resource together."""
    return [
        TextContent("Multiple content types test:"),
        ImageContent(PNG, "image/png"),
        EmbeddedResource(
            TextResourceContents(
                "test://mixed-content-resource",
                json.dumps({"test": "data", "value": 123}),
                mime_type="application/json",
            )
        ),
    ]


@tool
def test_error_handling() -> list[Content]:
    """Fail on purpose with an error the model can read."""
    raise ToolError("This tool intentionally returns an error for testing")


@tool
async def test_tool_with_progress() -> list[Content]:
    """Report progress 0, 50 and 100 of 100, then answer with the progress token."""
    ctx = ToolContext.current()
    for step in (0, 50, 100):
        await ctx.progress(step, 100, f"Completed step {step} of 100")
        await trio.sleep(0.05)
    return [TextContent(str(ctx.progress_token))]


CONTENT_TOOLS: list[Tool] = [
    test_simple_text,
    test_image_content,
    test_audio_content,
    test_embedded_resource,
    test_multiple_content_types,
    test_error_handling,
    test_tool_with_progress,
]


# -- tools: 2026-07-28 protocol probes (§6.3) -----------------------------------------
@tool
def test_missing_capability() -> list[Content]:
    """Need the client's sampling capability; without it the request fails (-32021)."""
    ToolContext.current().require_client({"sampling": {}})
    return [TextContent("The client declared sampling.")]


@tool
async def test_streaming_elicitation() -> list[Content]:
    """Stream one progress notification before the result, never a request."""
    ctx = ToolContext.current()
    await ctx.progress(1, 1, "Streaming")
    return [TextContent("Streaming complete")]


@tool
async def test_logging_tool() -> list[Content]:
    """Log at info; the log reaches the client only if the request set a logLevel."""
    await ToolContext.current().log("info", "Logging tool evaluated")
    return [TextContent("Logging evaluated")]


PROBE_TOOLS: list[Tool] = [
    test_missing_capability,
    test_streaming_elicitation,
    test_logging_tool,
]


# -- resources (§6.5) -----------------------------------------------------------------
@resource(uri="test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@resource(uri="test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a PNG image)."""
    return PNG


@resource(uri="test://watched-resource", mime_type="text/plain", updatable=True)
def watched_resource() -> str:
    """A resource clients may watch for changes (subscriptions/listen)."""
    return "Watched resource content"


@resource(uri="test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> str:
    """Data for one id, from a URI template.

    Args:
        id: The record's id.
    """
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


RESOURCES: list[Resource] = [
    static_text,
    static_binary,
    watched_resource,
    template_data,
]


# -- prompts (§6.5) -------------------------------------------------------------------
@prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


def complete_arg1(value: str, context: dict[str, str]) -> list[str]:
    """Offer the known first arguments that start with what was typed."""
    return [word for word in ("test", "testing", "tested") if word.startswith(value)]


@prompt(complete={"arg1": complete_arg1})
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First argument.
        arg2: Second argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[PromptMessage]:
    """A prompt that embeds a resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [
        PromptMessage.user(
            EmbeddedResource(
                TextResourceContents(
                    resourceUri,
                    "Embedded resource content for testing.",
                    mime_type="text/plain",
                )
            )
        ),
        PromptMessage.user("Please process the embedded resource above."),
    ]


@prompt
def test_prompt_with_image() -> list[PromptMessage]:
    """A prompt that shows an image."""
    return [
        PromptMessage.user(ImageContent(PNG, "image/png")),
        PromptMessage.user("Please analyze the image above."),
    ]


PROMPTS: list[Prompt] = [
    test_simple_prompt,
    test_prompt_with_arguments,
    test_prompt_with_embedded_resource,
    test_prompt_with_image,
]


# -- multi round-trip: input_required results (§6.4) ----------------------------------
# Each handler asks with NeedsInput on the first call and completes on the retry that
# carries the answers; requestState is sealed by the server (HMAC), so a tampered one
# never reaches a handler. Handlers read answers with .get(): a missing one means ask.
@attrs.frozen
class UserName:
    name: str


@attrs.frozen
class Confirm:
    ok: bool


@attrs.frozen
class FavoriteColor:
    color: str


@attrs.frozen
class PromptContext:
    context: str


def _answer(key: str) -> ElicitResult | None:
    answer = ToolContext.current().input_responses.get(key)
    return answer if isinstance(answer, ElicitResult) else None


ASK_NAME = Elicit("What is your name?", schema=UserName)
ASK_CAPITAL = Sample("What is the capital of France?", max_tokens=100)
ASK_CONFIRM = Elicit("Please confirm", schema=Confirm)


@tool
def test_input_required_result_elicitation() -> list[Content] | NeedsInput:
    """Ask the user's name (elicitation), then greet them."""
    answer = _answer("user_name")
    if answer is None or not isinstance(answer.content, UserName):
        return NeedsInput({"user_name": ASK_NAME})
    return [TextContent(f"Hello, {answer.content.name}!")]


@tool
def test_input_required_result_sampling() -> list[Content] | NeedsInput:
    """Ask the client's model a question (sampling), then repeat its answer."""
    answer = ToolContext.current().input_responses.get("capital_question")
    if not isinstance(answer, SampleResult):
        return NeedsInput({"capital_question": ASK_CAPITAL})
    return [TextContent(f"The model said: {answer.text}")]


@tool
def test_input_required_result_list_roots() -> list[Content] | NeedsInput:
    """Ask the client's roots (roots/list), then list them."""
    roots = ToolContext.current().input_responses.get("client_roots")
    if not isinstance(roots, list):
        return NeedsInput({"client_roots": ListRoots()})
    uris = ", ".join(root.uri for root in roots if isinstance(root, Root))
    return [TextContent(f"Found {len(roots)} root(s): {uris}")]


@tool
def test_input_required_result_request_state() -> list[Content] | NeedsInput:
    """Ask for confirmation carrying server state; answer state-ok once it returns."""
    ctx = ToolContext.current()
    answer = _answer("confirm")
    if answer is None or ctx.state != {"pending": "confirm"}:
        return NeedsInput({"confirm": ASK_CONFIRM}, state={"pending": "confirm"})
    return [TextContent(f"state-ok: confirmed={answer.accepted}")]


@tool
def test_input_required_result_multiple_inputs() -> list[Content] | NeedsInput:
    """Ask for a name, a model answer and the roots at once."""
    responses = ToolContext.current().input_responses
    keys = {"user_name", "capital_question", "client_roots"}
    if not keys <= set(responses):
        return NeedsInput(
            {
                "user_name": ASK_NAME,
                "capital_question": ASK_CAPITAL,
                "client_roots": ListRoots(),
            },
            state={"asked": sorted(keys)},
        )
    return [TextContent("Received all 3 input responses")]


@tool
def test_input_required_result_multi_round() -> list[Content] | NeedsInput:
    """Ask a name, then a favorite color (a second round), then answer."""
    ctx = ToolContext.current()
    state = ctx.state if isinstance(ctx.state, dict) else {"step": 1}
    if state.get("step") == 1:
        name = _answer("step1")
        if name is None or not isinstance(name.content, UserName):
            return NeedsInput(
                {"step1": Elicit("Step 1: What is your name?", schema=UserName)},
                state={"step": 1},
            )
        state = {"step": 2, "name": name.content.name}
    color = _answer("step2")
    if color is None or not isinstance(color.content, FavoriteColor):
        return NeedsInput(
            {
                "step2": Elicit(
                    "Step 2: What is your favorite color?", schema=FavoriteColor
                )
            },
            state=state,
        )
    return [TextContent(f"{state['name']}'s favorite color is {color.content.color}")]


@tool
def test_input_required_result_tampered_state() -> list[Content] | NeedsInput:
    """Ask for confirmation with integrity-protected state; tampering is refused."""
    if _answer("confirm") is None or ToolContext.current().state != "untampered":
        return NeedsInput({"confirm": ASK_CONFIRM}, state="untampered")
    return [TextContent("requestState verified")]


@tool
def test_input_required_result_capabilities() -> list[Content] | NeedsInput:
    """Ask only for the inputs the client declared it can give."""
    ctx = ToolContext.current()
    if ctx.state == "asked":
        return [TextContent(f"Received {len(ctx.input_responses)} input response(s)")]
    wanted = {
        "user_name": ASK_NAME,
        "capital_question": ASK_CAPITAL,
        "client_roots": ListRoots(),
    }
    return NeedsInput(
        {key: request for key, request in wanted.items() if ctx.supports(request)},
        state="asked",
    )


@prompt
def test_input_required_result_prompt() -> list[PromptMessage] | NeedsInput:
    """A prompt that first asks the user for context (elicitation)."""
    answer = _answer("user_context")
    if answer is None or not isinstance(answer.content, PromptContext):
        return NeedsInput(
            {
                "user_context": Elicit(
                    "What context should the prompt use?", schema=PromptContext
                )
            }
        )
    return [PromptMessage.user(f"Use this context: {answer.content.context}")]


MRTR_TOOLS: list[Tool] = [
    test_input_required_result_elicitation,
    test_input_required_result_sampling,
    test_input_required_result_list_roots,
    test_input_required_result_request_state,
    test_input_required_result_multiple_inputs,
    test_input_required_result_multi_round,
    test_input_required_result_tampered_state,
    test_input_required_result_capabilities,
]
MRTR_PROMPTS: list[Prompt] = [test_input_required_result_prompt]


# -- subscriptions/listen: a dynamic catalog (§6.3) ----------------------------------
# The triggers add or remove one extra entry through Server.replace(), which announces
# notifications/tools/list_changed (or prompts/) to the listen streams that asked.
_extra = {"tool": False, "prompt": False}


@tool
def test_dynamic_tool() -> list[Content]:
    """A tool that test_trigger_tool_change adds and removes."""
    return [TextContent("Dynamic tool")]


@prompt
def test_dynamic_prompt() -> str:
    """A prompt that test_trigger_prompt_change adds and removes."""
    return "This prompt comes and goes."


@tool
async def test_trigger_tool_change() -> list[Content]:
    """Add or remove a tool; open listen streams that asked hear of it."""
    _extra["tool"] = not _extra["tool"]
    server.replace(tools=_tools())
    return [TextContent("Tool list changed")]


@tool
async def test_trigger_prompt_change() -> list[Content]:
    """Add or remove a prompt; open listen streams that asked hear of it."""
    _extra["prompt"] = not _extra["prompt"]
    server.replace(prompts=_prompts())
    return [TextContent("Prompt list changed")]


LISTEN_TOOLS: list[Tool] = [
    test_trigger_tool_change,
    test_trigger_prompt_change,
]


# -- handshake-era scenarios (--requirements 2025-11-25, served with --legacy) --------
# Each is written once: a handshake-era client receives the input requests as real
# server-to-client requests (sampling/createMessage, elicitation/create), a modern one
# as input_required rounds; logging reaches it after logging/setLevel.
@tool
async def test_tool_with_logging() -> list[Content]:
    """Log three info messages about 50 ms apart, then answer."""
    ctx = ToolContext.current()
    for text in ("Tool execution started", "Tool processing data"):
        await ctx.log("info", text)
        await trio.sleep(0.05)
    await ctx.log("info", "Tool execution completed")
    return [TextContent("Tool with logging executed successfully")]


@tool
def test_sampling(prompt: str) -> list[Content] | NeedsInput:
    """
    Ask the client's model to answer a prompt (sampling), then repeat its answer.

    Args:
        prompt: What to ask the model.
    """
    answer = ToolContext.current().input_responses.get("answer")
    if not isinstance(answer, SampleResult):
        return NeedsInput({"answer": Sample(prompt, max_tokens=100)})
    return [TextContent(f"LLM response: {answer.text}")]


@attrs.frozen
class UserResponse:
    username: Annotated[str, Field(description="User's response")]
    email: Annotated[str, Field(description="User's email address")]


@tool
def test_elicitation(message: str) -> list[Content] | NeedsInput:
    """
    Ask the user a question (elicitation), then report the answer.

    Args:
        message: The question to show the user.
    """
    answer = _answer("response")
    if answer is None:
        return NeedsInput({"response": Elicit(message, schema=UserResponse)})
    content = answer.content
    text = json.dumps(
        attrs.asdict(content) if isinstance(content, UserResponse) else None
    )
    return [TextContent(f"User response: action={answer.action}, content={text}")]


@attrs.frozen
class Defaults:
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


@tool
def test_elicitation_sep1034_defaults() -> list[Content] | NeedsInput:
    """Ask for a form whose every field has a default (SEP-1034)."""
    answer = _answer("form")
    if answer is None:
        return NeedsInput(
            {"form": Elicit("Please review your information", schema=Defaults)}
        )
    content = answer.content
    text = json.dumps(attrs.asdict(content) if isinstance(content, Defaults) else None)
    return [
        TextContent(f"Elicitation completed: action={answer.action}, content={text}")
    ]


TITLED = [
    {"const": "value1", "title": "First Option"},
    {"const": "value2", "title": "Second Option"},
    {"const": "value3", "title": "Third Option"},
]


@attrs.frozen
class EnumForm:
    """Every shape of choice a form can ask for (SEP-1330)."""

    untitledSingle: Literal["option1", "option2", "option3"]
    # Titled choices: the value sent back, and the title a user sees.
    titledSingle: Annotated[str, Field(json_schema={"oneOf": TITLED})]
    legacyEnum: Annotated[
        Literal["opt1", "opt2", "opt3"],
        Field(json_schema={"enumNames": ["Option One", "Option Two", "Option Three"]}),
    ]
    untitledMulti: list[Literal["option1", "option2", "option3"]]
    titledMulti: Annotated[list[str], Field(json_schema={"items": {"anyOf": TITLED}})]


@tool
def test_elicitation_sep1330_enums() -> list[Content] | NeedsInput:
    """Ask for a form with every enum shape: untitled, titled, legacy, multi (SEP-1330)."""
    answer = _answer("form")
    if answer is None:
        return NeedsInput({"form": Elicit("Pick your options", schema=EnumForm)})
    content = answer.content
    text = json.dumps(attrs.asdict(content) if isinstance(content, EnumForm) else None)
    return [
        TextContent(f"Elicitation completed: action={answer.action}, content={text}")
    ]


LEGACY_TOOLS: list[Tool] = [
    test_tool_with_logging,
    test_sampling,
    test_elicitation,
    test_elicitation_sep1034_defaults,
    test_elicitation_sep1330_enums,
]


# -- HTTP custom headers (http-custom-header-server-validation) -------------------------
@tool
def test_x_mcp_header(
    region: Annotated[str, Field(json_schema={"x-mcp-header": "Region"})],
) -> list[Content]:
    """
    Echo a region that is mirrored into the Mcp-Param-Region header.

    Args:
        region: The region; its value must also arrive as the Mcp-Param-Region header.
    """
    return [TextContent(f"Region: {region}")]


# -- a hand-written tool (json-schema-2020-12): calls as values -----------------------
#: JSON Schema 2020-12 keywords no Python type derives ($defs and $ref, allOf/anyOf,
#: if/then/else), kept verbatim; the tool object checks its arguments against it.
CONTACT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string", "description": "Who to contact."},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


class VerbatimSchemaTool:
    """A tool written as an object (the ``Tool`` protocol) with a hand-written schema."""

    def __init__(self) -> None:
        import jsonschema

        self._validator = jsonschema.Draft202012Validator(CONTACT_SCHEMA)

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="json_schema_2020_12_tool",
            description="Record how to contact someone (a JSON Schema 2020-12 input).",
            input_schema=CONTACT_SCHEMA,
        )

    async def dispatch(self, call: ToolCall) -> ToolReply:
        problems = [
            Problem(".".join(map(str, e.path)), e.message)
            for e in self._validator.iter_errors(call.arguments)
        ]
        if problems:
            raise DecodeError(problems)
        return ToolReply.ok(content=TextContent(f"Contact recorded: {call.arguments}"))


HEADER_TOOLS: list[Tool] = [test_x_mcp_header, VerbatimSchemaTool()]


# -- the tasks extension (SEP-2663): the tasks-* scenarios' fixtures -----------------
@tool
def greet(name: str) -> list[Content]:
    """Greet someone; a plain tool, never a task.

    Args:
        name: Who to greet.
    """
    return [TextContent(f"Hello, {name}!")]


@tool(task="optional")
async def slow_compute(seconds: float, label: str = "") -> list[Content]:
    """Wait some seconds, then report; runs as a task for clients that can poll.

    Args:
        seconds: How long to work; cancelling the task stops the wait.
        label: Echoed back in the result.
    """
    await trio.sleep(seconds)
    return [TextContent(f"{label or 'slow_compute'}: done after {seconds:g} s")]


@tool(task="required")
async def failing_job() -> list[Content]:
    """Work briefly, then fail with a tool error the model can read; only as a task."""
    await trio.sleep(0.2)
    raise ToolError("the job failed on purpose")


@tool(task="optional")
async def protocol_error_job() -> list[Content]:
    """Fail with an internal error (a protocol-level failure of the task)."""
    await trio.lowlevel.checkpoint()
    raise RuntimeError("protocol_error_job fails on purpose")


@attrs.frozen
class DeleteConfirmation:
    confirm: bool


@attrs.frozen
class NamedConfirmation:
    name: str
    confirm: bool


@tool(task="optional")
async def confirm_delete(filename: str) -> list[Content] | NeedsInput:
    """Ask the user to confirm, then pretend to delete the file.

    Args:
        filename: The file to delete.
    """
    answer = _answer("confirm")
    if answer is None or not isinstance(answer.content, DeleteConfirmation):
        return NeedsInput(
            {"confirm": Elicit(f"Delete {filename}?", schema=DeleteConfirmation)}
        )
    done = "Deleted" if answer.content.confirm else "Kept"
    return [TextContent(f"{done} {filename}")]


@tool(task="optional")
async def multi_input() -> list[Content] | NeedsInput:
    """Ask two questions at once, then report both answers."""
    first, second = _answer("first"), _answer("second")
    if first is None or second is None:
        ask = Elicit("Your name, and confirm", schema=NamedConfirmation)
        return NeedsInput({"first": ask, "second": ask})
    names = [
        a.content.name
        for a in (first, second)
        if isinstance(a.content, NamedConfirmation)
    ]
    return [TextContent(f"Received: {', '.join(names)}")]


@tool(task="required", task_start="handler")
async def test_tool_with_task() -> list[Content] | NeedsInput:
    """Ask the user's name by multi round-trip, then greet them from a task."""
    answer = _answer("user_name")
    if answer is None or not isinstance(answer.content, UserName):
        return NeedsInput({"user_name": ASK_NAME})
    await ToolContext.current().task_started()
    await trio.sleep(0.1)
    return [TextContent(f"Hello, {answer.content.name}, from a task!")]


TASK_TOOLS: list[Tool] = [
    greet,
    slow_compute,
    failing_job,
    protocol_error_job,
    confirm_delete,
    multi_input,
    test_tool_with_task,
]


def _tools() -> list[Tool]:
    extra = [test_dynamic_tool] if _extra["tool"] else []
    return [
        *CONTENT_TOOLS,
        *PROBE_TOOLS,
        *MRTR_TOOLS,
        *LISTEN_TOOLS,
        *LEGACY_TOOLS,
        *HEADER_TOOLS,
        *TASK_TOOLS,
        *extra,
    ]


def _prompts() -> list[Prompt]:
    extra = [test_dynamic_prompt] if _extra["prompt"] else []
    return [*PROMPTS, *MRTR_PROMPTS, *extra]


server = Server(
    name="trio-mcp-conformance",
    version="1.0.0",
    tools=_tools(),
    resources=RESOURCES,
    prompts=_prompts(),
    instructions="Fixture server for the official MCP conformance suite.",
    dynamic=True,
    # The skills extension (SEP-2640): the example skill folders beside this file.
    skills=Skill.all_in(Path(__file__).parent / "skills"),
)


def main() -> None:
    """Serve the fixture on 127.0.0.1 at /mcp."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--legacy",
        action="store_true",
        help="also serve handshake-era clients (initialize, revisions up to 2025-11-25)",
    )
    args = parser.parse_args()
    server.legacy = args.legacy
    trio.run(serve, args.host, args.port)


async def serve(host: str, port: int) -> None:
    """Serve until SIGTERM or SIGINT, then shut down gracefully (listens get results)."""
    async with trio.open_nursery() as nursery:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            nursery.start_soon(
                functools.partial(server.serve_http, host=host, port=port, path="/mcp")
            )
            async for _ in signals:
                server.shutdown()
                break


if __name__ == "__main__":
    main()
