"""Modern results in a handshake-era revision's shapes. Pure functions, no I/O.

What 2026-07-28 added is dropped (``resultType``, ``ttlMs``, ``cacheScope``, the
``serverInfo`` stamp in ``_meta``); what it loosened is tightened again where the old
schema forbids it:

- ``outputSchema`` and ``structuredContent`` must be objects in 2025-06-18 and
  2025-11-25. A tool whose output schema is not ``"type": "object"`` has its schema
  wrapped as ``{"type": "object", "properties": {"result": <schema>}}`` and its value
  as ``{"result": <value>}`` (the Python SDK's convention); 2025-03-26 has neither,
  so both are left out. The text block is never touched.
- An input schema's property must be an object schema: ``true`` becomes ``{}``,
  ``false`` becomes ``{"not": {}}`` (the same meaning).
- 2025-03-26 has no ``resource_link`` block: one becomes a text block naming the link.
- A resource not found is -32002 with ``data.uri`` (2026-07-28 made it -32602): a
  ``resources/read`` error -32602 whose data is exactly ``{"uri": ...}``, which the
  core sends for a URI no declaration serves, a handler's ``ResourceNotFound``, and a
  template variable that climbs out (a resource that cannot exist either).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from .._json import JsonObject, JsonValue, encode_message
from .._protocol import _wire as wire
from ._session import Session

if TYPE_CHECKING:
    from ._rounds import Carried

__all__ = [
    "RESOURCE_NOT_FOUND",
    "initialize_result",
    "legacy_error",
    "legacy_reply",
    "legacy_result",
    "round_of",
    "wraps",
]

#: The resource-not-found code of the handshake-era revisions.
RESOURCE_NOT_FOUND: Final = -32002

#: The methods whose reply may be ``input_required`` (a round).
ROUND_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: Result keys of 2026-07-28 that no earlier revision has.
_MODERN_ONLY: Final = ("resultType", "ttlMs", "cacheScope")

OutputSchemaOf = Callable[[str], JsonValue]
"""The output schema a tool is served with (None: none, or no such tool)."""


def wraps(schema: JsonValue) -> bool:
    """Whether a tool with output schema ``schema`` is wrapped for a legacy client."""
    return isinstance(schema, dict) and schema.get("type") != "object"


def wrapped_schema(schema: JsonObject) -> JsonObject:
    """``schema`` as the ``result`` property of an object schema.

    ``$defs`` move to the new root, so ``#/$defs/...`` references still resolve.
    """
    inner = {k: v for k, v in schema.items() if k not in ("$defs", "$schema")}
    out: JsonObject = {
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"],
    }
    if "$defs" in schema:
        out["$defs"] = schema["$defs"]
    return out


def _strip(result: JsonObject) -> JsonObject:
    """``result`` without what only 2026-07-28 has."""
    out = {k: v for k, v in result.items() if k not in _MODERN_ONLY}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        rest = {k: v for k, v in meta.items() if k != wire.META_SERVER_INFO}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out


def _tool(entry: JsonValue, session: Session) -> JsonValue:
    if not isinstance(entry, dict):
        return entry
    tool = dict(entry)
    schema = tool.get("outputSchema")
    if not session.has("structured"):
        tool.pop("outputSchema", None)
    elif isinstance(schema, dict) and wraps(schema):
        tool["outputSchema"] = wrapped_schema(schema)
    inputs = tool.get("inputSchema")
    if isinstance(inputs, dict) and isinstance(inputs.get("properties"), dict):
        properties = inputs["properties"]
        assert isinstance(properties, dict)
        if any(isinstance(p, bool) for p in properties.values()):
            tool["inputSchema"] = {
                **inputs,
                "properties": {k: _object_schema(p) for k, p in properties.items()},
            }
    return tool


def _object_schema(schema: JsonValue) -> JsonValue:
    if schema is True:
        return {}
    if schema is False:
        return {"not": {}}
    return schema


def _block(block: JsonValue, session: Session) -> JsonValue:
    """One content block in the session's revision."""
    if (
        isinstance(block, dict)
        and block.get("type") == "resource_link"
        and not session.has("resource_link")
    ):
        name, uri = block.get("name"), block.get("uri")
        return {"type": "text", "text": f"{name}: {uri}" if name else f"{uri}"}
    return block


def _blocks(blocks: JsonValue, session: Session) -> JsonValue:
    if not isinstance(blocks, list) or session.has("resource_link"):
        return blocks
    return [_block(b, session) for b in blocks]


def _call(
    result: JsonObject, name: JsonValue, session: Session, output_schema: OutputSchemaOf
) -> JsonObject:
    """A ``CallToolResult``: structured content wrapped or dropped, blocks shaped."""
    if "content" in result:
        result["content"] = _blocks(result["content"], session)
    if "structuredContent" not in result:
        return result
    if not session.has("structured"):
        del result["structuredContent"]
        return result
    value = result["structuredContent"]
    schema = output_schema(name) if isinstance(name, str) else None
    if wraps(schema) or not isinstance(value, dict):
        result["structuredContent"] = {"result": value}
    return result


def _prompt(result: JsonObject, session: Session) -> JsonObject:
    messages = result.get("messages")
    if isinstance(messages, list) and not session.has("resource_link"):
        result["messages"] = [
            {**m, "content": _block(m.get("content"), session)}
            if isinstance(m, dict)
            else m
            for m in messages
        ]
    return result


def legacy_result(
    method: str,
    params: JsonObject,
    result: JsonObject,
    session: Session,
    output_schema: OutputSchemaOf,
) -> JsonObject:
    """The result of a legacy ``method`` request, from the modern ``result``.

    ``params`` are the request's (the tool's name for ``tools/call``).
    """
    out = _strip(result)
    if method == "tools/list" and isinstance(out.get("tools"), list):
        tools = out["tools"]
        assert isinstance(tools, list)
        out["tools"] = [_tool(t, session) for t in tools]
    elif method == "tools/call":
        out = _call(out, params.get("name"), session, output_schema)
    elif method == "prompts/get":
        out = _prompt(out, session)
    return out


def legacy_error(method: str, error: JsonObject) -> JsonObject:
    """A JSON-RPC ``error`` object as the handshake-era revisions spell it."""
    data = error.get("data")
    if (
        method == "resources/read"
        and error.get("code") == wire.INVALID_PARAMS
        and isinstance(data, dict)
        and set(data) == {"uri"}
    ):
        return {
            "code": RESOURCE_NOT_FOUND,
            "message": "Resource not found",
            "data": {"uri": data.get("uri")},
        }
    return error


def initialize_result(discovered: JsonObject, session: Session) -> JsonObject:
    """The ``InitializeResult`` for ``session``, from a ``server/discover`` result.

    The capabilities are the catalog's (what discovery advertises). Extensions go
    in ``capabilities.extensions``, where handshake-era hosts negotiate them
    (SEP-1724; ``ServerCapabilities`` takes keys beyond its own): MCP Apps' views
    and skills, whose requests are plain requests of the session. The tasks
    extension is not offered: its results (``resultType: "task"``, polling with
    ``requestState``) have no shape in these revisions, and 2025-11-25's own in-core
    tasks are a different protocol this server does not serve.
    """
    caps = discovered.get("capabilities")
    capabilities: JsonObject = {}
    if isinstance(caps, dict):
        capabilities = {k: v for k, v in caps.items() if k != "extensions"}
        extensions = caps.get("extensions")
        if isinstance(extensions, dict):
            offered = {k: v for k, v in extensions.items() if k != wire.TASKS_EXTENSION}
            if offered:
                capabilities["extensions"] = offered
    meta = discovered.get("_meta")
    info = meta.get(wire.META_SERVER_INFO) if isinstance(meta, dict) else None
    result: JsonObject = {
        "protocolVersion": session.revision,
        "capabilities": capabilities,
        "serverInfo": info if isinstance(info, dict) else {},
    }
    instructions = discovered.get("instructions")
    if isinstance(instructions, str):
        result["instructions"] = instructions
    return result


def round_of(method: str, result: JsonObject | None) -> JsonObject | None:
    """``result`` if it is the ``input_required`` result of a round method."""
    if (
        result is not None
        and method in ROUND_METHODS
        and result.get("resultType") == "input_required"
    ):
        return result
    return None


def legacy_reply(
    call: Carried,
    result: JsonObject | None,
    error: JsonValue,
    output_schema: OutputSchemaOf,
) -> bytes:
    """The response a handshake-era client gets for the core's final reply to
    ``call`` (its ``result`` or its ``error``), encoded: the one encoding it gets."""
    if result is not None:
        shaped = legacy_result(
            call.method, call.params, result, call.session, output_schema
        )
        return encode_message(wire.result_message(call.client_id, shaped))
    if isinstance(error, dict):
        error = legacy_error(call.method, error)
    return encode_message(
        {"jsonrpc": wire.JSONRPC, "id": call.client_id, "error": error}
    )
