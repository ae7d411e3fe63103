"""What a server sends, read strictly: one JSON-RPC message, or ``McpError.Transport``.

The client trusts nothing it receives. A message is bounded in size
(``MAX_MESSAGE_BYTES``, 4 MiB, as the server's own default) and in nesting depth
before it is decoded, and is then one of three shapes: a response (``id`` and exactly
one of ``result``, an object, or ``error``, an object with an integer ``code`` and a
string ``message``), a notification (``method``, no ``id``) or a request (``method``
and ``id``). Anything else raises ``Transport``, naming what was wrong and never
echoing more than a short prefix of what arrived.
"""

from __future__ import annotations

from typing import Final

import attrs

from .._errors import Remote, Transport
from .._json import JsonObject, JsonValue, could_exceed, depth_exceeds, dumps, loads

__all__ = [
    "MAX_DEPTH",
    "MAX_MESSAGE_BYTES",
    "Incoming",
    "decode",
    "encode",
    "notification",
    "raise_error",
    "request",
    "response",
]

#: The largest message the client reads (UTF-8 bytes); beyond it, ``Transport``.
MAX_MESSAGE_BYTES: Final = 4 * 1024 * 1024
#: The deepest nesting of arrays and objects the client decodes.
MAX_DEPTH: Final = 128

RequestId = str | int


@attrs.frozen
class Incoming:
    """One decoded message: ``kind`` is ``"response"``, ``"notification"`` or
    ``"request"``; ``message`` is the whole object."""

    kind: str
    message: JsonObject

    @property
    def id(self) -> RequestId | None:
        """The message's id (a response's or a request's), else None."""
        value = self.message.get("id")
        return value if isinstance(value, str | int) else None

    @property
    def method(self) -> str:
        """A notification's or request's method ("" for a response)."""
        value = self.message.get("method")
        return value if isinstance(value, str) else ""

    @property
    def params(self) -> JsonObject:
        """A notification's or request's params ({} when absent or not an object)."""
        value = self.message.get("params")
        return value if isinstance(value, dict) else {}


def _preview(text: str | bytes) -> str:
    shown = text[:60]
    return repr(shown) + ("..." if len(text) > 60 else "")


def decode(text: str | bytes, *, source: str) -> Incoming:
    """Decode one message from ``source`` (a redacted target, for the error).

    Raises:
        McpError.Transport: past ``MAX_MESSAGE_BYTES``, too deep, not JSON, or not
            one JSON-RPC 2.0 response, notification or request.
    """
    size = (
        len(text.encode("utf-8", "surrogatepass"))
        if isinstance(text, str)
        else len(text)
    )
    if size > MAX_MESSAGE_BYTES:
        raise Transport(
            f"{source} sent a message of {size} bytes, past the client's limit of "
            f"{MAX_MESSAGE_BYTES} bytes"
        )
    try:
        value = loads(text)
    except (ValueError, RecursionError) as exc:
        raise Transport(
            f"{source} sent something that is not JSON: {_preview(text)}"
        ) from exc
    if could_exceed(text, MAX_DEPTH) and depth_exceeds(value, MAX_DEPTH):
        raise Transport(f"{source} sent a message nested deeper than {MAX_DEPTH}")
    return classify(value, source=source)


def classify(value: JsonValue, *, source: str) -> Incoming:
    """The shape of one decoded message; ``Transport`` if it has none of the three."""
    why = _not_jsonrpc(value)
    if why is not None:
        raise Transport(f"{source} sent a message that is not JSON-RPC: {why}")
    assert isinstance(value, dict)
    if "method" in value:
        return Incoming("request" if "id" in value else "notification", value)
    return Incoming("response", value)


def _not_jsonrpc(value: JsonValue) -> str | None:
    """Why ``value`` is not a JSON-RPC 2.0 message, or None if it is one."""
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__} where an object belongs"
    if value.get("jsonrpc") != "2.0":
        return 'no "jsonrpc": "2.0"'
    rid = value.get("id")
    if "id" in value and (
        isinstance(rid, bool) or not isinstance(rid, str | int | None)
    ):
        return "an id that is neither a string nor an integer"
    if "method" in value:
        if not isinstance(value["method"], str):
            return "a method that is not a string"
        if "params" in value and not isinstance(value["params"], dict):
            return "params that are not an object"
        return None
    return _not_response(value)


def _not_response(value: JsonObject) -> str | None:
    if "id" not in value:
        return "neither a method nor an id"
    has_result, has_error = "result" in value, "error" in value
    if has_result == has_error:
        return "a response needs exactly one of result and error"
    if has_result:
        return (
            None
            if isinstance(value["result"], dict)
            else "a result that is not an object"
        )
    error = value["error"]
    if not isinstance(error, dict):
        return "an error that is not an object"
    code = error.get("code")
    if isinstance(code, bool) or not isinstance(code, int):
        return "an error without an integer code"
    if not isinstance(error.get("message"), str):
        return "an error without a string message"
    return None


def raise_error(reply: JsonObject, method: str) -> JsonObject:
    """``reply``'s result; its error raised as ``McpError.Remote``.

    ``reply`` has passed ``classify`` as a response, so its shape is known.
    """
    error = reply.get("error")
    if isinstance(error, dict):
        code, message = error["code"], error["message"]
        assert isinstance(code, int)
        assert isinstance(message, str)
        raise Remote(code, message, error.get("data"), method=method)
    result = reply["result"]
    assert isinstance(result, dict)
    return result


def request(rid: RequestId, method: str, params: JsonObject) -> JsonObject:
    """A JSON-RPC request object."""
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def notification(method: str, params: JsonObject) -> JsonObject:
    """A JSON-RPC notification object."""
    return {"jsonrpc": "2.0", "method": method, "params": params}


def response(
    rid: RequestId, result: JsonObject | None = None, *, error: JsonObject | None = None
) -> JsonObject:
    """A JSON-RPC response object (the answer to a server's own request)."""
    if error is not None:
        return {"jsonrpc": "2.0", "id": rid, "error": error}
    return {"jsonrpc": "2.0", "id": rid, "result": result or {}}


def encode(message: JsonObject) -> str:
    """The compact one-line JSON text of ``message``."""
    return dumps(message)
