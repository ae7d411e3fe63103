"""Completions, titles and icons, ``{+var}`` templates and verbatim schemas over a real
Hypercorn server on 127.0.0.1 (Streamable HTTP), every message checked against the
revision's schema."""

from __future__ import annotations

from typing import Annotated, Any

import httpx
from support import serving
from support.mcp_http import rpc

from trio_mcp import Field, Icon, Server, ServerInfo, prompt, resource, tool

VERSION = "2026-07-28"
ICON = Icon("https://example.com/i.png", mime_type="image/png", sizes=("32x32",))


@prompt(
    title="Explain",
    icons=[ICON],
    complete={"language": lambda v, c: ["python", "perl"]},
)
def explain(language: str) -> str:
    """Explain a language.

    Args:
        language: The language.
    """
    return language


read: list[str] = []


@resource(uri="files://{+path}", title="Files")
def files(path: str) -> str:
    """A file.

    Args:
        path: Its path, which may hold '/'.
    """
    read.append(path)
    return path


@tool(title="Rate")
def rate(
    score: Annotated[
        Any,
        Field(
            json_schema={"anyOf": [{"const": "n/a"}, {"type": "integer", "minimum": 0}]}
        ),
    ],
) -> str:
    """Record a score.

    Args:
        score: A non-negative integer, or "n/a".
    """
    return f"rated {score}"


SERVER = Server(
    "beyond",
    "1",
    tools=[rate],
    resources=[files],
    prompts=[explain],
    info=ServerInfo(title="Beyond", website_url="https://beyond.example", icons=[ICON]),
)


async def test_everything_beyond_the_peers_works_over_streamable_http() -> None:
    read.clear()
    async with serving(SERVER) as url, httpx.AsyncClient() as client:
        discovered = await rpc(client, url, "server/discover", {})
        prompts = await rpc(client, url, "prompts/list", {})
        completion = await rpc(
            client,
            url,
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "explain"},
                "argument": {"name": "language", "value": "p"},
            },
        )
        deep = await rpc(
            client,
            url,
            "resources/read",
            {"uri": "files://a/b/c.txt"},
            name="files://a/b/c.txt",
        )
        climbing = await rpc(
            client,
            url,
            "resources/read",
            {"uri": "files://a/%2e%2e/b"},
            name="files://a/%2e%2e/b",
        )
        good = await rpc(
            client,
            url,
            "tools/call",
            {"name": "rate", "arguments": {"score": "n/a"}},
            name="rate",
        )
        bad = await rpc(
            client,
            url,
            "tools/call",
            {"name": "rate", "arguments": {"score": -1}},
            name="rate",
        )

    server_info = discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert ("Beyond", "https://beyond.example", [ICON.to_wire()]) == (
        server_info["title"],
        server_info["websiteUrl"],
        server_info["icons"],
    )
    assert "completions" in discovered["result"]["capabilities"]
    assert ("Explain", [ICON.to_wire()]) == (
        prompts["result"]["prompts"][0]["title"],
        prompts["result"]["prompts"][0]["icons"],
    )
    assert {"values": ["python", "perl"], "total": 2, "hasMore": False} == completion[
        "result"
    ]["completion"]
    assert "a/b/c.txt" == deep["result"]["contents"][0]["text"]
    assert -32602 == climbing["error"]["code"]
    assert ["a/b/c.txt"] == read
    assert "rated n/a" == good["result"]["structuredContent"]
    assert bad["result"]["isError"] is True
    assert [{"path": "score", "message": "must be at least 0"}] == bad["result"][
        "_meta"
    ]["dev.trio-mcp/error"]["problems"]
