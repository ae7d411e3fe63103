"""The ``trio-mcp`` command line, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from trio_mcp.testing import check_message

SERVER = '''
from trio_mcp import Server, tool

@tool
def echo(text: str) -> str:
    """{summary}

    Args:
        text: What to echo.
    """
    return text

server = Server("echo-server", "1.0", tools=[echo])

def build():
    return server

async def not_a_factory():
    return server
'''


def _write(tmp_path: Path, summary: str = "Echo the text back.") -> Path:
    path = tmp_path / "echo_server.py"
    path.write_text(SERVER.replace("{summary}", summary))
    return path


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trio_mcp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_check_prints_the_catalog(tmp_path: Path) -> None:
    _write(tmp_path)

    done = _cli("check", "echo_server.py:server", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert "echo-server 1.0: catalog is valid" in done.stdout
    assert "tool     echo: Echo the text back." in done.stdout


def test_check_accepts_a_module_name_and_a_factory(tmp_path: Path) -> None:
    _write(tmp_path)

    done = _cli("check", "echo_server:build", cwd=tmp_path)

    assert done.returncode == 0, done.stderr


def test_check_reports_an_invalid_declaration_with_exit_status_2(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path)
    path.write_text(path.read_text().replace("        text: What to echo.\n", ""))

    done = _cli("check", "echo_server.py:server", cwd=tmp_path)

    assert done.returncode == 2
    assert "parameter 'text' has no description" in done.stderr


def test_check_names_a_missing_attribute(tmp_path: Path) -> None:
    _write(tmp_path)

    done = _cli("check", "echo_server.py:nope", cwd=tmp_path)

    assert done.returncode == 2
    assert "has no attribute 'nope'" in done.stderr


def test_check_refuses_an_async_factory(tmp_path: Path) -> None:
    _write(tmp_path)

    done = _cli("check", "echo_server.py:not_a_factory", cwd=tmp_path)

    assert done.returncode == 2
    assert "async function" in done.stderr


def test_lock_check_passes_until_a_description_changes(tmp_path: Path) -> None:
    _write(tmp_path)
    assert _cli("lock", "echo_server.py", cwd=tmp_path).returncode == 0
    assert _cli("lock", "echo_server.py", "--check", cwd=tmp_path).returncode == 0
    _write(tmp_path, summary="Echo the text back, louder.")

    done = _cli("lock", "echo_server.py", "--check", cwd=tmp_path)

    assert done.returncode == 1
    assert "tool 'echo' changed" in done.stderr


def test_lock_check_without_a_lock_file_fails(tmp_path: Path) -> None:
    _write(tmp_path)

    done = _cli("lock", "echo_server.py", "--check", cwd=tmp_path)

    assert done.returncode == 1
    assert "no lock file" in done.stderr


def _discover_line(request_id: int = 1, method: str = "server/discover") -> str:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"_meta": meta},
    }
    return json.dumps(body) + "\n"


def test_run_serves_the_target_over_stdio_until_stdin_closes(tmp_path: Path) -> None:
    _write(tmp_path)

    done = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "run", "echo_server.py:server"],
        cwd=tmp_path,
        input=_discover_line() + _discover_line(2, "tools/list"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    for reply in replies:
        check_message(reply, "server/discover" if reply["id"] == 1 else "tools/list")
    assert [r["id"] for r in sorted(replies, key=lambda r: r["id"])] == [1, 2]
    tools = next(r for r in replies if r["id"] == 2)["result"]["tools"]
    assert [t["name"] for t in tools] == ["echo"]


def test_mcp_serves_the_toolchain_itself(tmp_path: Path) -> None:
    _write(tmp_path)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "_meta": meta,
            "name": "check_server",
            "arguments": {"target": "echo_server.py:server"},
        },
    }

    done = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "mcp"],
        cwd=tmp_path,
        input=json.dumps(call) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    check_message(reply, "tools/call")
    assert reply["result"]["structuredContent"] == [
        {"kind": "tool", "name": "echo", "description": "Echo the text back."}
    ]
