"""A handshake-era client at a modern-only server is told what to do (issue 44).

An HTTP server serves 2026-07-28 alone unless built with ``legacy=True``. A client of
an earlier revision opens with ``initialize``, which 2026-07-28 removed: the answer
(-32601, HTTP 404) names ``Server(..., legacy=True)`` and ``--legacy`` instead of
"send server/discover", which such a client cannot do, and the operator's log says
so once per process, at WARNING.
"""

from __future__ import annotations

import json
import subprocess
import sys

from support import META, subprocess_env, wire
from support.legacy import initialize_request
from support.tools import echo

from trio_mcp import Server
from trio_mcp.testing import McpTestClient

#: A modern-only HTTP server in a process of its own (the warning is once per
#: process), asked ``initialize`` three times; it prints each answer's status and
#: message, and its log goes to stderr.
SCRIPT = """
import json, logging, sys
import httpx, trio
from support.tools import echo
from trio_mcp import Server

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
BODY = json.loads(sys.argv[1])

async def main():
    async with trio.open_nursery() as nursery:
        port = await nursery.start(Server("modern", "1", tools=[echo]).serve_http)
        async with httpx.AsyncClient() as client:
            for _ in range(3):
                answer = await client.post(
                    f"http://127.0.0.1:{port}/mcp",
                    json=BODY,
                    headers={"accept": "application/json, text/event-stream"},
                )
                print(json.dumps([answer.status_code, answer.json()]))
        nursery.cancel_scope.cancel()

trio.run(main)
"""


def test_initialize_over_http_names_legacy_and_is_logged_once() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(initialize_request(1))],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(),
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]

    assert 3 == len(answers)
    for status, message in answers:
        assert 404 == status
        assert -32601 == message["error"]["code"]
        assert "Server(..., legacy=True)" in message["error"]["message"]
        assert "--legacy" in message["error"]["message"]
    assert 1 == len(warnings), done.stderr
    assert "initialize" in warnings[0]
    assert "legacy=True" in warnings[0]
    assert "--legacy" in warnings[0]
    # The start line says which revisions are served.
    assert "revisions: 2026-07-28" in done.stderr


async def test_any_transport_names_legacy_for_initialize() -> None:
    async with McpTestClient(Server("modern", "1", tools=[echo])) as client:
        [answer] = await client.send_raw(json.dumps(initialize_request(4)))

    assert -32601 == wire(answer)["error"]["code"]
    assert "legacy=True" in wire(answer)["error"]["message"]


async def test_a_dual_era_server_keeps_the_plain_answer_for_a_modern_initialize() -> (
    None
):
    """With ``legacy=True``, ``initialize`` carrying 2026-07-28 ``_meta`` is a modern
    request of a method that revision removed: legacy=True would change nothing."""
    request = initialize_request(5)
    request["params"]["_meta"] = META
    server = Server("dual", "1", tools=[echo], legacy=True)
    async with McpTestClient(server) as client:
        [answer] = await client.send_raw(json.dumps(request))

    assert -32601 == wire(answer)["error"]["code"]
    assert "legacy=True" not in wire(answer)["error"]["message"]
    assert "server/discover" in wire(answer)["error"]["message"]
