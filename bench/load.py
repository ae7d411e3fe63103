"""The load client: raw JSON-RPC ``tools/call`` traffic over stdio pipes or HTTP/1.1.

Every peer receives the same bytes: revision 2026-07-28 requests (no ``initialize``,
``params._meta`` on each; on HTTP the ``MCP-Protocol-Version``, ``Mcp-Method`` and
``Mcp-Name`` headers). Every reply is parsed and checked against the expected value;
a wrong or missing answer counts as an error, never as a result. Loads are bounded in
count (``calls``) and in time (``time_limit``): whichever ends first.

- stdio: one thread, non-blocking pipes, ``inflight`` requests outstanding.
- HTTP: ``inflight`` keep-alive connections on asyncio, one request at a time on each;
  the reply may be JSON or an SSE stream (both parsed).

Latency is measured from queueing a request to its checked reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

REVISION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": REVISION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
TITLE = "Benchmark record with a short title"
ARGUMENTS: dict[str, dict[str, Any]] = {
    "echo": {"text": "hello"},
    "add": {"a": 2, "b": 3},
    "search": {"query": "printer"},
}
EXPECTED: dict[str, Any] = {
    "echo": "hello",
    "add": 5,
    "search": [{"id": f"T-{i}", "title": f"printer {TITLE} {i}"} for i in range(1, 21)],
}
CALL_TIMEOUT = 10.0


class LoadError(Exception):
    """The load could not run: the server exited, closed its output or never answered."""


@dataclass
class LoadResult:
    """What one load run measured."""

    calls: int = 0
    errors: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    first_error: str = ""

    @property
    def rate(self) -> float:
        """Checked replies per second."""
        return self.calls / self.seconds if self.seconds else 0.0

    def percentile(self, share: float) -> float:
        """Latency in seconds at ``share`` (0..1) of the sorted latencies."""
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    def note_error(self, text: str) -> None:
        """Count a wrong reply, keeping the first for the report."""
        self.errors += 1
        if not self.first_error:
            self.first_error = text[:300]


def request_body(tool: str, ident: int, method: str = "tools/call") -> bytes:
    """One JSON-RPC request, as bytes without a newline."""
    params: dict[str, Any] = {"_meta": META}
    if method == "tools/call":
        params |= {"name": tool, "arguments": ARGUMENTS[tool]}
    elif tool:
        params["cursor"] = tool
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
    )


def check_reply(tool: str, message: dict[str, Any]) -> str:
    """Return "" when ``message`` carries the right answer, else what is wrong."""
    result = message.get("result")
    if not isinstance(result, dict):
        return f"no result: {message!r}"
    if result.get("isError"):
        return f"isError: {result!r}"
    want = EXPECTED[tool]
    if "structuredContent" in result:
        got = result["structuredContent"]
        if got == want or got == {"result": want}:
            return ""
        return f"structuredContent {got!r} is not {want!r}"
    for item in result.get("content", []):
        if item.get("type") == "text":
            text = item["text"]
            try:
                value = orjson.loads(text)
            except orjson.JSONDecodeError:
                value = text
            if value == want or text == str(want):
                return ""
    return f"content does not carry {want!r}: {result!r}"


def _cpu_ticks(pid: int) -> int:
    """User plus system clock ticks of ``pid`` and its live children."""
    total = 0
    for one in [pid, *_children(pid)]:
        try:
            with open(f"/proc/{one}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (each thread's children file)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as children:
                kids = [int(kid) for kid in children.read().split()]
        except OSError:
            continue
        for kid in kids:
            found += [kid, *_children(kid)]
    return found


def _run_ns(pid: int) -> int | None:
    """Nanoseconds on a CPU of every live thread of ``pid`` (``/proc/PID/task/*/schedstat``).

    None when the kernel does not report it. A thread that exited is not counted;
    the servers measured here keep theirs (async tools, Trio's idle thread cache).
    """
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except FileNotFoundError:
            if task == str(pid):
                return None  # no schedstat at all
        except (OSError, ValueError, IndexError):
            continue
    return total


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) used so far by the process tree rooted at ``pid``.

    From each thread's scheduler run time, in nanoseconds: the clock ticks of
    ``/proc/PID/stat`` are 10 ms, too coarse for a 1,000-call run of a 70 µs call
    (7 ticks). Falls back to the ticks where schedstat is missing.
    """
    pids = [pid, *_children(pid)]
    exact = [_run_ns(one) for one in pids]
    if None not in exact:
        return sum(ns for ns in exact if ns is not None) / 1e9
    return _cpu_ticks(pid) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    """Sum of VmHWM (peak resident set) over the process tree rooted at ``pid``."""
    return sum(_status_kib(one, "VmHWM") for one in [pid, *_children(pid)]) / 1024


def rss_mib(pid: int) -> float:
    """Sum of VmRSS (resident set now) over the process tree rooted at ``pid``."""
    return sum(_status_kib(one, "VmRSS") for one in [pid, *_children(pid)]) / 1024


def _status_kib(pid: int, key: str) -> int:
    """A ``kB`` field of /proc/PID/status, 0 when the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class StdioPeer:
    """A server subprocess spoken to over its stdin/stdout; ids never repeat."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        assert proc.stdout is not None
        self.proc = proc
        self.wfd = proc.stdin.fileno()
        self.rfd = proc.stdout.fileno()
        os.set_blocking(self.wfd, False)
        os.set_blocking(self.rfd, False)
        self.next_id = 1
        self.pending = b""

    def run(
        self, tool: str, calls: int, inflight: int, time_limit: float
    ) -> LoadResult:
        """Send ``calls`` requests for ``tool``, ``inflight`` outstanding; check each."""
        base = self.next_id
        self.next_id += calls
        lines = [request_body(tool, base + i) + b"\n" for i in range(calls)]
        started = [0.0] * calls
        result = LoadResult()
        out = bytearray()
        sent = 0
        sel = selectors.DefaultSelector()
        sel.register(self.rfd, selectors.EVENT_READ)
        writing = False
        begin = time.perf_counter()
        deadline = begin + time_limit
        try:
            while result.calls + result.errors < calls:
                now = time.perf_counter()
                if now > deadline:
                    break
                while sent < calls and sent - result.calls - result.errors < inflight:
                    out += lines[sent]
                    started[sent] = now
                    sent += 1
                if out:
                    with contextlib.suppress(BlockingIOError):
                        del out[: os.write(self.wfd, out)]
                if bool(out) != writing:
                    writing = bool(out)
                    if writing:
                        sel.register(self.wfd, selectors.EVENT_WRITE)
                    else:
                        sel.unregister(self.wfd)
                events = sel.select(timeout=min(CALL_TIMEOUT, deadline - now))
                if not events and time.perf_counter() - now >= CALL_TIMEOUT:
                    raise LoadError(f"no reply for {CALL_TIMEOUT} s")
                for key, _ in events:
                    if key.fd == self.rfd:
                        self._read(tool, base, started, result)
        finally:
            sel.close()
        result.seconds = time.perf_counter() - begin
        if sent > result.calls + result.errors:
            self._drain(base + sent)
        return result

    def _read(
        self, tool: str, base: int, started: list[float], result: LoadResult
    ) -> None:
        """Read what is there and check every complete reply line."""
        try:
            data = os.read(self.rfd, 1 << 18)
        except BlockingIOError:
            return
        if not data:
            raise LoadError(f"the server closed stdout (exit {self.proc.poll()})")
        *lines, self.pending = (self.pending + data).split(b"\n")
        now = time.perf_counter()
        for line in lines:
            if not line.strip():
                continue
            message = orjson.loads(line)
            ident = message.get("id")
            if ident is None:  # a notification: not a reply
                continue
            index = ident - base if isinstance(ident, int) else -1
            if not 0 <= index < len(started):
                result.note_error(f"reply to an unknown id: {line[:200]!r}")
                continue
            problem = check_reply(tool, message)
            if problem:
                result.note_error(problem)
            else:
                result.calls += 1
                result.latencies.append(now - started[index])

    def _drain(self, until_id: int) -> None:
        """After a time-bounded run, read replies until the last sent one arrived."""
        os.set_blocking(self.rfd, True)
        try:
            while True:
                *lines, self.pending = (
                    self.pending + os.read(self.rfd, 1 << 16)
                ).split(b"\n")
                if any(
                    orjson.loads(line).get("id") == until_id - 1
                    for line in lines
                    if line.strip()
                ):
                    return
        finally:
            os.set_blocking(self.rfd, False)

    def ask(self, body: bytes, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        """Send one request and return its reply (used for tools/list and start-up)."""
        ident = orjson.loads(body)["id"]
        view = memoryview(body + b"\n")
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self.wfd, selectors.EVENT_WRITE)
            while view:
                if not sel.select(deadline - time.monotonic()):
                    raise LoadError("the server does not read its stdin")
                view = view[os.write(self.wfd, view) :]
            sel.unregister(self.wfd)
            sel.register(self.rfd, selectors.EVENT_READ)
            while True:
                while b"\n" in self.pending:
                    line, self.pending = self.pending.split(b"\n", 1)
                    message = orjson.loads(line) if line.strip() else {}
                    if message.get("id") == ident:
                        return message  # type: ignore[no-any-return]
                if not sel.select(deadline - time.monotonic()):
                    raise LoadError(f"no reply within {timeout} s")
                data = os.read(self.rfd, 1 << 18)
                if not data:
                    raise LoadError(f"the server exited ({self.proc.poll()})")
                self.pending += data


def http_headers(
    host: str, port: int, path: str, tool: str, length: int, token: str = ""
) -> bytes:
    """The request head every peer gets for one ``tools/call`` of ``tool``.

    ``token``, when given, goes in ``Authorization: Bearer`` (bench/guards.py).
    """
    method, name = ("tools/call", tool) if tool in ARGUMENTS else ("tools/list", "")
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"MCP-Protocol-Version: {REVISION}",
        f"Mcp-Method: {method}",
        *([f"Mcp-Name: {name}"] if name else []),
        *([f"Authorization: Bearer {token}"] if token else []),
        f"Content-Length: {length}",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def read_http_reply(
    reader: asyncio.StreamReader,
) -> tuple[int, bytes, bytes, bool]:
    """Status, content type, body and "closing" of one HTTP/1.1 response.

    The body is framed by Content-Length or chunked encoding; "closing" is true when
    the server said ``Connection: close`` (Hypercorn does after
    ``keep_alive_max_requests``), so the caller opens a new connection.
    """
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head[:-4].split(b"\r\n")
    status = int(status_line.split()[1])
    headers = {}
    for line in header_lines:
        key, _, value = line.partition(b":")
        headers[key.strip().lower()] = value.strip()
    if b"content-length" in headers:
        body = await reader.readexactly(int(headers[b"content-length"]))
    elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        parts = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            parts.append((await reader.readexactly(size + 2))[:-2])
        while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
            pass
        body = b"".join(parts)
    else:
        body = await reader.read()
    closing = headers.get(b"connection", b"").lower() == b"close"
    return status, headers.get(b"content-type", b""), body, closing


def http_message(content_type: bytes, body: bytes) -> dict[str, Any]:
    """The JSON-RPC reply in a JSON body or in an SSE stream's ``data:`` lines."""
    if content_type.startswith(b"text/event-stream"):
        for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
            data = b"\n".join(
                line[5:].lstrip(b" ")
                for line in event.split(b"\n")
                if line.startswith(b"data:")
            )
            if data:
                message = orjson.loads(data)
                if "id" in message:
                    return message  # type: ignore[no-any-return]
        return {}
    return orjson.loads(body)  # type: ignore[no-any-return]


@dataclass
class HttpLoad:
    """One HTTP load: where, which tool, how much; bearer tokens used in turn."""

    port: int
    tool: str
    calls: int
    inflight: int
    time_limit: float
    path: str = "/mcp"
    host: str = "127.0.0.1"
    tokens: Sequence[str] = ()

    def head(self, ident: int, length: int) -> bytes:
        """The request head of call ``ident`` (1-based): the next token, if any."""
        tokens = self.tokens
        token = tokens[(ident - 1) % len(tokens)] if tokens else ""
        return http_headers(self.host, self.port, self.path, self.tool, length, token)


async def _http_worker(
    load: HttpLoad, claim: list[int], deadline: float, result: LoadResult
) -> None:
    """One keep-alive connection: claim a call, send it, check the reply, repeat."""
    host, port, tool = load.host, load.port, load.tool
    reader, writer = await _connect(host, port)
    try:
        while claim[0] < load.calls and time.perf_counter() < deadline:
            ident = claim[0] = claim[0] + 1
            body = request_body(tool, ident)
            start = time.perf_counter()
            writer.write(load.head(ident, len(body)) + body)
            status, kind, reply, closing = await asyncio.wait_for(
                read_http_reply(reader), CALL_TIMEOUT
            )
            message = http_message(kind, reply) if status == 200 else {}
            problem = check_reply(tool, message) if message else f"HTTP {status}"
            if problem:
                result.note_error(problem)
            else:
                result.calls += 1
                result.latencies.append(time.perf_counter() - start)
            if closing:
                writer.close()
                reader, writer = await _connect(host, port)
    finally:
        writer.close()


async def _connect(
    host: str, port: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A new connection with Nagle off, as the servers have it."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.get_extra_info("socket").setsockopt(
        socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
    )
    return reader, writer


async def _http_load(load: HttpLoad) -> LoadResult:
    """Run ``inflight`` workers until ``calls`` replies or ``time_limit`` seconds."""
    result = LoadResult()
    claim = [0]
    begin = time.perf_counter()
    workers = [
        _http_worker(load, claim, begin + load.time_limit, result)
        for _ in range(load.inflight)
    ]
    try:
        await asyncio.gather(*workers)
    except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
        raise LoadError(f"HTTP load failed: {exc!r}") from exc
    result.seconds = time.perf_counter() - begin
    return result


def http_run(
    port: int,
    tool: str,
    calls: int,
    inflight: int,
    time_limit: float,
    path: str = "/mcp",
) -> LoadResult:
    """HTTP load on 127.0.0.1:``port``: ``calls`` calls of ``tool`` on ``inflight`` connections."""
    return run_http(HttpLoad(port, tool, calls, inflight, time_limit, path))


def run_http(load: HttpLoad) -> LoadResult:
    """Run one HTTP load (``http_run`` with every option)."""
    return asyncio.run(_http_load(load))


async def _http_ask(port: int, path: str, body: bytes, tool: str) -> dict[str, Any]:
    """One request on a fresh connection; the reply message."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(http_headers("127.0.0.1", port, path, tool, len(body)) + body)
        status, kind, reply, _ = await asyncio.wait_for(
            read_http_reply(reader), CALL_TIMEOUT
        )
        return http_message(kind, reply) if status == 200 else {}
    finally:
        writer.close()


def http_ask(port: int, body: bytes, tool: str, path: str = "/mcp") -> dict[str, Any]:
    """Send one request over HTTP and return its reply message ({} on an HTTP error)."""
    return asyncio.run(_http_ask(port, path, body, tool))
