"""The optional parts of ``serverInfo`` (the revision's ``Implementation``)."""

from __future__ import annotations

from collections.abc import Iterable

from .. import _checks as checks
from .._json import JsonObject
from ._values import Icon

__all__ = ["implementation_extras"]


def implementation_extras(
    title: str | None, website_url: str | None, icons: Iterable[Icon]
) -> JsonObject:
    """Return ``title``, ``websiteUrl`` and ``icons`` as ``serverInfo`` keys, when set.

    Raises:
        McpError.InvalidArgument: if ``icons`` holds anything but ``Icon`` values,
            or ``title`` or ``website_url`` is not a string (also a ``TypeError``).
    """
    out: JsonObject = {}
    for key, value in (("title", title), ("websiteUrl", website_url)):
        if value is not None:
            if not isinstance(value, str):
                raise checks.invalid(f"Server({key}=...)", "a str or None", value)
            out[key] = value
    listed = checks.as_tuple(icons, "Server(icons=...)", "a list of trio_mcp.Icon")
    for icon in listed:
        if not isinstance(icon, Icon):
            raise checks.invalid("each of Server(icons=...)", "a trio_mcp.Icon", icon)
    if listed:
        out["icons"] = [icon.to_wire() for icon in listed]
    return out
