"""``View``: an MCP App's HTML, a ``ui://`` resource a tool links to (SEP-1865).

The MCP side of the MCP Apps extension as its specification (SEP-1865, stable
version 2026-01-26) defines it: a view is a resource whose URI starts with ``ui://``,
read as ``text/html;profile=mcp-app`` with ``_meta.ui`` carrying what the host needs
to sandbox it (CSP origins, browser permissions, a dedicated domain, the border); a
tool names it in its own ``_meta.ui.resourceUri``. The host renders the HTML in a
sandboxed iframe and relays the view's JSON-RPC messages (``ui/initialize``,
``tools/call``, ...) over ``postMessage``; that protocol is the host's and the page's,
not the server's.

Everything about a view is checked when it is made, except its file, which is read
when the ``Server`` is built (``_dispatch/_views.py``): a server serves the HTML it
read then, for as long as it runs.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import attrs

from .._errors import InvalidArgument, InvalidDeclaration
from .._json import JsonObject
from .._protocol._apps import CSP_KEYS, PERMISSIONS, VISIBILITIES

__all__ = ["View", "Visibility", "check_visibility", "origin_problem", "tool_ui"]

#: Who may call a tool: ``"model"`` (the agent) and ``"app"`` (a view of this server).
Visibility: TypeAlias = Literal["model", "app"]

#: ``ui://`` and then one or more characters RFC 3986 allows in a URI, without a
#: fragment (``#``) or a template's braces; ``%`` only as a percent-encoding.
_UI_URI = re.compile(r"ui://(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})+")
_SCHEMES = ("http", "https", "ws", "wss")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_PATH = re.compile(r"[/?#\\]")


def _where(uri: object) -> str:
    return f"View({uri!r})"


def _check_uri(instance: View, attribute: Any, uri: Any) -> None:
    if not isinstance(uri, str):
        raise InvalidArgument(
            f"View(uri=...) takes a string such as 'ui://my-server/board', "
            f"got {type(uri).__name__}"
        )
    if not uri.startswith("ui://"):
        raise InvalidDeclaration(
            f"{_where(uri)}: a view's URI starts with 'ui://' (SEP-1865 reserves that "
            f"scheme for views); write it as 'ui://{uri.partition('://')[2] or uri}'"
        )
    if not _UI_URI.fullmatch(uri):
        raise InvalidDeclaration(
            f"{_where(uri)}: the URI must be 'ui://' and then URI characters, with no "
            "space, fragment ('#'), template braces or bare '%'; percent-encode them"
        )


def _html(value: str | os.PathLike[str]) -> str | Path:
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return Path(value)
    raise InvalidArgument(
        f"View(html=...) takes the HTML as a str or a pathlib.Path to read it from, "
        f"got {type(value).__name__}"
    )


def _check_html(instance: View, attribute: Any, html: Any) -> None:
    if isinstance(html, str) and not html.strip():
        raise InvalidDeclaration(
            f"{_where(instance.uri)}: the HTML is empty; give the view's HTML document "
            "(or a pathlib.Path to its file)"
        )


def origin_problem(entry: object) -> str | None:
    """Why ``entry`` is not an origin a CSP directive can hold, or None when it is.

    An origin is ``scheme://host[:port]`` with the scheme ``http``, ``https``, ``ws``
    or ``wss``, a DNS name (its first label may be ``*`` for any subdomain, as the
    spec allows), an IPv4 address or a bracketed IPv6 address, and no path, query,
    user or space: the host joins the entries into its Content-Security-Policy, so
    anything else would loosen or break the policy.
    """
    if not isinstance(entry, str):
        return f"is a {type(entry).__name__}, not a string"
    scheme, sep, rest = entry.partition("://")
    if not sep:
        if _is_host(entry.split("/", 1)[0]):
            return f"has no scheme; write 'https://{entry}'"
        return "is not scheme://host[:port]"
    if scheme.lower() not in _SCHEMES:
        return f"has the scheme {scheme!r}; an origin here is http, https, ws or wss"
    path = _PATH.search(rest)
    authority = rest if path is None else rest[: path.start()]
    why = _authority_problem(authority)
    if why is None and path is not None:
        return f"has a path; drop it: '{scheme}://{authority}'"
    return why


def _authority_problem(authority: str) -> str | None:
    """Why ``host[:port]`` is not one, or None."""
    if authority.startswith("["):  # an IPv6 address, then perhaps a port
        host, bracket, after = authority.partition("]")
        host += bracket
        if not bracket or (after and not after.startswith(":")):
            return "is not scheme://host[:port]"
        port = after[1:] if after else None
    else:
        host, colon, port_text = authority.partition(":")
        port = port_text if colon else None
    if not _is_host(host):
        return f"has the host {host!r}, which is no DNS name or IP address"
    if port is not None and not (
        port.isascii() and port.isdigit() and len(port) <= 5 and int(port) <= 65535
    ):
        return f"has the port {port!r}; a port is 0-65535"
    return None


def _is_host(host: str) -> bool:
    if host.startswith("[") and host.endswith("]"):
        if "%" in host:  # a zone, which no URL of a page can hold
            return False
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        return True
    labels = host.removeprefix("*.").split(".")
    return len(host) <= 253 and all(
        label.isascii() and _LABEL.fullmatch(label) for label in labels
    )


def _listed(entries: Any) -> Any:
    if isinstance(entries, str | bytes) or not isinstance(entries, Iterable):
        return entries  # refused by the validator, with its name
    return tuple(entries)


def _csp(
    value: Mapping[str, Iterable[str]] | None,
) -> Mapping[str, tuple[str, ...]] | None:
    """A read-only copy of ``csp=`` (each list a tuple); checked by ``_check_csp``."""
    if not isinstance(value, Mapping):
        return value  # None, or refused by the validator
    return MappingProxyType({key: _listed(entries) for key, entries in value.items()})


def _check_csp(instance: View, attribute: Any, csp: Any) -> None:
    if csp is None:
        return
    where = _where(instance.uri)
    if not isinstance(csp, Mapping):
        raise InvalidArgument(
            f"{where}: csp= takes a mapping such as {{'connectDomains': "
            f"['https://api.example.com']}}, got {type(csp).__name__}"
        )
    for key, entries in csp.items():
        if key not in CSP_KEYS:
            raise InvalidDeclaration(
                f"{where}: csp= has the unknown key {key!r}; the spec's keys are "
                + ", ".join(CSP_KEYS)
            )
        if not isinstance(entries, tuple):
            raise InvalidArgument(
                f"{where}: csp[{key!r}] takes a list of origins, got "
                f"{type(entries).__name__} {entries!r}"
            )
        for entry in entries:
            why = origin_problem(entry)
            if why is not None:
                raise InvalidDeclaration(
                    f"{where}: csp[{key!r}] entry {entry!r} is not an origin: it {why}"
                )


def _permissions(
    value: Mapping[str, Mapping[str, object]] | None,
) -> Mapping[str, Mapping[str, object]] | None:
    """A read-only copy of ``permissions=``; checked by ``_check_permissions``."""
    if not isinstance(value, Mapping):
        return value  # None, or refused by the validator
    return MappingProxyType(dict(value))


def _check_permissions(instance: View, attribute: Any, permissions: Any) -> None:
    if permissions is None:
        return
    where = _where(instance.uri)
    if not isinstance(permissions, Mapping):
        raise InvalidArgument(
            f"{where}: permissions= takes a mapping such as {{'camera': {{}}}}, "
            f"got {type(permissions).__name__}"
        )
    for key, setting in permissions.items():
        if key not in PERMISSIONS:
            raise InvalidDeclaration(
                f"{where}: permissions= has the unknown permission {key!r}; the "
                "spec's are " + ", ".join(PERMISSIONS)
            )
        if not isinstance(setting, Mapping) or setting:
            raise InvalidDeclaration(
                f"{where}: permissions[{key!r}] takes an empty mapping {{}} (the spec "
                f"defines no settings), got {setting!r}"
            )


def _check_domain(instance: View, attribute: Any, domain: Any) -> None:
    if domain is None:
        return
    if not isinstance(domain, str):
        raise InvalidArgument(
            f"{_where(instance.uri)}: domain= takes a string, got {type(domain).__name__}"
        )
    if not domain or any(c.isspace() or not c.isprintable() for c in domain):
        raise InvalidDeclaration(
            f"{_where(instance.uri)}: domain={domain!r}: give the dedicated domain the host documents "
            "(for example 'a904794854a047f6.claudemcpcontent.com'), without spaces"
        )


def _check_optional_text(instance: View, attribute: Any, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise InvalidArgument(
            f"{_where(instance.uri)}: {attribute.name}= takes a string, got "
            f"{type(value).__name__}"
        )
    if value == "":
        raise InvalidDeclaration(
            f"{_where(instance.uri)}: {attribute.name}='' says nothing; leave it out"
        )


def _check_border(instance: View, attribute: Any, value: Any) -> None:
    if value is not None and not isinstance(value, bool):
        raise InvalidArgument(
            f"{_where(instance.uri)}: prefers_border= takes True, False or None, "
            f"got {value!r}"
        )


@attrs.frozen
class View:
    """An MCP App's view: HTML a host renders for a tool (``@tool(view=...)``).

    Served as the resource ``uri``, read as ``text/html;profile=mcp-app`` with
    ``_meta.ui`` holding the settings below in the extension's own spelling (SEP-1865
    "MCP Apps", stable 2026-01-26). A tool that links it is listed with
    ``_meta.ui.resourceUri``; the server serves the views of its tools without
    listing them again in ``resources=`` (where a view may be given too: it is the
    same resource).

    Args:
        uri: ``ui://...``, unique to this view within the server.
        html: The HTML document as a string, or a ``pathlib.Path`` to a UTF-8 file
            that the ``Server`` reads when it is built.
        name: The resource's name in ``resources/list``; defaults to the URI.
        description: What the view shows, for people browsing resources.
        csp: Origins the view needs, by the spec's keys: ``connectDomains``
            (fetch, XHR, WebSocket), ``resourceDomains`` (scripts, styles, images,
            fonts, media), ``frameDomains`` (nested iframes), ``baseUriDomains``.
            Each is a list of ``scheme://host[:port]`` origins. Without it a host
            allows no external origin.
        permissions: Browser features the view asks for, by the spec's keys
            (``camera``, ``microphone``, ``geolocation``, ``clipboardWrite``),
            each an empty mapping: ``{"camera": {}}``. A host may refuse them.
        domain: A dedicated sandbox origin, in the format the host documents.
        prefers_border: Whether the host should draw a border and background;
            ``None`` leaves it to the host.

    Raises:
        McpError.InvalidDeclaration: for a URI that does not start with ``ui://``,
            empty HTML, a CSP entry that is not an origin, an unknown CSP key or
            permission.
        McpError.InvalidArgument: for a value of the wrong type.

    .. versionadded:: 0.3
    """

    uri: str = attrs.field(validator=_check_uri)
    html: str | Path = attrs.field(converter=_html, validator=_check_html, repr=False)
    name: str | None = attrs.field(
        default=None, kw_only=True, validator=_check_optional_text
    )
    description: str | None = attrs.field(
        default=None, kw_only=True, validator=_check_optional_text
    )
    csp: Mapping[str, tuple[str, ...]] | None = attrs.field(
        default=None,
        kw_only=True,
        converter=_csp,
        validator=_check_csp,
        hash=False,
    )
    permissions: Mapping[str, Mapping[str, object]] | None = attrs.field(
        default=None,
        kw_only=True,
        converter=_permissions,
        validator=_check_permissions,
        hash=False,
    )
    domain: str | None = attrs.field(
        default=None, kw_only=True, validator=_check_domain
    )
    prefers_border: bool | None = attrs.field(
        default=None, kw_only=True, validator=_check_border
    )

    def ui(self) -> JsonObject:
        """The resource's ``_meta.ui``: only the settings given, in the spec's keys."""
        out: JsonObject = {}
        if self.csp is not None:
            out["csp"] = {key: list(origins) for key, origins in self.csp.items()}
        if self.permissions is not None:
            out["permissions"] = {key: {} for key in self.permissions}
        if self.domain is not None:
            out["domain"] = self.domain
        if self.prefers_border is not None:
            out["prefersBorder"] = self.prefers_border
        return out


def check_visibility(
    value: Iterable[str] | None, *, where: str
) -> tuple[Visibility, ...] | None:
    """``visibility=`` as a tuple: ``"model"`` and/or ``"app"``, each once.

    Raises:
        InvalidDeclaration: for anything else, naming ``where``.
    """
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidDeclaration(
            f"{where}: visibility= takes a tuple such as ('model', 'app') or "
            f"('app',), got {value!r}"
        )
    given = tuple(value)
    if (
        not given
        or len(set(given)) != len(given)
        or not set(given) <= set(VISIBILITIES)
    ):
        raise InvalidDeclaration(
            f"{where}: visibility= holds 'model' (the agent may call the tool), "
            f"'app' (its view may), or both, each once; got {given!r}"
        )
    return given  # type: ignore[return-value]


def tool_ui(view: View | None, visibility: tuple[Visibility, ...] | None) -> JsonObject:
    """A tool's ``_meta.ui`` (``McpUiToolMeta``): its view's URI and who may call it."""
    out: JsonObject = {}
    if view is not None:
        out["resourceUri"] = view.uri
    if visibility is not None:
        out["visibility"] = list(visibility)
    return out
