"""``trio-mcp serve --workers N`` logs like one process (api.md "Where Python users
already are"): the start line with the address and the number of workers, every
receipt at ``--log-level info``, internal errors formatted; a port in use is one line.

Real ``trio-mcp serve --workers 2`` processes on 127.0.0.1, port 0 (the start line
names the port), stopped with SIGTERM by their PID.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from support import request

SERVER = '''
import os

from trio_mcp import Server, tool


@tool
def whoami() -> int:
    """Say which worker process answered."""
    return os.getpid()


@tool
async def boom() -> str:
    """Fail with an error that is not a ToolError (an internal error)."""
    raise RuntimeError("kaput")


server = Server("workers-logs", "1.0", tools=[whoami, boom])
'''

STATE_KEY = "workers-logs-tests-state-key-0123456789"
#: Spawned workers import the server anew; on a loaded machine that takes a while.
STARTUP = 90.0
START_LINE = re.compile(
    r"^trio-mcp: serving workers-logs 1\.0 over http://127\.0\.0\.1:(\d+)/mcp "
    r"\(2 workers\): 2 tools, 0 resources, 0 prompts; granted: nothing; "
    r"revisions: 2026-07-28$",
    re.M,
)


class Stderr:
    """The lines a process writes to stderr, read by a thread as they come."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        assert process.stderr is not None
        self._stream = process.stderr
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self._stream:
            self.lines.append(line.rstrip("\n"))

    def close(self) -> None:
        """After the process ended: the rest of its lines, then the pipe closed."""
        self._thread.join(timeout=30)
        self._stream.close()

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, pattern: re.Pattern[str], count: int = 1) -> list[Any]:
        """The first ``count`` matches of ``pattern``, waiting for them (bounded)."""
        deadline = time.monotonic() + STARTUP
        while time.monotonic() < deadline:
            found = pattern.findall(self.text)
            if len(found) >= count:
                return found[:count]
            time.sleep(0.05)
        raise AssertionError(f"no {count} x {pattern.pattern!r} in:\n{self.text}")


@contextmanager
def serving_workers(
    tmp_path: Path, *args: str
) -> Iterator[tuple[subprocess.Popen[str], Stderr]]:
    (tmp_path / "workers_server.py").write_text(SERVER)
    command = [sys.executable, "-m", "trio_mcp", "serve", "workers_server.py:server"]
    process = subprocess.Popen(
        [*command, "--port", "0", "--workers", "2", *args],
        cwd=tmp_path,
        env={**os.environ, "TRIO_MCP_STATE_KEY": STATE_KEY},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr = Stderr(process)
    try:
        yield process, stderr
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        stderr.close()


def call(url: str, name: str) -> httpx.Response:
    """``tools/call`` on a fresh connection (so either worker may answer)."""
    return httpx.post(
        url,
        json=request(1, "tools/call", name=name, arguments={}),
        headers={
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": name,
        },
        timeout=30,
    )


def until_both_answered(url: str) -> int:
    """Call ``whoami`` until two processes answered (bounded); return the calls made."""
    pids: set[int] = set()
    calls = 0
    deadline = time.monotonic() + STARTUP
    while len(pids) < 2 and time.monotonic() < deadline:
        try:
            reply = call(url, "whoami")
        except httpx.TransportError:  # a worker still importing
            time.sleep(0.1)
            continue
        calls += 1
        pids.add(reply.json()["result"]["structuredContent"])
    assert 2 == len(pids)
    return calls


def test_workers_log_the_start_line_every_receipt_and_formatted_errors(
    tmp_path: Path,
) -> None:
    with serving_workers(tmp_path, "--log-level", "info") as (process, stderr):
        (port,) = stderr.wait_for(START_LINE)
        url = f"http://127.0.0.1:{port}/mcp"
        calls = until_both_answered(url)
        failed = call(url, "boom").json()["error"]
        receipts = stderr.wait_for(
            re.compile(r"^\d\d:\d\d:\d\d receipt tool whoami ok in ", re.M), calls
        )
        ref = re.search(r"reference ([0-9a-f]+)", failed["message"])
        assert ref is not None, failed
        stderr.wait_for(re.compile(rf"ref={ref[1]}$", re.M))
        process.send_signal(signal.SIGTERM)
        assert 0 == process.wait(timeout=30), stderr.text

    assert calls == len(receipts)
    error = re.search(
        rf"^\d\d:\d\d:\d\d ERROR trio_mcp: tool 'boom' \(workers_server:boom\) "
        rf"failed; error reference {ref[1]}\nTraceback \(most recent call last\):\n",
        stderr.text,
        re.M,
    )
    assert error is not None, stderr.text
    assert re.search(r"^RuntimeError: kaput$", stderr.text, re.M)
    assert re.search(
        rf"^\d\d:\d\d:\d\d receipt tool boom internal in .* "
        rf"error=builtins.RuntimeError ref={ref[1]}$",
        stderr.text,
        re.M,
    )


def test_workers_at_the_default_level_log_the_start_line_and_errors_only(
    tmp_path: Path,
) -> None:
    with serving_workers(tmp_path) as (process, stderr):
        (port,) = stderr.wait_for(START_LINE)
        url = f"http://127.0.0.1:{port}/mcp"
        until_both_answered(url)
        call(url, "boom")
        stderr.wait_for(re.compile(r"^RuntimeError: kaput$", re.M))
        process.send_signal(signal.SIGTERM)
        assert 0 == process.wait(timeout=30), stderr.text

    assert "receipt" not in stderr.text
    assert re.search(
        r"^\d\d:\d\d:\d\d ERROR trio_mcp: tool 'boom' ", stderr.text, re.M
    ), stderr.text


def test_workers_on_a_port_in_use_say_so_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        (tmp_path / "workers_server.py").write_text(SERVER)

        command = [
            sys.executable,
            "-m",
            "trio_mcp",
            "serve",
            "workers_server.py:server",
        ]
        done = subprocess.run(
            [*command, "--port", str(port), "--workers", "2"],
            cwd=tmp_path,
            env={**os.environ, "TRIO_MCP_STATE_KEY": STATE_KEY},
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert 2 == done.returncode
    assert [
        f"trio-mcp serve: cannot serve HTTP on 127.0.0.1:{port}: address already in "
        "use; another process is listening there: stop it, or choose another port "
        "(serve_http(port=...), or --port on the command line)"
    ] == done.stderr.splitlines()
