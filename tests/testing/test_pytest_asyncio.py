"""The pytest plugin beside pytest-asyncio, in a project of its own.

Each test writes a small project (a ``pytest.ini`` and a test module) into a temp
directory and runs pytest on it in a subprocess, as a user would: both plugins are
loaded through their entry points, pytest-asyncio in auto or strict mode,
pytest-trio's ``trio_mode`` on or off. Before the plugin settled the two, auto mode
ran Trio tests and their fixtures on asyncio (``'RunContext' object has no
attribute 'runner'``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_TESTS = '''
import asyncio

import pytest
import trio
from hypothesis import given, settings, strategies as st

from trio_mcp import Server, tool
from trio_mcp.testing import McpTestClient


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
    return Server("coexist", "1.0", tools=[greet])


@pytest.fixture
async def trio_task_name():
    await trio.sleep(0)
    yield trio.lowlevel.current_task().name


async def greeted(client):
    return (await client.call_tool("greet", {"name": "Ada"})).structured


@pytest.mark.trio
async def test_marked_with_client(mcp_client):
    assert await greeted(mcp_client) == "Hello, Ada!"


@pytest.mark.trio
async def test_marked_with_own_async_fixture(trio_task_name):
    await trio.sleep(0)
    assert trio_task_name


@pytest.mark.trio
@settings(max_examples=3)
@given(st.integers())
async def test_marked_hypothesis(number):
    await trio.sleep(0)


@pytest.mark.trio
class TestMarkedClass:
    async def test_in_class(self, mcp_client, trio_task_name):
        assert await greeted(mcp_client) == "Hello, Ada!"


async def test_unmarked_with_client(mcp_client):
    assert await greeted(mcp_client) == "Hello, Ada!"


async def test_unmarked_direct_client():
    async with McpTestClient(Server("coexist", "1.0", tools=[greet])) as client:
        assert await greeted(client) == "Hello, Ada!"


@pytest.mark.asyncio
async def test_asyncio(trio_task_name_free):
    await asyncio.sleep(0)
    assert trio_task_name_free == "asyncio"


@pytest.fixture
def trio_task_name_free():
    return "asyncio"


@pytest.mark.asyncio
async def test_asyncio_with_client(mcp_client):
    pass
'''

MESSAGE = "mcp_client runs on Trio, but {name} is not a Trio test"
DIRECT = "McpTestClient runs on Trio, but this test is not a Trio test"


Outcomes = dict[str, str]


def run_project(tmp_path: Path, asyncio_mode: str, trio_mode: bool) -> Outcomes:
    """Run the project's tests; return each test's outcome by name (and the output
    under ``_output``)."""
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\n"
        f"asyncio_mode = {asyncio_mode}\n"
        f"trio_mode = {'true' if trio_mode else 'false'}\n"
        "asyncio_default_fixture_loop_scope = function\n"
    )
    (tmp_path / "test_project.py").write_text(PROJECT_TESTS)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    plugins = re.search(r"^plugins: (.*)$", done.stdout, re.M)
    assert plugins is not None, done.stdout
    assert "asyncio-" in plugins[1], done.stdout
    assert "RunContext" not in done.stdout, done.stdout
    found = re.findall(
        r"^(PASSED|FAILED|ERROR) test_project\.py::(?:\w+::)?(\w+)", done.stdout, re.M
    )
    config = (tmp_path / "pytest.ini").read_text()
    return {name: outcome for outcome, name in found} | {
        "_output": done.stdout,
        "_config": config,
    }


@pytest.fixture(
    scope="module",
    params=[("auto", False), ("auto", True), ("strict", False), ("strict", True)],
    ids=lambda p: f"{p[0]}-trio_mode={p[1]}",
)
def project(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[bool, Outcomes]:
    """Whether ``trio_mode`` is on, and the outcomes of one run of the project."""
    asyncio_mode, trio_mode = request.param
    tmp_path = tmp_path_factory.mktemp(f"{asyncio_mode}-{trio_mode}")
    return trio_mode, run_project(tmp_path, asyncio_mode, trio_mode)


def test_trio_marked_tests_run_on_trio_beside_pytest_asyncio(
    project: tuple[bool, Outcomes],
) -> None:
    _, outcomes = project
    names = (
        "test_marked_with_client",
        "test_marked_with_own_async_fixture",
        "test_marked_hypothesis",
        "test_in_class",
        "test_asyncio",
    )

    assert dict.fromkeys(names, "PASSED") == {
        name: outcomes.get(name, "missing") for name in names
    }, outcomes["_output"]


def test_mcp_client_outside_a_trio_test_says_to_mark_it(
    project: tuple[bool, Outcomes],
) -> None:
    trio_mode, outcomes = project
    output = outcomes["_output"]

    assert "ERROR" == outcomes["test_asyncio_with_client"], output
    assert MESSAGE.format(name="test_asyncio_with_client") in output
    assert "Mark it @pytest.mark.trio" in output
    if trio_mode:  # every async test without @pytest.mark.asyncio is Trio's
        assert "PASSED" == outcomes["test_unmarked_with_client"], output
    else:
        assert "ERROR" == outcomes["test_unmarked_with_client"], output
        assert MESSAGE.format(name="test_unmarked_with_client") in output


def test_the_client_itself_in_an_unmarked_test_says_to_mark_it(
    project: tuple[bool, Outcomes],
) -> None:
    """Issue 45, item 7: not Trio's internals (``'RunContext' object has no
    attribute 'runner'``, which ``run_project`` refuses in any output)."""
    trio_mode, outcomes = project
    output = outcomes["_output"]
    auto = "asyncio_mode = auto" in outcomes["_config"]

    if trio_mode:
        assert "PASSED" == outcomes["test_unmarked_direct_client"], output
    elif auto:  # pytest-asyncio runs it on asyncio
        assert "FAILED" == outcomes["test_unmarked_direct_client"], output
        assert DIRECT in output
        assert "Mark it @pytest.mark.trio" in output
