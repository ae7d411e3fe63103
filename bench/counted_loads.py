"""The loads bench/instructions.py counts, and the checks that make a wrong reply fail.

- ``Feeder``: requests into a stdio server's stdin with N in flight (a reply lets the
  next one in, as ``bench/load.py``), every reply read from its stdout and checked.
- ``drive_trio`` and ``drive_asyncio``: a Hypercorn-like fake server that drives an
  ASGI app in process: 16 keep-alive connections, each one request at a time; per
  request a task for the app and a memory channel (a queue on asyncio) for
  ``receive`` holding the body as Hypercorn passes it on (the data, then an empty
  last part), a checkpoint per ``send``, ``http.disconnect`` queued once the last
  body part is sent. Every status is checked as it comes, and each connection's last
  reply in full after the run (a constant cost, which the two runs' difference
  cancels).

Requests are the bytes ``bench/load.py`` sends (revision 2026-07-28, ``_meta`` on
each), built with the standard library so the project's ``.venv`` runs this too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import selectors
import subprocess
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

INFLIGHT = 16
REVISION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REVISION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
ARGUMENTS: dict[str, dict[str, Any]] = {
    "echo": {"text": "hello"},
    "add": {"a": 2, "b": 3},
    "search": {"query": "printer"},
}
TITLE = "Benchmark record with a short title"
EXPECTED: dict[str, Any] = {
    "echo": "hello",
    "add": 5,
    "search": [{"id": f"T-{i}", "title": f"printer {TITLE} {i}"} for i in range(1, 21)],
}
Asgi = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


class LoadFailed(Exception):
    """A load did not complete right: a wrong reply, a server that died, a time-out."""


def call_request(tool: str, ident: int) -> bytes:
    """A revision 2026-07-28 ``tools/call`` request, compact JSON, no newline."""
    params = {"_meta": META, "name": tool, "arguments": ARGUMENTS[tool]}
    message = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}
    return json.dumps(message, separators=(",", ":")).encode()


#: The handshake-era revision of the legacy rows (``Server(legacy=True)``).
LEGACY_REVISION = "2025-11-25"


def legacy_call_request(tool: str, ident: int) -> bytes:
    """A handshake-era ``tools/call`` (no ``_meta``: the session's), compact JSON."""
    params = {"name": tool, "arguments": ARGUMENTS[tool]}
    message = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}
    return json.dumps(message, separators=(",", ":")).encode()


def initialize_request() -> bytes:
    """The ``initialize`` of a handshake-era client (a legacy row's prelude)."""
    params = {
        "protocolVersion": LEGACY_REVISION,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    }
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    return json.dumps(message, separators=(",", ":")).encode()


#: The handshake's last message (a notification: no reply).
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
#: What a legacy stdio row sends before its calls.
LEGACY_PRELUDE = (initialize_request(), INITIALIZED)


def check_reply(tool: str, message: Any) -> str:
    """ "" when ``message`` is the right answer to a call of ``tool``, else what is wrong."""
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict) or result.get("isError"):
        return f"not a successful result: {message!r:.300}"
    got = result.get("structuredContent")
    want = EXPECTED[tool]
    if got == want or got == {"result": want}:
        return ""
    return f"structuredContent {got!r:.200} is not {want!r:.200}"


def succeeded(message: Any) -> str:
    """ "" for a reply that carries a result (a prelude's), else what it carries."""
    return "" if "result" in message else f"the prelude was refused: {message!r:.300}"


class Feeder:
    """Requests into a subprocess's stdin, replies out of its stdout, non-blocking."""

    def __init__(self, proc: subprocess.Popen[bytes], deadline: float) -> None:
        assert proc.stdin is not None
        assert proc.stdout is not None
        self.proc = proc
        self.deadline = deadline
        self.wfd = proc.stdin.fileno()
        self.rfd = proc.stdout.fileno()
        os.set_blocking(self.wfd, False)
        os.set_blocking(self.rfd, False)
        self.pending = b""

    def exchange(
        self, lines: list[bytes], inflight: int, check: Callable[[Any], str]
    ) -> None:
        """Send ``lines`` with at most ``inflight`` unanswered; check every reply."""
        waiting = {json.loads(line)["id"] for line in lines if b'"id"' in line}
        requests, sent = len(waiting), 0
        out = bytearray()
        with selectors.DefaultSelector() as sel:
            sel.register(self.rfd, selectors.EVENT_READ)
            while waiting or sent < len(lines) or out:
                answered = requests - len(waiting)
                while sent < len(lines) and sent - answered < inflight:
                    out += lines[sent] + b"\n"
                    sent += 1
                if out:
                    with contextlib.suppress(BlockingIOError):
                        del out[: os.write(self.wfd, out)]
                events = {key.fd for key, _ in sel.select(self._left())}
                if self.rfd in events:
                    self._replies(waiting, check)
                elif not events and self._left() == 0:
                    raise LoadFailed(
                        f"{len(waiting)} requests unanswered at the deadline"
                    )

    def _left(self) -> float:
        return max(0.0, min(0.5, self.deadline - time.monotonic()))

    def _replies(self, waiting: set[Any], check: Callable[[Any], str]) -> None:
        """Read what is there; check every complete reply and strike its id off."""
        try:
            data = os.read(self.rfd, 1 << 18)
        except BlockingIOError:
            return
        if not data:
            raise LoadFailed(f"the server closed stdout (exit {self.proc.poll()})")
        *lines, self.pending = (self.pending + data).split(b"\n")
        for line in filter(bytes.strip, lines):
            message = json.loads(line)
            if "id" not in message:
                continue  # a notification
            if message["id"] not in waiting:
                raise LoadFailed(f"a reply to an unknown id: {line[:200]!r}")
            if problem := check(message):
                raise LoadFailed(problem)
            waiting.discard(message["id"])

    def close(self) -> None:
        """End of input: the server finishes what it has and exits."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()


def http_scope(tool: str, session: str | None = None) -> dict[str, Any]:
    """The ASGI scope of a ``POST /mcp`` calling ``tool``, as Hypercorn gives it
    (in the handshake-era ``session``, if given: its id, its revision)."""
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
    ]
    if session is None:
        headers += [
            (b"mcp-protocol-version", REVISION.encode()),
            (b"mcp-method", b"tools/call"),
            (b"mcp-name", tool.encode()),
        ]
    else:
        headers += [
            (b"mcp-protocol-version", LEGACY_REVISION.encode()),
            (b"mcp-session-id", session.encode()),
        ]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "extensions": {},
    }


class Exchange:
    """One request as the fake server sees it: the app's ``send``, the status, the body.

    Per ``send`` one checkpoint (Hypercorn writes each message to the socket); once
    the last body part is in, ``http.disconnect`` is queued for ``receive`` (as
    Hypercorn does when the stream closes) and ``ended`` lets the connection go on.
    """

    def __init__(
        self,
        to_app: Callable[[dict[str, Any]], None],
        ended: Any,
        checkpoint: Callable[[], Awaitable[None]],
    ) -> None:
        self.to_app = to_app
        self.ended = ended
        self.checkpoint = checkpoint
        self.status = 0
        self.body: list[bytes] = []
        self.finished = False

    async def send(self, message: MutableMapping[str, Any]) -> None:
        """The app's ``send``."""
        await self.checkpoint()
        if message["type"] == "http.response.start":
            self.status = message["status"]
            return
        self.body.append(message.get("body", b""))
        if not message.get("more_body", False):
            self.finished = True
            self.to_app({"type": "http.disconnect"})
            self.ended.set()

    async def serve(self, app: Asgi, scope: dict[str, Any], receive: Any) -> None:
        """The request's task: the app, then ``ended`` even if it sent no reply."""
        try:
            await app(dict(scope), receive, self.send)
        finally:
            self.ended.set()


@dataclass
class Calls:
    """The fake server's tally: statuses that were not 200, each connection's last."""

    tool: str
    wrong: list[int] = field(default_factory=list)
    last: list[Exchange] = field(default_factory=list)

    def check(self, calls: int) -> None:
        """Fail unless every call got 200 and each connection's last reply is right."""
        if self.wrong:
            raise LoadFailed(f"{len(self.wrong)} of {calls} calls got {self.wrong[0]}")
        for exchange in self.last:
            if not exchange.finished:
                raise LoadFailed("a response never ended")
            body = b"".join(exchange.body)
            if body.startswith((b"event:", b"data:", b":")):  # an SSE stream
                body = next(
                    line[5:] for line in body.splitlines() if line.startswith(b"data:")
                )
            if problem := check_reply(self.tool, json.loads(body)):
                raise LoadFailed(problem)


def request_events(tool: str, body: bytes | None = None) -> list[dict[str, Any]]:
    """The ``receive`` events of a call as Hypercorn queues them for a one-read body.

    h11 gives the body (``more_body`` True) and then the end of the message, which
    Hypercorn passes on as an empty last part. Copied per request.
    """
    body = call_request(tool, 1) if body is None else body
    return [
        {"type": "http.request", "body": body, "more_body": True},
        {"type": "http.request", "body": b"", "more_body": False},
    ]


async def drive_trio(
    app: Asgi, tool: str, calls: int, session: str | None = None
) -> None:
    """``calls`` requests to ``app`` over 16 keep-alive connections, as Hypercorn-Trio
    (handshake-era calls in ``session``, if given)."""
    import trio

    body = None if session is None else legacy_call_request(tool, 1)
    scope, events, tally = (
        http_scope(tool, session),
        request_events(tool, body),
        Calls(tool),
    )
    checkpoint = trio.lowlevel.checkpoint

    async def connection(count: int) -> None:
        async with trio.open_nursery() as requests:  # the connection's task group
            for _ in range(count):
                to_app, receive = trio.open_memory_channel[dict[str, Any]](10)
                for event in events:
                    to_app.send_nowait(dict(event))
                exchange = Exchange(to_app.send_nowait, trio.Event(), checkpoint)
                requests.start_soon(exchange.serve, app, scope, receive.receive)
                await exchange.ended.wait()
                if exchange.status != 200:
                    tally.wrong.append(exchange.status)
            tally.last.append(exchange)

    async with trio.open_nursery() as server:
        for count in _shares(calls):
            server.start_soon(connection, count)
    tally.check(calls)


async def drive_asyncio(app: Asgi, tool: str, calls: int) -> None:
    """The same fake server on asyncio, as Hypercorn's asyncio worker."""
    scope, events, tally = http_scope(tool), request_events(tool), Calls(tool)

    async def checkpoint() -> None:
        await asyncio.sleep(0)

    async def connection(count: int) -> None:
        async with asyncio.TaskGroup() as requests:  # the connection's task group
            for _ in range(count):
                queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(10)
                for event in events:
                    queue.put_nowait(dict(event))
                exchange = Exchange(queue.put_nowait, asyncio.Event(), checkpoint)
                requests.create_task(exchange.serve(app, scope, queue.get))
                await exchange.ended.wait()
                if exchange.status != 200:
                    tally.wrong.append(exchange.status)
            tally.last.append(exchange)

    async with asyncio.TaskGroup() as server:
        for count in _shares(calls):
            server.create_task(connection(count))
    tally.check(calls)


def _shares(calls: int) -> list[int]:
    """``calls`` split over the 16 connections (none empty)."""
    each, extra = divmod(calls, INFLIGHT)
    return [n for i in range(INFLIGHT) if (n := each + (i < extra))]


def hypercorn_trio(app: Asgi, tool: str, calls: int) -> None:
    """The fake Hypercorn-Trio server (``drive_trio``) run to completion, time frozen.

    Under valgrind a call runs some 50 times slower, so any timer in the app (the
    disconnect watcher started for a request still running after 50 ms, say) would
    fire by the machine's load, not by the code: repeat runs differed by 3 %. With
    time frozen no timer fires, as none does on a real server whose calls take a
    millisecond or two, and the count is the same every run.
    """
    import trio

    trio.run(drive_trio, app, tool, calls, clock=frozen_clock())


def hypercorn_trio_legacy(app: Asgi, tool: str, calls: int) -> None:
    """The fake Hypercorn-Trio server calling in one handshake-era session: one
    ``initialize``, then ``calls`` calls carrying its ``Mcp-Session-Id``."""
    import trio

    async def drive() -> None:
        session = await open_session(app)
        await drive_trio(app, tool, calls, session)

    trio.run(drive, clock=frozen_clock())


async def open_session(app: Asgi) -> str:
    """``initialize`` through ``app``; the session id its response carries."""
    import trio

    headers: dict[bytes, bytes] = {}
    events = [
        {"type": "http.request", "body": initialize_request(), "more_body": False}
    ]

    async def receive() -> dict[str, Any]:
        if events:
            return events.pop()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers.update(message["headers"])

    scope = http_scope("echo")
    scope["headers"] = scope["headers"][:3]  # no 2026-07-28 headers
    await app(scope, receive, send)
    if b"mcp-session-id" not in headers:
        raise LoadFailed("initialize opened no session (is the server legacy=True?)")
    return headers[b"mcp-session-id"].decode()


def frozen_clock() -> Any:
    """A Trio clock that never moves: a deadline in the future never arrives."""
    import trio

    class Frozen(trio.abc.Clock):
        def start_clock(self) -> None:
            pass

        def current_time(self) -> float:
            return 0.0

        def deadline_to_sleep_time(self, deadline: float) -> float:
            return 0.0 if deadline <= 0.0 else 3600.0

    return Frozen()


def hypercorn_asyncio(app: Asgi, tool: str, calls: int) -> None:
    """The fake Hypercorn-asyncio server (``drive_asyncio``) run to completion."""
    asyncio.run(drive_asyncio(app, tool, calls))
