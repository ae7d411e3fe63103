"""The skills extension over Streamable HTTP on a real Hypercorn on 127.0.0.1: the
requests a host sends (routing headers included), every reply checked against the
schema, every file's bytes against the digest the listing gave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import trio
from skill_trees import content_bytes, sha256
from support import META, serving

from trio_mcp import Server, Skill
from trio_mcp.testing import check_message

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


async def post(
    client: httpx.AsyncClient,
    url: str,
    method: str,
    name: str | None = None,
    **params: Any,
) -> Any:
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if name is not None:
        headers["mcp-name"] = name
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"_meta": META, **params},
    }
    with trio.fail_after(10):
        response = await client.post(f"{url}/mcp", json=body, headers=headers)
    message = response.json()
    check_message(message, method)
    return message


async def test_a_host_walks_the_example_skill_over_http() -> None:
    server = Server("skills", "1", skills=Skill.all_in(EXAMPLES))
    async with serving(server) as url, httpx.AsyncClient() as client:
        listing = (await post(client, url, "skills/list"))["result"]
        [entry] = listing["skills"]
        assert "public" == listing["cacheScope"]
        got = await post(client, url, "skills/get", uri=entry["uri"])
        assert entry == got["result"]["skill"]
        for item in entry["resources"]:
            read = await post(
                client, url, "resources/read", item["uri"], uri=item["uri"]
            )
            [contents] = read["result"]["contents"]
            assert item["digest"] == sha256(content_bytes(contents))
        root = await post(
            client, url, "resources/directory/read", uri="skill://trio-mcp-tools"
        )
        kinds = {r["name"]: r["mimeType"] for r in root["result"]["resources"]}
        assert "inode/directory" == kinds["references"]
        climbing = "skill://trio-mcp-tools/references/../SKILL.md"
        refused = await post(client, url, "resources/read", climbing, uri=climbing)
        assert -32602 == refused["error"]["code"]
