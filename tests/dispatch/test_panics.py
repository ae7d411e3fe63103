"""A ``BaseException`` out of a handler is a panic, never the end of the server
(api.md "Trust"; issue 24 class 2): -32603 for that request with an ``internal``
receipt, on every transport; a real Ctrl-C (a signal) still stops the server."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from panic_server import PANICS, make_server
from support import META, VERSION, serving, subprocess_env
from support.wayout_peer import WAIT, Peer, error_code

from trio_mcp import Receipt
from trio_mcp.testing import McpTestClient, ProtocolError, check_message

HERE = Path(__file__).resolve().parent
KINDS = sorted(PANICS)
TOOLS = ["panic", "panic_in_thread"]


@pytest.mark.parametrize("tool_name", TOOLS)
@pytest.mark.parametrize("kind", KINDS)
async def test_a_panic_is_32603_with_an_internal_receipt(
    kind: str, tool_name: str
) -> None:
    receipts: list[Receipt] = []
    async with McpTestClient(make_server(receipts.append)) as client:
        with pytest.raises(ProtocolError) as panicked:
            await client.call_tool(tool_name, {"kind": kind})
        after = await client.call_tool("add", {"a": 2, "b": 3})

    assert -32603 == panicked.value.code
    assert 5 == after.structured
    assert ["internal", "ok"] == [r.outcome for r in receipts]
    assert receipts[0].error_type is not None
    assert receipts[0].error_type.endswith(kind.rpartition(".")[2])


@asynccontextmanager
async def stdio() -> AsyncIterator[Peer]:
    process = await trio.lowlevel.open_process(
        [sys.executable, str(HERE / "panic_server.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=HERE.parents[1],
        env=subprocess_env(),
    )
    peer = Peer(process)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(peer.read_stdout)
            nursery.start_soon(peer.read_stderr)
            yield peer
            nursery.cancel_scope.deadline = trio.current_time() + WAIT
    finally:
        if process.returncode is None:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()


async def test_every_panic_over_stdio_fails_alone_and_the_process_goes_on() -> None:
    async with stdio() as peer:
        ids = {}
        for n, (tool_name, kind) in enumerate((t, k) for t in TOOLS for k in KINDS):
            ids[n] = (tool_name, kind)
            await peer.call(n, tool_name, kind=kind)
        await peer.call("last", "add", a=1, b=1)
        replies = {n: await peer.reply(n) for n in ids}
        last = await peer.reply("last")
        code = await peer.close_stdin_and_wait()

    assert dict.fromkeys(ids, -32603) == {n: error_code(r) for n, r in replies.items()}
    assert 2 == last["result"]["structuredContent"]
    assert 0 == code


async def test_a_real_ctrl_c_still_stops_the_stdio_server() -> None:
    async with stdio() as peer:
        await peer.call(1, "busy", seconds=WAIT)
        await peer.probe("busy")
        peer.process.send_signal(signal.SIGINT)
        with trio.fail_after(WAIT):
            code = await peer.process.wait()

    # api.md, "A newcomer's first hour": Ctrl-C stops trio.run(server.serve_stdio)
    # gracefully (exit 0), cancelling the call in flight, which gets no result.
    assert 0 == code
    assert peer.find(1) is None or "result" not in (peer.find(1) or {})


async def _post(
    client: httpx.AsyncClient, url: str, rid: int, name: str, arguments: dict[str, Any]
) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"_meta": META, "name": name, "arguments": arguments},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    with trio.fail_after(WAIT):
        return await client.post(url + "/mcp", json=body, headers=headers)


@pytest.mark.parametrize("tool_name", TOOLS)
async def test_every_panic_over_http_is_a_32603_body_and_hypercorn_goes_on(
    tool_name: str,
) -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        responses = [
            await _post(client, url, n, tool_name, {"kind": kind})
            for n, kind in enumerate(KINDS)
        ]
        after = await _post(client, url, 99, "add", {"a": 1, "b": 2})

    for response in responses:
        message = response.json()
        check_message(message, "tools/call")
        assert -32603 == message["error"]["code"]
    assert 3 == after.json()["result"]["structuredContent"]
