"""A server with tools that ask for input, for the multi round-trip tests.

Used by tests/dispatch (the rounds) and tests/protocol (``requestState``).
"""

from __future__ import annotations

import enum
from datetime import date
from typing import Any, Literal

import attrs

from trio_mcp import (
    Answer,
    Elicit,
    ElicitResult,
    ListRoots,
    NeedsInput,
    Sample,
    SampleResult,
    Server,
    ToolContext,
    prompt,
    resource,
    tool,
)

KEY = "k" * 32
ALL_CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}


@attrs.frozen
class UserName:
    name: str


@attrs.frozen
class Color:
    color: Literal["red", "green", "blue"]


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


@attrs.frozen
class Order:
    quantity: int
    size: Size
    gift: bool = False
    deliver_on: date | None = None


@tool
def greet() -> str | NeedsInput:
    """Ask for the user's name, then greet them."""
    answer = ToolContext.current().input_responses.get("user_name")
    if not isinstance(answer, ElicitResult):
        return NeedsInput({"user_name": Elicit("What is your name?", schema=UserName)})
    if answer.content is None:
        return f"no name ({answer.action})"
    assert isinstance(answer.content, UserName)
    return f"Hello, {answer.content.name}!"


@tool
def wizard() -> str | NeedsInput:
    """Three rounds: name, then color, then done; the state counts the rounds."""
    ctx = ToolContext.current()
    step: dict[str, Any] = ctx.state if isinstance(ctx.state, dict) else {"round": 1}
    if step["round"] == 1:
        name = ctx.input_responses.get("step1")
        if not isinstance(name, ElicitResult) or not isinstance(name.content, UserName):
            return NeedsInput({"step1": Elicit("Name?", UserName)}, state={"round": 1})
        return Answer.needs_input(
            {"step2": Elicit("Color?", Color)},
            state={"round": 2, "name": name.content.name},
        )
    color = ctx.input_responses.get("step2")
    if not isinstance(color, ElicitResult) or not isinstance(color.content, Color):
        return NeedsInput({"step2": Elicit("Color?", Color)}, state=step)
    return f"{step['name']} likes {color.content.color}"


@tool
def everything() -> str | NeedsInput:
    """Ask for an elicitation, a sample and the roots at once."""
    r = ToolContext.current().input_responses
    if not {"who", "capital", "roots"} <= set(r):
        return NeedsInput(
            {
                "who": Elicit("Who?", UserName),
                "capital": Sample("What is the capital of France?", max_tokens=100),
                "roots": ListRoots(),
            },
            state="s",
        )
    who, capital, roots = r["who"], r["capital"], r["roots"]
    assert isinstance(who, ElicitResult)
    assert isinstance(capital, SampleResult)
    assert isinstance(roots, list)
    return f"{who.content!r} {capital.text} {capital.model} {roots!r}"


@tool
def polite() -> str | NeedsInput:
    """Ask only for what the client can give."""
    ctx = ToolContext.current()
    if ctx.input_responses:
        return "done"
    requests: dict[str, Elicit | Sample] = {}
    if ctx.supports(Elicit):
        requests["who"] = Elicit("Who?", UserName)
    if ctx.supports(Sample):
        requests["capital"] = Sample("Capital?", max_tokens=10)
    return NeedsInput(requests)


@tool
def order() -> str | NeedsInput:
    """Ask for an order form with every kind of form field."""
    answer = ToolContext.current().input_responses.get("order")
    if not isinstance(answer, ElicitResult):
        return NeedsInput({"order": Elicit("Your order?", Order)})
    return repr(answer.content)


@prompt
def with_context() -> str | NeedsInput:
    """Ask for context, then answer with it."""
    answer = ToolContext.current().input_responses.get("user_context")
    if not isinstance(answer, ElicitResult):
        return NeedsInput({"user_context": Elicit("Context?", UserName)})
    assert isinstance(answer.content, UserName)
    return f"context: {answer.content.name}"


@resource("test://gated")
def gated() -> str | NeedsInput:
    """A resource that needs the roots first."""
    roots = ToolContext.current().input_responses.get("roots")
    if roots is None:
        return NeedsInput({"roots": ListRoots()})
    return f"roots: {roots!r}"


def make_server(**options: object) -> Server:
    return Server(
        "mrtr",
        "1.0",
        tools=[greet, wizard, everything, polite, order],
        prompts=[with_context],
        resources=[gated],
        state_key=KEY,
        **options,  # type: ignore[arg-type]
    )
