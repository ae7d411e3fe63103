"""Fixtures for the tasks extension (SEP-2663): tools that may or must run as tasks.

Run as a script it serves them over stdio (``python tasks_server.py``), for the
subprocess tests.
"""

from __future__ import annotations

from typing import Any

import attrs
import trio

from trio_mcp import (
    Elicit,
    ElicitResult,
    NeedsInput,
    Receipt,
    Server,
    TextContent,
    ToolContext,
    ToolError,
    tool,
)

TASKS = "io.modelcontextprotocol/tasks"
Text = list[TextContent]
WITH_TASKS: dict[str, Any] = {"elicitation": {}, "extensions": {TASKS: {}}}

#: What the handlers saw: cancellations, and the keys of the answers they got.
seen: dict[str, list[object]] = {"cancelled": [], "answers": []}
#: Released by tests to let ``gated`` finish.
gate: dict[str, trio.Event] = {}


@attrs.frozen
class Confirm:
    ok: bool


@attrs.frozen
class UserName:
    name: str


def _answer(key: str) -> ElicitResult | None:
    answer = ToolContext.current().input_responses.get(key)
    return answer if isinstance(answer, ElicitResult) else None


@tool
def plain(text: str) -> Text:
    """Echo the text; never a task.

    Args:
        text: What to echo.
    """
    return [TextContent(text)]


@tool(task="optional")
async def sleepy(seconds: float) -> Text:
    """Sleep, then say so; a task for clients that can poll.

    Args:
        seconds: How long to sleep.
    """
    try:
        await trio.sleep(seconds)
    except trio.Cancelled:
        seen["cancelled"].append(ToolContext.current().task_id)
        raise
    return [TextContent(f"slept {seconds:g}")]


@tool(task="optional")
async def gated(name: str) -> Text:
    """Wait until the test opens the gate ``name``.

    Args:
        name: The gate.
    """
    await gate.setdefault(name, trio.Event()).wait()
    return [TextContent(f"through {name}")]


@tool(task="required")
async def must_be_task() -> Text:
    """Only ever runs as a task."""
    await trio.lowlevel.checkpoint()
    return [TextContent(f"task {ToolContext.current().task_id}")]


@tool(task="optional")
async def tool_error() -> Text:
    """Fail with an error the model may read."""
    await trio.lowlevel.checkpoint()
    raise ToolError("it went wrong")


@tool(task="optional")
async def crash() -> Text:
    """Fail with an internal error."""
    await trio.lowlevel.checkpoint()
    raise RuntimeError("a bug")


@tool(task="optional", timeout=0.05)
async def too_slow() -> Text:
    """Run past its timeout."""
    await trio.sleep(5)
    return [TextContent("never")]


@tool(task="optional")
async def two_questions() -> Text | NeedsInput:
    """Ask two questions at once, then ask the first key again, then answer."""
    ctx = ToolContext.current()
    state = ctx.state if isinstance(ctx.state, dict) else {}
    if state.get("round") is None:
        ask = Elicit("Confirm?", schema=Confirm)
        return NeedsInput({"first": ask, "second": ask}, state={"round": 1})
    seen["answers"].append(sorted(ctx.input_responses))
    if state.get("round") == 1:
        # The same key again: its wire key must differ from round one's.
        return NeedsInput(
            {"first": Elicit("Sure?", schema=Confirm)}, state={"round": 2}
        )
    last = _answer("first")
    assert last is not None
    assert isinstance(last.content, Confirm)
    return [TextContent(f"sure: {last.content.ok}")]


@tool(task="required", task_start="handler")
async def name_then_task() -> Text | NeedsInput:
    """Ask the user's name by multi round-trip, then greet from a task."""
    answer = _answer("user_name")
    if answer is None or not isinstance(answer.content, UserName):
        return NeedsInput({"user_name": Elicit("Your name?", schema=UserName)})
    ctx = ToolContext.current()
    await ctx.task_started()
    await trio.sleep(0.01)
    return [
        TextContent(f"Hello, {answer.content.name} (task {ctx.task_id is not None})")
    ]


@tool(task="optional", task_start="handler")
async def maybe_task(slow: bool) -> Text:
    """Answer at once, or become a task first when ``slow``.

    Args:
        slow: Whether to become a task.
    """
    if slow:
        await ToolContext.current().task_started()
        await trio.sleep(0.01)
    return [TextContent(f"slow={slow}")]


@tool(task="optional", task_start="handler")
async def early_crash() -> Text:
    """Fail before the task exists."""
    await trio.lowlevel.checkpoint()
    raise RuntimeError("too early")


TOOLS = [
    plain,
    sleepy,
    gated,
    must_be_task,
    tool_error,
    crash,
    too_slow,
    two_questions,
    name_then_task,
    maybe_task,
    early_crash,
]


def make_server(receipts: list[Receipt] | None = None) -> Server:
    return Server(
        "tasks-test",
        "1.0",
        tools=TOOLS,  # type: ignore[arg-type]
        receipts=None if receipts is None else receipts.append,
        state_key="t" * 32,
    )


if __name__ == "__main__":
    trio.run(make_server().serve_stdio)
