"""Helpers shared by the test packages: the request ``_meta``, and servers on 127.0.0.1.

Every helper here drives the public surface (``Server``'s serve methods, ``mount``), so
tests keep working while the internals move. Import it as ``support`` (the ``tests``
directory is on pytest's ``pythonpath`` and mypy's ``mypy_path``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import pytest
import trio

from trio_mcp import Server

__all__ = [
    "META",
    "VERSION",
    "port_of",
    "subprocess_env",
    "request",
    "run_captured",
    "serving",
    "serving_app",
    "serving_websocket",
    "wire",
]

VERSION: Final = "2026-07-28"

META: Final[dict[str, Any]] = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "trio-mcp-tests", "version": "1"},
}
"""The ``_meta`` every request of revision 2026-07-28 carries (no capabilities)."""


def wire(value: object) -> Any:
    """``value`` (a decoded JSON message or part of one) for free indexing in asserts.

    ``trio_mcp.testing`` types what it returns as ``JsonObject``/``JsonValue``, which
    a type checker will not let a test index without narrowing first. In a test a
    wrong guess is a failure either way (a ``KeyError``, a ``TypeError``), so the
    tests opt out of that narrowing here, in one visible place.
    """
    return value


def request(request_id: str | int, method: str, **params: Any) -> dict[str, Any]:
    """Return a JSON-RPC request for ``method`` whose params carry ``META``."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"_meta": META, **params},
    }


TESTS: Final = Path(__file__).resolve().parents[1]


def subprocess_env(**extra: str) -> dict[str, str]:
    """This process's environment for a Python subprocess, with ``tests/`` first on
    its ``PYTHONPATH`` (so a server script imports ``support`` as the tests do)."""
    path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_captured(
    argv: Sequence[str | Path],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion within ``timeout`` seconds, ``stdin`` its input,
    both output streams captured as text; its status is the caller's to check."""
    return subprocess.run(
        [str(arg) for arg in argv],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def logged(caplog: pytest.LogCaptureFixture, logger: str, containing: str) -> list[str]:
    """The messages ``logger`` (exactly that name) logged that contain ``containing``."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == logger and containing in r.getMessage()
    ]


def port_of(url: str) -> int:
    """The port of a URL that ``serving`` or ``serving_app`` yielded."""
    port = urlsplit(url).port
    assert port is not None, url
    return port


@asynccontextmanager
async def serving(server: Server, **kwargs: Any) -> AsyncIterator[str]:
    """Run ``server.serve_http`` on 127.0.0.1 port 0; yield its base URL (no path)."""
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(server.serve_http, port=0, **kwargs))
        yield f"http://127.0.0.1:{port}"
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def serving_app(app: Any) -> AsyncIterator[str]:
    """Run any ASGI app on Hypercorn's Trio worker on 127.0.0.1 port 0; yield its URL."""
    from hypercorn.config import Config
    from hypercorn.trio import serve

    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(partial(serve, app, config, mode="asgi"))
        yield binds[0]
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def serving_websocket(server: Server, **kwargs: Any) -> AsyncIterator[int]:
    """Run ``server.serve_websocket`` on 127.0.0.1 port 0; yield the port it bound."""
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(server.serve_websocket, "127.0.0.1", 0, **kwargs)
        )
        yield port
        nursery.cancel_scope.cancel()
