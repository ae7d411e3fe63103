"""The MCP Inspector 2.x in its default (handshake) era against ``run --legacy``.

``trio-mcp dev`` runs the pinned Inspector in its modern era; left to its default, the
Inspector sends ``initialize``, which a dual-era server answers and a modern-only one
refuses. Its command-line mode shows both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import run_captured

from trio_mcp._cli._dev import prepare

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_desk.py"


def _inspect(*server_flags: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    node, launcher = prepare()
    command = [str(node.path), str(launcher), "--cli"]
    command += [
        sys.executable,
        "-m",
        "trio_mcp",
        "run",
        f"{EXAMPLE}:server",
        *server_flags,
    ]
    command += ["--method", "tools/call", "--tool-name", "search_tickets"]
    command += ["--tool-arg", "query=refund"]
    env = {**os.environ, "PATH": f"{node.path.parent}{os.pathsep}{os.environ['PATH']}"}
    return run_captured(command, cwd=cwd, env=env, timeout=120)


def test_the_inspector_in_its_default_era_calls_a_dual_era_server(
    tmp_path: Path,
) -> None:
    done = _inspect("--legacy", cwd=tmp_path)

    assert 0 == done.returncode, done.stderr
    result = json.loads(done.stdout)
    assert ["T-1", "T-3"] == [t["id"] for t in result["structuredContent"]["result"]]


def test_the_inspector_in_its_default_era_is_refused_without_legacy(
    tmp_path: Path,
) -> None:
    done = _inspect(cwd=tmp_path)

    assert "method 'initialize' does not exist" in done.stdout + done.stderr
