"""``Upstream``: another server whose catalog a ``Server`` serves beside its own.

The value is checked when it is made, so a gateway that cannot work fails at
``Upstream(...)``, not at its first call: a target that is neither a URL, a command
nor a ``Server``, a prefix that would make invalid names, a credential header among
those forwarded. What it holds that may be a secret (``headers``, ``auth``) is kept
out of its ``repr``; ``label`` names the target for logs and receipts without
credentials (no user info, query or fragment of a URL; only the program of a
command).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Literal, TypeAlias
from urllib.parse import SplitResult, urlsplit

import attrs

from .._authority import Capability
from .._checks import as_tuple, invalid, positive
from .._errors import InvalidArgument
from .._serving import Serving

__all__ = ["Auth", "Era", "Target", "Upstream"]

#: What ``auth=`` may be: a bearer token, or an async callable of the inbound
#: principal (None for the gateway's own catalog requests) returning one or None.
Auth: TypeAlias = str | Callable[[object | None], Awaitable[str | None]] | None
Era: TypeAlias = Literal["auto", "modern", "legacy"]
#: A URL, a command (its argv) or a ``Server`` served in process (``Serving`` is
#: its base, which this module may import; ``Upstream`` checks for a ``Server``).
Target: TypeAlias = str | tuple[str, ...] | Serving

_SCHEMES = ("http", "https", "ws", "wss")
_PREFIX = re.compile(r"^[A-Za-z0-9_.-]{0,64}$")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
#: Headers that carry the inbound caller's credentials: never forwarded.
_CREDENTIALS = frozenset({"authorization", "proxy-authorization", "cookie"})
#: Headers the transport itself writes for each hop: forwarding one would corrupt it.
_HOP = frozenset(
    {
        "host",
        "connection",
        "content-length",
        "content-type",
        "accept",
        "transfer-encoding",
        "upgrade",
        "te",
        "keep-alive",
    }
)


def _target(value: object) -> object:
    if isinstance(value, str):
        parts = urlsplit(value)
        if (
            parts.scheme.lower() not in _SCHEMES
            or not parts.hostname
            or not _port_ok(parts)
        ):
            raise invalid(
                "Upstream(target)",
                "an http://, https://, ws:// or wss:// URL with a host, a command "
                "(a list of strings) or a Server",
                value,
            )
        return value
    if _is_server(value):
        return value
    if isinstance(value, bytes | Mapping) or not isinstance(value, Sequence):
        raise invalid(
            "Upstream(target)",
            "a URL, a command (a list of strings) or a Server",
            value,
        )
    command = tuple(value)
    if not command or not all(isinstance(part, str) and part for part in command):
        raise invalid(
            "Upstream(target)",
            "a command: a non-empty list of non-empty strings",
            value,
        )
    return command


def _port_ok(parts: SplitResult) -> bool:
    try:
        parts.port  # noqa: B018 - it raises for a port that is not a number
    except ValueError:
        return False
    return True


def describe(target: object) -> str:
    """A target without what may be a credential: a URL's scheme, host, port and
    path (no user info, query or fragment); a command's program (no arguments);
    a server's name."""
    if isinstance(target, str):
        parts = urlsplit(target)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        try:
            port = f":{parts.port}" if parts.port is not None else ""
        except ValueError:
            port = ""
        return f"{parts.scheme}://{host}{port}{parts.path}"
    if isinstance(target, tuple):
        return str(target[0]).rsplit("/", 1)[-1]
    return f"server {getattr(target, 'name', '?')!r}"


def _shown(target: object) -> str:
    return repr(describe(target))


def _is_server(value: object) -> bool:
    from .._serving import Serving  # a Server's base: _server imports this package

    return isinstance(value, Serving)


def _prefix(value: object) -> str:
    if not isinstance(value, str) or not _PREFIX.fullmatch(value):
        raise invalid(
            "Upstream(prefix=...)",
            "at most 64 letters, digits, '_', '.' or '-' (names stay valid with it)",
            value,
        )
    return value


def _headers(value: object) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise invalid(
            "Upstream(headers=...)", "a mapping of header names to str", value
        )
    pairs = []
    for name, text in value.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise invalid("Upstream(headers=...)", "header names (HTTP tokens)", name)
        if not isinstance(text, str) or any(c in text for c in "\r\n\0"):
            # The value may be a secret: never quoted.
            raise InvalidArgument(
                f"Upstream(headers=...): the value of {name!r} must be a str "
                "without CR, LF or NUL"
            )
        pairs.append((name.lower(), text))
    return tuple(pairs)


def _forward(value: object) -> tuple[str, ...]:
    names = _items(value, "Upstream(forward_headers=...)", "a list of header names")
    out: list[str] = []
    for name in names:
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise invalid(
                "each of Upstream(forward_headers=...)", "a header name", name
            )
        lowered = name.lower()
        if lowered in _CREDENTIALS:
            raise InvalidArgument(
                f"Upstream(forward_headers=...) may not forward {name!r}: the inbound "
                "caller's credentials never reach an upstream; give the upstream its "
                "own credential with auth= (a token, or an async callable of the "
                "inbound principal, such as trio_mcp.auth.TokenExchange)"
            )
        if lowered in _HOP or lowered.startswith("mcp-"):
            raise InvalidArgument(
                f"Upstream(forward_headers=...) may not forward {name!r}: the client "
                "writes it for each hop itself"
            )
        out.append(lowered)
    return tuple(dict.fromkeys(out))


def _auth(value: object) -> object:
    if value is None or callable(value):
        return value
    if not isinstance(value, str) or not value or any(c in value for c in "\r\n\0 "):
        raise InvalidArgument(
            "Upstream(auth=...) takes a bearer token (a non-empty str without "
            "whitespace), an async callable of the inbound principal returning one "
            f"or None, or None; got a {type(value).__name__}"
        )
    return value


def _tools(value: object) -> frozenset[str] | None:
    if value is None:
        return None
    names = _items(value, "Upstream(tools=...)", "a list of the upstream's tool names")
    for name in names:
        if not isinstance(name, str):
            raise invalid("each of Upstream(tools=...)", "a tool name (str)", name)
    return frozenset(names)  # type: ignore[arg-type]


def _caps(value: object) -> tuple[Capability, ...]:
    caps = _items(value, "Upstream(caps=...)", "a list of Capability values")
    for cap in caps:
        if not isinstance(cap, Capability):
            raise invalid("each of Upstream(caps=...)", "a Capability", cap)
    return caps  # type: ignore[return-value]


def _items(value: object, where: str, expected: str) -> tuple[object, ...]:
    return as_tuple(value, where, expected)  # type: ignore[arg-type]


def _timeout(value: object) -> float:
    return positive(value, "Upstream(timeout=...)")


def _connect_timeout(value: object) -> float:
    return positive(value, "Upstream(connect_timeout=...)")


def _era(value: object) -> Era:
    if value not in ("auto", "modern", "legacy"):
        raise invalid("Upstream(era=...)", "'auto', 'modern' or 'legacy'", value)
    return value


@attrs.frozen(eq=False)
class Upstream:
    """Another MCP server whose tools, resources, templates and prompts a ``Server``
    serves beside its own (``Server(..., upstreams=[...])``).

    Args:
        target: An ``http(s)://`` URL (Streamable HTTP), a ``ws(s)://`` URL
            (WebSocket), a command (a list of strings, started as a stdio
            subprocess) or a ``Server`` (composed in process when the serving
            ``Server`` is built).
        prefix: Put before the upstream's tool and prompt names (``"gh_"`` serves
            ``search`` as ``gh_search``). Resource URIs are served as the upstream
            names them.
        headers: Sent to this upstream on every HTTP request (a secret: never
            logged).
        auth: The upstream's own credential: a bearer token, or an async callable
            taking the inbound caller's principal (None for the gateway's own
            catalog requests) and returning one or None.
        forward_headers: Names of inbound request headers passed on to the
            upstream; nothing else of the inbound request is. ``authorization``
            and ``cookie`` are refused.
        tools: The upstream's tool names served (None: all).
        caps: Capabilities every call of this upstream's tools, prompts and
            resources requires.
        timeout: Seconds a proxied call may take (the inbound call's own deadline
            still applies, whichever ends first).
        connect_timeout: Seconds to connect and learn the upstream's catalog.
        era: ``"auto"`` (2026-07-28 when the upstream answers ``server/discover``,
            else a handshake-era session), ``"modern"`` or ``"legacy"``.

    Raises:
        McpError.InvalidArgument: naming the argument that cannot work.
    """

    target: Target = attrs.field(
        converter=_target,
        repr=_shown,
    )
    prefix: str = attrs.field(default="", kw_only=True, converter=_prefix)
    headers: tuple[tuple[str, str], ...] = attrs.field(
        default=None, kw_only=True, converter=_headers, repr=False
    )
    auth: Auth = attrs.field(default=None, kw_only=True, converter=_auth, repr=False)
    forward_headers: tuple[str, ...] = attrs.field(
        default=(), kw_only=True, converter=_forward
    )
    tools: frozenset[str] | None = attrs.field(
        default=None, kw_only=True, converter=_tools
    )
    caps: tuple[Capability, ...] = attrs.field(
        default=(), kw_only=True, converter=_caps
    )
    timeout: float = attrs.field(
        default=30.0,
        kw_only=True,
        converter=_timeout,
    )
    connect_timeout: float = attrs.field(
        default=5.0,
        kw_only=True,
        converter=_connect_timeout,
    )
    era: Era = attrs.field(default="auto", kw_only=True, converter=_era)

    @property
    def label(self) -> str:
        """The target named without credentials, for logs, errors and receipts:
        a URL's scheme, host, port and path; a command's program; a server's name."""
        return describe(self.target)

    @property
    def remote(self) -> bool:
        """Whether the upstream is reached over a transport (not composed in process)."""
        return not _is_server(self.target)

    def served_name(self, name: str) -> str:
        """The name a tool or prompt of this upstream is served under."""
        return self.prefix + name

    def serves_tool(self, name: str) -> bool:
        """Whether the upstream's tool ``name`` is in the allow-list (``tools=``)."""
        return self.tools is None or name in self.tools


def checked_upstreams(value: Iterable[Upstream]) -> tuple[Upstream, ...]:
    """``Server(upstreams=...)`` checked: ``Upstream`` values."""
    found = as_tuple(value, "Server(upstreams=...)", "a list of Upstream values")
    for upstream in found:
        if not isinstance(upstream, Upstream):
            raise invalid("each of Server(upstreams=...)", "an Upstream", upstream)
    return found
