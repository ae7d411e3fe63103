"""The MCP Apps extension's fields, as a JSON Schema, and a client that renders views.

The revision's own schema lets ``_meta`` hold any object, so it cannot tell a
misspelt ``_meta.ui`` from a right one. These schemas are SEP-1865 "MCP Apps"
(stable version 2026-01-26), written from its TypeScript interfaces
(``McpUiToolMeta``, ``UIResourceMeta``, ``McpUiResourceCsp``): exactly their keys, so
a key the spec does not define fails as surely as a wrong type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import jsonschema

__all__ = [
    "APPS_CLIENT",
    "MIME",
    "UI",
    "check_listed_tools",
    "check_resource",
    "check_tool_ui",
    "check_view_read",
]

UI: Final = "io.modelcontextprotocol/ui"
MIME: Final = "text/html;profile=mcp-app"
#: The client capabilities of a host that renders views.
APPS_CLIENT: Final[dict[str, Any]] = {"extensions": {UI: {"mimeTypes": [MIME]}}}

_ORIGINS = {"type": "array", "items": {"type": "string"}}
_EMPTY = {"type": "object", "maxProperties": 0}
_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")

TOOL_UI: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "resourceUri": {"type": "string", "pattern": "^ui://"},
        "visibility": {
            "type": "array",
            "items": {"enum": ["model", "app"]},
            "uniqueItems": True,
        },
    },
    "additionalProperties": False,
}
RESOURCE_UI: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "csp": {
            "type": "object",
            "properties": dict.fromkeys(_CSP_KEYS, _ORIGINS),
            "additionalProperties": False,
        },
        "permissions": {
            "type": "object",
            "properties": dict.fromkeys(_PERMISSIONS, _EMPTY),
            "additionalProperties": False,
        },
        "domain": {"type": "string"},
        "prefersBorder": {"type": "boolean"},
    },
    "additionalProperties": False,
}


def _check(schema: Mapping[str, Any], value: object, what: str) -> None:
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(value))
    assert not errors, f"{what}: " + "; ".join(e.message for e in errors)


def check_tool_ui(tool: Mapping[str, Any]) -> None:
    """A listed tool's ``_meta.ui``, when it has one, is the spec's ``McpUiToolMeta``."""
    ui = tool.get("_meta", {}).get("ui")
    if ui is not None:
        _check(TOOL_UI, ui, f"tool {tool['name']} _meta.ui")


def check_listed_tools(tools: Iterable[Mapping[str, Any]]) -> None:
    for tool in tools:
        check_tool_ui(tool)


def check_resource(entry: Mapping[str, Any]) -> None:
    """A listed ``ui://`` resource is HTML of the MCP App profile, with a valid ``_meta.ui``."""
    if not str(entry["uri"]).startswith("ui://"):
        return
    assert MIME == entry["mimeType"]
    ui = entry.get("_meta", {}).get("ui")
    if ui is not None:
        _check(RESOURCE_UI, ui, f"resource {entry['uri']} _meta.ui")


def check_view_read(result: Mapping[str, Any], uri: str) -> dict[str, Any]:
    """A ``resources/read`` of a view: one HTML contents, ``_meta.ui`` per the spec."""
    [contents] = result["contents"]
    assert uri == contents["uri"]
    assert MIME == contents["mimeType"]
    assert isinstance(contents["text"], str)
    ui = contents.get("_meta", {}).get("ui")
    if ui is not None:
        _check(RESOURCE_UI, ui, f"read of {uri} _meta.ui")
    return dict(contents)
