"""serve_stdio end to end: real subprocesses of example servers, real pipes.

Every line the server writes to its stdout is decoded and validated against the
revision's schema (``check_message``) as it arrives; a line that is not a valid
JSON-RPC message fails the test. Handlers report what they saw on stderr
(``probe: ...`` lines), and tests wait on those lines, never on time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from support import META
from support.stdio_kinds import stdio_kind  # noqa: F401 - the fixture
from support.stdio_peer import WAIT
from support.stdio_probe import spawn

from trio_mcp import McpError
from trio_mcp._transports._stdio import THREADS_ENV, read_lines, stdio_streams
from trio_mcp._transports._stream import Oversized
from trio_mcp._transports._threads import ThreadReader, ThreadWriter
from trio_mcp.testing import check_message

ROOT = Path(__file__).resolve().parents[2]


#: Every test runs twice: with POSIX ``FdStream``s and with the thread-backed
#: streams Windows uses (``stdio_kind`` in support.stdio_kinds).
pytestmark = pytest.mark.usefixtures("stdio_kind")


def text_of(reply: dict[str, Any]) -> str:
    return "".join(b["text"] for b in reply["result"]["content"] if b["type"] == "text")


def structured_of(reply: dict[str, Any]) -> Any:
    return reply["result"]["structuredContent"]


# -- the framing, in-process ---------------------------------------------------------


async def batches(
    data: bytes, limit: int, chunk: int
) -> list[list[str | bytes | Oversized]]:
    """Feed ``data`` to read_lines in ``chunk``-byte pieces; return its batches."""
    send_stream, receive_stream = trio.testing.memory_stream_one_way_pair()
    out, items = trio.open_memory_channel[list[str | bytes | Oversized]](1000)

    async def feed() -> None:
        for start in range(0, len(data), chunk):
            await send_stream.send_all(data[start : start + chunk])
        await send_stream.aclose()

    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(feed)
            nursery.start_soon(read_lines, receive_stream, out, limit)
    return [batch async for batch in items]


async def framed(data: bytes, limit: int, chunk: int) -> list[str | bytes | Oversized]:
    """The messages read_lines produced from ``data``, batches joined."""
    return [line for batch in await batches(data, limit, chunk) for line in batch]


async def test_the_lines_of_one_read_go_to_the_loop_together() -> None:
    """One hand-over per read, not per line; a read with only blank lines sends none."""
    data = b'{"a":1}\n{"b":2}\n\n{"c":'

    assert [[b'{"a":1}', b'{"b":2}'], [b'{"c":']] == await batches(
        data, limit=100, chunk=len(data)
    )
    assert [] == await batches(b"\n \n\t\n", limit=100, chunk=2)


async def test_lines_are_split_on_newlines_whatever_the_read_sizes() -> None:
    """Our framing: one message per line (spec §13), however reads split them."""
    data = b'{"a":1}\n\n{"b":2}\r\n  \n' + b"x" * 10 + b"\n" + b'{"last":3}'

    for chunk in (1, 2, 3, 7, 64, len(data)):
        expected = [b'{"a":1}', b'{"b":2}\r', b"x" * 10, b'{"last":3}']

        assert expected == await framed(data, limit=10, chunk=chunk)


async def test_only_json_whitespace_makes_a_blank_line() -> None:
    """A form feed or vertical tab is not JSON whitespace: the line gets its -32700."""
    data = b" \t\r\n\x0b\n\x0c\n \x0c \n"

    expected = [b"\x0b", b"\x0c", b" \x0c "]

    assert expected == await framed(data, limit=10, chunk=len(data))


async def test_a_line_over_the_limit_becomes_oversized_and_the_next_is_read() -> None:
    """Our choice: -32600 in place of the line, which is skipped, never buffered whole."""
    data = b"y" * 11 + b"\n" + b"z" * 10 + b"\n" + b"w" * 25

    for chunk in (1, 4, 11, 12, len(data)):
        expected = [Oversized(10), b"z" * 10, Oversized(10)]

        assert expected == await framed(data, limit=10, chunk=chunk)


# -- the server process --------------------------------------------------------------


async def test_end_of_stdin_returns_and_restores_fd1_and_sys_stdout() -> None:
    """serve_stdio returns on EOF (spec §13: exit promptly); fd 1 and sys.stdout come back."""
    code = (
        "import os, sys, trio\n"
        "from trio_mcp import Server\n"
        "async def main():\n"
        "    print('before', flush=False)\n"
        "    await Server('s', '1').serve_stdio()\n"
        "    print('print after')\n"
        "    sys.stdout.flush()\n"
        "    os.write(1, b'fd1 after\\n')\n"
        "trio.run(main)\n"
    )
    process = await trio.run_process(
        [sys.executable, "-c", code],
        stdin=b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
        + json.dumps(META).encode()
        + b"}}\n",
        capture_stdout=True,
        capture_stderr=True,
        cwd=ROOT,
        # Buffered stdout, so 'before' is still in the buffer when serving starts.
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
    )
    first, *rest = process.stdout.decode().splitlines()
    message = json.loads(first)
    check_message(message, "tools/list")

    assert process.returncode == 0
    assert rest == ["print after", "fd1 after"]
    assert "before" in process.stderr.decode()


async def test_each_unreadable_line_gets_an_error_and_the_next_request_is_answered() -> (
    None
):
    """Spec: -32700 for bad JSON, bad UTF-8 and too deep; -32600 for oversized, batches
    and non-requests; errors without a readable id omit it; reading goes on."""
    deep = (
        b'{"jsonrpc":"2.0","id":99,"method":"tools/list","params":'
        + b"[" * 200
        + b"]" * 200
        + b"}"
    )
    bad_lines = [
        (
            b'{"jsonrpc":"2.0","id":98,"method":"tools/list","params":{"pad":"'
            + b"x" * 5000
            + b'"}}',
            -32600,
        ),
        (deep, -32700),
        (b'{"jsonrpc":"2.0","id":97,"method":', -32700),
        (b'{"jsonrpc":"2.0","method":"\xff\xfe"}', -32700),
        (b'[{"jsonrpc":"2.0","id":96,"method":"tools/list"}]', -32600),
        (b'"just a string"', -32600),
    ]
    async with spawn("--max-message-bytes", "4096") as peer:
        for n, (line, code) in enumerate(bad_lines, start=1):
            await peer.write(line + b"\n")
            await peer.call(n, "echo", text=f"after {n}")
            reply = await peer.reply(n)
            error = peer.messages[-2]

            assert {"code", "message"} <= error["error"].keys()
            assert (code, None) == (error["error"]["code"], error.get("id"))
            assert f"after {n}" == structured_of(reply)
            assert f"after {n}" == text_of(reply)


async def test_at_most_max_concurrent_calls_run_and_every_call_is_answered() -> None:
    """Our contract: max_concurrent caps handlers; further requests wait, none rejected."""
    async with spawn("--max-concurrent", "4") as peer:
        payload = b"".join(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {
                        "name": "nap",
                        "arguments": {"seconds": 0.02},
                        "_meta": META,
                    },
                }
            ).encode()
            + b"\n"
            for n in range(50)
        )
        for n in range(50):
            peer.methods[n] = "tools/call"
        await peer.write(payload)
        await peer.wait_for(lambda: all(peer.find(n) for n in range(50)))
        await peer.call("max", "most_at_once")
        most = await peer.reply("max")
        replies = [peer.find(n) for n in range(50)]

        assert most["result"]["structuredContent"] == 4
        assert all(r is not None and r["result"]["isError"] is False for r in replies)


async def test_cancelled_calls_stop_and_get_no_reply_even_while_waiting() -> None:
    """Spec §11: the handler stops, nothing is sent for it; unknown ids are ignored.

    With max_concurrent=1, the second call waits for a slot when it is cancelled:
    it never starts.
    """
    async with spawn("--max-concurrent", "1") as peer:
        await peer.call(1, "wait_until_cancelled", label="running")
        await peer.stderr_line("probe: started running")
        await peer.call(2, "wait_until_cancelled", label="waiting")
        await peer.cancel(2)
        await peer.cancel(12345)
        await peer.cancel("no such id")
        await peer.cancel(1)
        await peer.stderr_line("probe: cancelled running")
        await peer.call(3, "echo", text="still serving")
        reply = await peer.reply(3)
        assert await peer.close_stdin_and_wait() == 0

        assert structured_of(reply) == "still serving"
        assert text_of(reply) == "still serving"
        assert "probe: started waiting" not in peer.stderr
        assert [m["id"] for m in peer.messages] == [3]


async def test_end_of_stdin_fires_a_sync_handlers_cancel_at_once() -> None:
    """api.md: when the stream closes, every running handler's ``ctx.cancel`` fires,
    in worker threads too: at the close, not when the grace period runs out (60 s
    here), so a handler that polls it stops and still answers within the grace."""
    async with spawn("--grace", "60") as peer:
        await peer.call(1, "poll_cancel")
        await peer.stderr_line("probe: polling")
        assert peer.process.stdin is not None
        await peer.process.stdin.aclose()
        with trio.fail_after(15):
            await peer.stderr_line("probe: sync saw cancel")
            reply = await peer.reply(1)

        assert "stopped" == structured_of(reply)


async def test_end_of_stdin_cancels_running_calls_after_the_grace_period() -> None:
    """Our contract: EOF lets calls finish within grace_period, then cancels them."""
    async with spawn("--grace", "0.1") as peer:
        await peer.call(1, "wait_until_cancelled", label="at eof")
        await peer.stderr_line("probe: started at eof")
        code = await peer.close_stdin_and_wait()

        assert code == 0
        assert "probe: cancelled at eof" in peer.stderr
        assert "probe: served" in peer.stderr
        assert peer.messages == []


async def test_progress_and_logs_are_sent_only_when_the_request_asks() -> None:
    """Spec §11: progress needs a progressToken; logs need logLevel and meet it."""
    async with spawn() as peer:
        await peer.call(1, "report", steps=2)
        await peer.reply(1)
        quiet = list(peer.messages)
        meta = {
            **META,
            "progressToken": "tok",
            "io.modelcontextprotocol/logLevel": "info",
        }
        await peer.call(2, "report", meta=meta, steps=2)
        await peer.reply(2)
        asked = peer.messages[len(quiet) : -1]

        assert [m.get("id") for m in quiet] == [1]
        assert [
            (m["method"], m["params"]["progressToken"], m["params"]["progress"])
            for m in asked
            if m["method"] == "notifications/progress"
        ] == [
            ("notifications/progress", "tok", 1),
            ("notifications/progress", "tok", 2),
        ]
        assert [
            (m["params"]["level"], m["params"]["data"])
            for m in asked
            if m["method"] == "notifications/message"
        ] == [("info", "an info line")]


async def test_writes_to_fd1_land_on_stderr_never_on_the_protocol_stream() -> None:
    """Spec §13: only MCP messages on stdout. print, os.write(1), C puts and child
    processes all go to stderr; a child reading stdin sees /dev/null."""
    async with spawn() as peer:
        await peer.call(1, "noisy", text="x")
        reply = await peer.reply(1)

        assert structured_of(reply) == "x"
        assert text_of(reply) == "x"
        assert {
            "print x",
            "os.write x",
            "puts x",
            "child x",
            "child stdin done",
        } <= set(peer.stderr)


async def test_failing_and_blocking_handlers_do_not_stall_the_server() -> None:
    """api.md: a failing handler never ends the server; sync handlers run in threads."""
    async with spawn() as peer:
        await peer.call(1, "crash")
        await peer.call(2, "fail_for_model")
        await peer.call(3, "block_in_sync_code")
        await peer.stderr_line("probe: blocking")
        await peer.call(4, "echo", text="not stalled")
        echoed = await peer.reply(4)
        await peer.call(5, "release")
        released = await peer.reply(3)
        crashed, failed = await peer.reply(1), await peer.reply(2)

        assert structured_of(echoed) == "not stalled"
        assert text_of(echoed) == "not stalled"
        assert structured_of(released) == "released"
        assert text_of(released) == "released"
        assert crashed["error"]["code"] == -32603
        assert failed["result"]["isError"] is True
        assert "the probe failed on purpose" in text_of(failed)


async def test_a_closed_protocol_stream_raises_transport() -> None:
    """api.md: serve_stdio raises McpError.Transport when it cannot write its replies."""
    async with spawn() as peer:
        assert peer.process.stdout is not None
        await peer.process.stdout.aclose()
        await peer.call(1, "echo", text="nobody reads this")
        with trio.fail_after(WAIT):
            code = await peer.process.wait()

        assert code == 1
        assert any(
            "trio_mcp.Transport: cannot write to stdout" in line for line in peer.stderr
        )


BIG_REPLY_SERVER = """
import sys, trio
from trio_mcp import Server, tool

@tool
def big(size: int) -> str:
    '''
    Return a long text.

    Args:
        size: How many characters.
    '''
    return "x" * size

@tool
def mark() -> str:
    '''Say so on stderr.'''
    sys.stderr.write("probe: marked\\n")
    sys.stderr.flush()
    return "marked"

trio.run(Server("big", "1", tools=[big, mark]).serve_stdio)
"""


async def test_a_cancel_during_a_blocked_reply_write_never_leaves_half_a_line() -> None:
    """Spec §13: one whole message per line. A reply larger than the pipe is being
    written while the client does not read; cancelling its request then must not
    cut the line short, or the next message is glued to half a reply."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", BIG_REPLY_SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None

    def call(request_id: int, name: str, **arguments: Any) -> bytes:
        params = {"name": name, "arguments": arguments, "_meta": META}
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        return json.dumps({**message, "params": params}).encode() + b"\n"

    try:
        with trio.fail_after(WAIT):
            await process.stdin.send_all(call(1, "big", size=2_000_000))
            # The reply's first byte is out: its write has started, and blocks
            # on the full pipe since nobody reads.
            output = await process.stdout.receive_some(1)
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1},
            }
            await process.stdin.send_all(json.dumps(cancel).encode() + b"\n")
            # Messages are read in order: once ``mark`` runs, the cancel was seen.
            await process.stdin.send_all(call(2, "mark"))
            errors = b""
            while b"probe: marked" not in errors:
                errors += await process.stderr.receive_some()
            await process.stdin.aclose()
            while chunk := await process.stdout.receive_some():
                output += chunk
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()
    *lines, rest = output.split(b"\n")
    messages = [json.loads(line) for line in lines]

    assert rest == b""
    assert messages[-1]["result"]["structuredContent"] == "marked"
    assert [m["id"] for m in messages] in ([1, 2], [2])


async def test_a_failing_stdin_is_a_transport_error_that_says_what_to_do() -> None:
    stream = trio.testing.MemoryReceiveStream()

    async def fail() -> None:
        raise trio.BrokenResourceError

    stream.receive_some_hook = fail
    out, items = trio.open_memory_channel[list[str | bytes | Oversized]](1)

    with pytest.raises(McpError.Transport) as caught:
        await read_lines(stream, out, 10)

    assert (
        "cannot read stdin, the protocol stream; launch the server with a pipe on stdin"
        == str(caught.value)
    )
    assert [] == [item async for item in items]


async def test_the_environment_picks_the_streams_and_both_carry_bytes() -> None:
    """TRIO_MCP_STDIO_THREADS=1 selects the thread-backed streams (Windows' only
    kind); either kind moves bytes through real pipes, and reads end at EOF."""
    to_reader, from_test = os.pipe()
    to_test, from_writer = os.pipe()
    reader, writer = stdio_streams(to_reader, from_writer)
    threads = isinstance(reader, ThreadReader) and isinstance(writer, ThreadWriter)
    try:
        with trio.fail_after(WAIT):
            os.write(from_test, b"ping\n")
            os.close(from_test)
            got = b""
            while chunk := await reader.receive_some():
                got += chunk
            await writer.send_all(b"pong\n")
            await writer.aclose()
            echoed = os.read(to_test, 100)
    finally:
        await reader.aclose()
        await writer.aclose()
        os.close(to_test)

    assert (os.environ.get(THREADS_ENV) == "1") is threads
    assert (b"ping\n", b"pong\n") == (got, echoed)
