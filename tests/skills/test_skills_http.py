"""The skills extension over Streamable HTTP on a real Hypercorn on 127.0.0.1: the
requests a host sends (routing headers included), every reply checked against the
schema, every file's bytes against the digest the listing gave."""

from __future__ import annotations

from pathlib import Path

import httpx
from skill_trees import content_bytes, sha256
from support import serving
from support.mcp_http import rpc

from trio_mcp import Server, Skill

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


async def test_a_host_walks_the_example_skill_over_http() -> None:
    server = Server("skills", "1", skills=Skill.all_in(EXAMPLES))
    async with serving(server) as url, httpx.AsyncClient() as client:
        listing = (await rpc(client, url, "skills/list"))["result"]
        [entry] = listing["skills"]
        assert "public" == listing["cacheScope"]
        got = await rpc(client, url, "skills/get", {"uri": entry["uri"]})
        assert entry == got["result"]["skill"]
        for item in entry["resources"]:
            read = await rpc(
                client, url, "resources/read", {"uri": item["uri"]}, name=item["uri"]
            )
            [contents] = read["result"]["contents"]
            assert item["digest"] == sha256(content_bytes(contents))
        root = await rpc(
            client, url, "resources/directory/read", {"uri": "skill://trio-mcp-tools"}
        )
        kinds = {r["name"]: r["mimeType"] for r in root["result"]["resources"]}
        assert "inode/directory" == kinds["references"]
        climbing = "skill://trio-mcp-tools/references/../SKILL.md"
        refused = await rpc(
            client, url, "resources/read", {"uri": climbing}, name=climbing
        )
        assert -32602 == refused["error"]["code"]
