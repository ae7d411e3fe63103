"""Validation of every message a server emits against the revision's official schema.

The schema ships with the package (``schema-2026-07-28.json``, from the
specification's tag ``2026-07-28``); jsonschema is a test dependency, imported here
only when a check runs. The tasks extension (SEP-2663) is not in that schema: its
results are checked against the shapes below, written from the extension's text
(``CreateTaskResult``, ``DetailedTask``, the empty acknowledgements). Nor is the
skills extension (SEP-2640): its three results are checked against the shapes of its
specification (``ListSkillsResult``, ``GetSkillResult``,
``ReadResourceDirectoryResult``), whose parts reuse the schema's ``Result``,
``CacheableResult``, ``PaginatedResult`` and ``Resource``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

__all__ = ["SchemaViolation", "check_message"]

_RESULTS = {
    "server/discover": ("DiscoverResult",),
    "tools/list": ("ListToolsResult",),
    "tools/call": ("CallToolResult", "InputRequiredResult"),
    "resources/list": ("ListResourcesResult",),
    "resources/templates/list": ("ListResourceTemplatesResult",),
    "resources/read": ("ReadResourceResult", "InputRequiredResult"),
    "prompts/list": ("ListPromptsResult",),
    "prompts/get": ("GetPromptResult", "InputRequiredResult"),
    "completion/complete": ("CompleteResult",),
    "subscriptions/listen": ("SubscriptionsListenResult",),
}


_STATUSES = ["working", "input_required", "completed", "failed", "cancelled"]
_TASK: dict[str, Any] = {
    "type": "object",
    "required": ["taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"],
    "properties": {
        "taskId": {"type": "string", "minLength": 1},
        "status": {"enum": _STATUSES},
        "statusMessage": {"type": "string"},
        "createdAt": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T"},
        "lastUpdatedAt": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T"},
        "ttlMs": {"type": ["integer", "null"], "minimum": 1},
        "pollIntervalMs": {"type": "integer", "minimum": 1},
    },
    "not": {
        "anyOf": [{"required": [k]} for k in ("ttl", "pollInterval", "requestState")]
    },
}
_NO_PAYLOAD = {
    "not": {"anyOf": [{"required": [k]} for k in ("result", "error", "inputRequests")]}
}
#: ``DetailedTask``: the Task fields plus what its status carries.
_DETAILED: dict[str, Any] = {
    "allOf": [_TASK],
    "properties": {
        "inputRequests": {"$ref": "#/$defs/InputRequests"},
        "result": {
            "type": "object",
            "required": ["content"],
            "properties": {
                "content": {"type": "array", "items": {"$ref": "#/$defs/ContentBlock"}},
                "isError": {"type": "boolean"},
            },
            "not": {"required": ["resultType"]},
        },
        "error": {"$ref": "#/$defs/Error"},
    },
    "oneOf": [
        {"properties": {"status": {"enum": ["working", "cancelled"]}}, **_NO_PAYLOAD},
        {
            "properties": {"status": {"const": "input_required"}},
            "required": ["inputRequests"],
        },
        {"properties": {"status": {"const": "completed"}}, "required": ["result"]},
        {"properties": {"status": {"const": "failed"}}, "required": ["error"]},
    ],
}
#: A skill entry (SEP-2640 ``Skill``): its frontmatter and its complete manifest.
_SKILL: dict[str, Any] = {
    "type": "object",
    "required": ["uri", "frontmatter", "resources"],
    "properties": {
        "uri": {"type": "string", "minLength": 1},
        "frontmatter": {
            "type": "object",
            "required": ["name", "description"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "description": {"type": "string", "minLength": 1},
            },
        },
        "resources": {
            "oneOf": [
                {"const": "dynamic"},
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["uri", "digest", "size"],
                        "properties": {
                            "uri": {"type": "string"},
                            "digest": {
                                "type": "string",
                                "pattern": "^sha256:[0-9a-f]{64}$",
                            },
                            "size": {"type": "integer", "minimum": 0},
                        },
                    },
                },
            ]
        },
    },
}
_SKILLS: dict[str, dict[str, Any]] = {
    "ListSkillsResult": {
        "allOf": [
            {"$ref": "#/$defs/PaginatedResult"},
            {"$ref": "#/$defs/CacheableResult"},
        ],
        "required": ["skills"],
        "properties": {"skills": {"type": "array", "items": _SKILL}},
    },
    "GetSkillResult": {
        "allOf": [{"$ref": "#/$defs/CacheableResult"}],
        "required": ["skill"],
        "properties": {"skill": _SKILL},
        "not": {"required": ["nextCursor"]},
    },
    "ReadResourceDirectoryResult": {
        "allOf": [{"$ref": "#/$defs/PaginatedResult"}],
        "required": ["resources"],
        "properties": {
            "resources": {"type": "array", "items": {"$ref": "#/$defs/Resource"}}
        },
    },
}
#: The extension's results and notification, by name.
_EXTENSION: dict[str, dict[str, Any]] = {
    "CreateTaskResult": {
        "allOf": [{"$ref": "#/$defs/Result"}, _TASK],
        "properties": {"resultType": {"const": "task"}, "status": {"const": "working"}},
        **_NO_PAYLOAD,
    },
    "GetTaskResult": {
        "allOf": [{"$ref": "#/$defs/Result"}, _DETAILED],
        "properties": {"resultType": {"const": "complete"}},
    },
    "TaskAck": {
        "type": "object",
        "required": ["resultType"],
        "properties": {
            "resultType": {"const": "complete"},
            "_meta": {"type": "object"},
        },
        "additionalProperties": False,
    },
    "TaskNotification": {
        "allOf": [{"$ref": "#/$defs/JSONRPCNotification"}],
        "properties": {"method": {"const": "notifications/tasks"}, "params": _DETAILED},
        "required": ["params"],
    },
}
_EXTENSION |= _SKILLS
_EXTENSION_RESULTS = {
    "tasks/get": "GetTaskResult",
    "tasks/update": "TaskAck",
    "tasks/cancel": "TaskAck",
    "skills/list": "ListSkillsResult",
    "skills/get": "GetSkillResult",
    "resources/directory/read": "ReadResourceDirectoryResult",
}


class SchemaViolation(AssertionError):
    """A message the server emitted does not validate against the official schema."""


@functools.cache
def _schema() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("schema-2026-07-28.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@functools.cache
def _validator(definition: str) -> Any:
    import jsonschema

    root = _schema()
    schema = {
        "$schema": root.get("$schema"),
        "$defs": root["$defs"],
        "$ref": f"#/$defs/{definition}",
    }
    if definition in _EXTENSION:
        schema = {"$defs": root["$defs"], **_EXTENSION[definition]}
    return jsonschema.Draft202012Validator(schema)


def _errors(definition: str, value: object) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in _validator(definition).iter_errors(value)
    ]


def check_message(message: Mapping[str, object], method: str | None) -> None:
    """Validate one emitted message; ``method`` is the request's, for responses.

    Raises:
        SchemaViolation: naming every schema error found.
    """
    if message.get("method") == "notifications/tasks":
        problems = _errors("TaskNotification", message)
    elif "method" in message:
        problems = _errors("ServerNotification", message)
        if not problems:
            problems = _errors("JSONRPCNotification", message)
    elif "error" in message:
        problems = _errors("JSONRPCErrorResponse", message)
    else:
        problems = _errors("JSONRPCResultResponse", message)
        result = message.get("result")
        if not problems and method in _EXTENSION_RESULTS:
            problems = _errors(_EXTENSION_RESULTS[method], result)
        elif not problems and method in _RESULTS:
            options = _RESULTS[method]
            if (
                isinstance(result, dict)
                and result.get("resultType") == "input_required"
            ):
                options = ("InputRequiredResult",)
            elif isinstance(result, dict) and result.get("resultType") == "task":
                options = ("CreateTaskResult",)
            elif len(options) > 1:
                options = options[:1]
            for definition in options:
                problems = _errors(definition, result)
    if problems:
        raise SchemaViolation(
            f"message does not match the 2026-07-28 schema: {json.dumps(message)[:500]}\n"
            + "\n".join(problems)
        )
