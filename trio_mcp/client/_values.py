"""What the client hands back: frozen values read from the server's results.

Each reader checks the members it promises (``content`` is a list of objects, ...)
and raises ``McpError.Transport`` for a result that breaks its revision's shape;
members it does not name are left in the raw result, which a proxy relays
(``Client.request``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from .._errors import Transport
from .._json import JsonObject, JsonValue

__all__ = [
    "Completion",
    "InputRequest",
    "PromptResult",
    "ReadResult",
    "ServerInfo",
    "ToolResult",
]

_META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def _objects(result: JsonObject, key: str, method: str) -> list[JsonObject]:
    value = result.get(key)
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise Transport(f"the {method} result has no list of objects under {key!r}")
    return [item for item in value if isinstance(item, dict)]


def _object(value: JsonValue, what: str) -> JsonObject:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Transport(f"{what} is not an object")
    return value


def _text(value: JsonValue, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise Transport(f"{what} is not a string")


@attrs.frozen
class ServerInfo:
    """What the server said of itself (``server/discover`` or ``initialize``).

    ``revision`` is the protocol version in use: ``"2026-07-28"``, or the revision
    of a handshake-era session (``"2025-11-25"``, ...).
    """

    name: str
    version: str
    revision: str
    capabilities: JsonObject
    instructions: str | None = None

    @property
    def modern(self) -> bool:
        """Whether the client speaks 2026-07-28 (stateless) to this server."""
        return self.revision >= "2026-07-28"

    @classmethod
    def of(
        cls, result: JsonObject, revision: str, implementation: JsonValue
    ) -> ServerInfo:
        info = _object(implementation, "serverInfo")
        name, version = info.get("name"), info.get("version")
        return cls(
            name=name if isinstance(name, str) else "",
            version=version if isinstance(version, str) else "",
            revision=revision,
            capabilities=_object(result.get("capabilities"), "capabilities"),
            instructions=_text(result.get("instructions"), "instructions"),
        )


@attrs.frozen
class ToolResult:
    """A ``tools/call`` result: ``content`` blocks, ``structured`` (the
    ``structuredContent``, or None), ``is_error`` (a tool's own failure is a
    result, not an exception) and ``meta`` (the result's ``_meta``)."""

    content: list[JsonObject]
    structured: JsonValue
    is_error: bool
    meta: JsonObject

    @property
    def text(self) -> str:
        """The text blocks joined with newlines."""
        return "\n".join(
            text
            for block in self.content
            if block.get("type") == "text"
            and isinstance(text := block.get("text"), str)
        )

    @classmethod
    def of(cls, result: JsonObject) -> ToolResult:
        is_error = result.get("isError", False)
        if not isinstance(is_error, bool):
            raise Transport("the tools/call result's isError is not a boolean")
        return cls(
            content=_objects(result, "content", "tools/call"),
            structured=result.get("structuredContent"),
            is_error=is_error,
            meta=_object(result.get("_meta"), "the result's _meta"),
        )


@attrs.frozen
class ReadResult:
    """A ``resources/read`` result: its ``contents`` (each with ``uri`` and ``text``
    or a base64 ``blob``) and ``meta``."""

    contents: list[JsonObject]
    meta: JsonObject

    @property
    def text(self) -> str:
        """The text contents joined with newlines."""
        return "\n".join(
            t for c in self.contents if isinstance(t := c.get("text"), str)
        )

    @classmethod
    def of(cls, result: JsonObject) -> ReadResult:
        return cls(
            contents=_objects(result, "contents", "resources/read"),
            meta=_object(result.get("_meta"), "the result's _meta"),
        )


@attrs.frozen
class PromptResult:
    """A ``prompts/get`` result: ``description`` (or None), ``messages`` (each with
    ``role`` and ``content``) and ``meta``."""

    description: str | None
    messages: list[JsonObject]
    meta: JsonObject

    @classmethod
    def of(cls, result: JsonObject) -> PromptResult:
        return cls(
            description=_text(result.get("description"), "the prompt's description"),
            messages=_objects(result, "messages", "prompts/get"),
            meta=_object(result.get("_meta"), "the result's _meta"),
        )


@attrs.frozen
class Completion:
    """A ``completion/complete`` result: ``values``, ``total`` and ``has_more``."""

    values: list[str]
    total: int | None = None
    has_more: bool = False

    @classmethod
    def of(cls, result: JsonObject) -> Completion:
        completion = _object(result.get("completion"), "the completion")
        values = completion.get("values")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise Transport("the completion has no list of strings under 'values'")
        total, more = completion.get("total"), completion.get("hasMore", False)
        if total is not None and (
            isinstance(total, bool) or not isinstance(total, int)
        ):
            raise Transport("the completion's total is not an integer")
        if not isinstance(more, bool):
            raise Transport("the completion's hasMore is not a boolean")
        return cls([v for v in values if isinstance(v, str)], total, more)


@attrs.frozen
class InputRequest:
    """A request of the server for input, as ``on_input`` receives it.

    ``method`` is ``"elicitation/create"``, ``"sampling/createMessage"`` or
    ``"roots/list"``; ``params`` its parameters. ``on_input`` returns the answer
    object (an ``ElicitResult``, ``CreateMessageResult`` or ``ListRootsResult`` as
    JSON), whichever era the server speaks: a 2026-07-28 ``inputRequests`` entry or
    a handshake-era server-to-client request.
    """

    method: str
    params: JsonObject

    @classmethod
    def of(cls, value: Mapping[str, JsonValue]) -> InputRequest:
        method = value.get("method")
        if not isinstance(method, str):
            raise Transport("an input request without a method")
        return cls(method, _object(value.get("params"), "an input request's params"))
