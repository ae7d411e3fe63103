"""Streamable HTTP's mirrored headers, checked against the body (MCP revision 2026-07-28, Streamable HTTP).

Header names arrive lower-cased; values are compared case-sensitively after trimming
surrounding whitespace. ``Mcp-Name`` and ``Mcp-Param-*`` may use the
``=?base64?...?=`` form for values that are not plain visible ASCII.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping

import attrs

from .._json import JsonObject, JsonValue
from . import _wire as wire
from ._jsonrpc import Fault

__all__ = [
    "ParamHeader",
    "check_param_headers",
    "check_routing_headers",
    "check_version_header",
    "decode_header_value",
    "param_headers",
]

_NAME_SOURCES = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension (SEP-2663) routes by task: Mcp-Name carries the taskId.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def decode_header_value(raw: str) -> str | None:
    """Decode the base64 sentinel form; return None if it is malformed."""
    value = raw.strip()
    if value.startswith("=?base64?") and value.endswith("?="):
        payload = value[len("=?base64?") : -len("?=")]
        try:
            return base64.b64decode(payload, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
    return value


def _mismatch(request_id: str | int, text: str) -> Fault:
    return Fault(
        wire.HEADER_MISMATCH,
        f"header mismatch: {text}",
        request_id=request_id,
        http_status=400,
    )


def check_version_header(
    headers: Mapping[str, str], version: str, request_id: str | int
) -> Fault | None:
    """``MCP-Protocol-Version`` must be present and equal ``_meta``'s version."""
    value = headers.get("mcp-protocol-version")
    if value is None:
        return _mismatch(request_id, "the MCP-Protocol-Version header is required")
    if value.strip() != version:
        return _mismatch(
            request_id, "MCP-Protocol-Version does not match _meta protocolVersion"
        )
    return None


def check_routing_headers(
    headers: Mapping[str, str], method: str, params: JsonObject, request_id: str | int
) -> Fault | None:
    """``Mcp-Method`` must equal the method; ``Mcp-Name`` the name or URI where required."""
    value = headers.get("mcp-method")
    if value is None:
        return _mismatch(request_id, "the Mcp-Method header is required")
    if value.strip() != method:
        return _mismatch(request_id, "Mcp-Method does not match the request's method")
    source = _NAME_SOURCES.get(method)
    if source is None:
        return None
    raw = headers.get("mcp-name")
    if raw is None:
        return _mismatch(request_id, f"the Mcp-Name header is required for {method}")
    name = decode_header_value(raw)
    if name is None:
        return _mismatch(request_id, "Mcp-Name has an invalid base64 value")
    if name != params.get(source):
        return _mismatch(request_id, f"Mcp-Name does not match params.{source}")
    return None


#: RFC 9110 ``token``: what an ``x-mcp-header`` name may be.
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_TYPES = ("string", "integer", "boolean")
#: A value sent without the base64 form must be plain visible ASCII.
_VISIBLE = re.compile(r"^[\x20-\x7e]*$")


@attrs.frozen
class ParamHeader:
    """A tool parameter mirrored into an ``Mcp-Param-{name}`` header."""

    prop: str
    name: str
    kind: str


def _scalar_kind(schema: JsonValue) -> str | None:
    """The property's JSON type if it is a header-able scalar (optionally nullable)."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    options = schema.get("anyOf")
    if isinstance(options, list):
        kinds = [o.get("type") for o in options if isinstance(o, dict)]
        rest = [k for k in kinds if k != "null"]
        if len(rest) == 1 and isinstance(rest[0], str) and len(kinds) == len(options):
            return rest[0]
    return None


def _write_only(schema: JsonValue) -> bool:
    """Whether the property is a secret (``writeOnly``), itself or as a nullable branch."""
    if not isinstance(schema, dict):
        return False
    if schema.get("writeOnly") is True:
        return True
    options = schema.get("anyOf")
    return isinstance(options, list) and any(_write_only(o) for o in options)


def param_headers(input_schema: JsonObject) -> tuple[list[ParamHeader], list[str]]:
    """Read ``x-mcp-header`` declarations from a tool's input schema.

    Returns the headers and a list of problems (an invalid or repeated name, a
    property that is not a string, integer or boolean, a secret: a header is seen
    and kept by every proxy and access log on the way, so a ``Secret`` never is one).
    """
    headers: list[ParamHeader] = []
    problems: list[str] = []
    seen: set[str] = set()
    properties = input_schema.get("properties")
    for prop, schema in (properties if isinstance(properties, dict) else {}).items():
        if not isinstance(schema, dict) or "x-mcp-header" not in schema:
            continue
        found = _param_header(prop, schema, seen)
        if isinstance(found, str):
            problems.append(f"parameter '{prop}': {found}")
            continue
        seen.add(found.name.lower())
        headers.append(found)
    return headers, problems


def _param_header(prop: str, schema: JsonObject, seen: set[str]) -> ParamHeader | str:
    """The header one property declares, or why it cannot have one.

    ``seen`` holds the names (lower case) already taken by earlier properties.
    """
    name = schema["x-mcp-header"]
    if not isinstance(name, str) or not _TOKEN.match(name):
        return (
            "x-mcp-header must be a header name (letters, digits and !#$%&'*+.^_`|~-)"
        )
    if name.lower() in seen:
        return f"x-mcp-header '{name}' is used twice"
    if _write_only(schema):
        return (
            f"x-mcp-header would copy a Secret into the Mcp-Param-{name} HTTP header, "
            "which proxies and access logs keep; remove x-mcp-header from this "
            "parameter"
        )
    kind = _scalar_kind(schema)
    if kind not in _HEADER_TYPES:
        return "x-mcp-header needs a string, integer or boolean parameter"
    return ParamHeader(prop, name, kind)


def _same(text: str, value: JsonValue, kind: str) -> bool:
    if kind == "boolean":
        return isinstance(value, bool) and text == ("true" if value else "false")
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        try:
            return float(text) == value
        except ValueError:
            return False
    return text == value


def check_param_headers(
    headers: Mapping[str, str],
    declared: list[ParamHeader],
    arguments: JsonValue,
    request_id: str | int,
) -> Fault | None:
    """Each non-null mirrored argument must arrive in its ``Mcp-Param-*`` header."""
    args = arguments if isinstance(arguments, dict) else {}
    for param in declared:
        value = args.get(param.prop)
        if value is None:
            continue  # a header for an absent or null value is not expected
        raw = headers.get(f"mcp-param-{param.name.lower()}")
        if raw is None:
            return _mismatch(
                request_id,
                f"the Mcp-Param-{param.name} header is required when "
                f"'{param.prop}' is given",
            )
        text = decode_header_value(raw)
        if text is None or (text == raw.strip() and not _VISIBLE.match(text)):
            return _mismatch(request_id, f"Mcp-Param-{param.name} has an invalid value")
        if not _same(text, value, param.kind):
            return _mismatch(
                request_id,
                f"Mcp-Param-{param.name} does not match arguments.{param.prop}",
            )
    return None
