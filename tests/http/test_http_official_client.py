"""The official Python SDK's client (``mcp`` 2.3.0) against trio_mcp over Streamable HTTP.

The client's default ``mode="auto"`` probes ``server/discover`` at 2026-07-28 and
adopts the modern, stateless revision, sending the mirrored ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` headers on every POST. The server runs on Hypercorn
on 127.0.0.1; a pass-through ASGI layer records every request and response body so
each message the server sent is checked against the revision's schema afterwards.
"""

from __future__ import annotations

import trio
from mcp import Client
from mcp.types import PromptReference, ResourceTemplateReference
from support import serving_app
from support.asgi import Recorder
from support.sdk import check_list_and_call, sdk_streams_left_open
from support.tools import add, steps

from trio_mcp import Icon, Server, ServerInfo, prompt, resource


@sdk_streams_left_open
async def test_official_client_discovers_lists_and_calls_over_http() -> None:
    """Interop: the SDK adopts 2026-07-28 via discover, then lists and calls over HTTP."""
    server = Server("official-http", "2.0", tools=[add, steps])
    recorder = Recorder(server.mount())

    async with serving_app(recorder) as url:
        with trio.fail_after(30):
            async with Client(url + "/mcp") as client:
                await check_list_and_call(client, ["add", "steps"])

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


@sdk_streams_left_open
async def test_official_client_reads_titles_completes_and_reads_reserved_templates() -> (
    None
):
    """Interop: serverInfo extras, completion/complete with context, {+path} reads."""
    server = Server(
        "official-beyond",
        "1.0",
        resources=[files],
        prompts=[explain],
        info=ServerInfo(
            title="Beyond the peers",
            website_url="https://beyond.example",
            icons=[Icon("https://beyond.example/i.png", mime_type="image/png")],
        ),
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
