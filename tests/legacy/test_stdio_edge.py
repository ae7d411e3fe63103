"""The legacy edge on a real stdio process: how it ends, as the modern loop does.

Input that ends while a request waits for the client's answer ends the process
cleanly (the round is abandoned: the client cannot answer any more); a closed
protocol stream is ``McpError.Transport`` (the CLI's exit status 2), as without the edge.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from support.legacy import initialize_request
from support.legacy_schema import check_legacy

ROOT = Path(__file__).resolve().parents[2]
COMMAND = [
    sys.executable,
    "-m",
    "trio_mcp",
    "run",
    f"{Path(__file__).parent / 'legacy_server.py'}:make_server",
    "--legacy",
]
WAIT = 30.0


def _lines(*messages: dict[str, object]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


INITIALIZE = initialize_request(capabilities={"elicitation": {}}, name="t")


_ENDED = {
    "jsonrpc": "2.0",
    "id": 2,
    "error": {
        "code": -32603,
        "message": "the client's input has ended, so it cannot be asked for input",
    },
}


async def test_input_ending_while_a_round_waits_ends_the_process() -> None:
    ask = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "ask_name", "arguments": {}},
    }

    with trio.fail_after(WAIT):
        done = await trio.run_process(
            COMMAND,
            stdin=_lines(INITIALIZE, ask),
            capture_stdout=True,
            capture_stderr=True,
            cwd=ROOT,
            check=False,
        )

    assert 0 == done.returncode, done.stderr.decode()
    written = [json.loads(line) for line in done.stdout.decode().splitlines()]
    check_legacy(written[0], "2025-11-25", "initialize")
    for message in written[1:]:
        check_legacy(message, "2025-11-25")
    # The call could not finish: no reply (the round began and was abandoned), or
    # the error saying the client can no longer be asked (it ended before).
    replies = [m for m in written if m.get("id") == 2 and "method" not in m]
    assert replies in ([], [_ENDED])


@pytest.mark.parametrize("legacy", [True, False])
async def test_a_closed_protocol_stream_raises_transport(legacy: bool) -> None:
    """As without the edge: ``McpError.Transport``, which the CLI reports (exit 2)."""
    process = await trio.lowlevel.open_process(
        COMMAND if legacy else COMMAND[:-1],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    try:
        await process.stdout.aclose()
        await process.stdin.send_all(_lines(INITIALIZE))
        await process.stdin.aclose()
        with trio.fail_after(WAIT):
            code = await process.wait()
            stderr = b""
            while chunk := await process.stderr.receive_some():
                stderr += chunk
    finally:
        if process.returncode is None:
            process.kill()

    assert 2 == code
    assert b"trio-mcp run: cannot write to stdout" in stderr
