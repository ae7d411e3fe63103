"""``trio-mcp serve --auth-issuer --auth-audience --auth-scope``: a real subprocess,
and the ``Authorization`` header fuzzed through it (real Hypercorn, raw sockets)."""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oauth_provider import AUDIENCE, Provider
from support import META

TARGET = '''
from trio_mcp import Capability, Server, tool

READ = Capability("notes.read", description="Read notes.")
WRITE = Capability("notes.write", description="Write notes.")


@tool(caps=[READ])
def read_note(name: str) -> str:
    """Read a note.

    Args:
        name: Its name.
    """
    return "a note"


@tool(caps=[WRITE])
def write_note(name: str) -> str:
    """Write a note.

    Args:
        name: Its name.
    """
    return "written"


server = Server("notes", "1.0", tools=[read_note, write_note])
'''


def serve_args(tmp_path: Path, provider: Provider, *flags: str) -> list[str]:
    target = tmp_path / "notes_server.py"
    target.write_text(TARGET)
    return [
        sys.executable, "-m", "trio_mcp", "serve", f"{target}:server", "--port", "0",
        "--auth-issuer", provider.issuer, "--auth-audience", AUDIENCE, *flags,
    ]  # fmt: skip


@pytest.fixture
def served(tmp_path: Path, provider: Provider) -> Iterator[str]:
    args = serve_args(
        tmp_path,
        provider,
        "--auth-scope", "notes:read=notes.read",
        "--auth-scope", "notes:write=notes.write",
    )  # fmt: skip
    process = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    try:
        yield _url(process)
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
        assert process.stderr is not None
        process.stderr.close()


def _url(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    seen = ""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(deadline - time.monotonic()):
                break
            line = process.stderr.readline()
            seen += line
            found = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
            if found:
                return found.group(0)
            if not line:
                break
    pytest.fail(f"trio-mcp serve did not start: {seen}")


def call(url: str, tool: str, token: str | None) -> httpx.Response:
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": META, "name": tool, "arguments": {"name": "a"}},
    }
    return httpx.post(url, json=body, headers=headers, timeout=15)


def test_the_cli_serves_with_bearer_auth(served: str, provider: Provider) -> None:
    reader = provider.token("notes:read")

    assert 401 == call(served, "read_note", None).status_code
    assert 200 == call(served, "read_note", reader).status_code
    refused = call(served, "write_note", reader)
    assert 403 == refused.status_code
    assert 'scope="notes:read notes:write"' in refused.headers["www-authenticate"]


def test_a_scope_for_an_undeclared_capability_fails_at_start(
    tmp_path: Path, provider: Provider
) -> None:
    args = serve_args(tmp_path, provider, "--auth-scope", "notes:read=notes.reed")
    completed = subprocess.run(args, capture_output=True, text=True, timeout=60)

    assert 0 != completed.returncode
    assert (
        "--auth-scope 'notes:read=notes.reed': no declaration uses a capability "
        "named 'notes.reed' (the server's capabilities: notes.read, notes.write)"
    ) in completed.stderr


def raw_status(url: str, authorization: bytes) -> int:
    """POST one tools/call with this exact Authorization header; the status code."""
    host, port = url.split("/")[2].split(":")
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"_meta": META, "name": "read_note", "arguments": {"name": "a"}},
        }
    ).encode()
    request = b"".join(
        [
            b"POST /mcp HTTP/1.1\r\n",
            f"Host: {host}:{port}\r\n".encode(),
            b"Content-Type: application/json\r\n",
            b"Accept: application/json, text/event-stream\r\n",
            b"Mcp-Protocol-Version: 2026-07-28\r\n",
            b"Mcp-Method: tools/call\r\n",
            b"Mcp-Name: read_note\r\n",
            b"Authorization: " + authorization + b"\r\n",
            f"Content-Length: {len(body)}\r\n".encode(),
            b"Connection: close\r\n\r\n",
            body,
        ]
    )
    with socket.create_connection((host, int(port)), timeout=15) as sock:
        sock.sendall(request)
        head = sock.recv(64)
    return int(head.split(b" ", 2)[1])


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(value=st.binary(max_size=120) | st.binary(max_size=120).map(b"Bearer ".__add__))
def test_any_header_bytes_over_real_http_are_never_a_5xx(
    served: str, value: bytes
) -> None:
    """Through Hypercorn: bytes h11 refuses get its 400; the rest reach the check."""
    assert raw_status(served, value) in (400, 401)
