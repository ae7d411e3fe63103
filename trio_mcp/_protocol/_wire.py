"""Names, keys and codes of MCP revision 2026-07-28, spelled once.

Plain constants and tiny builders of wire dicts; no I/O and no trio here.
"""

from __future__ import annotations

from typing import Final

from .._json import JsonObject, JsonValue

PROTOCOL_VERSION: Final = "2026-07-28"
SUPPORTED_VERSIONS: Final = (PROTOCOL_VERSION,)
JSONRPC: Final = "2.0"

# _meta keys (MCP revision 2026-07-28, _meta keys)
META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
META_PROGRESS_TOKEN: Final = "progressToken"
META_TRACEPARENT: Final = "traceparent"
META_TRACESTATE: Final = "tracestate"
#: Our own key (reverse-DNS prefix, not reserved) for structured error detail.
META_ERROR: Final = "dev.trio-mcp/error"

# JSON-RPC and MCP error codes (§2.1)
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
HEADER_MISMATCH: Final = -32020
MISSING_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
#: Server-defined (-32000 to -32099, of which the revision leaves -32000 to -32019 to
#: implementations): the call cannot start now, because no call slot, waiting place,
#: thread or rate-limit token is free (HTTP 503 or 429); the client may retry.
SERVER_BUSY: Final = -32000
#: Application codes (outside JSON-RPC's reserved range), named after the HTTP
#: status they go with: no principal where one is required (401), and a call the
#: caller may not make (403: a missing capability, a token whose scopes fall short).
UNAUTHENTICATED: Final = -31401
REFUSED: Final = -31403

#: Methods of earlier revisions that a modern-only server answers with -32601.
#: ``tasks/get`` and ``tasks/cancel`` live on in the tasks extension (SEP-2663),
#: served when a tool may run as a task; ``tasks/list`` and ``tasks/result`` do not.
REMOVED_METHODS: Final = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/list",
        "tasks/result",
    }
)

# The tasks extension (SEP-2663)
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
UI_EXTENSION: Final = "io.modelcontextprotocol/ui"  # MCP Apps (SEP-1865)
TASKS_GET: Final = "tasks/get"
TASKS_UPDATE: Final = "tasks/update"
TASKS_CANCEL: Final = "tasks/cancel"
TASKS_NOTIFICATION: Final = "notifications/tasks"

LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_LEVEL_RANK: Final = {name: rank for rank, name in enumerate(LOG_LEVELS)}


def result_message(request_id: str | int, result: JsonObject) -> JsonObject:
    """Return the JSON-RPC response carrying ``result``."""
    return {"jsonrpc": JSONRPC, "id": request_id, "result": result}


def error_message(
    request_id: str | int | None, code: int, message: str, data: JsonValue = None
) -> JsonObject:
    """Return a JSON-RPC error response; ``id`` is omitted when it could not be read."""
    error: JsonObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    msg: JsonObject = {"jsonrpc": JSONRPC}
    if request_id is not None:
        msg["id"] = request_id
    msg["error"] = error
    return msg


def notification_message(method: str, params: JsonObject) -> JsonObject:
    """Return a JSON-RPC notification."""
    return {"jsonrpc": JSONRPC, "method": method, "params": params}


def busy_message(reason: str) -> str:
    """The message of every ``SERVER_BUSY`` answer, whatever is full (``reason``)."""
    return f"server busy: {reason}; retry later"
