"""The optional parts of ``serverInfo`` (the revision's ``Implementation``)."""

from __future__ import annotations

from collections.abc import Iterable

from .._json import JsonObject
from ._values import Icon

__all__ = ["implementation_extras"]


def implementation_extras(
    title: str | None, website_url: str | None, icons: Iterable[Icon]
) -> JsonObject:
    """Return ``title``, ``websiteUrl`` and ``icons`` as ``serverInfo`` keys, when set.

    Raises:
        TypeError: if ``icons`` holds anything but ``Icon`` values, or ``title`` or
            ``website_url`` is not a string.
    """
    out: JsonObject = {}
    for key, value in (("title", title), ("websiteUrl", website_url)):
        if value is not None:
            if not isinstance(value, str):
                raise TypeError(f"Server({key}=...) takes a string, got {value!r}")
            out[key] = value
    listed = tuple(icons)
    for icon in listed:
        if not isinstance(icon, Icon):
            raise TypeError(
                f"Server(icons=...) takes trio_mcp.Icon values, got {icon!r}"
            )
    if listed:
        out["icons"] = [icon.to_wire() for icon in listed]
    return out
