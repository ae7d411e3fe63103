"""Each example in examples/ does what its docstring promises, used as a user would."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from support import META, wire
from support.example_loader import EXAMPLES, load

from trio_mcp.testing import McpTestClient, ProtocolError


def _line(request_id: int, method: str, **params: object) -> str:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method}
    return json.dumps({**body, "params": {"_meta": META, **params}}) + "\n"


def test_the_lifespan_opens_the_database_before_serving_and_closes_it_after_eof(
    tmp_path: Path,
) -> None:
    database = tmp_path / "notes.db"
    calls = [
        _line(1, "tools/call", name="add_note", arguments={"text": "buy milk"}),
        _line(2, "tools/call", name="count_notes", arguments={}),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "run", "--log-level", "info",
         f"{EXAMPLES / 'notes_database.py'}:lifespan"],
        input=calls[0],
        capture_output=True, text=True, timeout=60, check=False,
        env={"NOTES_DB": str(database), "PATH": ""},
    )  # fmt: skip
    again = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "run",
         f"{EXAMPLES / 'notes_database.py'}:lifespan"],
        input=calls[1],
        capture_output=True, text=True, timeout=60, check=False,
        env={"NOTES_DB": str(database), "PATH": ""},
    )  # fmt: skip

    assert 0 == done.returncode, done.stderr
    log = done.stderr
    assert log.index(f"opened {database}") < log.index("receipt tool add_note ok")
    assert log.index("receipt tool add_note ok") < log.index(f"closed {database}")
    assert 1 == json.loads(done.stdout)["result"]["structuredContent"]
    assert 1 == json.loads(again.stdout)["result"]["structuredContent"]
    with sqlite3.connect(database) as db:
        assert [("buy milk",)] == db.execute("SELECT text FROM notes").fetchall()


@pytest.fixture
def notes_root(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    (root / "projects").mkdir(parents=True)
    (root / "projects" / "launch.md").write_text("# Launch\nFriday.")
    (root / "todo.md").write_text("- call Bo")
    (tmp_path / "secret.txt").write_text("not a note")
    (root / "escape.md").symlink_to(tmp_path / "secret.txt")
    return root


async def test_file_notes_reads_a_nested_path_and_lists_the_index(
    notes_root: Path,
) -> None:
    server = load("file_notes").make_server(notes_root)
    async with McpTestClient(server) as client:
        nested = await client.read_resource("notes://projects/launch.md")
        index = await client.read_resource("notes://index")
        templates = await client.list_resource_templates()

    assert "# Launch\nFriday." == wire(nested)["contents"][0]["text"]
    assert "text/markdown" == wire(nested)["contents"][0]["mimeType"]
    assert ["escape.md", "projects/launch.md", "todo.md"] == json.loads(
        wire(index)["contents"][0]["text"]
    )
    assert ["notes://{+path}"] == [t["uriTemplate"] for t in templates]


@pytest.mark.parametrize(
    "uri",
    [
        "notes://../secret.txt",
        "notes://projects/../../secret.txt",
        "notes://projects/%2e%2e/%2e%2e/secret.txt",
        "notes://escape.md",
    ],
)
async def test_file_notes_refuses_every_way_out_of_the_folder(
    notes_root: Path, uri: str
) -> None:
    server = load("file_notes").make_server(notes_root)
    async with McpTestClient(server) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.read_resource(uri)

    assert -32602 == caught.value.code


async def test_confirm_delete_asks_first_and_deletes_only_after_yes() -> None:
    example = load("confirm_delete")
    caps: dict[str, Any] = {"elicitation": {}}
    async with McpTestClient(example.server, client_capabilities=caps) as client:
        asked = await client.call_tool("delete_draft", {"name": "welcome"})
        still_there = set(example.drafts.names)
        done = await client.call_tool(
            "delete_draft",
            {"name": "welcome"},
            input_responses={
                "confirm": {"action": "accept", "content": {"confirm": True}}
            },
            request_state=wire(asked.raw)["requestState"],
        )

    assert "input_required" == asked.raw["resultType"]
    assert "welcome" in still_there
    assert "deleted 'welcome'" == done.structured
    assert {"old-offer"} == example.drafts.names


async def test_confirm_delete_keeps_the_draft_when_the_user_declines() -> None:
    example = load("confirm_delete")
    caps: dict[str, Any] = {"elicitation": {}}
    async with McpTestClient(example.server, client_capabilities=caps) as client:
        asked = await client.call_tool("delete_draft", {"name": "welcome"})
        kept = await client.call_tool(
            "delete_draft",
            {"name": "welcome"},
            input_responses={"confirm": {"action": "decline"}},
            request_state=wire(asked.raw)["requestState"],
        )

    assert "kept 'welcome'" == kept.structured
    assert "welcome" in example.drafts.names


async def _post(
    url: str, token: str | None, method: str, **params: object
) -> httpx.Response:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if "name" in params:
        headers["Mcp-Name"] = str(params["name"])
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = json.loads(_line(1, method, **params))
    async with httpx.AsyncClient() as client:
        return await client.post(url, json=body, headers=headers, timeout=10)


async def test_http_app_serves_its_own_routes_and_mcp_behind_authentication() -> None:
    example = load("http_app")
    async with trio.open_nursery() as nursery:
        port = await nursery.start(example.serve, 0)
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient() as client:
            status = await client.get(f"{base}/status", timeout=10)
        anonymous = await _post(f"{base}/api/mcp", None, "tools/list")
        ana = await _post(
            f"{base}/api/mcp", "let-me-in", "tools/call", name="whoami", arguments={}
        )
        nursery.cancel_scope.cancel()

    assert {"ok": True} == status.json()
    assert 401 == anonymous.status_code
    assert "ana" == ana.json()["result"]["structuredContent"]


async def test_embedded_server_runs_beside_the_background_job() -> None:
    example = load("embedded")
    async with trio.open_nursery() as nursery:
        port = await nursery.start(example.main, 0)
        url = f"http://127.0.0.1:{port}/mcp"
        with trio.fail_after(10):
            while True:  # the job ticks beside the server until the tool sees it
                reply = await _post(
                    url, None, "tools/call", name="ticks_so_far", arguments={}
                )
                ticks = reply.json()["result"]["structuredContent"]
                if ticks >= 1:
                    break
                await trio.sleep(0.05)
        nursery.cancel_scope.cancel()

    assert 200 == reply.status_code
