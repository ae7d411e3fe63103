"""One request in, one reply out; notifications on the side. Knows no transport.

The checks run in the order of mcp-2026-07-28.md §4.2: removed methods, ``_meta``,
(HTTP) the version header, the version, (HTTP) routing headers, the method and its
capability, the log level; then the method runs. Each failure is a ``Fault`` value.

Calls of tools, prompts and resources (``tools/call``, ``prompts/get``,
``resources/read``) are inherited from ``Calls`` in ``_calls``: context, grants,
deadline, receipts and the one ``except Exception``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs
import trio

from .. import _otel
from .._authority import ReceiptSink
from .._context import Emit
from .._json import JsonObject
from .._protocol import _wire as wire
from .._protocol._headers import check_routing_headers, check_version_header
from .._protocol._jsonrpc import Fault, Request
from .._protocol._state import StateSealer
from ._broadcast import Broadcast, Change, ListKind
from ._calls import Calls
from ._catalog import Catalog
from ._listen import LISTEN_METHOD, BadFilter, honour, is_updatable, stream
from ._pages import InvalidCursor, page
from ._request import Caller as Caller
from ._request import Stop, invalid

__all__ = ["Caller", "Dispatcher", "Reply"]

LIST_TTL_MS = 3_600_000

#: Each list method: what ``page`` calls the items (for cursors), the catalog kind
#: whose guards make the listing private, the listed entries, and the result key.
LISTS: dict[str, tuple[str, str, Callable[[Catalog], list[JsonObject]], str]] = {
    "tools/list": ("tools", "tools", lambda c: c.wire_tools, "tools"),
    "prompts/list": ("prompts", "prompts", lambda c: c.wire_prompts, "prompts"),
    "resources/list": (
        "resources",
        "resources",
        lambda c: c.wire_resources,
        "resources",
    ),
    "resources/templates/list": (
        "templates",
        "resources",
        lambda c: c.wire_templates,
        "resourceTemplates",
    ),
}


@attrs.frozen
class Reply:
    """A JSON-RPC response and the HTTP status Streamable HTTP should use."""

    message: JsonObject
    http_status: int = 200


Handler = Callable[
    [Request, JsonObject, JsonObject, Caller, Emit], Awaitable[JsonObject]
]


class Dispatcher(Calls):
    """Answers requests for one catalog. Transports call ``handle``."""

    def __init__(
        self,
        catalog: Catalog,
        *,
        name: str,
        version: str,
        instructions: str | None = None,
        receipts: ReceiptSink | None = None,
        redact: Callable[[str], str] = lambda text: text,
        sealer: StateSealer | None = None,
        dynamic: bool = False,
    ) -> None:
        self.catalog = catalog
        self.dynamic = dynamic
        """Whether the catalog may be replaced (then ``listChanged`` is advertised)."""
        self.broadcast = Broadcast()
        """Changes for listen streams: list changes and resource updates."""
        self.sealer = sealer if sealer is not None else StateSealer.from_config()
        """Seals and opens multi round-trip ``requestState``."""
        self.server_info: JsonObject = {"name": name, "version": version}
        self.instructions = instructions
        self.receipts = receipts
        self.redact = redact
        self.capabilities = self._capabilities()
        self.methods = self._methods()

    def _methods(self) -> dict[str, Handler]:
        methods: dict[str, Handler] = {
            "server/discover": self._discover,
            LISTEN_METHOD: self._listen,
        }
        if "tools" in self.capabilities:
            methods["tools/list"] = self._lister("tools/list")
            methods["tools/call"] = self._tools_call
        if "resources" in self.capabilities:
            methods["resources/list"] = self._lister("resources/list")
            methods["resources/templates/list"] = self._lister(
                "resources/templates/list"
            )
            methods["resources/read"] = self._resources_read
        if "prompts" in self.capabilities:
            methods["prompts/list"] = self._lister("prompts/list")
            methods["prompts/get"] = self._prompts_get
        if "completions" in self.capabilities:
            methods["completion/complete"] = self._complete
        return methods

    def _capabilities(self) -> JsonObject:
        # A dynamic catalog serves every kind, even while empty, so capabilities
        # (and the listen filters they allow) stay put when the catalog changes.
        dynamic = self.dynamic
        caps: JsonObject = {"logging": {}}
        if self.catalog.tools or dynamic:
            caps["tools"] = {"listChanged": dynamic}
        if self.catalog.resources or dynamic:
            caps["resources"] = {
                "subscribe": any(r.updatable for r in self.catalog.resources),
                "listChanged": dynamic,
            }
        if self.catalog.prompts or dynamic:
            caps["prompts"] = {"listChanged": dynamic}
        if self.catalog.prompts or self.catalog.templates:
            caps["completions"] = {}
        return caps

    # -- changes: a new catalog, updated resources --------------------------------
    def replace(self, catalog: Catalog) -> list[ListKind]:
        """Serve ``catalog`` from now on; announce and return the kinds whose lists changed.

        The swap has no checkpoint, so no request sees half of it.
        """
        old = self.catalog
        changed: list[ListKind] = []
        if old.wire_tools != catalog.wire_tools:
            changed.append("tools")
        if old.wire_prompts != catalog.wire_prompts:
            changed.append("prompts")
        if (old.wire_resources, old.wire_templates) != (
            catalog.wire_resources,
            catalog.wire_templates,
        ):
            changed.append("resources")
        self.catalog = catalog
        self.capabilities = self._capabilities()
        self.methods = self._methods()
        for kind in changed:
            self.broadcast.publish(Change.list_changed(kind))
        return changed

    def publish(self, change: Change) -> None:
        """Publish a resource update to the listen streams subscribed to its URI.

        Raises:
            ValueError: if no ``updatable=True`` declaration serves the URI.
        """
        if change.uri is not None and not is_updatable(self.catalog, change.uri):
            raise ValueError(
                f"resource '{change.uri}' is not served by an updatable declaration; "
                "declare it with @resource(..., updatable=True)"
            )
        self.broadcast.publish(change)

    # -- the entry point ------------------------------------------------------------
    async def handle(
        self,
        request: Request,
        caller: Caller,
        emit: Emit,
        *,
        scope: trio.CancelScope | None = None,
    ) -> Reply:
        """Answer one request.

        Args:
            request: The parsed request.
            caller: The principal, grants and (HTTP) headers.
            emit: Sends a notification tied to this request (progress, log).
            scope: The transport's cancel scope for this request; the handler's
                ``ctx.cancel`` reports it.
        """
        raw_meta = (
            request.params.get("_meta") if isinstance(request.params, dict) else None
        )
        with _otel.request_span(
            request.method, raw_meta if isinstance(raw_meta, dict) else None, request.id
        ):
            if scope is not None:
                caller = attrs.evolve(caller, scope=scope)
            try:
                method, params, meta = self.check(request, caller)
                result = await self.methods[method](request, params, meta, caller, emit)
            except Stop as stop:
                _otel.annotate({"rpc.jsonrpc.error_code": stop.fault.code})
                return Reply(stop.fault.to_message(), stop.fault.http_status)
        result["resultType"] = result.get("resultType", "complete")
        result_meta = result.setdefault("_meta", {})
        assert isinstance(result_meta, dict)
        result_meta[wire.META_SERVER_INFO] = self.server_info
        return Reply(wire.result_message(request.id, result))

    def check(
        self, request: Request, caller: Caller
    ) -> tuple[str, JsonObject, JsonObject]:
        """Run the ordered checks of §4.2; return the method, params and ``_meta``.

        Raises:
            Stop: with the first failing check's fault.
        """
        method = request.method
        if method in wire.REMOVED_METHODS:
            raise Stop(
                Fault(
                    wire.METHOD_NOT_FOUND,
                    f"method '{method}' does not exist in protocol revision "
                    f"{wire.PROTOCOL_VERSION}; this server supports only "
                    f"{', '.join(wire.SUPPORTED_VERSIONS)} (send server/discover)",
                    {"supported": list(wire.SUPPORTED_VERSIONS)},
                    request.id,
                    404,
                )
            )
        params = request.params
        if not isinstance(params, dict):
            raise invalid(
                request, "params with _meta is required on every request", None, 400
            )
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            raise invalid(
                request, "params._meta is required on every request", None, 400
            )
        version = meta.get(wire.META_PROTOCOL_VERSION)
        if not isinstance(version, str):
            raise invalid(
                request,
                f"params._meta must carry '{wire.META_PROTOCOL_VERSION}'",
                None,
                400,
            )
        if not isinstance(meta.get(wire.META_CLIENT_CAPABILITIES), dict):
            raise invalid(
                request,
                f"params._meta must carry '{wire.META_CLIENT_CAPABILITIES}' (an object)",
                None,
                400,
            )
        headers = caller.headers
        if headers is not None:
            fault = check_version_header(headers, version, request.id)
            if fault is not None:
                raise Stop(fault)
        if version not in wire.SUPPORTED_VERSIONS:
            raise Stop(
                Fault(
                    wire.UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                    {"supported": list(wire.SUPPORTED_VERSIONS), "requested": version},
                    request.id,
                    400,
                )
            )
        if headers is not None:
            fault = check_routing_headers(headers, method, params, request.id)
            if fault is not None:
                raise Stop(fault)
        if method not in self.methods:
            raise Stop(
                Fault(
                    wire.METHOD_NOT_FOUND,
                    f"method '{method}' is not served here",
                    None,
                    request.id,
                    404,
                )
            )
        level = meta.get(wire.META_LOG_LEVEL)
        if level is not None and level not in wire.LOG_LEVEL_RANK:
            raise invalid(
                request,
                f"'{wire.META_LOG_LEVEL}' must be one of {', '.join(wire.LOG_LEVELS)}",
            )
        return method, params, meta

    # -- discovery and lists --------------------------------------------------------------
    async def _discover(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        result: JsonObject = {
            "supportedVersions": list(wire.SUPPORTED_VERSIONS),
            "capabilities": self.capabilities,
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        result["ttlMs"] = LIST_TTL_MS
        result["cacheScope"] = "public"
        return result

    def _lister(self, method: str) -> Handler:
        """The handler of one of the ``LISTS`` methods: a page of the catalog's entries."""
        kind, scope_kind, entries, key = LISTS[method]

        async def handler(
            request: Request,
            params: JsonObject,
            meta: JsonObject,
            caller: Caller,
            emit: Emit,
        ) -> JsonObject:
            try:
                result = page(kind, entries(self.catalog), params, key)
            except InvalidCursor as exc:
                raise invalid(request, f"invalid cursor: {exc}") from None
            result["ttlMs"] = LIST_TTL_MS
            result["cacheScope"] = (
                "private" if self.catalog.guarded(scope_kind) else "public"
            )
            return result

        return handler

    async def _complete(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise invalid(
                request, "completion/complete needs 'ref' and 'argument' objects"
            )
        if not isinstance(argument.get("name"), str) or not isinstance(
            argument.get("value"), str
        ):
            raise invalid(request, "argument needs string 'name' and 'value'")
        kind = ref.get("type")
        if kind == "ref/prompt":
            if ref.get("name") not in self.catalog.prompts:
                raise invalid(request, f"unknown prompt {ref.get('name')!r}")
        elif kind == "ref/resource":
            uri = ref.get("uri")
            if not any(r.uri == uri for r in self.catalog.resources):
                raise invalid(request, "unknown resource or template URI", {"uri": uri})
        else:
            raise invalid(request, "ref.type must be 'ref/prompt' or 'ref/resource'")
        return {"completion": {"values": [], "total": 0, "hasMore": False}}

    async def _listen(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        try:
            honoured, wants = honour(
                params.get("notifications"), self.capabilities, self.catalog
            )
        except BadFilter as exc:
            raise invalid(request, str(exc)) from None
        return await stream(
            request.id, honoured, wants, self.broadcast, emit, caller.closing
        )
