"""Validation of what a dual-era server sends a handshake-era client, by revision.

The official JSON Schemas of revisions 2025-11-25, 2025-06-18 and 2025-03-26 ship in
``tests/legacy/schemas`` (from ``modelcontextprotocol/modelcontextprotocol``,
``schema/<revision>/schema.json``; provenance in that folder's README). Each message
is checked as the envelope it is (response, error, notification, request) and then
as the result, notification or request its method names.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema

__all__ = ["REVISIONS", "LegacySchemaViolation", "check_legacy"]

SCHEMAS = Path(__file__).resolve().parents[1] / "legacy" / "schemas"
REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26")

_RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
}


class LegacySchemaViolation(AssertionError):
    """A message does not validate against its revision's official schema."""


@functools.cache
def _root(revision: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (SCHEMAS / f"schema-{revision}.json").read_text(encoding="utf-8")
    )
    return loaded


@functools.cache
def _validator(revision: str, definition: str) -> Any:
    root = _root(revision)
    if "$defs" in root:
        schema = {"$defs": root["$defs"], "allOf": [{"$ref": f"#/$defs/{definition}"}]}
        return jsonschema.Draft202012Validator(schema)
    schema = {
        "definitions": root["definitions"],
        "allOf": [{"$ref": f"#/definitions/{definition}"}],
    }
    return jsonschema.Draft7Validator(schema)


def _defs(revision: str) -> dict[str, Any]:
    root = _root(revision)
    defs: dict[str, Any] = root.get("$defs") or root["definitions"]
    return defs


def _errors(revision: str, definition: str, value: object) -> list[str]:
    return [
        f"{definition} {'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in _validator(revision, definition).iter_errors(value)
    ]


def _envelope(revision: str, *names: str) -> str:
    defs = _defs(revision)
    return next(name for name in names if name in defs)


def check_legacy(
    message: Mapping[str, Any], revision: str, method: str | None = None
) -> None:
    """Validate one message the server sent; ``method`` is the request's, for replies.

    Raises:
        LegacySchemaViolation: naming every schema error found.
    """
    if "method" in message and "id" in message:
        problems = _errors(revision, "JSONRPCRequest", message)
        problems += _errors(revision, "ServerRequest", message)
    elif "method" in message:
        problems = _errors(revision, "JSONRPCNotification", message)
        problems += _errors(revision, "ServerNotification", message)
    elif "error" in message:
        name = _envelope(revision, "JSONRPCErrorResponse", "JSONRPCError")
        problems = _errors(revision, name, message)
    else:
        name = _envelope(revision, "JSONRPCResultResponse", "JSONRPCResponse")
        problems = _errors(revision, name, message)
        if method in _RESULTS:
            problems += _errors(revision, _RESULTS[method], message.get("result"))
        else:
            problems.append(f"a result for an unknown request method {method!r}")
    if problems:
        raise LegacySchemaViolation(
            f"message does not match the {revision} schema: "
            f"{json.dumps(message)[:600]}\n" + "\n".join(problems)
        )
