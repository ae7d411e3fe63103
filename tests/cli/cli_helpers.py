"""Helpers shared by the command-line tests: a server file and a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from support import META, run_captured

SERVER = '''
from trio_mcp import Server, ToolError, tool

@tool
def echo(text: str) -> str:
    """{summary}

    Args:
        text: What to echo.
    """
    return text

@tool
def fail(reason: str) -> str:
    """Fail with a reason the model can read.

    Args:
        reason: What to say.
    """
    raise ToolError(reason)

server = Server("echo-server", "1.0", tools=[echo, fail])

def build():
    return server

async def build_later():
    return server

not_a_server = 42
'''


def write_server(tmp_path: Path, summary: str = "Echo the text back.") -> Path:
    """Write the echo server module into ``tmp_path``."""
    path = tmp_path / "echo_server.py"
    path.write_text(SERVER.replace("{summary}", summary))
    return path


def request_line(request_id: int, method: str, **params: Any) -> str:
    """One JSON-RPC request line with the required ``_meta``."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"_meta": META, **params},
    }
    return json.dumps(body) + "\n"


def cli(
    *args: str,
    cwd: Path,
    stdin: str = "",
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m trio_mcp ARGS`` to completion."""
    return run_command(
        [sys.executable, "-m", "trio_mcp", *args], cwd=cwd, stdin=stdin, env=env
    )


def run_command(
    command: Sequence[str],
    *,
    cwd: Path,
    stdin: str = "",
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command with a bounded time, capturing both streams."""
    full_env = {k: v for k, v in os.environ.items() if k != "TRIO_MCP_LOG_LEVEL"}
    full_env.update(env or {})
    return run_captured(command, cwd=cwd, env=full_env, stdin=stdin)


def replies(stdout: str) -> dict[int, dict[str, Any]]:
    """The JSON-RPC replies on stdout, by id."""
    out = {}
    for line in stdout.splitlines():
        message = json.loads(line)
        out[message["id"]] = message
    return out
