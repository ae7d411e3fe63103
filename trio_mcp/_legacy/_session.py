"""What a handshake-era client settled with ``initialize``, as one value.

The core never sees it: the edge reads it to turn each legacy request into a modern
one and each reply back into the revision's shapes. One ``Session`` per stdio
process or ``Mcp-Session-Id``, plain JSON, so a store can hold it. Revisions served:
2025-11-25, 2025-06-18 and 2025-03-26; a client asking for another gets 2025-11-25
(lifecycle, "Version Negotiation": the client decides whether to go on).
"""

from __future__ import annotations

from typing import Final

import attrs

from .._json import JsonObject, JsonValue, encode_message
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault, Request

__all__ = [
    "ACKNOWLEDGED",
    "FORWARDED",
    "LATEST",
    "LIST_FLAGS",
    "MAX_SUBSCRIPTIONS",
    "REVISIONS",
    "BadInitialize",
    "Session",
    "modern",
    "negotiate",
    "subscription_uri",
]

#: The handshake-era revisions served, newest first.
REVISIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26")
LATEST: Final = REVISIONS[0]
#: Every revision a dual-era server serves, as ``server/discover`` lists them.
ALL_REVISIONS: Final = (wire.PROTOCOL_VERSION, *REVISIONS)

#: Most resource URIs one session may subscribe to: beyond it ``resources/subscribe``
#: is refused (-32602), so a client cannot grow the server's memory without bound.
MAX_SUBSCRIPTIONS: Final = 1024
#: Most bytes of what a session keeps of its client (``capabilities`` and
#: ``clientInfo``, as compact JSON): a session is kept for ``session_idle``, so its
#: size is bounded as its count is. Real clients send well under 1 KiB.
MAX_CLIENT_BYTES: Final = 16 * 1024

#: Legacy methods the core serves once translated (the others are the edge's own).
FORWARDED: Final = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        # the skills extension (SEP-2640), when the server has skills
        "skills/list",
        "skills/get",
        "resources/directory/read",
    }
)
#: Params a legacy request cannot carry into the core: the edge's rounds own the
#: first two, and 2025-11-25's in-core tasks are not served.
_DROPPED: Final = ("inputResponses", "requestState", "task")

#: The core's notification that a listen is open: the edge's own listen (stdio) and a
#: session's ``GET`` stream (HTTP) wait for it before they report anything.
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
#: Each list kind a session hears of, and its flag in a 2026-07-28 listen's
#: ``notifications`` (``subscriptions/listen``).
LIST_FLAGS: Final = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}


def modern(params: JsonValue) -> bool:
    """Whether a request carries 2026-07-28 ``_meta`` (then it is served statelessly)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and wire.META_PROTOCOL_VERSION in meta


def subscription_uri(request: Request, subscribable: bool) -> str | Fault:
    """The ``params.uri`` of ``resources/subscribe`` or ``resources/unsubscribe``, or
    the error to answer: -32601 when no resource of the server is updatable (the
    server does not advertise ``resources.subscribe``), -32602 without a URI."""
    if not subscribable:
        return Fault(
            wire.METHOD_NOT_FOUND,
            f"{request.method} is not served: no resource of this server is "
            "updatable (resources.subscribe is not advertised)",
        )
    params = request.params
    uri = params.get("uri") if isinstance(params, dict) else None
    if not isinstance(uri, str):
        return Fault(wire.INVALID_PARAMS, f"{request.method} needs params.uri")
    return uri


class BadInitialize(Exception):
    """``initialize`` params that are not an ``InitializeRequest``'s (-32602)."""


@attrs.frozen
class Session:
    """One handshake-era client: its revision, what it declared, what it set since.

    ``capabilities`` and ``client_info`` are as the client sent them in
    ``initialize``; ``log_level`` is what ``logging/setLevel`` set (None: no
    ``notifications/message`` at all, the revision's default being the server's
    choice); ``subscriptions`` the URIs of ``resources/subscribe``.
    """

    revision: str
    capabilities: JsonObject
    client_info: JsonObject
    log_level: str | None = None
    subscriptions: frozenset[str] = frozenset()
    _modern_caps: JsonObject = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # Made once per session value: every request of the session carries them.
        object.__setattr__(self, "_modern_caps", self.modern_capabilities())

    def has(self, feature: str) -> bool:
        """Whether this session's revision has ``feature`` (see ``FEATURES``)."""
        return self.revision in FEATURES[feature]

    def modern_capabilities(self) -> JsonObject:
        """The client's capabilities as a 2026-07-28 request declares them.

        A revision without elicitation (2025-03-26) or without URL elicitation
        (before 2025-11-25) cannot receive those requests, whatever it declared.
        """
        caps = dict(self.capabilities)
        elicitation = caps.get("elicitation")
        if not self.has("elicitation"):
            caps.pop("elicitation", None)
        elif not self.has("url_elicitation") and isinstance(elicitation, dict):
            caps["elicitation"] = {k: v for k, v in elicitation.items() if k != "url"}
        caps.pop("tasks", None)  # 2025-11-25's in-core tasks are not served
        return caps

    def modern_meta(self, legacy_meta: JsonValue) -> JsonObject:
        """The ``_meta`` of the modern request for a legacy one.

        The client's own keys (``progressToken``, its own prefixes) are kept; the
        reserved ``io.modelcontextprotocol/`` keys are this session's, never the
        client's, so a legacy request cannot claim another version or capability.
        """
        meta: JsonObject = {}
        if isinstance(legacy_meta, dict):
            meta = {
                k: v
                for k, v in legacy_meta.items()
                if not k.startswith(_RESERVED_PREFIX)
            }
        meta[wire.META_PROTOCOL_VERSION] = wire.PROTOCOL_VERSION
        meta[wire.META_CLIENT_CAPABILITIES] = self._modern_caps
        meta[wire.META_CLIENT_INFO] = self.client_info
        if self.log_level is not None:
            meta[wire.META_LOG_LEVEL] = self.log_level
        return meta

    def modern_params(self, params: JsonValue) -> JsonObject | None:
        """The params of the modern request for a legacy request's ``params``
        (None: they are neither absent nor an object)."""
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return None
        out = {k: v for k, v in params.items() if k not in _DROPPED}
        out["_meta"] = self.modern_meta(params.get("_meta"))
        return out


_RESERVED_PREFIX: Final = "io.modelcontextprotocol/"

#: Which revisions have what the translation depends on.
FEATURES: Final = {
    # structuredContent and outputSchema (2025-06-18, "Structured content")
    "structured": frozenset({"2025-11-25", "2025-06-18"}),
    # elicitation/create (2025-06-18) and its URL mode (2025-11-25)
    "elicitation": frozenset({"2025-11-25", "2025-06-18"}),
    "url_elicitation": frozenset({"2025-11-25"}),
    # the resource_link content block (2025-06-18)
    "resource_link": frozenset({"2025-11-25", "2025-06-18"}),
    # titled and multi-select enums in forms, defaults (2025-11-25, SEP-1330/1034)
    "rich_forms": frozenset({"2025-11-25"}),
}


def negotiate(params: JsonValue) -> Session:
    """Return the session an ``initialize`` with ``params`` opens.

    Raises:
        BadInitialize: if ``params`` lacks a string ``protocolVersion``, an object
            ``capabilities`` or a ``clientInfo`` with string ``name`` and ``version``,
            or if those two take more than ``MAX_CLIENT_BYTES``.
    """
    if not isinstance(params, dict):
        raise BadInitialize(
            "initialize needs params (an InitializeRequestParams object)"
        )
    requested = params.get("protocolVersion")
    capabilities = params.get("capabilities")
    info = params.get("clientInfo")
    if not isinstance(requested, str):
        raise BadInitialize("initialize needs params.protocolVersion, a string")
    if not isinstance(capabilities, dict):
        raise BadInitialize("initialize needs params.capabilities, an object")
    if not (
        isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    ):
        raise BadInitialize(
            "initialize needs params.clientInfo with string 'name' and 'version'"
        )
    kept = len(encode_message(capabilities)) + len(encode_message(info))
    if kept > MAX_CLIENT_BYTES:
        raise BadInitialize(
            f"initialize's capabilities and clientInfo take {kept} bytes; a session "
            f"keeps at most {MAX_CLIENT_BYTES}: leave out what the server does not "
            "need (icons as URLs, not data)"
        )
    revision = requested if requested in REVISIONS else LATEST
    return Session(revision, capabilities, info)
