"""``ProtectedResource``: RFC 9728 metadata for a server behind the host's OAuth.

A mounted server whose host application checks bearer tokens describes itself as an
OAuth 2.0 protected resource: which authorization servers issue its tokens and which
scopes it knows. Clients find the document from the ``resource_metadata`` parameter of
a 401's ``WWW-Authenticate`` (RFC 9728 §5.1) or at the well-known URI derived from the
resource (§3.1). Token checking stays with the host. Plain values; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import attrs

if TYPE_CHECKING:
    from .._json import JsonObject

__all__ = ["WELL_KNOWN", "ProtectedResource", "well_known_url"]

#: RFC 9728 §3: the well-known URI suffix; the resource's path is appended to it.
WELL_KNOWN = "/.well-known/oauth-protected-resource"


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    """A tuple of strings; a bare string (a common slip) is refused, not split."""
    if isinstance(values, str):
        raise TypeError(f"expected a list of strings, got the string {values!r}")
    return tuple(values)


def _http_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _check_servers(
    instance: object,
    attribute: attrs.Attribute[tuple[str, ...]],
    value: tuple[str, ...],
) -> None:
    if not value:
        raise ValueError(
            "authorization_servers needs at least one issuer URL, such as "
            "'https://auth.example.com'"
        )
    for url in value:
        if not _http_url(url) or urlsplit(url).query or urlsplit(url).fragment:
            raise ValueError(
                f"authorization server {url!r} must be an http(s) issuer URL "
                "without query or fragment (RFC 8414 §2)"
            )


def _check_resource(
    instance: object, attribute: attrs.Attribute[str | None], value: str | None
) -> None:
    if value is not None and (not _http_url(value) or urlsplit(value).fragment):
        raise ValueError(
            f"resource {value!r} must be the absolute http(s) URL clients use for "
            "the MCP endpoint, without fragment (RFC 9728 §2)"
        )


def well_known_url(resource: str) -> str:
    """The metadata URL RFC 9728 §3.1 derives from a resource identifier."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{path}{query}"


@attrs.frozen
class ProtectedResource:
    """RFC 9728 protected resource metadata, served by ``Server.mount``.

    Args:
        authorization_servers: Issuer URLs of the authorization servers whose
            tokens the host accepts (at least one).
        scopes_supported: Scopes the host checks; also sent as the ``scope`` of a
            401's ``WWW-Authenticate``. Empty leaves both out.
        resource: The resource identifier, the absolute URL clients use for the MCP
            endpoint. By default it is built from each request (scheme, ``Host``,
            mount point and path); set it behind a proxy that changes any of them.
        resource_name: A human-readable name for the resource.
        resource_documentation: A URL of documentation for developers.

    Raises:
        ValueError: if there is no authorization server, or a URL is not an
            absolute http(s) URL.
        TypeError: if a list argument is given as one string.
    """

    authorization_servers: tuple[str, ...] = attrs.field(
        converter=_strings, validator=_check_servers
    )
    scopes_supported: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    resource: str | None = attrs.field(default=None, validator=_check_resource)
    resource_name: str | None = None
    resource_documentation: str | None = None

    def document(self, resource: str) -> JsonObject:
        """The metadata document (RFC 9728 §2) for the resource identifier given."""
        doc: JsonObject = {
            "resource": self.resource or resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            doc["resource_documentation"] = self.resource_documentation
        return doc

    def challenge(self, metadata_url: str) -> bytes:
        """The ``WWW-Authenticate`` value of a 401 (RFC 9728 §5.1, RFC 6750 §3)."""
        value = f'Bearer resource_metadata="{_quoted(metadata_url)}"'
        if self.scopes_supported:
            value += f', scope="{_quoted(" ".join(self.scopes_supported))}"'
        return value.encode("latin-1", "replace")


def _quoted(text: str) -> str:
    """An RFC 9110 quoted-string body: backslash and double quote escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"')
