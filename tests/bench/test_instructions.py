"""bench/instructions.py's loads without valgrind: they are answered right or they fail.

valgrind only counts; what it counts is these loads, so each row's load runs here as
it does under valgrind (real servers over pipes, the real ``server.mount()`` app under
the fake Hypercorn), and a wrong answer must fail the row rather than be counted.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.append(str(BENCH))  # last: bench/'s scripts shadow no module of the tests
bench = importlib.import_module("instructions")
loads = importlib.import_module("counted_loads")
STDIO_ROWS = [row for row in bench.ROWS if isinstance(row, bench.StdioRow)]
ASGI_ROWS = [row for row in bench.ROWS if isinstance(row, bench.AsgiRow)]


@pytest.mark.parametrize("row", STDIO_ROWS, ids=lambda row: row.name)
def test_stdio_row_load_is_answered_right(row: Any) -> None:
    row.serve(40)


def test_stdio_row_fails_on_a_wrong_answer() -> None:
    asks_add = bench.StdioRow(
        "add answered as echo",
        bench.TRIO_MCP_STDIO,
        "echo",
        request=lambda tool, ident: loads.call_request("add", ident),
    )
    with pytest.raises(loads.LoadFailed, match="structuredContent"):
        asks_add.serve(3)


def _partial_server(skip: int, stop: int) -> list[str]:
    """A stdio server that answers ``echo`` right but skips line ``skip`` and exits
    after line ``stop`` (-1: never)."""
    code = f"""
import json, sys
for index, line in enumerate(sys.stdin):
    if index != {skip}:
        ident = json.loads(line)["id"]
        reply = {{"jsonrpc": "2.0", "id": ident, "result": {{"structuredContent": "hello"}}}}
        print(json.dumps(reply), flush=True)
    if index == {stop}:
        break
"""
    return [sys.executable, "-c", code]


def test_stdio_row_fails_when_the_server_exits_early() -> None:
    row = bench.StdioRow("exits after two", _partial_server(-1, 1), "echo")
    with pytest.raises(loads.LoadFailed, match="closed stdout"):
        row.serve(3)


def test_stdio_row_fails_when_a_request_is_never_answered() -> None:
    row = bench.StdioRow("skips one", _partial_server(1, -1), "echo")
    row.serve(1, limit=5)  # the first line is answered
    with pytest.raises(loads.LoadFailed, match="1 requests unanswered"):
        row.serve(3, limit=1)


def test_stdio_row_prelude_must_succeed() -> None:
    unknown = b'{"jsonrpc":"2.0","id":1,"method":"no/such/method","params":{}}'
    refused = bench.StdioRow(
        "refused prelude", bench.TRIO_MCP_STDIO, "echo", prelude=[unknown]
    )
    with pytest.raises(loads.LoadFailed, match="prelude was refused"):
        refused.serve(1)


@pytest.mark.parametrize("row", ASGI_ROWS, ids=lambda row: row.name)
def test_asgi_row_load_is_answered_right(row: Any) -> None:
    row.child(40)


def _answering(status: int, reply: bytes) -> Any:
    """A bare app that answers every request with ``status`` and ``reply``."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": reply})

    return app


async def test_fake_server_fails_on_a_status_other_than_200() -> None:
    app = _answering(503, b"{}")
    with pytest.raises(loads.LoadFailed, match="20 of 20 calls got 503"):
        await loads.drive_trio(app, "echo", 20)


async def test_fake_server_fails_on_a_wrong_body() -> None:
    wrong = b'{"jsonrpc":"2.0","id":1,"result":{"structuredContent":"bye"}}'
    app = _answering(200, wrong)
    with pytest.raises(loads.LoadFailed, match="'bye' is not 'hello'"):
        await loads.drive_trio(app, "echo", 20)


async def test_fake_server_fails_when_the_app_sends_nothing() -> None:
    async def silent(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()

    with pytest.raises(loads.LoadFailed, match="got 0"):
        await loads.drive_trio(silent, "echo", 20)


def test_fake_asyncio_server_fails_on_a_wrong_body() -> None:
    wrong = b'data: {"jsonrpc":"2.0","id":1,"result":{"structuredContent":"bye"}}\n\n'
    app = _answering(200, wrong)
    with pytest.raises(loads.LoadFailed, match="'bye' is not 'hello'"):
        asyncio.run(loads.drive_asyncio(app, "echo", 20))


async def test_fake_server_sends_the_body_then_disconnect() -> None:
    seen: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.extend([await receive(), await receive()])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b'{"result":{"x":1}}'})
        with trio.move_on_after(1):
            seen.append(await receive())

    with pytest.raises(loads.LoadFailed):  # the reply is not an echo: checked last
        await loads.drive_trio(app, "echo", 1)
    assert [event["type"] for event in seen] == [
        "http.request",
        "http.request",
        "http.disconnect",
    ]
    assert [event["more_body"] for event in seen[:2]] == [True, False]
    assert seen[0]["body"] == loads.call_request("echo", 1)


@given(st.integers(min_value=1, max_value=10_000))
def test_calls_are_split_evenly_over_at_most_16_connections(calls: int) -> None:
    shares = loads._shares(calls)
    assert sum(shares) == calls
    assert len(shares) == min(calls, 16)
    assert max(shares) - min(shares) <= 1


@pytest.mark.parametrize("line", ["summary: 1234", "totals: 1234"])
def test_valgrind_totals_are_read(tmp_path: Path, line: str) -> None:
    out = tmp_path / "run.out"
    out.write_text(f"version: 2\ncmd: python\nevents: Ir\n{line}\n")
    assert bench.Valgrind.instructions(out) == 1234


def test_valgrind_without_a_total_fails(tmp_path: Path) -> None:
    out = tmp_path / "run.out"
    out.write_text("version: 2\nevents: Ir\n")
    with pytest.raises(loads.LoadFailed, match="no summary"):
        bench.Valgrind.instructions(out)
