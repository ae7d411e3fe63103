"""The official Python SDK's client (``mcp`` 2.3.0) against a pydantic tool over
stdio (issue 35): it lists the model's schemas, calls with a model argument, validates
the structured result against the listed output schema itself, and reads every bad
input of a wrong call. Every message the server wrote is checked against the
revision's schema afterwards."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import trio
from mcp import Client, StdioServerParameters

from trio_mcp.testing import check_message

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "tests" / "declare" / "pydantic_server.py"
WAIT = 30.0


def teed(tmp_path: Path) -> StdioServerParameters:
    """``trio-mcp run`` on the pydantic server, both pipes copied to files."""
    run = shlex.join([sys.executable, "-m", "trio_mcp", "run", f"{TARGET}:server"])
    command = (
        f"tee {shlex.quote(str(tmp_path / 'in.jsonl'))} | {run} "
        f"| tee {shlex.quote(str(tmp_path / 'out.jsonl'))}"
    )
    return StdioServerParameters(command="sh", args=["-c", command], cwd=str(ROOT))


def written(tmp_path: Path) -> list[dict[str, Any]]:
    """What the server wrote, each message checked against the revision's schema."""
    sent = [
        json.loads(line) for line in (tmp_path / "in.jsonl").read_text().splitlines()
    ]
    methods = {m["id"]: m["method"] for m in sent if "id" in m and "method" in m}
    out = [
        json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()
    ]
    for message in out:
        check_message(message, methods.get(message.get("id")))
    return out


async def test_the_official_client_calls_a_pydantic_tool(tmp_path: Path) -> None:
    query = {
        "conditions": [{"field": "title", "words": ["refund", "late"]}],
        "limit": 1,
        "api_key": "k-123",
    }
    with trio.fail_after(WAIT):
        async with Client(teed(tmp_path)) as client:
            tools = await client.list_tools()
            found = await client.call_tool("find", {"query": query, "page": 2})
            wrong = await client.call_tool(
                "find",
                {"query": {"conditions": [{"field": "body", "words": []}]}, "page": 0},
            )
    messages = written(tmp_path)

    (listed,) = tools.tools
    condition = listed.input_schema["properties"]["query"]["properties"]["conditions"]
    assert "One condition on a ticket." == condition["items"]["description"]
    assert (
        "The page, from 1." == listed.input_schema["properties"]["page"]["description"]
    )
    assert listed.output_schema is not None
    assert not found.is_error
    assert {
        "hits": [{"id": "T-2-0", "title": "refund", "score": 1.0}],
        "key_seen": "**********",
    } == found.structured_content
    assert wrong.is_error
    text = "\n".join(block.text for block in wrong.content)  # type: ignore[union-attr]
    assert '- query.conditions.0.field: must be one of: "title", "owner"' in text
    assert "- query.conditions.0.words: must have at least 1 item" in text
    assert "- page: must be at least 1" in text
    assert "k-123" not in json.dumps(messages)
