"""Real processes for the scale-out tests: a redis-server and trio-mcp replicas.

Each is started on 127.0.0.1 on a free port, waited for with a bounded poll, and
stopped by its own PID (SIGTERM, then SIGKILL after five seconds).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs
import pytest

HERE = Path(__file__).resolve().parent
STATE_KEY = "scale-tests-shared-state-key-0123456789"
START_TIMEOUT = 30.0


def serve_command(*args: str) -> list[str]:
    """The command line that serves ``scale_server.py``'s server with ``args``."""
    target = f"{HERE / 'scale_server.py'}:server"
    return [sys.executable, "-m", "trio_mcp", "serve", target, *args]


def free_port() -> int:
    """A port nothing listens on right now (the OS's choice for port 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    """Poll until ``port`` accepts a connection; fail if ``process`` exits first."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{what} exited with status {process.returncode} at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            time.sleep(0.05)
        else:
            return
    pytest.fail(f"{what} did not listen on port {port} within {START_TIMEOUT} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process this test started, by its PID: SIGTERM, then SIGKILL (a
    stopped one is continued first, so SIGTERM reaches it)."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGCONT)
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


@attrs.define
class RedisServer:
    """One redis-server on 127.0.0.1; ``stop()`` and ``start()`` keep its port."""

    executable: str
    port: int = attrs.field(factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.executable,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--loglevel",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.process, "redis-server")

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


@attrs.define
class Replica:
    """One ``trio-mcp serve`` process of ``scale_server.py``."""

    name: str
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@attrs.define
class Replicas:
    """Starts replicas for one test and stops every one of them afterwards."""

    started: list[Replica] = attrs.field(factory=list)

    def start(
        self, name: str, *args: str, env: Mapping[str, str] | None = None
    ) -> Replica:
        port = free_port()
        environ = {
            **os.environ,
            "TRIO_MCP_STATE_KEY": STATE_KEY,
            "TRIO_MCP_INSTANCE": name,
            **(env or {}),
        }
        process = subprocess.Popen(
            serve_command("--port", str(port), *args), env=environ
        )
        replica = Replica(name, port, process)
        self.started.append(replica)
        wait_for_port(port, process, f"replica {name}")
        return replica

    def pair(self, env: Mapping[str, str]) -> tuple[str, str]:
        """Start replica-a and replica-b with ``env``; their URLs."""
        a = self.start("replica-a", env=env)
        b = self.start("replica-b", env=env)
        return a.url, b.url

    def kill(self, name: str) -> None:
        """Kill the replica ``name`` (SIGKILL: no chance to clean up) and reap it."""
        [replica] = [r for r in self.started if r.name == name]
        replica.process.kill()
        replica.process.wait()

    def signal(self, name: str, sig: int) -> Replica:
        """Send ``sig`` to the replica ``name`` (SIGSTOP, SIGCONT, SIGTERM...)."""
        [replica] = [r for r in self.started if r.name == name]
        os.kill(replica.process.pid, sig)
        return replica

    def stop_all(self) -> None:
        for replica in self.started:
            stop(replica.process)


# -- fixtures (re-exported by tests/conftest.py) -----------------------------------


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A fresh redis-server for one test, stopped afterwards."""
    executable = shutil.which("redis-server")
    if executable is None:
        pytest.fail(
            "redis-server is not installed, and the scale-out tests need a real one: "
            "run 'bash scripts/bootstrap' (it installs Debian's redis-server)"
        )
    server = RedisServer(executable)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def replicas() -> Iterator[Replicas]:
    group = Replicas()
    try:
        yield group
    finally:
        group.stop_all()
