"""``trio-mcp install``: each host's configuration launches a server that answers."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, replies, request_line, run_command, write_server

from trio_mcp._cli._hosts import default_config
from trio_mcp.testing import check_message

TABLES = {"claude-desktop": "mcpServers", "cursor": "mcpServers", "vscode": "servers",
          "claude-code": "mcpServers"}  # fmt: skip


def _ask_for_tools(entry: dict[str, Any], cwd: Path) -> list[str]:
    """Launch exactly what the entry names, from another directory, and list tools."""
    done = run_command(
        [entry["command"], *entry["args"]],
        cwd=cwd,
        stdin=request_line(1, "tools/list"),
        env=entry.get("env", {}),
    )
    assert 0 == done.returncode, done.stderr
    reply = replies(done.stdout)[1]
    check_message(reply, "tools/list")
    return [tool["name"] for tool in reply["result"]["tools"]]


@pytest.mark.parametrize("host", sorted(TABLES))
def test_install_writes_an_entry_the_host_can_launch(host: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write_server(project)
    config = tmp_path / "host" / "config.json"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    done = cli("install", host, "echo_server.py", "--env", "GREETING=hi",
               "--config", str(config), cwd=project)  # fmt: skip

    assert 0 == done.returncode, done.stderr
    entry = json.loads(config.read_text())[TABLES[host]]["echo-server"]
    assert Path(entry["command"]).is_absolute()
    assert {"GREETING": "hi"} == entry["env"]
    assert ("stdio" if host == "vscode" else None) == entry.get("type")
    assert ["echo", "fail"] == _ask_for_tools(entry, elsewhere)


def test_install_of_a_module_target_keeps_it_importable_from_anywhere(
    tmp_path: Path,
) -> None:
    write_server(tmp_path)
    config = tmp_path / "cursor.json"

    done = cli("install", "cursor", "echo_server:build", "--name", "echo",
               "--config", str(config), cwd=tmp_path)  # fmt: skip

    assert 0 == done.returncode, done.stderr
    entry = json.loads(config.read_text())["mcpServers"]["echo"]
    assert str(tmp_path) == entry["env"]["PYTHONPATH"]
    assert ["echo", "fail"] == _ask_for_tools(entry, Path("/"))


def test_install_merges_into_an_existing_file_and_keeps_a_backup(
    tmp_path: Path,
) -> None:
    write_server(tmp_path)
    config = tmp_path / "claude_desktop_config.json"
    before = {"mcpServers": {"other": {"command": "other-server"}}, "theme": "dark"}
    config.write_text(json.dumps(before))

    done = cli("install", "claude-desktop", "echo_server.py", "--config", str(config),
               cwd=tmp_path)  # fmt: skip

    assert 0 == done.returncode, done.stderr
    after = json.loads(config.read_text())
    assert ["echo-server", "other"] == sorted(after["mcpServers"])
    assert "dark" == after["theme"]
    assert before == json.loads(
        (tmp_path / "claude_desktop_config.json.bak").read_text()
    )


@pytest.mark.parametrize("text", ['{"mcpServers": {', '["a list"]', '{"servers": 3}'])
def test_install_never_overwrites_a_broken_file(tmp_path: Path, text: str) -> None:
    write_server(tmp_path)
    config = tmp_path / "mcp.json"
    config.write_text(text)

    done = cli(
        "install", "vscode", "echo_server.py", "--config", str(config), cwd=tmp_path
    )

    assert 2 == done.returncode
    assert "Nothing was written" in done.stderr
    assert str(config) in done.stderr
    assert text == config.read_text()
    assert not (tmp_path / "mcp.json.bak").exists()


def test_install_claude_code_prints_the_command_to_run(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("install", "claude-code", "echo_server.py", "--env", "A=1", cwd=tmp_path)

    assert 0 == done.returncode, done.stderr
    words = shlex.split(done.stdout)
    assert ["claude", "mcp", "add", "echo-server", "-e", "A=1", "--"] == words[:7]
    entry = {"command": words[7], "args": words[8:], "env": {"A": "1"}}
    assert ["echo", "fail"] == _ask_for_tools(entry, Path("/"))


def test_install_json_prints_the_entry(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("install", "json", "echo_server.py", "--name", "echo", "--allow", "x",
               cwd=tmp_path)  # fmt: skip

    assert 0 == done.returncode, done.stderr
    entry = json.loads(done.stdout)["echo"]
    assert ["--allow", "x"] == entry["args"][-2:]
    assert ["echo", "fail"] == _ask_for_tools(entry, Path("/"))


def test_install_refuses_an_env_pair_without_a_value(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("install", "json", "echo_server.py", "--env", "NOVALUE", cwd=tmp_path)

    assert 2 == done.returncode
    assert "KEY=VALUE" in done.stderr


@pytest.mark.parametrize(
    ("host", "platform", "expected"),
    [
        (
            "claude-desktop",
            "darwin",
            "/h/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        ("claude-desktop", "win32", "/appdata/Claude/claude_desktop_config.json"),
        ("claude-desktop", "linux", "/h/.config/Claude/claude_desktop_config.json"),
        ("cursor", "linux", "/h/.cursor/mcp.json"),
        ("vscode", "darwin", "/work/.vscode/mcp.json"),
    ],
)
def test_default_config_locations_per_system(
    host: str, platform: str, expected: str
) -> None:
    found = default_config(
        host, platform=platform, home=Path("/h"), environ={"APPDATA": "/appdata"},
        cwd=Path("/work"),
    )  # fmt: skip

    assert Path(expected) == found


def test_install_refuses_to_replace_a_different_entry_of_the_same_name(
    tmp_path: Path,
) -> None:
    write_server(tmp_path)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {"echo-server": {"command": "old"}}}))

    refused = cli("install", "cursor", "echo_server.py", "--config", str(config),
                  cwd=tmp_path)  # fmt: skip
    kept = json.loads(config.read_text())
    forced = cli("install", "cursor", "echo_server.py", "--config", str(config),
                 "--force", cwd=tmp_path)  # fmt: skip

    assert 2 == refused.returncode
    assert "already has a different server named 'echo-server'" in refused.stderr
    assert "--force" in refused.stderr
    assert {"command": "old"} == kept["mcpServers"]["echo-server"]
    assert 0 == forced.returncode, forced.stderr
    assert "(replaced the entry of that name)" in forced.stdout
    entry = json.loads(config.read_text())["mcpServers"]["echo-server"]
    assert "old" != entry["command"]
