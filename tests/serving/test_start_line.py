"""The start line: every way of serving says on stderr, once, what it serves.

A stdio server waits for its client in silence, which looks hung (issue 45, item
1). ``server.run()``, ``trio.run(server.serve_stdio)``, ``scripts/serve-example``,
``trio-mcp run`` and the network transports print the same line: the server, its
version, the transport, the catalog, the grant and the revisions served.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import trio

from trio_mcp import Server, tool

ROOT = Path(__file__).resolve().parents[2]

SERVER = """
from trio_mcp import Server, tool

@tool
def echo(text: str) -> str:
    '''Return the text.

    Args:
        text: What to return.
    '''
    return text

server = Server("start-line", "2.5", tools=[echo], legacy={legacy})
"""

MODERN = "revisions: 2026-07-28"
BOTH = "revisions: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26"


def stderr_of(tmp_path: Path, main: str, *, legacy: bool = False) -> list[str]:
    """Run a script serving stdio with stdin closed; return its stderr lines."""
    script = tmp_path / "serve.py"
    script.write_text(SERVER.format(legacy=legacy) + textwrap.dedent(main))
    done = subprocess.run(
        [sys.executable, str(script)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert 0 == done.returncode, done.stderr
    assert "" == done.stdout
    return done.stderr.splitlines()


@pytest.mark.parametrize(
    "main",
    ["server.run()\n", "import trio\ntrio.run(server.serve_stdio)\n"],
    ids=["run", "trio.run"],
)
def test_serving_stdio_prints_one_start_line(tmp_path: Path, main: str) -> None:
    lines = stderr_of(tmp_path, main)

    assert [
        "trio-mcp: serving start-line 2.5 over stdio: 1 tool, 0 resources, 0 prompts; "
        f"granted: nothing; {MODERN}"
    ] == lines


def test_a_legacy_server_names_the_handshake_era_revisions_too(tmp_path: Path) -> None:
    lines = stderr_of(tmp_path, "server.run()\n", legacy=True)

    assert 1 == len(lines)
    assert lines[0].endswith(BOTH)


def test_trio_mcp_run_prints_the_same_line_once(tmp_path: Path) -> None:
    (tmp_path / "served.py").write_text(SERVER.format(legacy=False))

    done = subprocess.run(
        [sys.executable, "-m", "trio_mcp", "run", "served.py:server", "--allow", "x"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )

    assert 0 == done.returncode, done.stderr
    assert [
        "trio-mcp: serving start-line 2.5 over stdio: 1 tool, 0 resources, 0 prompts; "
        f"granted: x; {MODERN}"
    ] == done.stderr.splitlines()


def test_serve_example_prints_the_start_line() -> None:
    """The README's first command: the example server says it is up."""
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "serve-example")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert 0 == done.returncode, done.stderr
    starts = [line for line in done.stderr.splitlines() if "serving" in line]
    assert 1 == len(starts), done.stderr
    assert starts[0].startswith("trio-mcp: serving support-desk ")
    assert " over stdio: " in starts[0]
    assert starts[0].endswith(MODERN)


@tool
def echo(text: str) -> str:
    """Return the text.

    Args:
        text: What to return.
    """
    return text


async def test_websocket_and_http_print_the_line_with_the_bound_address(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = Server("start-line", "2.5", tools=[echo], legacy=True)
    async with trio.open_nursery() as nursery:
        ws_port = await nursery.start(server.serve_websocket)
        http_port = await nursery.start(server.serve_http, "127.0.0.1", 0)
        nursery.cancel_scope.cancel()

    lines = capsys.readouterr().err.splitlines()
    assert [
        f"trio-mcp: serving start-line 2.5 over ws://127.0.0.1:{ws_port}/mcp: 1 tool, "
        f"0 resources, 0 prompts; granted: nothing; {MODERN}",
        f"trio-mcp: serving start-line 2.5 over http://127.0.0.1:{http_port}/mcp: "
        f"1 tool, 0 resources, 0 prompts; granted: nothing; {BOTH}",
    ] == lines
