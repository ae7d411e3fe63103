"""Streamable HTTP's mirrored headers, checked against the body (mcp-2026-07-28.md §12).

Header names arrive lower-cased; values are compared case-sensitively after trimming
surrounding whitespace. ``Mcp-Name`` and ``Mcp-Param-*`` may use the
``=?base64?...?=`` form for values that are not plain visible ASCII.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping

from .._json import JsonObject
from . import _wire as wire
from ._jsonrpc import Fault

__all__ = ["check_routing_headers", "check_version_header", "decode_header_value"]

_NAME_SOURCES = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


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
