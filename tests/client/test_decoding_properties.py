"""Whatever a server sends, the client never hangs and raises only the named errors.

Hypothesis draws what a server answers: JSON-RPC messages with the request's id and
without, progress notifications, errors, junk, framed as JSON, as an event stream
(any line ends, comments, other event types), chunked, short, or not HTTP at all;
and, for stdio, lines a child process writes. The client must end every example
within a bound, with a value or an ``McpError``: never another exception, never an
exception group, never a wait past its deadline.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from typing import Any

import attrs
import h11
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trio_mcp import McpError
from trio_mcp.client import Client
from trio_mcp.client._jsonrpc import decode
from trio_mcp.client._sse import SseParser

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: The placeholder a drawn message uses for the id of the request it answers.
ID = "@ID@"
#: The longest an example may take: the client's deadline is 1 s per phase.
BOUND = 15.0

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
content = st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=10)})
    | json_values,
    max_size=2,
)
results = st.one_of(
    st.dictionaries(st.text(max_size=8), json_values, max_size=3),
    st.fixed_dictionaries(
        {"resultType": st.sampled_from(["complete", "input_required", "task", 3])},
        optional={
            "content": content,
            "isError": st.booleans() | json_values,
            "structuredContent": json_values,
            "tools": st.lists(
                st.fixed_dictionaries({"name": st.text(max_size=5)}), max_size=2
            ),
            "nextCursor": st.none() | st.text(max_size=4) | st.integers(),
            "inputRequests": st.dictionaries(
                st.text(max_size=3), json_values, max_size=2
            ),
            "requestState": st.text(max_size=5) | st.integers(),
        },
    ),
    st.just(
        {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "public",
        }
    ),
    st.just(
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        }
    ),
)
ids = st.just(ID) | st.integers() | st.text(max_size=3) | st.none()
messages = st.one_of(
    st.builds(lambda i, r: {"jsonrpc": "2.0", "id": i, "result": r}, ids, results),
    st.builds(
        lambda i, c, m, d: {
            "jsonrpc": "2.0",
            "id": i,
            "error": {"code": c, "message": m, "data": d},
        },
        ids,
        st.integers(-33000, -31000) | json_values,
        st.text(max_size=10) | json_values,
        json_values,
    ),
    st.builds(
        lambda p: {"jsonrpc": "2.0", "method": "notifications/progress", "params": p},
        st.fixed_dictionaries(
            {
                "progressToken": st.text(max_size=3) | st.just("trio-mcp-1"),
                "progress": json_values,
            }
        ),
    ),
    st.builds(
        lambda m, i, p: {"jsonrpc": "2.0", "method": m, "id": i, "params": p},
        st.sampled_from(["ping", "elicitation/create", "roots/list", "x"]),
        ids,
        json_values,
    ),
    json_values,
)


def _encoded(message: object) -> bytes:
    return json.dumps(message).encode()


line_ends = st.sampled_from([b"\n", b"\r\n", b"\r"])


@st.composite
def sse_bodies(draw: st.DrawFn) -> bytes:
    body = b""
    for message in draw(st.lists(messages | st.binary(max_size=20), max_size=4)):
        end = draw(line_ends)
        data = message if isinstance(message, bytes) else _encoded(message)
        prefix = draw(
            st.sampled_from(
                [b"", b": keep-alive" + end, b"event: other" + end, b"id: 3" + end]
            )
        )
        body += prefix + b"data: " + data + end + end
    return body


@attrs.frozen
class Answer:
    """One HTTP response to send: framed once the request's id is put in the body."""

    status: int
    kind: bytes
    body: bytes
    framing: str

    def framed(self, rid: object) -> bytes:
        body = _with_id(self.body, rid)
        # The server below answers one request per connection, and says so.
        head = b"HTTP/1.1 %d X\r\nConnection: close\r\n" % self.status
        if self.kind:
            head += b"Content-Type: " + self.kind + b"\r\n"
        if self.status == 301:
            head += b"Location: http://127.0.0.1:9/x\r\n"
        if self.framing == "hold":  # the head, then nothing: the connection stays
            return head + b"\r\n"
        if self.framing == "length":
            return head + b"Content-Length: %d\r\n\r\n" % len(body) + body
        if self.framing == "short":  # promises more than it sends, then closes
            return head + b"Content-Length: %d\r\n\r\n" % (len(body) + 5) + body
        if self.framing == "chunked":
            parts = [p for p in (body[:7], body[7:]) if p]
            chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts)
            return head + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
        return head + b"\r\n" + body


GOOD_DISCOVER = Answer(
    200,
    b"application/json",
    _encoded(
        {
            "jsonrpc": "2.0",
            "id": ID,
            "result": {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
            },
        }
    ),
    "length",
)

GOOD_RESULT = Answer(
    200,
    b"text/event-stream",
    b"data: "
    + _encoded(
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "trio-mcp-1", "progress": 1},
        }
    )
    + b"\n\ndata: "
    + _encoded(
        {
            "jsonrpc": "2.0",
            "id": ID,
            "result": {"content": [], "tools": [], "resultType": "complete"},
        }
    )
    + b"\n\n",
    "chunked",
)

#: A stream that starts and never ends: the client's deadline must end the call.
HOLD = Answer(200, b"text/event-stream", b"", "hold")

http_responses = st.builds(
    lambda status, kind_body, framing: Answer(
        status, kind_body[0], kind_body[1], framing
    ),
    st.sampled_from([200, 200, 200, 202, 204, 301, 400, 401, 404, 405, 500]),
    st.one_of(
        st.tuples(st.just(b"application/json"), messages.map(_encoded)),
        st.tuples(st.just(b"text/event-stream"), sse_bodies()),
        st.tuples(
            st.sampled_from([b"text/html", b"application/json", b""]),
            st.binary(max_size=40),
        ),
    ),
    st.sampled_from(["length", "length", "chunked", "close", "short"]),
)


raw_answers = (
    st.sampled_from([GOOD_DISCOVER, GOOD_RESULT, HOLD])
    | http_responses
    | st.binary(max_size=60)
)


async def _read_request(stream: trio.SocketStream) -> object:
    """Read one request (h11); return its JSON-RPC id (None if it has none)."""
    connection = h11.Connection(h11.SERVER)
    body = b""
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            data = await stream.receive_some(65536)
            if not data:
                return None
            connection.receive_data(data)
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            try:
                value = json.loads(body)
            except ValueError:
                return None
            return value.get("id") if isinstance(value, dict) else None


def _with_id(answer: bytes, rid: object) -> bytes:
    return answer.replace(b'"' + ID.encode() + b'"', json.dumps(rid).encode())


async def _serve(
    answers: list[Answer | bytes], stream: trio.SocketStream, counter: list[int]
) -> None:
    async with stream:
        try:
            rid = await _read_request(stream)
            answer = answers[min(counter[0], len(answers) - 1)]
            counter[0] += 1
            framed = answer if isinstance(answer, bytes) else answer.framed(rid)
            await stream.send_all(framed)
            if answer is HOLD:
                await trio.sleep_forever()
        except (trio.BrokenResourceError, h11.RemoteProtocolError):
            pass


async def _exercise(target: Any, era: str) -> None:
    """Open a client and make calls; only an McpError may end it early."""
    with trio.fail_after(BOUND):
        try:
            async with Client(target, era=era, timeout=1.0) as client:  # type: ignore[arg-type]
                await client.call_tool("t", {"a": 1})
                await client.list_tools()
        except McpError:
            pass


@SETTINGS
@given(
    answers=st.lists(raw_answers, min_size=1, max_size=4),
    era=st.sampled_from(["auto", "modern", "legacy"]),
)
async def test_an_http_server_sending_anything(
    answers: list[Answer | bytes], era: str
) -> None:
    counter = [0]
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(
                trio.serve_tcp,
                partial(_serve, answers, counter=counter),
                0,
                host="127.0.0.1",
            )
        )
        port = listeners[0].socket.getsockname()[1]
        await _exercise(f"http://127.0.0.1:{port}/mcp", era)
        nursery.cancel_scope.cancel()


#: A stdio child: answers each request line with the next drawn line (the id put in).
CHILD = r"""
import json, sys
answers = json.loads(sys.argv[1])
for n, line in enumerate(sys.stdin):
    try:
        rid = json.loads(line).get("id")
    except Exception:
        rid = None
    if rid is None:
        continue
    out = answers[min(n, len(answers) - 1)].replace('"@ID@"', json.dumps(rid))
    sys.stdout.buffer.write(out.encode("utf-8", "surrogatepass"))
    sys.stdout.flush()
"""

lines = st.one_of(
    messages.map(lambda m: json.dumps(m) + "\n"),
    st.text(max_size=30).map(lambda t: t + "\n"),
    st.text(max_size=30),
    st.just("\n\n"),
)


@settings(SETTINGS, max_examples=25)
@given(answers=st.lists(st.lists(lines, min_size=1, max_size=3).map("".join), min_size=1, max_size=4),
       era=st.sampled_from(["auto", "modern", "legacy"]))  # fmt: skip
async def test_a_stdio_server_writing_anything(answers: list[str], era: str) -> None:
    command = [sys.executable, "-I", "-S", "-c", CHILD, json.dumps(answers)]
    await _exercise(command, era)


@settings(SETTINGS, max_examples=500)
@given(st.binary(max_size=80) | messages.map(_encoded) | json_values.map(_encoded))
def test_decoding_any_bytes_gives_a_message_or_transport(data: bytes) -> None:
    try:
        incoming = decode(data, source="s")
    except McpError.Transport as exc:
        refused: str | None = str(exc)
    else:
        refused = None
        assert incoming.kind in ("response", "notification", "request")
        assert isinstance(incoming.message, dict)

    assert refused is None or refused.startswith("s sent ")


@settings(SETTINGS, max_examples=300)
@given(sse_bodies() | st.binary(max_size=80), st.lists(st.integers(0, 80), max_size=5))
def test_an_event_stream_reads_the_same_in_any_pieces(
    body: bytes, cuts: list[int]
) -> None:
    whole, pieces = SseParser("s", 1 << 20), SseParser("s", 1 << 20)
    points = sorted({c for c in cuts if c <= len(body)})
    try:
        expected = whole.feed(body)
    except McpError.Transport:
        return
    got: list[str] = []
    start = 0
    for point in [*points, len(body)]:
        got += pieces.feed(body[start:point])
        start = point

    assert expected == got


def test_an_event_past_the_limit_is_refused_before_it_is_whole() -> None:
    parser = SseParser("s", 100)
    parser.feed(b"data: " + b"x" * 90 + b"\n")
    with pytest.raises(
        McpError.Transport, match="past the client's limit of 100 bytes"
    ):
        parser.feed(b"data: " + b"x" * 90 + b"\n")
