"""A newcomer's first hour, repeated: a wheel built from a clone, in a fresh virtualenv.

What a clone holds (the tracked files) is copied aside; ``pip wheel --no-deps`` builds
the wheel there, as README and getting-started say; a new virtualenv gets that wheel with
its ``http`` extra plus pytest and pytest-trio ("Test it" says to install them) and
nothing else. Then:

* the official ``mcp`` client (2.3.0, from the test environment) calls the
  getting-started server run by the fresh venv's Python, over stdio and HTTP;
* the walk README -> getting-started -> tutorial -> hosts runs each page's blocks
  with the fresh venv: titled files are written, untitled Python runs as one module per
  page (its ``test_*`` functions called), ``console`` commands run and their output is
  compared, a page that wrote a ``test_*.py`` file runs pytest.

So a missing dependency, package data left out of the wheel, or a docs step that only
works in the development checkout fails here. pip's cache keeps it fast.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest
import trio
from docblocks import blocks, check_console
from mcp import Client, StdioServerParameters
from support import run_captured

from trio_mcp._version import __version__

ROOT = Path(__file__).resolve().parents[2]
WALK = [
    "README.md",
    "docs/getting-started.md",
    "docs/tutorial.md",
    "docs/guides/hosts.md",
]
WAIT = 60.0


class Fresh(NamedTuple):
    """The fresh virtualenv and the directory the newcomer works in."""

    venv: Path
    work: Path
    env: dict[str, str]

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


def run(
    argv: Sequence[str | Path], cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion; fail the test with its output if it fails."""
    done = run_captured(argv, cwd=cwd, env=env, timeout=300)
    assert 0 == done.returncode, f"{argv}:\n{done.stdout}{done.stderr}"
    return done


def copy_clone(destination: Path) -> None:
    """Copy what a clone holds: the files git tracks or would track (new ones not yet
    committed included), as they are in the work tree; never ignored ones (.venv)."""
    listing = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    listed = run(listing, cwd=ROOT).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def fresh_env(venv: Path, home: Path) -> dict[str, str]:
    """The newcomer's shell: the fresh venv activated, nothing of ours leaking in."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("TRIO_MCP_", "PYTHON", "VIRTUAL_ENV", "PYTEST"))
    }
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        HOME=str(home),
        NO_COLOR="1",
        COLUMNS="100",
    )
    return env


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Fresh:
    base = tmp_path_factory.mktemp("newcomer")
    clone = base / "trio-mcp"
    copy_clone(clone)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    run([*pip, "wheel", "--no-deps", "-q", "-w", "dist", "."], cwd=clone)
    (wheel,) = (clone / "dist").glob("trio_mcp-*.whl")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=base)
    wanted = [f"{wheel}[http]", "pytest", "pytest-trio"]
    run([*pip, "--python", venv / "bin" / "python", "install", "-q", *wanted], cwd=base)
    work = base / "work"
    shutil.copytree(clone / "examples", work / "examples")
    return Fresh(venv, work, fresh_env(venv, work / "home"))


def test_the_wheel_is_what_runs(fresh: Fresh) -> None:
    """The fresh venv imports the installed wheel, with its data and the http extra."""
    probe = (
        "import pathlib, hypercorn, trio_mcp, trio_mcp.testing\n"
        "here = pathlib.Path(trio_mcp.__file__).parent\n"
        "print(here)\n"
        "print((here / '_cli/inspector/package-lock.json').is_file())\n"
        "print((here / 'testing/schema-2026-07-28.json').is_file())\n"
    )
    done = run([fresh.python, "-c", probe], cwd=fresh.work, env=fresh.env)
    version = run(["trio-mcp", "--version"], cwd=fresh.work, env=fresh.env)

    where, lock, schema = done.stdout.split()
    assert Path(where).is_relative_to(fresh.venv)
    assert ("True", "True") == (lock, schema)
    assert f"trio-mcp {__version__}" == version.stdout.strip()


def getting_started_server(fresh: Fresh) -> Path:
    """Write the getting-started page's server.py into the work directory."""
    page = ROOT / "docs" / "getting-started.md"
    (code,) = [b.code for b in blocks(page) if b.title == "server.py"]
    path = fresh.work / "server.py"
    path.write_text(code)
    return path


async def test_the_official_client_calls_the_getting_started_server_on_stdio(
    fresh: Fresh,
) -> None:
    server = getting_started_server(fresh)
    params = StdioServerParameters(
        command=str(fresh.python), args=[str(server)], cwd=str(fresh.work)
    )
    with trio.fail_after(WAIT):
        async with Client(params) as client:
            version = client.protocol_version
            tools = await client.list_tools()
            result = await client.call_tool("forecast", {"city": "Lisbon", "days": 2})

    assert "2026-07-28" == version
    assert ["forecast"] == [tool.name for tool in tools.tools]
    assert result.is_error is False
    assert [21.5, 20.5] == [day["celsius"] for day in result.structured_content]


async def test_the_official_client_calls_the_getting_started_server_on_http(
    fresh: Fresh,
) -> None:
    """``trio-mcp serve`` from the wheel's console script, its address from its banner."""
    getting_started_server(fresh)
    command = ["trio-mcp", "serve", "server.py", "--port", "0"]
    with trio.fail_after(WAIT):
        process = await trio.lowlevel.open_process(
            command, cwd=fresh.work, env=fresh.env, stderr=subprocess.PIPE
        )
        try:
            url = await _banner_url(process)
            async with Client(url) as client:
                result = await client.call_tool("forecast", {"city": "Oslo"})
        finally:
            process.send_signal(signal.SIGINT)
            await process.wait()

    assert result.is_error is False
    assert [21.5] == [day["celsius"] for day in result.structured_content]
    assert 0 == process.returncode


async def _banner_url(process: trio.Process) -> str:
    assert process.stderr is not None
    seen = b""
    while b"\n" not in seen:
        chunk = await process.stderr.receive_some()
        assert chunk, f"the server exited before its banner: {seen!r}"
        seen += chunk
    found = re.search(rb"over (http://\S+):", seen)
    assert found, seen
    return found.group(1).decode()


RUNNER = """\
import inspect, runpy, sys, trio
namespace = runpy.run_path(sys.argv[1], run_name="walk_" + sys.argv[2])
for name, value in list(namespace.items()):
    if name.startswith("test_") and callable(value):
        if not inspect.signature(value).parameters:
            (trio.run(value) if inspect.iscoroutinefunction(value) else value())
"""


@pytest.mark.parametrize("page", WALK)
def test_the_walk(page: str, fresh: Fresh) -> None:
    """One page of the walk, in order, in the same work directory as the reader."""
    stem = re.sub(r"\W", "_", page)
    module: list[str] = []
    wrote_tests = False
    for block in blocks(ROOT / page):
        if block.title is not None:
            (fresh.work / block.title).write_text(block.code)
            wrote_tests = wrote_tests or block.title.startswith("test_")
        elif block.language == "python":
            module.append(block.code)
        elif block.language == "console":
            check_console(block.code, fresh.work, fresh.env)
    script = fresh.work / f"walk_{stem}.py"
    script.write_text("\n\n".join(module))
    (fresh.work / "walk_runner.py").write_text(RUNNER)
    run([fresh.python, "walk_runner.py", script, stem], cwd=fresh.work, env=fresh.env)
    if wrote_tests:
        run([fresh.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=fresh.work, env=fresh.env)  # fmt: skip
