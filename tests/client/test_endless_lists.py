"""A server whose cursors never end: the list stops at 1,000 pages, within one
deadline for the whole list."""

from __future__ import annotations

import sys

import pytest

from trio_mcp import McpError
from trio_mcp.client import Client

#: A stdio server that answers discover, then every request with one more page.
ENDLESS = r"""
import json, sys, time
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    if request["method"] == "server/discover":
        result = {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                  "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public"}
    else:
        time.sleep(float(sys.argv[1]))
        result = {"resultType": "complete", "tools": [{"name": "t"}],
                  "nextCursor": "more", "ttlMs": 0, "cacheScope": "public"}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
"""


def _endless(delay: float) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", ENDLESS, str(delay)]


async def test_a_list_stops_after_a_thousand_pages() -> None:
    async with Client(_endless(0)) as client:
        with pytest.raises(McpError.Transport, match="more than 1000 pages"):
            await client.list_tools()


async def test_a_list_has_one_deadline_for_all_its_pages() -> None:
    async with Client(_endless(0.05), timeout=1.0) as client:
        with pytest.raises(McpError.Timeout, match="entries listed, the rest not"):
            await client.list_tools()
