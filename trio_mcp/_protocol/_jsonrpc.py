"""Bytes to JSON-RPC messages: a ``Request``, a ``Notification`` or a ``Fault``.

Size is the transport's business (it must not buffer an oversized message); depth and
shape are checked here. No I/O and no trio: transports call ``parse_message``.
"""

from __future__ import annotations

import attrs

from .._json import (
    DuplicateKey,
    JsonObject,
    JsonValue,
    could_exceed,
    depth_exceeds,
    loads,
)
from . import _wire as wire

__all__ = [
    "Fault",
    "Notification",
    "Request",
    "busy_fault",
    "oversized_fault",
    "parse_message",
    "parse_value",
]


@attrs.frozen
class Fault:
    """A JSON-RPC error to send instead of a result.

    ``request_id`` is ``None`` when the id could not be read; ``http_status`` is what
    Streamable HTTP answers with.
    """

    code: int
    message: str
    data: JsonValue = None
    request_id: str | int | None = None
    http_status: int = 200

    def to_message(self) -> JsonObject:
        """Return the JSON-RPC error response."""
        return wire.error_message(self.request_id, self.code, self.message, self.data)


@attrs.frozen
class Request:
    """A request: it has an id and expects exactly one response."""

    id: str | int
    method: str
    params: JsonValue


@attrs.frozen
class Notification:
    """A message without an id; nothing is ever sent back for it."""

    method: str
    params: JsonValue


def _is_request_id(value: JsonValue) -> bool:
    return isinstance(value, str) or (
        isinstance(value, int) and not isinstance(value, bool)
    )


def parse_message(
    data: bytes | str, *, max_depth: int = 128
) -> Request | Notification | Fault:
    """Parse one message.

    What ``parse_value`` refuses is -32700; a batch, a response or anything that
    is not a request object is -32600.
    """
    value = parse_value(data, max_depth=max_depth)
    if isinstance(value, Fault):
        return value
    return classify(value)


def parse_value(data: bytes | str, *, max_depth: int = 128) -> JsonValue | Fault:
    """The JSON value of one message, or the -32700 fault (HTTP 400) refusing it.

    Every transport's bytes are read here (``parse_message``, and the handshake-era
    HTTP edge, which also reads responses): malformed JSON, invalid UTF-8, a member
    name twice in one object (named: RFC 8259 §4 lets parsers differ on which value
    wins, so a gateway could read another request from the same bytes) and nesting
    deeper than ``max_depth``.
    """
    try:
        if isinstance(data, bytes):
            data = data.decode("utf-8")
        value = loads(data)
    except DuplicateKey as exc:
        return _unparsed(f"{exc}; send each member name once")
    except (ValueError, RecursionError):
        return _unparsed("the message is not valid JSON")
    if could_exceed(data, max_depth) and depth_exceeds(value, max_depth):
        return _unparsed(f"the message nests deeper than {max_depth} levels")
    return value


def _unparsed(why: str) -> Fault:
    return Fault(wire.PARSE_ERROR, f"parse error: {why}", http_status=400)


def classify(value: JsonValue) -> Request | Notification | Fault:
    """Sort a decoded JSON value into a request, a notification or an invalid message."""
    if isinstance(value, list):
        return _invalid("batches are not supported; send one message")
    if not isinstance(value, dict):
        return _invalid("a message must be a JSON object")
    raw_id = value.get("id")
    request_id = raw_id if raw_id is not None and _is_request_id(raw_id) else None
    assert request_id is None or isinstance(request_id, str | int)
    method = value.get("method")
    if value.get("jsonrpc") != wire.JSONRPC:
        return _invalid('"jsonrpc" must be "2.0"', request_id)
    if not isinstance(method, str):
        return _invalid(
            '"method" must be a string; clients send only requests and notifications',
            request_id,
        )
    params = value.get("params")
    if "id" not in value:
        return Notification(method, params)
    if request_id is None:
        return _invalid('"id" must be a string or an integer')
    return Request(request_id, method, params)


def _invalid(reason: str, request_id: str | int | None = None) -> Fault:
    """-32600 (HTTP 400) for a message that is JSON but not a request we take."""
    return Fault(
        wire.INVALID_REQUEST,
        f"invalid request: {reason}",
        request_id=request_id,
        http_status=400,
    )


def oversized_fault(limit: int) -> Fault:
    """Return the -32600 reply for a message too large to read (its id is unknown)."""
    return Fault(
        wire.INVALID_REQUEST,
        f"invalid request: the message exceeds the {limit}-byte limit and was skipped",
        http_status=413,
    )


def busy_fault(request: Request, what: str) -> Fault:
    """The immediate answer to a request beyond the limits (-32000, HTTP 503)."""
    return Fault(
        wire.SERVER_BUSY,
        wire.busy_message(what),
        {"retryable": True},
        request.id,
        503,
    )
