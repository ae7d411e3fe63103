"""The fixture in a project where pytest-trio is missing (a newcomer's walk of
getting-started found the old message told them to set ``trio_mode = true``, which
they had set: without pytest-trio that setting is ignored)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT_TESTS = '''
from trio_mcp import Server, tool


@tool
def greet(name: str) -> str:
    """
    Greet someone by name.

    Args:
        name: Who to greet.
    """
    return f"Hello, {name}!"


@pytest.fixture
def mcp_server():
    return Server("plain", "1.0", tools=[greet])


async def test_greets(mcp_client):
    assert (await mcp_client.call_tool("greet", {"name": "Ada"})).structured
'''

PYTEST = (sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider")


def test_without_pytest_trio_the_fixture_says_to_install_it(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntrio_mode = true\n")
    (tmp_path / "test_project.py").write_text("import pytest\n" + PROJECT_TESTS)
    done = subprocess.run(
        # As a venv with pytest and trio_mcp alone: neither async plugin loaded.
        [*PYTEST, "-p", "no:trio", "-p", "no:asyncio", "-p", "no:anyio"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout

    assert 1 == done.returncode, output
    assert "ERROR test_project.py::test_greets" in output
    assert "pytest-trio is not installed" in output
    assert "pip install pytest-trio" in output
    assert "is not a Trio test" not in output


def test_with_pytest_trio_an_unmarked_test_is_told_to_mark_it(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntrio_mode = false\n")
    (tmp_path / "test_project.py").write_text("import pytest\n" + PROJECT_TESTS)
    done = subprocess.run(
        [*PYTEST, "-p", "no:asyncio", "-p", "no:anyio"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout

    assert "ERROR test_project.py::test_greets" in output
    assert "is not a Trio test" in output
    assert "pytest-trio is not installed" not in output
