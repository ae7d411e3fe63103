"""A dual-era server for the legacy tests: every shape the edge must translate.

Handlers are written once, for both eras: the tools that ask (``NeedsInput``) are
served to a handshake-era client through real server-to-client requests.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
import trio

from trio_mcp import (
    Elicit,
    ElicitResult,
    ElicitUrl,
    ListRoots,
    NeedsInput,
    PromptMessage,
    ResourceLink,
    ResourceNotFound,
    Root,
    Sample,
    SampleResult,
    Server,
    TextContent,
    Tool,
    ToolContext,
    ToolError,
    prompt,
    resource,
    tool,
)

ALL_CAPS: dict[str, Any] = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {},
    "roots": {},
}
NOTES = {"alpha": "first note", "beta": "second note"}


@attrs.frozen
class Summary:
    title: str
    count: int


@attrs.frozen
class UserName:
    name: str


@attrs.frozen
class Toppings:
    toppings: list[Literal["cheese", "olives", "basil"]]


@tool
def echo(text: str) -> str:
    """Say the text back.

    Args:
        text: What to say.
    """
    return text


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool
def summary() -> Summary:
    """Return an object (its output schema is an object)."""
    return Summary("tickets", 3)


@tool
def maybe(found: bool) -> Summary | None:
    """Return an object or nothing.

    Args:
        found: Whether there is one.
    """
    return Summary("found", 1) if found else None


@tool
def link() -> list[TextContent | ResourceLink]:
    """Return a text block and a link to a resource."""
    return [TextContent("see the note"), ResourceLink("note://alpha", "alpha")]


@tool
def fail() -> str:
    """Fail with an error the model can read."""
    raise ToolError("this tool always fails")


@tool
async def slow(steps: int) -> str:
    """Report progress and log each step, slowly enough to be cancelled.

    Args:
        steps: How many steps.
    """
    ctx = ToolContext.current()
    for step in range(1, steps + 1):
        await ctx.log("info", f"step {step}")
        await ctx.log("debug", f"detail {step}")
        await ctx.progress(step, steps, f"step {step} of {steps}")
        await trio.sleep(0.01)
    return f"done after {steps} steps"


@tool
async def forever() -> str:
    """Log that it waits, then wait until cancelled."""
    await ToolContext.current().log("info", "waiting")
    await trio.sleep(3600)
    return "an hour passed"


@tool
def ask_name() -> str | NeedsInput:
    """Ask the user's name (elicitation), then greet them."""
    answer = ToolContext.current().input_responses.get("name")
    if not isinstance(answer, ElicitResult):
        return NeedsInput({"name": Elicit("What is your name?", schema=UserName)})
    if not isinstance(answer.content, UserName):
        return f"no name ({answer.action})"
    return f"Hello, {answer.content.name}!"


@tool
def ask_model() -> str | NeedsInput:
    """Ask the client's model (sampling), then repeat its answer."""
    answer = ToolContext.current().input_responses.get("capital")
    if not isinstance(answer, SampleResult):
        return NeedsInput({"capital": Sample("What is the capital of France?", 50)})
    return f"The model said: {answer.text}"


@tool
def ask_roots() -> str | NeedsInput:
    """Ask the client's roots, then list them."""
    roots = ToolContext.current().input_responses.get("roots")
    if not isinstance(roots, list):
        return NeedsInput({"roots": ListRoots()})
    return ", ".join(r.uri for r in roots if isinstance(r, Root))


@tool
def ask_url() -> str | NeedsInput:
    """Ask the user to open a page (URL elicitation)."""
    answer = ToolContext.current().input_responses.get("page")
    if not isinstance(answer, ElicitResult):
        return NeedsInput({"page": ElicitUrl("Sign in", "https://example.com/sign-in")})
    return f"url {answer.action}"


@tool
def ask_twice() -> str | NeedsInput:
    """Two rounds: a name, then the model, carrying state between them."""
    ctx = ToolContext.current()
    state = ctx.state if isinstance(ctx.state, dict) else {}
    name = ctx.input_responses.get("name")
    if "name" not in state:
        if not isinstance(name, ElicitResult) or not isinstance(name.content, UserName):
            return NeedsInput({"name": Elicit("Name?", schema=UserName)}, state={})
        state = {"name": name.content.name}
    model = ctx.input_responses.get("model")
    if not isinstance(model, SampleResult):
        return NeedsInput({"model": Sample("Say hi", 20)}, state=state)
    return f"{state['name']}: {model.text}"


@tool
def ask_toppings() -> str | NeedsInput:
    """Ask for several choices at once (a multi-select form)."""
    answer = ToolContext.current().input_responses.get("toppings")
    if not isinstance(answer, ElicitResult) or not isinstance(answer.content, Toppings):
        return NeedsInput({"toppings": Elicit("Toppings?", schema=Toppings)})
    return ", ".join(answer.content.toppings)


@tool
def ask_all() -> str | NeedsInput:
    """Ask elicitation, sampling and roots in one round."""
    got = ToolContext.current().input_responses
    if not {"name", "model", "roots"} <= set(got):
        return NeedsInput(
            {
                "name": Elicit("Name?", schema=UserName),
                "model": Sample("Say hi", 20),
                "roots": ListRoots(),
            }
        )
    return "all three answered"


@resource(uri="note://static", mime_type="text/plain")
def static_note() -> str:
    """A note that never changes."""
    return "static"


@resource(uri="note://{name}", mime_type="text/plain")
def note(name: str) -> str:
    """A note by name.

    Args:
        name: The note's name.
    """
    if name not in NOTES:
        raise ResourceNotFound(f"note://{name}")
    return NOTES[name]


@resource(uri="watch://counter", mime_type="text/plain", updatable=True)
def counter() -> str:
    """A resource that changes (subscribe to it)."""
    return "counter"


def _names(value: str, context: dict[str, str]) -> list[str]:
    return [n for n in ("Ada", "Alan", "Grace") if n.startswith(value)]


@prompt(complete={"name": _names})
def greet(name: str) -> str:
    """Greet someone.

    Args:
        name: Who.
    """
    return f"Hello, {name}"


@prompt
def linked() -> list[PromptMessage]:
    """A prompt whose message is a resource link."""
    return [PromptMessage.user(ResourceLink("note://alpha", "alpha"))]


TOOLS: list[Tool] = [
    echo,
    add,
    summary,
    maybe,
    link,
    fail,
    slow,
    forever,
    ask_name,
    ask_model,
    ask_roots,
    ask_url,
    ask_twice,
    ask_toppings,
    ask_all,
]


def make_server(*, legacy: bool = True, dynamic: bool = False) -> Server:
    """The dual-era test server (``legacy=False``: the modern-only default).

    Its ``touch`` tool announces that ``watch://counter`` changed, so a client in
    another process can trigger an update.
    """
    served: list[Server] = []

    @tool
    async def touch() -> str:
        """Announce that watch://counter changed."""
        await served[0].notify_updated("watch://counter")
        return "touched"

    server = Server(
        "legacy-test",
        "1.0.0",
        tools=[*TOOLS, touch],
        resources=[static_note, note, counter],
        prompts=[greet, linked],
        instructions="A server for the legacy edge's tests.",
        legacy=legacy,
        dynamic=dynamic,
    )
    served.append(server)
    return server
