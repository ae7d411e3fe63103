"""``trio-mcp mcp``: the toolchain served like any server; loading code needs a grant."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trio
from cli_helpers import cli, replies, request_line, write_server
from support import META, wire

from trio_mcp.testing import McpTestClient, ProtocolError, check_message

CHECK = request_line(7, "tools/call", name="check_server",
                     arguments={"target": "echo_server.py:server"})  # fmt: skip


def test_check_server_is_refused_without_the_load_code_grant(tmp_path: Path) -> None:
    write_server(tmp_path)
    marker = tmp_path / "imported"
    (tmp_path / "loud.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    load = request_line(8, "tools/call", name="check_server",
                        arguments={"target": "loud.py:server"})  # fmt: skip

    done = cli("mcp", cwd=tmp_path, stdin=CHECK + load)

    assert 0 == done.returncode, done.stderr
    by_id = replies(done.stdout)
    for reply in by_id.values():
        check_message(reply, "tools/call")
        assert True is reply["result"]["isError"]
        assert "load_code" in reply["result"]["content"][0]["text"]
    assert not marker.exists()


def test_check_server_runs_once_the_host_grants_load_code(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("mcp", "--allow", "load_code", cwd=tmp_path, stdin=CHECK)

    assert 0 == done.returncode, done.stderr
    reply = replies(done.stdout)[7]
    check_message(reply, "tools/call")
    assert [
        {"kind": "tool", "name": "echo", "description": "Echo the text back."},
        {
            "kind": "tool",
            "name": "fail",
            "description": "Fail with a reason the model can read.",
        },
    ] == reply["result"]["structuredContent"]
    assert "granted: load_code" in done.stderr


def test_every_toolchain_tool_that_takes_a_target_requires_load_code() -> None:
    from trio_mcp import ToolSpec
    from trio_mcp._cli._toolchain import toolchain_server

    tools = [s for s in toolchain_server().catalog() if isinstance(s, ToolSpec)]
    loaders = [t for t in tools if "target" in dict(t.input_schema["properties"])]  # type: ignore[arg-type]

    assert {"check_server", "check_lock"} == {t.name for t in loaders}
    for spec in loaders:
        assert ["load_code"] == [cap.name for cap in spec.caps]


async def test_mcp_over_http_answers_tools_list_on_the_port_it_prints(
    tmp_path: Path,
) -> None:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "trio_mcp", "mcp", "--http", "--port", "0"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k != "TRIO_MCP_LOG_LEVEL"},
    )
    try:
        assert process.stderr is not None
        seen = b""
        with trio.fail_after(30):
            while (found := re.search(rb"over (http://\S+/mcp)", seen)) is None:
                chunk = await process.stderr.receive_some()
                assert chunk, seen
                seen += chunk
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list",
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                "params": {"_meta": META}}  # fmt: skip
        async with httpx.AsyncClient() as client:
            reply = await client.post(found.group(1).decode(), json=body,
                                      headers=headers, timeout=10)  # fmt: skip
    finally:
        process.terminate()
        await process.wait()

    assert 200 == reply.status_code
    check_message(reply.json(), "tools/list")
    assert {"check_server", "check_lock"} == {
        t["name"] for t in reply.json()["result"]["tools"]
    }


async def test_the_help_resources_describe_each_command() -> None:
    from trio_mcp._cli._toolchain import toolchain_server

    async with McpTestClient(toolchain_server()) as client:
        overview = await client.read_resource("trio-mcp://help")
        install = await client.read_resource("trio-mcp://help/install")
        with pytest.raises(ProtocolError) as unknown:
            await client.read_resource("trio-mcp://help/frobnicate")
        prompt = await client.get_prompt("write_tool", {"purpose": "convert units"})

    assert "install" in wire(overview)["contents"][0]["text"]
    assert "--config" in wire(install)["contents"][0]["text"]
    assert -32602 == unknown.value.code
    assert "convert units" in wire(prompt)["messages"][0]["content"]["text"]
