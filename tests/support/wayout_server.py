"""A server whose handlers return what they declared they would not, to test the way out.

The tests of "the way out" (api.md) serve it in-process (``make_server``) and run it
as a real stdio subprocess:

    python tests/support/wayout_server.py [--max-concurrent N] [--max-waiting N]
        [--max-listens N] [--grace SECONDS] [--marker-dir DIR] [--linger SECONDS]

Each misbehaving handler breaks its declaration in one way (``BAD_TOOLS``,
``BAD_PROMPTS``, ``BAD_RESOURCES`` name them with what they break); the others echo,
wait to be cancelled, or note on stderr (``probe: ...`` lines) and in marker files
what they saw, so tests wait on events instead of sleeping.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import trio

from support.tools import add, echo
from trio_mcp import (
    Limits,
    Server,
    TextContent,
    ToolContext,
    prompt,
    resource,
    tool,
)

#: Where the cancel-watching handlers write their markers (``--marker-dir``).
MARKERS: list[Path] = []


def probe(event: str) -> None:
    """Tell the test what happened, on stderr (never the protocol stream)."""
    sys.stderr.write(f"probe: {event}\n")
    sys.stderr.flush()


#: Labels of the cancel watchers that started and have not yet seen ctx.cancel.
WATCHING: set[str] = set()


def mark(name: str) -> None:
    """Leave a marker file the test reads after the process ended."""
    WATCHING.discard(name)
    if MARKERS:
        (MARKERS[0] / name).write_text("seen")
    probe(f"cancelled {name}")


@attrs.frozen
class Ticket:
    id: str
    title: str


# -- the well-behaved -----------------------------------------------------------------
@tool
async def echo_after_progress(text: str) -> str:
    """
    Report progress once, then return the text unchanged.

    Args:
        text: What to return.
    """
    await ToolContext.current().progress(1, 1, message=text)
    return text


@tool
async def wait_until_cancelled(label: str) -> str:
    """
    Wait until the call is cancelled, saying so on stderr.

    Args:
        label: Names this call in the stderr lines.
    """
    probe(f"started {label}")
    try:
        await trio.sleep_forever()
    finally:
        probe(f"cancelled {label}")
    raise AssertionError("unreachable")


@tool
def sync_watch_cancel(label: str) -> str:
    """
    Poll ctx.cancel in a worker thread; mark when it fires.

    Args:
        label: Names the marker file and the stderr lines.
    """
    ctx = ToolContext.current()
    WATCHING.add(label)
    probe(f"started {label}")
    give_up = time.monotonic() + 60
    while time.monotonic() < give_up:
        if ctx.cancel.cancelled:
            mark(label)
            return "cancelled"
        time.sleep(0.01)
    return "never cancelled"


@tool
async def async_watch_cancel(label: str) -> str:
    """
    Wait to be cancelled; mark if ctx.cancel says so when the cancellation arrives.

    Args:
        label: Names the marker file and the stderr lines.
    """
    ctx = ToolContext.current()
    WATCHING.add(label)
    probe(f"started {label}")
    try:
        await trio.sleep_forever()
    finally:
        if ctx.cancel.cancelled:
            mark(label)
        else:
            WATCHING.discard(label)
    raise AssertionError("unreachable")


# -- tools that break their declaration -------------------------------------------------
@tool
def float_nan() -> float:
    """Return NaN, which is not JSON."""
    return math.nan


@tool
def float_inf() -> float:
    """Return infinity, which is not JSON."""
    return math.inf


@tool
def ticket_as_dict() -> Ticket:
    """Return a dict where a Ticket is declared."""
    return {"id": "1", "title": "x"}  # type: ignore[return-value]


@tool
def content_as_str() -> list[TextContent]:
    """Return a str where content blocks are declared."""
    return "not blocks"  # type: ignore[return-value]


@tool
def int_as_str() -> int:
    """Return a str where an int is declared."""
    return "abc"  # type: ignore[return-value]


@tool
def int_as_float() -> int:
    """Return 1.5 where an int is declared."""
    return 1.5  # type: ignore[return-value]


@prompt
def prompt_int() -> str:
    """A prompt that returns an int."""
    return 7  # type: ignore[return-value]


@resource(uri="bad://text")
def text_as_int() -> str:
    """A text resource that returns an int."""
    return 7  # type: ignore[return-value]


@resource(uri="bad://blob")
def blob_as_str() -> bytes:
    """A blob resource that returns a str."""
    return "not bytes"  # type: ignore[return-value]


#: Tool name -> how the log record says what does not fit.
BAD_TOOLS = {
    "float_nan": "expected a finite number",
    "float_inf": "expected a finite number",
    "ticket_as_dict": "Ticket",
    "content_as_str": "content blocks",
    "int_as_str": "expected an integer",
    "int_as_float": "expected an integer",
}
BAD_PROMPTS = {"prompt_int": "a prompt returns"}
BAD_RESOURCES = {"bad://text": "'-> str' is declared", "bad://blob": "'-> bytes'"}


def make_server(**options: Any) -> Server:
    """The server of these tests, fresh; ``options`` go to ``Server``."""
    return Server(
        "wayout",
        "1.0",
        tools=[
            echo,
            echo_after_progress,
            add,
            wait_until_cancelled,
            sync_watch_cancel,
            async_watch_cancel,
            float_nan,
            float_inf,
            ticket_as_dict,
            content_as_str,
            int_as_str,
            int_as_float,
        ],
        resources=[text_as_int, blob_as_str],
        prompts=[prompt_int],
        **options,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-concurrent", type=int, default=16)
    parser.add_argument("--max-waiting", type=int, default=64)
    parser.add_argument("--max-listens", type=int, default=256)
    parser.add_argument("--grace", type=float, default=5.0)
    parser.add_argument("--marker-dir", type=Path)
    parser.add_argument("--linger", type=float, default=0.0)
    args = parser.parse_args()
    if args.marker_dir is not None:
        MARKERS.append(args.marker_dir)
    limits = Limits(
        max_concurrent=args.max_concurrent,
        max_waiting=args.max_waiting,
        max_listens=args.max_listens,
        grace_period=args.grace,
    )
    trio.run(_serve, limits, args.linger)


async def _serve(limits: Limits, linger: float) -> None:
    """Serve stdio; then, as a host that goes on running would, wait up to
    ``linger`` seconds for the cancel watchers that are still running."""
    await make_server().serve_stdio(limits=limits)
    with trio.move_on_after(linger):
        while WATCHING:  # noqa: ASYNC110 - a worker thread changes it
            await trio.sleep(0.01)


if __name__ == "__main__":
    main()
