"""Validation of every message a server emits against the revision's official schema.

The schema ships with the package (``schema-2026-07-28.json``, from the
specification's tag ``2026-07-28``); jsonschema is a test dependency, imported here
only when a check runs.
"""

from __future__ import annotations

import functools
import json
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
    return jsonschema.Draft202012Validator(schema)


def _errors(definition: str, value: object) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in _validator(definition).iter_errors(value)
    ]


def check_message(message: dict[str, Any], method: str | None) -> None:
    """Validate one emitted message; ``method`` is the request's, for responses.

    Raises:
        SchemaViolation: naming every schema error found.
    """
    if "method" in message:
        problems = _errors("ServerNotification", message)
        if not problems:
            problems = _errors("JSONRPCNotification", message)
    elif "error" in message:
        problems = _errors("JSONRPCErrorResponse", message)
    else:
        problems = _errors("JSONRPCResultResponse", message)
        result = message.get("result")
        if not problems and method in _RESULTS:
            options = _RESULTS[method]
            if (
                isinstance(result, dict)
                and result.get("resultType") == "input_required"
            ):
                options = ("InputRequiredResult",)
            elif len(options) > 1:
                options = options[:1]
            for definition in options:
                problems = _errors(definition, result)
    if problems:
        raise SchemaViolation(
            f"message does not match the 2026-07-28 schema: {json.dumps(message)[:500]}\n"
            + "\n".join(problems)
        )
