"""Prompts and resources on the paths tools have long had tests for: blob contents,
bad arguments and timeouts (api.md "Resource
returns", "Replies"; each of these also leaves a receipt)."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio
import trio.testing

from trio_mcp import Receipt, Server, prompt, resource
from trio_mcp.testing import McpTestClient, ProtocolError

PNG = b"\x89PNG\r\n\x1a\n\x00\xff"
ran: list[str] = []


@resource(uri="files://logo.png", mime_type="image/png")
def logo() -> bytes:
    """The logo."""
    return PNG


@resource(uri="files://raw")
def raw() -> bytes:
    """Bytes without a declared type."""
    return b"\x00\x01"


@resource(uri="slow://one", timeout=0.05)
async def slow_read() -> str:
    """Take longer than the read's deadline."""
    await trio.sleep(5)
    return "late"


@prompt(timeout=0.05)
async def slow_prompt(topic: str) -> str:
    """
    Take longer than the prompt's deadline.

    Args:
        topic: What about.
    """
    await trio.sleep(5)
    return "late"


@prompt
def plain(topic: str) -> str:
    """
    Repeat the topic.

    Args:
        topic: What about.
    """
    ran.append(topic)
    return topic


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    ran.clear()


def make_server(receipts: list[Receipt]) -> Server:
    return Server(
        "pr",
        "1",
        resources=[logo, raw, slow_read],
        prompts=[slow_prompt, plain],
        receipts=receipts.append,
    )


@pytest.mark.parametrize(
    ("uri", "data", "mime_type"),
    [
        ("files://logo.png", PNG, "image/png"),
        ("files://raw", b"\x00\x01", "application/octet-stream"),
    ],
)
async def test_bytes_are_read_as_base64_blob_contents(
    uri: str, data: bytes, mime_type: str
) -> None:
    async with McpTestClient(make_server([])) as client:
        result = await client.read_resource(uri)

    assert [
        {"uri": uri, "blob": base64.b64encode(data).decode(), "mimeType": mime_type}
    ] == result["contents"]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"topic": 5}, "- topic: expected a string"),
        ({"topic": "x", "extra": "y"}, "- extra: unknown argument"),
    ],
)
async def test_bad_prompt_arguments_are_invalid_params_listing_the_problem(
    arguments: dict[str, Any], problem: str
) -> None:
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts)) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.get_prompt("plain", arguments)

    assert (
        -32602,
        f"invalid arguments; fix every input listed and call again:\n{problem}",
    ) == (
        caught.value.code,
        caught.value.message,
    )
    path, _, text = problem.removeprefix("- ").partition(": ")
    assert {
        "kind": "invalid_arguments",
        "problems": [{"path": path, "message": text}],
    } == caught.value.data
    assert [] == ran
    assert ["invalid"] == [r.outcome for r in receipts]


async def assert_timed_out(
    kind: str, request: Callable[[McpTestClient], Awaitable[object]]
) -> None:
    """``request`` runs past its declaration's 0.05 s: -32603 saying so, and a
    ``timeout`` receipt of ``kind``."""
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts)) as client:
        with pytest.raises(ProtocolError) as caught:
            await request(client)

    assert -32603 == caught.value.code
    assert {"kind": "timeout", "seconds": 0.05} == caught.value.data
    assert [(kind, "timeout")] == [(r.kind, r.outcome) for r in receipts]


async def test_a_resource_read_past_its_timeout_is_cancelled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    await assert_timed_out("resource", lambda c: c.read_resource("slow://one"))


async def test_a_prompt_past_its_timeout_is_cancelled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    await assert_timed_out(
        "prompt", lambda c: c.get_prompt("slow_prompt", {"topic": "x"})
    )
