"""``ServerInfo``: the optional parts of ``serverInfo`` (the revision's ``Implementation``)."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from .. import _checks as checks
from .._json import JsonObject
from ._values import Icon

__all__ = ["ServerInfo"]


def _icons(value: Iterable[Icon]) -> tuple[Icon, ...]:
    icons = checks.as_tuple(value, "ServerInfo.icons", "a list of trio_mcp.Icon")
    for icon in icons:
        if not isinstance(icon, Icon):
            raise checks.invalid("each of ServerInfo.icons", "a trio_mcp.Icon", icon)
    return icons


@attrs.frozen(kw_only=True)
class ServerInfo:
    """What ``serverInfo`` says of a server besides its name and version.

    Give it as ``Server(..., info=ServerInfo(title=..., website_url=..., icons=...))``;
    ``Server(..., title=..., website_url=..., icons=...)`` are spellings of the same
    value and keep working.

    Args:
        title: A name for people (``"Support desk"``); the ``name`` stays the id.
        website_url: The server's home page.
        icons: ``Icon`` values a client may show for the server.

    Raises:
        McpError.InvalidArgument: if ``title`` or ``website_url`` is not a string or
            ``icons`` holds something other than ``Icon`` values.
    """

    title: str | None = attrs.field(
        default=None, validator=checks.optional(checks.text)
    )
    website_url: str | None = attrs.field(
        default=None, validator=checks.optional(checks.text)
    )
    icons: tuple[Icon, ...] = attrs.field(default=(), converter=_icons)

    def to_wire(self) -> JsonObject:
        """The ``serverInfo`` keys this sets: ``title``, ``websiteUrl``, ``icons``."""
        out: JsonObject = {}
        if self.title is not None:
            out["title"] = self.title
        if self.website_url is not None:
            out["websiteUrl"] = self.website_url
        if self.icons:
            out["icons"] = [icon.to_wire() for icon in self.icons]
        return out
