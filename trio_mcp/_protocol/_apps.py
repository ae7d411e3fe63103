"""The MCP side of MCP Apps (SEP-1865, ``io.modelcontextprotocol/ui``): names on the wire.

Spelled as the extension's specification spells them: SEP-1865 "MCP Apps: Interactive
User Interfaces for MCP", stable version 2026-01-26 (the ``modelcontextprotocol/ext-apps``
repository), negotiated as MCP revision 2026-07-28 negotiates every extension: a client
declares it in the ``extensions`` of the ``clientCapabilities`` each request carries,
the server in the ``capabilities.extensions`` of ``server/discover``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ._wire import UI_EXTENSION

__all__ = [
    "CSP_KEYS",
    "PERMISSIONS",
    "UI_EXTENSION",
    "VIEW_MIME_TYPE",
    "VISIBILITIES",
    "renders_views",
]

#: The MIME type of a view's HTML (the spec's ``RESOURCE_MIME_TYPE``).
VIEW_MIME_TYPE: Final = "text/html;profile=mcp-app"
#: Who may call a tool (``_meta.ui.visibility``): the model, the view, or both.
VISIBILITIES: Final = ("model", "app")
#: The keys of a view's ``_meta.ui.csp`` (``McpUiResourceCsp``): lists of origins.
CSP_KEYS: Final = (
    "connectDomains",
    "resourceDomains",
    "frameDomains",
    "baseUriDomains",
)
#: The keys of a view's ``_meta.ui.permissions``: each an empty object when asked for.
PERMISSIONS: Final = ("camera", "microphone", "geolocation", "clipboardWrite")


def _media_type(value: str) -> str:
    """``value`` with case and the optional spaces around ``;`` and ``=`` removed.

    RFC 9110 media types are case-insensitive in their type and parameter names and
    allow whitespace around parameters; a host that writes
    ``text/html; profile=mcp-app`` declares the same type.
    """
    parts = [part.strip() for part in value.lower().split(";")]
    params = [
        "=".join(p.strip().strip('"') for p in part.split("=", 1)) for part in parts[1:]
    ]
    return ";".join([parts[0], *params])


def renders_views(capabilities: Mapping[str, object]) -> bool:
    """Whether a request's ``clientCapabilities`` declare that the client renders views.

    The client declares the extension with the MIME types it renders
    (``{"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes":
    ["text/html;profile=mcp-app"]}}}``); anything less is a client that shows the
    tool's text.
    """
    extensions = capabilities.get("extensions")
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, Mapping) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    if not isinstance(mime_types, list | tuple):
        return False
    wanted = _media_type(VIEW_MIME_TYPE)
    return any(isinstance(m, str) and _media_type(m) == wanted for m in mime_types)
