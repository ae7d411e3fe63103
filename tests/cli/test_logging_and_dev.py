"""``--log-level`` and ``TRIO_MCP_LOG_LEVEL`` on stderr; ``trio-mcp dev`` and Node."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_helpers import cli, replies, request_line, write_server

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


def test_dev_without_node_says_how_to_get_it(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("dev", "echo_server.py", cwd=tmp_path, env={"PATH": str(tmp_path)})

    assert 2 == done.returncode
    assert "needs Node.js (npx was not found on PATH)" in done.stderr


def test_dev_starts_the_inspector_on_the_server(tmp_path: Path) -> None:
    """A stand-in npx records its arguments and runs the command it was given."""
    write_server(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > {tmp_path / "argv"}\n'
        "shift 2\n"
        f"printf '%s\\n' '{request_line(1, 'tools/list').strip()}' | \"$@\" "
        f"> {tmp_path / 'reply'}\n"
    )
    npx.chmod(0o755)

    done = cli("dev", "echo_server.py", cwd=tmp_path, env={"PATH": str(bin_dir)})

    assert 0 == done.returncode, done.stderr
    argv = (tmp_path / "argv").read_text().splitlines()
    assert ["-y", "@modelcontextprotocol/inspector", sys.executable, "-m", "trio_mcp",
            "run", f"{tmp_path / 'echo_server.py'}:server"] == argv  # fmt: skip
    tools = json.loads((tmp_path / "reply").read_text())["result"]["tools"]
    assert ["echo", "fail"] == [tool["name"] for tool in tools]
