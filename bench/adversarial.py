"""Hostile clients against a server on 127.0.0.1: what each attack gets (figures, no asserts).

    .venv/bin/python bench/adversarial.py [--peer trio_mcp|mcp|both] [--only NAME ...]

Every attack is bounded in count and in time, talks to 127.0.0.1 only, and the
servers it starts are stopped by their PID. Peers (``bench/peers``): ``trio_mcp``
(``serve_http`` with every default) and ``mcp`` 2.3.0 (``MCPServer`` on uvicorn,
stateless JSON mode); each serves ``echo`` (async), ``block(seconds)`` and
``double(n)`` (sync). The attacks:

- ``slowloris``: 100 connections send request headers a byte a second; how many
  does the server close, when, and is a fresh client served meanwhile?
- ``slow_body``: 50 bodies trickled at 1 KiB/s and one endless chunked body; what is
  answered, after how long, how many are still held at the end?
- ``idle_fds``: with ``RLIMIT_NOFILE`` 140 in the server, 131 clients make one call
  each and stay idle; are new clients served, and when?
- ``overload``: 300 concurrent ``block(2)`` calls; what are they answered, how long
  waits an ``echo`` sent meanwhile, how long until all are answered?
- ``threads``: 320 ``block(60)`` calls each dropped after 0.3 s; is a new sync call
  then answered or refused, how fast; what does ``/healthz`` say?
- ``sigint``: 20 clients sending, then SIGINT, five times; exit time, status,
  traceback or not.
- ``bodies``: 100 clients send 4 MB bodies; the server's RSS before, at peak,
  after they left, and after the peer's ``trim`` tool called glibc's ``malloc_trim``.
- ``listen_flood``: with ``RLIMIT_NOFILE`` 256 in the server, one client opens 300
  long-lived streams (trio_mcp: ``subscriptions/listen``; ``mcp``: the standalone
  ``GET /mcp`` SSE stream, its only long-lived one); how many are held open, how many
  refused at once, and is a ``tools/call`` on a new connection then served?
- ``label_flood``: 5,000 requests with invented method names; the server's RSS and
  (trio_mcp, ``metrics_path="/metrics"``) the Prometheus page's size and series
  before and after (``mcp`` serves no metrics).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from statistics import median
from typing import Any

import trio

BENCH = Path(__file__).resolve().parent
PEERS = {
    "trio_mcp": BENCH / "peers" / "adversarial_trio.py",
    "mcp": BENCH / "peers" / "adversarial_mcp.py",
}
REVISION = "2026-07-28"
OLD_REVISION = "2025-11-25"


# -- the server process -----------------------------------------------------------------
class Peer:
    """One server process of a peer, on a free port, its stderr in a file."""

    def __init__(
        self,
        name: str,
        *,
        nofile: int | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.port = _free_port()
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        self.output = ""
        limit = None if nofile is None else (nofile, nofile)
        self.process = subprocess.Popen(
            [sys.executable, str(PEERS[name]), str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
            preexec_fn=None if limit is None else _limit_fds(limit),
            env={**os.environ, **(env or {})},
        )

    async def ready(self) -> None:
        with trio.fail_after(30):
            while True:
                try:
                    stream = await trio.open_tcp_stream("127.0.0.1", self.port)
                except OSError:
                    await trio.sleep(0.05)
                else:
                    await stream.aclose()
                    return

    def rss_mib(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def log(self) -> str:
        if self.stderr.closed:
            return self.output
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def stop(self) -> None:
        """Kill the process (by its PID) if it still runs; keep what it logged."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if not self.stderr.closed:
            self.output = self.log()
            self.stderr.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _limit_fds(limit: tuple[int, int]) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, limit)

    return apply


# -- requests ---------------------------------------------------------------------------
def request_bytes(
    peer: str,
    port: int,
    n: int,
    method: str,
    params: dict[str, Any],
    name: str | None = None,
) -> bytes:
    """A raw JSON-RPC POST in the peer's revision: trio_mcp's carries its ``_meta`` and
    routing headers (``Mcp-Method``, ``Mcp-Name`` when ``name`` is given)."""
    headers = {
        "Host": f"127.0.0.1:{port}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if peer == "trio_mcp":
        params = {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": REVISION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        }
        headers |= {"MCP-Protocol-Version": REVISION, "Mcp-Method": method}
        if name is not None:
            headers["Mcp-Name"] = name
    else:
        headers["MCP-Protocol-Version"] = OLD_REVISION
    body = json.dumps(
        {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
    ).encode()
    headers["Content-Length"] = str(len(body))
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body


def call_bytes(peer: str, port: int, n: int, name: str, arguments: Any) -> bytes:
    """A raw ``tools/call`` POST in the peer's revision."""
    params = {"name": name, "arguments": arguments}
    return request_bytes(peer, port, n, "tools/call", params, name)


async def read_response(stream: trio.abc.ReceiveStream) -> tuple[int, bytes]:
    """One HTTP/1.1 response with a Content-Length body; EOFError if closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some()
        if not chunk:
            raise EOFError
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)
    length = int(fields.get("content-length", "0"))
    while len(body) < length:
        chunk = await stream.receive_some()
        if not chunk:
            raise EOFError
        body += chunk
    return int(lines[0].split()[1]), body


async def one_call(
    peer: Peer, name: str, arguments: Any, *, within: float = 10
) -> tuple[int | str, float]:
    """A call on a fresh connection: its status (or what went wrong) and seconds."""
    start = time.monotonic()
    try:
        with trio.fail_after(within):
            async with await trio.open_tcp_stream("127.0.0.1", peer.port) as stream:
                await stream.send_all(
                    call_bytes(peer.name, peer.port, 1, name, arguments)
                )
                status, _ = await read_response(stream)
                return status, time.monotonic() - start
    except trio.TooSlowError:
        return "no answer", time.monotonic() - start
    except (OSError, EOFError, trio.BrokenResourceError) as exc:
        return type(exc).__name__, time.monotonic() - start


async def closed_at(
    stream: trio.SocketStream, start: float, limit: float
) -> float | None:
    """Seconds from ``start`` until the server closes ``stream``, or None by ``limit``."""
    with trio.move_on_after(max(0.0, start + limit - time.monotonic())):
        try:
            while await stream.receive_some():
                pass
        except (trio.BrokenResourceError, OSError):
            pass
        return time.monotonic() - start
    return None


def spread(values: list[float]) -> str:
    if not values:
        return "none"
    return f"{len(values)} (median {median(values):.1f} s, last {max(values):.1f} s)"


# -- the attacks ------------------------------------------------------------------------
async def slowloris(name: str) -> dict[str, Any]:
    peer = Peer(name)
    try:
        await peer.ready()
        start, closed = time.monotonic(), []
        fresh: tuple[int | str, float] = ("not tried", 0.0)

        async def drip(i: int) -> None:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", peer.port)
            except OSError:
                return
            async with stream:
                head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-{i}: ".encode()
                await stream.send_all(head)

                async def bytes_out() -> None:
                    while True:
                        await trio.sleep(1)
                        await stream.send_all(b"a")

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(bytes_out)
                    seen = await closed_at(stream, start, 15)
                    nursery.cancel_scope.cancel()
                if seen is not None:
                    closed.append(seen)

        async def fresh_client() -> None:
            nonlocal fresh
            await trio.sleep(3)
            fresh = await one_call(peer, "echo", {"text": "hi"})

        async with trio.open_nursery() as nursery:
            for i in range(100):
                nursery.start_soon(drip, i)
            nursery.start_soon(fresh_client)
        return {
            "closed by the server within 15 s": spread(closed),
            "a fresh call meanwhile": f"{fresh[0]} in {fresh[1]:.2f} s",
        }
    finally:
        peer.stop()


async def slow_body(name: str) -> dict[str, Any]:
    peer = Peer(name)
    try:
        await peer.ready()
        start, statuses, held = time.monotonic(), Counter[Any](), 0
        answered: list[float] = []

        async def trickle(chunked: bool) -> None:
            nonlocal held
            framing = (
                "Transfer-Encoding: chunked" if chunked else "Content-Length: 100000"
            )
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{peer.port}\r\n"
                "Content-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\n"
                f"{framing}\r\n\r\n"
            ).encode()
            piece = b"400\r\n" + b" " * 1024 + b"\r\n" if chunked else b" " * 1024
            async with await trio.open_tcp_stream("127.0.0.1", peer.port) as stream:
                await stream.send_all(head)

                async def feed() -> None:
                    while True:
                        await stream.send_all(piece)
                        await trio.sleep(1)

                with trio.move_on_after(45) as bound:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(feed)
                        try:
                            status, _ = await read_response(stream)
                            statuses[status] += 1
                        except (EOFError, trio.BrokenResourceError, OSError):
                            statuses["closed"] += 1
                        answered.append(time.monotonic() - start)
                        nursery.cancel_scope.cancel()
                if bound.cancelled_caught:
                    held += 1

        async with trio.open_nursery() as nursery:
            for i in range(51):
                nursery.start_soon(trickle, i == 50)
        return {
            "answers": dict(statuses),
            "answered or closed": spread(answered),
            "still held after 45 s": held,
        }
    finally:
        peer.stop()


async def idle_fds(name: str) -> dict[str, Any]:
    peer = Peer(name, nofile=140)
    try:
        await peer.ready()
        start, idle_closed, open_streams = time.monotonic(), [], []
        for i in range(131):
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", peer.port)
                await stream.send_all(
                    call_bytes(name, peer.port, i, "echo", {"text": "x"})
                )
                with trio.fail_after(5):
                    await read_response(stream)
                open_streams.append(stream)
            except (OSError, EOFError, trio.TooSlowError, trio.BrokenResourceError):
                break
        results: list[tuple[float, int | str]] = []

        async def watch(stream: trio.SocketStream) -> None:
            seen = await closed_at(stream, start, 20)
            if seen is not None:
                idle_closed.append(seen)

        async def newcomers() -> None:
            for _ in range(30):
                status, _ = await one_call(peer, "echo", {"text": "new"}, within=2)
                results.append((time.monotonic() - start, status))
                await trio.sleep(0.5)

        async with trio.open_nursery() as nursery:
            for stream in open_streams:
                nursery.start_soon(watch, stream)
            nursery.start_soon(newcomers)
        for stream in open_streams:
            await stream.aclose()
        served = [t for t, status in results if status == 200]
        return {
            "idle clients connected": len(open_streams),
            "idle connections closed by the server": spread(idle_closed),
            "new clients served": f"{len(served)} of {len(results)}",
            "first new client served at": f"{min(served):.1f} s" if served else "never",
            "'Too many open files' lines": peer.log().count("Too many open files"),
        }
    finally:
        peer.stop()


async def overload(name: str) -> dict[str, Any]:
    peer = Peer(name)
    try:
        await peer.ready()
        statuses, done = Counter[Any](), []
        start = time.monotonic()
        echo: tuple[int | str, float] = ("not tried", 0.0)

        async def blocker() -> None:
            status, _ = await one_call(peer, "block", {"seconds": 2}, within=90)
            statuses[status] += 1
            done.append(time.monotonic() - start)

        async def echo_meanwhile() -> None:
            nonlocal echo
            await trio.sleep(0.5)
            echo = await one_call(peer, "echo", {"text": "hi"}, within=90)

        async with trio.open_nursery() as nursery:
            for _ in range(300):
                nursery.start_soon(blocker)
            nursery.start_soon(echo_meanwhile)
        return {
            "block(2) x 300 answered": dict(statuses),
            "all answered after": f"{max(done):.1f} s",
            "echo sent at 0.5 s": f"{echo[0]} after {echo[1]:.2f} s",
        }
    finally:
        peer.stop()


async def threads(name: str) -> dict[str, Any]:
    peer = Peer(name)
    try:
        await peer.ready()
        statuses = Counter[Any]()
        limiter = trio.CapacityLimiter(64)
        start = time.monotonic()

        async def dropped(i: int) -> None:
            async with limiter:
                try:
                    stream = await trio.open_tcp_stream("127.0.0.1", peer.port)
                except OSError:
                    statuses["refused connection"] += 1
                    return
                async with stream:
                    await stream.send_all(
                        call_bytes(name, peer.port, i, "block", {"seconds": 60})
                    )
                    with trio.move_on_after(0.3):
                        status, _ = await read_response(stream)
                        statuses[status] += 1
                        return
                    statuses["dropped"] += 1

        async with trio.open_nursery() as nursery:
            for i in range(320):
                nursery.start_soon(dropped, i)
        spent = time.monotonic() - start
        sync = await one_call(peer, "double", {"n": 21}, within=10)
        echo = await one_call(peer, "echo", {"text": "hi"}, within=10)
        health: int | str
        try:
            with trio.fail_after(5):
                async with await trio.open_tcp_stream("127.0.0.1", peer.port) as s:
                    await s.send_all(
                        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                    )
                    health, _ = await read_response(s)
        except (OSError, EOFError, trio.TooSlowError):
            health = "no answer"
        return {
            "block(60) x 320 dropped at 0.3 s": f"{dict(statuses)} in {spent:.1f} s",
            "then a sync call": f"{sync[0]} after {sync[1]:.2f} s",
            "then an async call": f"{echo[0]} after {echo[1]:.2f} s",
            "/healthz": health,
        }
    finally:
        peer.stop()


async def sigint_once(name: str) -> tuple[float | None, int | None, bool]:
    peer = Peer(name)
    try:
        await peer.ready()

        async def client(i: int) -> None:
            while peer.process.poll() is None:
                await one_call(peer, "echo", {"text": str(i)}, within=2)

        async with trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(client, i)
            await trio.sleep(1)
            peer.process.send_signal(signal.SIGINT)
            sent = time.monotonic()
            with trio.move_on_after(10):
                while peer.process.poll() is None:  # noqa: ASYNC110 - a child process
                    await trio.sleep(0.02)
            stopped = peer.process.poll() is not None
            took = time.monotonic() - sent if stopped else None
            peer.stop()
            nursery.cancel_scope.cancel()
        return (
            took,
            peer.process.returncode if stopped else None,
            "Traceback" in peer.log(),
        )
    finally:
        peer.stop()


async def sigint(name: str) -> dict[str, Any]:
    tries = [await sigint_once(name) for _ in range(5)]
    stopped = [t for t, _, _ in tries if t is not None]
    return {
        "stopped within 10 s": f"{len(stopped)} of 5"
        + (f" (slowest {max(stopped):.2f} s)" if stopped else ""),
        "exit statuses": Counter(code for _, code, _ in tries),
        "tracebacks": sum(trace for _, _, trace in tries),
    }


async def bodies(name: str) -> dict[str, Any]:
    peer = Peer(name)
    try:
        await peer.ready()
        before, peak, statuses = peer.rss_mib(), 0.0, Counter[Any]()
        text = "x" * 4_000_000

        async def big(i: int) -> None:
            status, _ = await one_call(peer, "echo", {"text": text}, within=60)
            statuses[status] += 1

        async def sample() -> None:
            nonlocal peak
            while True:
                peak = max(peak, peer.rss_mib())
                await trio.sleep(0.1)

        async with trio.open_nursery() as outer:
            outer.start_soon(sample)
            async with trio.open_nursery() as nursery:
                for i in range(100):
                    nursery.start_soon(big, i)
            await trio.sleep(2)
            outer.cancel_scope.cancel()
        after = peer.rss_mib()
        await one_call(peer, "trim", {}, within=30)
        return {
            "answers": dict(statuses),
            "RSS MiB before / peak / 2 s after / after malloc_trim": f"{before:.0f} / "
            f"{peak:.0f} / {after:.0f} / {peer.rss_mib():.0f}",
        }
    finally:
        peer.stop()


def listen_bytes(peer: str, port: int, n: int) -> bytes:
    """A request for the peer's long-lived stream: trio_mcp's ``subscriptions/listen``
    POST, or ``mcp``'s standalone ``GET /mcp`` SSE stream."""
    if peer != "trio_mcp":
        return (
            f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Accept: text/event-stream\r\n"
            f"MCP-Protocol-Version: {OLD_REVISION}\r\n\r\n"
        ).encode()
    return request_bytes(peer, port, n, "subscriptions/listen", {"notifications": {}})


async def response_status(stream: trio.abc.ReceiveStream) -> int:
    """The status of a response whose body may never end (an SSE stream)."""
    data = b""
    while b"\r\n" not in data:
        chunk = await stream.receive_some()
        if not chunk:
            raise EOFError
        data += chunk
    return int(data.split(b" ", 2)[1])


async def listen_flood(name: str) -> dict[str, Any]:
    peer = Peer(name, nofile=256)
    held: list[trio.SocketStream] = []
    try:
        await peer.ready()
        statuses = Counter[Any]()
        silent = 0
        for n in range(300):
            if silent >= 5:  # the server stopped answering: count the rest so
                statuses["not sent (5 in a row unanswered)"] += 1
                continue
            try:
                with trio.fail_after(2):
                    stream = await trio.open_tcp_stream("127.0.0.1", peer.port)
                    await stream.send_all(listen_bytes(name, peer.port, n))
                    status = await response_status(stream)
            except (OSError, EOFError, trio.BrokenResourceError):
                statuses["connection failed"] += 1
                silent += 1
                continue
            except trio.TooSlowError:
                statuses["no answer in 2 s"] += 1
                silent += 1
                continue
            silent = 0
            statuses[status] += 1
            if status == 200:
                held.append(stream)
            else:
                await stream.aclose()
        call = await one_call(peer, "echo", {"text": "hi"}, within=10)
        return {
            "300 stream requests answered": dict(statuses),
            "streams held open": len(held),
            "then a call on a new connection": f"{call[0]} after {call[1]:.2f} s",
            "'Too many open files' lines": peer.log().count("Too many open files"),
        }
    finally:
        for stream in held:
            await trio.aclose_forcefully(stream)
        peer.stop()


def invented_bytes(peer: str, port: int, n: int) -> bytes:
    """A request with an invented method name, in the peer's revision."""
    return request_bytes(peer, port, n, f"invented/{n:05d}", {})


async def metrics_page(peer: Peer) -> tuple[int, int]:
    """The Prometheus page's size in bytes and its sample lines (0, 0 when none)."""
    try:
        with trio.fail_after(10):
            async with await trio.open_tcp_stream("127.0.0.1", peer.port) as stream:
                await stream.send_all(
                    f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{peer.port}\r\n"
                    "Connection: close\r\n\r\n".encode()
                )
                status, body = await read_response(stream)
    except (OSError, EOFError, trio.TooSlowError):
        return 0, 0
    if status != 200:
        return 0, 0
    lines = body.decode(errors="replace").splitlines()
    return len(body), sum(1 for line in lines if line and not line.startswith("#"))


async def label_flood(name: str) -> dict[str, Any]:
    env = {"ADVERSARIAL_OPTIONS": json.dumps({"metrics_path": "/metrics"})}
    peer = Peer(name, env=env if name == "trio_mcp" else None)
    try:
        await peer.ready()
        await one_call(peer, "echo", {"text": "warm"})
        rss_before, (page_before, series_before) = (
            peer.rss_mib(),
            await metrics_page(peer),
        )
        statuses = Counter[Any]()
        start = time.monotonic()

        async def sender(first: int) -> None:
            stream = None
            for n in range(first, 5000, 10):
                try:
                    if stream is None:
                        stream = await trio.open_tcp_stream("127.0.0.1", peer.port)
                    with trio.fail_after(10):
                        await stream.send_all(invented_bytes(name, peer.port, n))
                        status, _ = await read_response(stream)
                    statuses[status] += 1
                except (OSError, EOFError, trio.BrokenResourceError, trio.TooSlowError):
                    statuses["failed"] += 1
                    if stream is not None:
                        await trio.aclose_forcefully(stream)
                    stream = None
            if stream is not None:
                await stream.aclose()

        async with trio.open_nursery() as nursery:
            for first in range(10):
                nursery.start_soon(sender, first)
        took = time.monotonic() - start
        page_after, series_after = await metrics_page(peer)
        figures = {
            "5,000 invented methods answered": f"{dict(statuses)} in {took:.1f} s",
            "RSS MiB before / after": f"{rss_before:.0f} / {peer.rss_mib():.0f}",
        }
        if page_before:
            figures["/metrics bytes before / after"] = f"{page_before} / {page_after}"
            figures["/metrics series before / after"] = (
                f"{series_before} / {series_after}"
            )
        else:
            figures["/metrics"] = "not served"
        return figures
    finally:
        peer.stop()


ATTACKS: dict[str, Callable[[str], Awaitable[dict[str, Any]]]] = {
    "slowloris": slowloris,
    "slow_body": slow_body,
    "idle_fds": idle_fds,
    "overload": overload,
    "threads": threads,
    "sigint": sigint,
    "bodies": bodies,
    "listen_flood": listen_flood,
    "label_flood": label_flood,
}


async def main(peers: list[str], only: list[str]) -> None:
    for attack in only or list(ATTACKS):
        for peer in peers:
            started = time.monotonic()
            figures = await ATTACKS[attack](peer)
            print(f"{attack} [{peer}] ({time.monotonic() - started:.0f} s)", flush=True)
            for key, value in figures.items():
                print(f"    {key}: {value}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", choices=["trio_mcp", "mcp", "both"], default="both")
    parser.add_argument("--only", nargs="*", choices=list(ATTACKS), default=[])
    args = parser.parse_args()
    peers = ["trio_mcp", "mcp"] if args.peer == "both" else [args.peer]
    print(f"python {sys.version.split()[0]}, pid {os.getpid()}, {time.ctime()}")
    trio.run(main, peers, args.only)
