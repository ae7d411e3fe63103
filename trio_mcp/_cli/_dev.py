"""``trio-mcp dev``: the MCP Inspector on a server, through Node's ``npx``.

The Inspector is a Node program; it starts the server itself over stdio with
``<this python> -m trio_mcp run <target>`` and prints the address of its web page.
Node is not a dependency of trio_mcp, so its absence is a message, not a crash.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

import trio

from ._commands import summary
from ._load import CliError, absolute_target, open_server

__all__ = ["INSPECTOR", "run_inspector"]

INSPECTOR = "@modelcontextprotocol/inspector"


async def _check(target: str) -> str:
    async with open_server(target) as server:
        return summary(server, "the MCP Inspector", ())


def run_inspector(target: str, allow: Sequence[str]) -> int:
    """Check the target, then run the Inspector on it until it exits."""
    npx = shutil.which("npx")
    if npx is None:
        raise CliError(
            "the MCP Inspector needs Node.js (npx was not found on PATH); install "
            "Node 22 or newer from your package manager, or test without it: "
            f"'trio-mcp call {target} TOOL --args JSON'"
        )
    print(trio.run(_check, target), file=sys.stderr)
    command = [npx, "-y", INSPECTOR, sys.executable, "-m", "trio_mcp", "run"]
    command.append(absolute_target(target))
    for name in allow:
        command += ["--allow", name]
    print(
        "starting the MCP Inspector; it prints the address of its page "
        "(usually http://localhost:6274); Ctrl-C stops it",
        file=sys.stderr,
    )
    try:
        return subprocess.run(command, env=os.environ.copy(), check=False).returncode
    except KeyboardInterrupt:
        return 130
