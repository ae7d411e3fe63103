"""``trio-mcp lock``: per-part digests, and tools provided by installed distributions."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import cli, write_server

TOOL = '''
from trio_mcp import tool

@tool
def lookup(word: {input_type}) -> {output_type}:
    """{summary}

    Args:
        word: The word to look up.
    """
    raise NotImplementedError
'''

APP = """
from fixture_tools import lookup
from trio_mcp import Server

server = Server("dictionary", "1.0", tools=[lookup])
"""


def _distribution(
    site: Path,
    version: str,
    *,
    summary: str = "Look a word up.",
    input_type: str = "str",
    output_type: str = "str",
) -> None:
    """Install (by hand) fixture-tools VERSION into ``site``, replacing any other."""
    for old in site.glob("fixture_tools-*.dist-info"):
        for file in old.iterdir():
            file.unlink()
        old.rmdir()
    package = site / "fixture_tools"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(
        TOOL.replace("{summary}", summary)
        .replace("{input_type}", input_type)
        .replace("{output_type}", output_type)
    )
    info = site / f"fixture_tools-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: fixture-tools\nVersion: {version}\n"
    )
    (info / "entry_points.txt").write_text(
        "[trio_mcp.tools]\nlookup = fixture_tools:lookup\n"
    )


def _lock(tmp_path: Path, *args: str) -> tuple[int, str]:
    done = cli("lock", "app.py", *args, cwd=tmp_path,
               env={"PYTHONPATH": str(tmp_path / "site")})  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def _project(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    _distribution(tmp_path / "site", "1.0")


def _check_after_upgrade(
    tmp_path: Path, version: str, **changed: str
) -> tuple[int, str]:
    """Lock the project with fixture-tools 1.0, install ``version`` with the
    ``changed`` tool, and run ``lock --check``."""
    _project(tmp_path)
    assert 0 == _lock(tmp_path)[0]
    _distribution(tmp_path / "site", version, **changed)
    return _lock(tmp_path, "--check")


def test_lock_records_the_distribution_that_provides_a_tool(tmp_path: Path) -> None:
    _project(tmp_path)

    status, output = _lock(tmp_path)

    assert 0 == status, output
    entry = json.loads((tmp_path / "mcp.lock").read_text())["tools"]["lookup"]
    assert {"distribution": "fixture-tools", "version": "1.0"} == entry["provider"]
    assert {"description", "inputSchema", "name", "outputSchema"} <= set(entry["parts"])


def test_an_upgrade_that_changes_a_description_names_the_tool_and_the_part(
    tmp_path: Path,
) -> None:
    status, output = _check_after_upgrade(
        tmp_path, "1.1", summary="Look a word up in any language."
    )

    assert 1 == status
    assert (
        "tool 'lookup' (from fixture-tools 1.0 -> 1.1) changed: description" in output
    )


def test_a_changed_input_schema_is_named(tmp_path: Path) -> None:
    status, output = _check_after_upgrade(tmp_path, "1.0", input_type="int")

    assert 1 == status
    assert "tool 'lookup' (from fixture-tools 1.0) changed: input schema\n" in output


def test_a_changed_output_schema_is_named(tmp_path: Path) -> None:
    status, output = _check_after_upgrade(tmp_path, "2.0", output_type="list[str]")

    assert 1 == status
    assert (
        "tool 'lookup' (from fixture-tools 1.0 -> 2.0) changed: output schema" in output
    )


def test_lock_check_passes_until_a_description_changes(tmp_path: Path) -> None:
    write_server(tmp_path)
    assert 0 == cli("lock", "echo_server.py", cwd=tmp_path).returncode
    assert 0 == cli("lock", "echo_server.py", "--check", cwd=tmp_path).returncode
    write_server(tmp_path, summary="Echo the text back, louder.")

    done = cli("lock", "echo_server.py", "--check", cwd=tmp_path)

    assert 1 == done.returncode
    assert "tool 'echo' changed: description" in done.stderr


def test_lock_check_without_a_lock_file_fails(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("lock", "echo_server.py", "--check", cwd=tmp_path)

    assert 1 == done.returncode
    assert "no lock file" in done.stderr
