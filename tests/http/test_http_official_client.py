"""The official Python SDK's client (``mcp`` 2.3.0) against trio_mcp over Streamable HTTP.

The client's default ``mode="auto"`` probes ``server/discover`` at 2026-07-28 and
adopts the modern, stateless revision, sending the mirrored ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` headers on every POST. The server runs on Hypercorn
on 127.0.0.1; a pass-through ASGI layer records every request and response body so
each message the server sent is checked against the revision's schema afterwards.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
from mcp import Client
from mcp.types import PromptReference, ResourceTemplateReference
from support import serving_app
from support.sse import sse_frames
from support.tools import add

from trio_mcp import Icon, Server, ToolContext, prompt, resource, tool
from trio_mcp.testing import check_message


@tool
async def steps(count: int = 3) -> str:
    """Report progress once per step, then finish.

    Args:
        count: How many steps to take.
    """
    ctx = ToolContext.current()
    for done in range(1, count + 1):
        await ctx.progress(done, count)
    return f"{count} steps"


class Recorder:
    """An ASGI pass-through that keeps each exchange's request and response bodies."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.exchanges: list[tuple[bytes, str, bytes]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = bytearray()
        response = bytearray()
        content_type = ""

        async def recv() -> Any:
            message = await receive()
            request.extend(message.get("body", b""))
            return message

        async def snd(message: Any) -> None:
            nonlocal content_type
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name == b"content-type":
                        content_type = value.decode()
            else:
                response.extend(message.get("body", b""))
            await send(message)

        await self.app(scope, recv, snd)
        self.exchanges.append((bytes(request), content_type, bytes(response)))

    def check_all(self) -> int:
        """Validate every JSON-RPC message the server sent; return how many."""
        count = 0
        for request, content_type, body in self.exchanges:
            if not body:
                continue
            method = json.loads(request).get("method") if request else None
            sse = content_type == "text/event-stream"
            for text in sse_frames(body) if sse else [body]:
                check_message(json.loads(text), method)
                count += 1
        return count


# mcp 2.3.0's streamable HTTP client leaves its SSE reader with ``break`` once the
# reply arrives (mcp/client/streamable_http.py, ``async for sse in event_source``),
# never closing the async generators under it. Trio's finalizer reports each as a
# ResourceWarning; asyncio stays silent. Only those four generators are ignored.
_SDK_GENERATORS = (
    r"(EventSource\.__aiter__|PoolByteStream\.__aiter__|Response\.aiter_(bytes|text))"
)


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object "
    + _SDK_GENERATORS
    + ":pytest.PytestUnraisableExceptionWarning"
)
async def test_official_client_discovers_lists_and_calls_over_http() -> None:
    """Interop: the SDK adopts 2026-07-28 via discover, then lists and calls over HTTP."""
    server = Server("official-http", "2.0", tools=[add, steps])
    recorder = Recorder(server.mount())
    seen_progress: list[float] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        seen_progress.append(progress)

    async with serving_app(recorder) as url:
        with trio.fail_after(30):
            async with Client(url + "/mcp") as client:
                version = client.protocol_version
                tools = await client.list_tools()
                summed = await client.call_tool("add", {"a": 2, "b": 40})
                stepped = await client.call_tool(
                    "steps", {"count": 3}, progress_callback=on_progress
                )

    assert version == "2026-07-28"
    assert [t.name for t in tools.tools] == ["add", "steps"]
    assert (summed.is_error, summed.structured_content) == (False, 42)
    assert stepped.structured_content == "3 steps"
    assert seen_progress == [1, 2, 3]
    assert recorder.check_all() >= 4


def _versions(value: str, context: dict[str, str]) -> list[str]:
    known = {"python": ["3.12", "3.13"], "rust": ["1.80"]}
    return [
        v for v in known.get(context.get("language", ""), []) if v.startswith(value)
    ]


@prompt(complete={"version": _versions})
def explain(language: str, version: str) -> str:
    """Explain what changed in a language version.

    Args:
        language: The language.
        version: Its version.
    """
    return f"{language} {version}"


@resource(uri="files://{+path}", complete={"path": lambda v, c: ["docs/a.md"]})
def files(path: str) -> str:
    """A file.

    Args:
        path: Its path, which may hold '/'.
    """
    return f"contents of {path}"


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object "
    + _SDK_GENERATORS
    + ":pytest.PytestUnraisableExceptionWarning"
)
async def test_official_client_reads_titles_completes_and_reads_reserved_templates() -> (
    None
):
    """Interop: serverInfo extras, completion/complete with context, {+path} reads."""
    server = Server(
        "official-beyond",
        "1.0",
        resources=[files],
        prompts=[explain],
        title="Beyond the peers",
        website_url="https://beyond.example",
        icons=[Icon("https://beyond.example/i.png", mime_type="image/png")],
    )
    recorder = Recorder(server.mount())
    async with serving_app(recorder) as url:
        with trio.fail_after(30):
            async with Client(url + "/mcp") as client:
                info = client.server_info
                versions = await client.complete(
                    PromptReference(type="ref/prompt", name="explain"),
                    {"name": "version", "value": "3.1"},
                    context_arguments={"language": "python"},
                )
                paths = await client.complete(
                    ResourceTemplateReference(
                        type="ref/resource", uri="files://{+path}"
                    ),
                    {"name": "path", "value": ""},
                )
                read = await client.read_resource("files://docs/2026/a.md")

    assert info is not None
    assert (info.title, info.website_url) == (
        "Beyond the peers",
        "https://beyond.example",
    )
    assert [str(i.src) for i in info.icons or []] == ["https://beyond.example/i.png"]
    assert (versions.completion.values, versions.completion.total) == (
        ["3.12", "3.13"],
        2,
    )
    assert paths.completion.values == ["docs/a.md"]
    assert read.contents[0].text == "contents of docs/2026/a.md"  # type: ignore[union-attr]
    assert recorder.check_all() >= 3
