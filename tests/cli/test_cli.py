"""The ``trio-mcp`` command line, run as a real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
