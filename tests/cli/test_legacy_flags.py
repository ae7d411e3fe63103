"""``--legacy`` on ``run`` and the ``install`` default that writes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_helpers import cli, replies, run_command, write_server
from support.legacy_schema import check_legacy

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "host", "version": "1"},
    },
}
HANDSHAKE = (
    "\n".join(
        json.dumps(m)
        for m in (
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        )
    )
    + "\n"
)


def _answers(stdout: str) -> dict[int, dict[str, Any]]:
    return replies(stdout)


def test_run_legacy_answers_a_handshake(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("run", "echo_server.py", "--legacy", cwd=tmp_path, stdin=HANDSHAKE)

    assert 0 == done.returncode, done.stderr
    answers = _answers(done.stdout)
    check_legacy(answers[1], "2025-06-18", "initialize")
    check_legacy(answers[2], "2025-06-18", "tools/list")
    assert "2025-06-18" == answers[1]["result"]["protocolVersion"]
    assert ["echo", "fail"] == [t["name"] for t in answers[2]["result"]["tools"]]


def test_run_without_legacy_names_the_supported_version(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("run", "echo_server.py", cwd=tmp_path, stdin=HANDSHAKE)

    assert 0 == done.returncode, done.stderr
    error = _answers(done.stdout)[1]["error"]
    assert -32601 == error["code"]
    assert {"supported": ["2026-07-28"]} == error["data"]


def test_install_writes_legacy_unless_modern_only(tmp_path: Path) -> None:
    write_server(tmp_path)

    both = cli("install", "json", "echo_server.py", "--allow", "x", cwd=tmp_path)
    modern = cli("install", "json", "echo_server.py", "--modern-only", cwd=tmp_path)

    assert 0 == both.returncode, both.stderr
    entry = json.loads(both.stdout)["echo-server"]
    target = f"{tmp_path / 'echo_server.py'}:server"
    assert ["run", target, "--legacy", "--allow", "x"] == entry["args"][2:]
    launched = run_command(
        [entry["command"], *entry["args"]], cwd=Path("/"), stdin=HANDSHAKE
    )
    assert "2025-06-18" == _answers(launched.stdout)[1]["result"]["protocolVersion"]
    assert 0 == modern.returncode, modern.stderr
    assert "--legacy" not in json.loads(modern.stdout)["echo-server"]["args"]
