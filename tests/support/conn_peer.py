"""The server and the raw HTTP/1.x client bytes the connection tests share.

Used by the HTTP connection tests (tests/http), the interrupt tests
(tests/transports) and the thread budget (tests/declare).
"""

from __future__ import annotations

import base64
import json
import threading

import trio

from support import META, VERSION
from trio_mcp import Server, tool


@tool
async def echo(text: str) -> str:
    """
    Return the text with a prefix.

    Args:
        text: What to return.
    """
    return f"echo {text}"


@tool
def block(seconds: float) -> str:
    """
    Block this worker thread (a synchronous handler that ignores cancellation).

    Args:
        seconds: How long to block.
    """
    threading.Event().wait(seconds)
    return "done"


@tool
def double(n: int) -> int:
    """
    Double a number, synchronously.

    Args:
        n: The number.
    """
    return 2 * n


#: ``stuck`` blocks until a test sets this (and counts each entry in ``ENTERED``).
RELEASE = threading.Event()
ENTERED = threading.Semaphore(0)


@tool
def stuck() -> str:
    """Block this worker thread until the test releases every stuck handler."""
    ENTERED.release()
    RELEASE.wait(timeout=60)
    return "released"


def make_server() -> Server:
    return Server("conn", "1", tools=[echo, block, double, stuck])


def call_json(n: int, name: str = "echo", arguments: object = None) -> bytes:
    """A ``tools/call`` request as JSON bytes."""
    params = {
        "_meta": META,
        "name": name,
        "arguments": {"text": str(n)} if arguments is None else arguments,
    }
    message = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


def call_headers(port: int, name: str = "echo") -> list[tuple[str, str]]:
    """The headers a ``tools/call`` of ``name`` needs, without the body's length."""
    encoded = base64.b64encode(name.encode()).decode()
    return [
        ("Host", f"127.0.0.1:{port}"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Protocol-Version", VERSION),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", f"=?base64?{encoded}?="),
    ]


def call_bytes(
    port: int,
    n: int,
    *,
    close: bool = False,
    version: bytes = b"HTTP/1.1",
    name: str = "echo",
    arguments: object = None,
) -> bytes:
    """A whole raw HTTP request carrying a ``tools/call``."""
    body = call_json(n, name, arguments)
    headers = [*call_headers(port, name), ("Content-Length", str(len(body)))]
    if close:
        headers.append(("Connection", "close"))
    head = b"".join(f"{k}: {v}\r\n".encode() for k, v in headers)
    return b"POST /mcp " + version + b"\r\n" + head + b"\r\n" + body


async def read_reply(stream: trio.abc.ReceiveStream) -> tuple[int, bytes]:
    """Read one HTTP/1.x response with a Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some()
        if not chunk:
            raise EOFError(f"the server closed the connection after {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.lower().split(": ", 1) for line in lines[1:])
    length = int(fields["content-length"])
    while len(body) < length:
        body += await stream.receive_some()
    return int(lines[0].split()[1]), body


async def read_until_closed(stream: trio.abc.ReceiveStream) -> None:
    """Read and drop what ``stream`` brings until the server closes (end of file)
    or resets it."""
    try:
        while await stream.receive_some():
            pass
    except trio.BrokenResourceError:
        pass
