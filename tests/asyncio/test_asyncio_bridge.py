"""The bridge passes messages through unchanged: the same answers as the Trio app.

Each example is one HTTP request (method, path, headers, a body split into chunks at
any byte) given to the asyncio app under asyncio and to ``server.mount()``'s app
under Trio directly, both driven in process as an ASGI server would; every message
sent back (status, headers, body bytes) must be the same. A request that calls the
``echo`` tool gets its text back whole, whatever the chunking.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import trio
import trio.testing
from asgi_hosts import run_clean
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support import META
from support.asgi import asgi_exchange, http_scope, receiving

from trio_mcp import Server, ToolContext, tool
from trio_mcp.asyncio import mount
from trio_mcp.asyncio._bridge import QUEUED_MESSAGES


@tool
async def echo(text: str) -> str:
    """Return the text unchanged.

    Args:
        text: The text to return.
    """
    return text


SERVER = Server("bridge", "1.0", tools=[echo])
BASE_HEADERS = {
    "host": "127.0.0.1:8000",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "echo",
}


def _echo_body(text: str) -> bytes:
    params = {"_meta": META, "name": "echo", "arguments": {"text": text}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return json.dumps(message, ensure_ascii=False).encode()


header_names = st.sampled_from([*BASE_HEADERS, "origin", "authorization", "x-extra"])
header_values = st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=40)


@st.composite
def requests(draw: st.DrawFn) -> tuple[dict[str, Any], list[bytes], str | None]:
    """A request scope, its body in chunks, and the text it echoes (if it is a call)."""
    headers = dict(BASE_HEADERS)
    changed = draw(st.one_of(st.just([]), st.lists(header_names, max_size=3)))
    for name in changed:
        if draw(st.booleans()):
            headers.pop(name, None)
        else:
            headers[name] = draw(header_values)
    text = None
    if draw(st.integers(0, 9)) < 7:  # mostly calls, so most examples reach the tool
        text = draw(st.text(max_size=200))
        body = _echo_body(text)
    else:
        body = draw(st.binary(max_size=300))
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=3)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": draw(st.sampled_from(["POST"] * 6 + ["GET", "DELETE"])),
        "scheme": "http",
        "path": draw(st.sampled_from(["/mcp"] * 6 + ["/healthz", "/elsewhere"])),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.encode(), v.encode("latin-1")) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    return scope, chunks, text


def _comparable(sent: list[Any]) -> list[Any]:
    """The messages, with the body split the way each side sent it joined."""
    out: list[Any] = []
    for message in sent:
        if message["type"] == "http.response.body":
            out.append(bytes(message.get("body", b"")))
        else:
            out.append((message["status"], list(message.get("headers", []))))
    return [out[0], b"".join(out[1:])]


async def _through_asyncio(scope: dict[str, Any], chunks: list[bytes]) -> list[Any]:
    app = mount(SERVER)
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async with app.lifespan():
        # After the body the client stays connected.
        await app(dict(scope), receiving(chunks, asyncio.Event().wait), send)
    return sent


async def _through_trio(scope: dict[str, Any], chunks: list[bytes]) -> list[Any]:
    return await asgi_exchange(SERVER.mount(), dict(scope), *chunks)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
def test_the_asyncio_app_answers_exactly_as_the_trio_app(
    request: tuple[dict[str, Any], list[bytes], str | None],
) -> None:
    scope, chunks, text = request
    if not chunks:
        chunks = [b""]

    bridged = run_clean(lambda: _through_asyncio(scope, chunks))
    direct = trio.run(_through_trio, scope, chunks)

    assert _comparable(direct) == _comparable(bridged)
    status, _ = _comparable(bridged)[0]
    event(f"HTTP {status}")
    if text is not None and status == 200 and scope["path"] == "/mcp":
        reply = json.loads(_comparable(bridged)[1])
        assert text == reply["result"]["structuredContent"]


def test_a_slow_host_holds_the_handler_within_the_queue_bound() -> None:
    """A host that does not take what is sent (a client not reading) stops the
    handler once ``QUEUED_MESSAGES`` sends wait; released, every event arrives in
    order. Checked when every Trio task is blocked, from a Trio system task."""
    emitted: list[int] = []
    held_at: list[int] = []
    release = asyncio.Event()

    async def note_when_blocked() -> None:
        await trio.testing.wait_all_tasks_blocked()
        held_at.append(len(emitted))
        release.set()  # same thread: an asyncio call from Trio code is fine here

    @tool
    async def chatty(count: int) -> int:
        """Report progress ``count`` times.

        Args:
            count: How many notifications.
        """
        trio.lowlevel.spawn_system_task(note_when_blocked)
        ctx = ToolContext.current()
        for done in range(1, count + 1):
            emitted.append(done)
            await ctx.progress(done, count)
        return count

    server = Server("slow", "1.0", tools=[chatty])
    params = {
        "_meta": {**META, "progressToken": "p"},
        "name": "chatty",
        "arguments": {"count": 100},
    }
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    ).encode()
    headers = {**BASE_HEADERS, "mcp-name": "chatty"}
    scope = http_scope([(k.encode(), v.encode()) for k, v in headers.items()])

    async def main() -> list[Any]:
        app = mount(server)
        sent: list[Any] = []
        receive = receiving([body], asyncio.Event().wait)

        async def send(message: Any) -> None:
            sent.append(message)
            if len(sent) == 2:  # the first event: the client stops reading
                await release.wait()

        async with app.lifespan():
            await app(scope, receive, send)
        return sent

    sent = run_clean(main)

    events = [m["body"] for m in sent if m["type"] == "http.response.body"]
    data = [json.loads(e.removeprefix(b"data: ")) for e in events if e.strip()]
    progress = [m["params"]["progress"] for m in data if "method" in m]
    assert list(range(1, 101)) == progress
    assert 100 == data[-1]["result"]["structuredContent"]
    assert 1 == len(held_at)
    assert held_at[0] < 100  # held before it could emit everything
    assert held_at[0] <= QUEUED_MESSAGES + 2
