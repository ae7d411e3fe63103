"""The server the client tests speak to, in process, over HTTP, WebSocket and stdio.

Its tools cover what a client must read: text, structured output, a tool error,
progress, input requests (both eras), a long list, and ``wait_cancel``, which waits
until its call is cancelled and then appends ``cancelled`` to the file it is given,
so a test in another process (stdio) sees the remote handler observe its cancel.

Run it as a stdio server: ``python tests/support/upstream.py [--legacy]``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from trio_mcp import (
    Elicit,
    ElicitResult,
    ListRoots,
    NeedsInput,
    Sample,
    SampleResult,
    Server,
    ToolContext,
    ToolError,
    prompt,
    resource,
    tool,
)
from trio_mcp.client import Client

__all__ = [
    "Sum",
    "cancelled_across",
    "make_server",
    "stdio_command",
    "tour",
    "wait_for_text",
]


@attrs.frozen
class Sum:
    """The sum of two numbers."""

    total: int


@tool
def echo(text: str) -> str:
    """Say the text back.

    Args:
        text: What to say.
    """
    return text


@tool
def add(a: int, b: int) -> Sum:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return Sum(a + b)


@tool
def pid() -> int:
    """The server process's id."""
    return os.getpid()


@tool
def fail(why: str) -> str:
    """Fail as a tool does, with a message for the model.

    Args:
        why: The message.
    """
    raise ToolError(why)


@tool
async def count(to: int) -> str:
    """Count with progress.

    Args:
        to: Where to stop.
    """
    ctx = ToolContext.current()
    for done in range(1, to + 1):
        await ctx.progress(done, to, f"step {done}")
    return f"counted to {to}"


@tool
async def wait_cancel(mark: str) -> str:
    """Write 'started' to the file ``mark``, wait until the call is cancelled, then
    append 'cancelled' to it.

    Args:
        mark: A file path.
    """
    path = trio.Path(mark)
    await path.write_text("started\n")
    try:
        await trio.sleep_forever()
    finally:
        with trio.CancelScope(shield=True):
            await path.write_text("started\ncancelled\n")


@attrs.frozen
class Name:
    """A name."""

    name: str


@tool
def greet() -> str | NeedsInput:
    """Ask for a name, then greet it."""
    answer = ToolContext.current().input_responses.get("who")
    if not isinstance(answer, ElicitResult):
        return NeedsInput({"who": Elicit("Your name?", schema=Name)})
    if not isinstance(answer.content, Name):
        return "no name given"
    return f"hello {answer.content.name}"


@tool
def roots_and_model() -> str | NeedsInput:
    """Ask for the roots and a sample at once."""
    answers = ToolContext.current().input_responses
    roots, sample = answers.get("roots"), answers.get("sample")
    if not isinstance(roots, list) or not isinstance(sample, SampleResult):
        return NeedsInput(
            {"roots": ListRoots(), "sample": Sample("Say hi", max_tokens=5)}
        )
    return f"{len(roots)} roots; model said {sample.text}"


def _many() -> list[Any]:
    def make(n: int) -> Any:
        @tool(name=f"item_{n:03}")
        def item() -> str:
            """One of many."""
            return str(n)

        return item

    return [make(n) for n in range(120)]


@resource("note://{name}")
def note(name: str) -> str:
    """A note.

    Args:
        name: Its name.
    """
    return f"note {name}"


@resource("note://static/readme")
def readme() -> str:
    """The readme."""
    return "read me"


def languages(value: str, context: dict[str, str]) -> list[str]:
    """Complete a language name."""
    return [n for n in ("Python", "Rust", "Ruby") if n.startswith(value)]


@prompt(complete={"language": languages})
def review(language: str) -> str:
    """Review code.

    Args:
        language: The language.
    """
    return f"review this {language}"


def make_server(*, legacy: bool = False, many: bool = False) -> Server:
    """The upstream; ``many`` adds 120 tools (several pages)."""
    tools: list[Any] = [
        echo,
        add,
        pid,
        fail,
        count,
        wait_cancel,
        greet,
        roots_and_model,
    ]
    if many:
        tools += _many()
    return Server(
        "upstream",
        "1.0",
        tools=tools,
        resources=[note, readme],
        prompts=[review],
        instructions="An upstream for the client tests.",
        legacy=legacy,
    )


async def wait_for_text(path: Path, text: str, within: float = 10.0) -> float:
    """Wait (bounded) until the file holds ``text``; return the seconds it took."""
    start = trio.current_time()
    with trio.fail_after(within):
        while text not in await _read(trio.Path(path)):  # noqa: ASYNC110 - another process writes it
            await trio.sleep(0.01)
    return trio.current_time() - start


async def _read(path: trio.Path) -> str:
    return await path.read_text() if await path.exists() else ""


async def tour(client: Client) -> None:
    """What every transport and era must give the same way."""
    from trio_mcp import McpError

    assert "upstream" == client.server.name
    assert "1.0" == client.server.version
    assert "An upstream for the client tests." == client.server.instructions
    assert "tools" in client.server.capabilities
    names = [t["name"] for t in await client.list_tools()]
    assert {"echo", "add", "fail", "count", "wait_cancel"} <= set(names)
    added = await client.call_tool("add", {"a": 2, "b": 3})
    assert ({"total": 5}, False) == (added.structured, added.is_error)
    failed = await client.call_tool("fail", {"why": "no luck"})
    assert (True, "no luck") == (failed.is_error, failed.text)
    assert "note a" == (await client.read_resource("note://a")).text
    assert ["note://static/readme"] == [r["uri"] for r in await client.list_resources()]
    assert ["note://{name}"] == [
        t["uriTemplate"] for t in await client.list_resource_templates()
    ]
    assert ["review"] == [p["name"] for p in await client.list_prompts()]
    prompt = await client.get_prompt("review", {"language": "Rust"})
    content = prompt.messages[0]["content"]
    assert isinstance(content, dict)
    assert "review this Rust" == content["text"]
    seen: list[tuple[float, float | None, str | None]] = []

    def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    counted = await client.call_tool("count", {"to": 3}, progress=progress)
    assert "counted to 3" == counted.text
    assert [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")] == seen
    with pytest.raises(McpError.Remote) as raised:
        await client.call_tool("nope")
    assert -32602 == raised.value.code


async def cancelled_across(client: Client, mark: Path) -> float:
    """Cancel a call once its handler runs; return how long the handler took to
    observe the cancel (bounded)."""
    async with trio.open_nursery() as nursery:

        async def call() -> None:
            await client.call_tool("wait_cancel", {"mark": str(mark)})

        nursery.start_soon(call)
        await wait_for_text(mark, "started")
        nursery.cancel_scope.cancel()
    return await wait_for_text(mark, "cancelled")


def stdio_command(*extra: str) -> list[str]:
    """The command that serves this module over stdio."""
    return [sys.executable, str(Path(__file__).resolve()), *extra]


if __name__ == "__main__":
    make_server(legacy="--legacy" in sys.argv, many="--many" in sys.argv).run()
