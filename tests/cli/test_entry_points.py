"""The entry points: Ctrl-C (SIGINT) and SIGTERM stop each one gracefully, without a
traceback; a serve method awaited outside Trio and a missing extra say what to do.

Each entry point runs as a real subprocess: ``trio-mcp run`` and ``serve``,
``server.run()`` for stdio and HTTP, and ``trio.run(server.serve_*)``. The test waits
until it serves (a reply on stdout for stdio, stdin kept open so end of file cannot be
what stops it; the banner's address for HTTP), sends the signal, and expects exit
status 0 and nothing on stderr but the banner. Six processes per entry point run
concurrently, SIGINT and SIGTERM alternating, so a race between start-up and the
signal has chances to show.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from cli_helpers import request_line, run_command, write_server

from trio_mcp import McpError, Server, tool
from trio_mcp._version import __version__

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 6
SIGNALS = (signal.SIGINT, signal.SIGTERM)
LOAD = "from echo_server import server\n"
SERVE_HTTP = (
    "import functools, trio\ntrio.run(functools.partial(server.serve_http, port=0))"
)
CASES = {
    "trio-mcp run": (["-m", "trio_mcp", "run", "echo_server.py"], "stdio", 1),
    "trio-mcp serve": (
        ["-m", "trio_mcp", "serve", "echo_server.py", "--port", "0"],
        "http",
        1,
    ),
    "server.run()": (["-c", LOAD + "server.run()"], "stdio", 1),
    "server.run('http')": (["-c", LOAD + "server.run('http', port=0)"], "http", 1),
    "trio.run(server.serve_stdio)": (
        ["-c", LOAD + "import trio\ntrio.run(server.serve_stdio)"],
        "stdio",
        1,
    ),
    "trio.run(server.serve_http)": (["-c", LOAD + SERVE_HTTP], "http", 1),
}


def _default_sigint() -> None:
    """As in a terminal: a shell script's background job would start ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def _until_line(stream: trio.abc.ReceiveStream, seen: bytearray) -> bytes:
    while b"\n" not in seen:
        chunk = await stream.receive_some()
        assert chunk, f"the server exited before it served: {bytes(seen)!r}"
        seen += chunk
    return bytes(seen).split(b"\n", 1)[0]


async def _serves(process: trio.Process, transport: str) -> None:
    """Wait until the server answers (stdio) or has bound its port (HTTP)."""
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    if transport == "stdio":
        await process.stdin.send_all(request_line(1, "tools/list").encode())
        reply = json.loads(await _until_line(process.stdout, bytearray()))
        assert ["echo", "fail"] == [t["name"] for t in reply["result"]["tools"]]
    else:
        line = await _until_line(process.stderr, bytearray())
        assert re.search(rb"over http://127\.0\.0\.1:\d+/mcp: 2 tools", line), line


async def _one_round(
    argv: list[str], transport: str, signum: int, cwd: Path
) -> tuple[int, str]:
    process = await trio.lowlevel.open_process(
        [sys.executable, *argv],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )
    rest = b""
    try:
        with trio.fail_after(30):
            await _serves(process, transport)
            process.send_signal(signum)
            await process.wait()
            assert process.stderr is not None
            while chunk := await process.stderr.receive_some():
                rest += chunk
    finally:
        if process.returncode is None:
            process.kill()
        with trio.CancelScope(shield=True):
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    await stream.aclose()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, rest.decode()


@pytest.mark.parametrize("case", CASES)
async def test_sigint_and_sigterm_stop_the_server_gracefully(
    case: str, tmp_path: Path
) -> None:
    argv, transport, banners = CASES[case]
    write_server(tmp_path)
    results: list[tuple[int, str]] = []

    async def round_(signum: int) -> None:
        results.append(await _one_round(argv, transport, signum, tmp_path))

    async with trio.open_nursery() as nursery:
        for count in range(ROUNDS):
            nursery.start_soon(round_, SIGNALS[count % 2])

    for status, stderr in results:
        assert 0 == status, stderr
        assert "Traceback" not in stderr
        # the banner was read already for HTTP; stdio's is still here
        expected_lines = banners if transport == "stdio" else 0
        assert expected_lines == len(stderr.splitlines()), stderr


def _server() -> Server:
    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    return Server("ping", "1.0", tools=[ping])


@pytest.mark.parametrize("method", ["serve_stdio", "serve_http", "serve_websocket"])
def test_awaiting_a_serve_method_under_asyncio_says_to_use_trio(method: str) -> None:
    serve = getattr(_server(), method)

    with pytest.raises(McpError) as caught:
        asyncio.run(serve())

    assert f"use trio.run(server.{method}) or server.run()" in str(caught.value)


def test_run_names_the_transports_it_knows() -> None:
    with pytest.raises(ValueError, match="use 'stdio', 'http' or 'websocket'"):
        _server().run("sse")


def test_serve_without_hypercorn_is_one_line_with_the_fix(tmp_path: Path) -> None:
    write_server(tmp_path)
    without = (
        "import sys\nsys.modules['hypercorn'] = None  # as if the http extra were missing\n"
        "from trio_mcp._cli import main\n"
        "sys.exit(main(['serve', 'echo_server.py', '--port', '0']))\n"
    )

    done = run_command([sys.executable, "-c", without], cwd=tmp_path)

    assert 2 == done.returncode
    assert [
        "trio-mcp serve: serving HTTP needs Hypercorn; install the http extra: pip "
        f'install "/path/to/trio_mcp-{__version__}-py3-none-any.whl[http]" (the wheel built in '
        'a clone of trio-mcp), or pip install ".[http]" in the clone'
    ] == done.stderr.splitlines()
