"""One request in, one reply out; notifications on the side. Knows no transport.

The checks run in the order of mcp-2026-07-28.md §4.2: removed methods, ``_meta``,
(HTTP) the version header, the version, (HTTP) routing headers, the method and its
capability, the log level; then the method runs. Each failure is a ``Fault`` value.

Calls of tools, prompts and resources run under a ``ToolContext``, a capability
check, the declaration's deadline, and leave a ``Receipt`` however they end. This
is the one place that catches bare ``Exception``: a failing handler becomes -32603
with a reference, its traceback goes to the log, and the server goes on.
"""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Literal

import attrs
import trio

from .. import _otel
from .._authority import (
    Grants,
    Outcome,
    Receipt,
    ReceiptSink,
    close_registry,
    mask_write_only,
    open_registry,
    resolve_grants,
)
from .._authority import receipt_logger as _receipt_logger
from .._authority import redact as redact_secrets
from .._context import (
    CancelToken,
    Emit,
    MissingClientCapability,
    Refusal,
    ToolContext,
    reset_current,
    set_current,
)
from .._declare import NeedsInput, Prompt, Resource, Tool
from .._errors import DecodeError, ResourceNotFound
from .._json import JsonObject, JsonValue
from .._protocol import _wire as wire
from .._protocol._headers import (
    check_param_headers,
    check_routing_headers,
    check_version_header,
)
from .._protocol._jsonrpc import Fault, Request
from .._protocol._state import StateSealer
from ._broadcast import Broadcast, Change, ListKind
from ._catalog import Catalog
from ._listen import LISTEN_METHOD, BadFilter, honour, is_updatable, stream
from ._pages import InvalidCursor, page
from ._rounds import BadRound, ask, open_round, pre_answered

__all__ = ["Caller", "Dispatcher", "Reply"]

log = logging.getLogger("trio_mcp")

LIST_TTL_MS = 3_600_000
#: Application code (outside JSON-RPC's reserved range) for a refused prompt or read.
REFUSED = -31403


@attrs.frozen
class Caller:
    """Who is calling, and how: the principal, the host's grants, HTTP headers."""

    principal: object | None = None
    allow: Grants = ()
    closing: trio.Event | None = None
    """Set when the transport shuts down gracefully; listen streams then end."""
    headers: Mapping[str, str] | None = None
    """Lower-cased HTTP header names to values; None off HTTP."""
    scope: trio.CancelScope | None = None
    """The transport's cancel scope for this request, reported by ``ctx.cancel``."""


@attrs.frozen
class Reply:
    """A JSON-RPC response and the HTTP status Streamable HTTP should use."""

    message: JsonObject
    http_status: int = 200


class _Stop(Exception):
    """Internal: end the request with this fault."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault


def _invalid(
    request: Request, message: str, data: JsonValue = None, status: int = 200
) -> _Stop:
    return _Stop(Fault(wire.INVALID_PARAMS, message, data, request.id, status))


def message_chain(exc: BaseException) -> list[str]:
    """Return ``exc``'s message and those of its ``__cause__`` chain."""
    out: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        out.append(str(current) or type(current).__name__)
        current = current.__cause__
    return out


def qualified(exc_type: type[BaseException]) -> str:
    """Return ``module.QualName`` of an exception class."""
    return f"{exc_type.__module__}.{exc_type.__qualname__}"


def _error_result(text: str, detail: JsonObject) -> JsonObject:
    return {
        "content": [{"type": "text", "text": text}],
        "isError": True,
        "_meta": {wire.META_ERROR: detail},
    }


Handler = Callable[
    [Request, JsonObject, JsonObject, Caller, Emit], Awaitable[JsonObject]
]


class Dispatcher:
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
            methods["tools/list"] = self._tools_list
            methods["tools/call"] = self._tools_call
        if "resources" in self.capabilities:
            methods["resources/list"] = self._resources_list
            methods["resources/templates/list"] = self._templates_list
            methods["resources/read"] = self._resources_read
        if "prompts" in self.capabilities:
            methods["prompts/list"] = self._prompts_list
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
            except _Stop as stop:
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
            _Stop: with the first failing check's fault.
        """
        method = request.method
        if method in wire.REMOVED_METHODS:
            raise _Stop(
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
            raise _invalid(
                request, "params with _meta is required on every request", None, 400
            )
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            raise _invalid(
                request, "params._meta is required on every request", None, 400
            )
        version = meta.get(wire.META_PROTOCOL_VERSION)
        if not isinstance(version, str):
            raise _invalid(
                request,
                f"params._meta must carry '{wire.META_PROTOCOL_VERSION}'",
                None,
                400,
            )
        if not isinstance(meta.get(wire.META_CLIENT_CAPABILITIES), dict):
            raise _invalid(
                request,
                f"params._meta must carry '{wire.META_CLIENT_CAPABILITIES}' (an object)",
                None,
                400,
            )
        headers = caller.headers
        if headers is not None:
            fault = check_version_header(headers, version, request.id)
            if fault is not None:
                raise _Stop(fault)
        if version not in wire.SUPPORTED_VERSIONS:
            raise _Stop(
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
                raise _Stop(fault)
        if method not in self.methods:
            raise _Stop(
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
            raise _invalid(
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

    def _list(
        self,
        request: Request,
        params: JsonObject,
        kind: str,
        scope_kind: str,
        items: list[JsonObject],
        key: str,
    ) -> JsonObject:
        try:
            result = page(kind, items, params, key)
        except InvalidCursor as exc:
            raise _invalid(request, f"invalid cursor: {exc}") from None
        result["ttlMs"] = LIST_TTL_MS
        result["cacheScope"] = (
            "private" if self.catalog.guarded(scope_kind) else "public"
        )
        return result

    async def _tools_list(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        return self._list(
            request, params, "tools", "tools", self.catalog.wire_tools, "tools"
        )

    async def _prompts_list(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        return self._list(
            request, params, "prompts", "prompts", self.catalog.wire_prompts, "prompts"
        )

    async def _resources_list(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        return self._list(
            request,
            params,
            "resources",
            "resources",
            self.catalog.wire_resources,
            "resources",
        )

    async def _templates_list(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        return self._list(
            request,
            params,
            "templates",
            "resources",
            self.catalog.wire_templates,
            "resourceTemplates",
        )

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
            raise _invalid(
                request, "completion/complete needs 'ref' and 'argument' objects"
            )
        if not isinstance(argument.get("name"), str) or not isinstance(
            argument.get("value"), str
        ):
            raise _invalid(request, "argument needs string 'name' and 'value'")
        kind = ref.get("type")
        if kind == "ref/prompt":
            if ref.get("name") not in self.catalog.prompts:
                raise _invalid(request, f"unknown prompt {ref.get('name')!r}")
        elif kind == "ref/resource":
            uri = ref.get("uri")
            if not any(r.uri == uri for r in self.catalog.resources):
                raise _invalid(
                    request, "unknown resource or template URI", {"uri": uri}
                )
        else:
            raise _invalid(request, "ref.type must be 'ref/prompt' or 'ref/resource'")
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
            raise _invalid(request, str(exc)) from None
        return await stream(
            request.id, honoured, wants, self.broadcast, emit, caller.closing
        )

    # -- calls ------------------------------------------------------------------------------
    async def _tools_call(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        name = params.get("name")
        if not isinstance(name, str):
            raise _invalid(request, "tools/call needs params.name (a string)")
        decl = self.catalog.tools.get(name)
        if decl is None:
            raise _invalid(
                request, f"unknown tool '{name}'; call tools/list for the catalog"
            )
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise _invalid(request, "params.arguments must be an object")
        if caller.headers is not None and decl.param_headers:
            fault = check_param_headers(
                caller.headers, decl.param_headers, arguments, request.id
            )
            if fault is not None:
                raise _Stop(fault)

        async def run() -> object:
            return await decl.dispatch(arguments)

        return await self.invoke(
            decl, "tool", name, run, request, params, meta, caller, emit
        )

    async def _prompts_get(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        name = params.get("name")
        if not isinstance(name, str):
            raise _invalid(request, "prompts/get needs params.name (a string)")
        decl = self.catalog.prompts.get(name)
        if decl is None:
            raise _invalid(
                request, f"unknown prompt '{name}'; call prompts/list for the catalog"
            )
        arguments = params.get("arguments")

        async def run() -> object:
            # Checked here, after the grant check, so a refused caller learns
            # nothing about the arguments and a bad call still leaves a receipt.
            problems = decl.check_arguments(arguments)
            if problems:
                raise _invalid(
                    request,
                    "invalid prompt arguments:\n" + "\n".join(problems),
                    {"problems": list(problems)},
                )
            return await decl.dispatch(arguments)

        return await self.invoke(
            decl, "prompt", name, run, request, params, meta, caller, emit
        )

    async def _resources_read(
        self,
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise _invalid(request, "resources/read needs params.uri (a string)")
        found = self.catalog.find_resource(uri)
        if found is None:
            raise _invalid(request, f"resource not found: {uri}", {"uri": uri})
        decl, variables = found

        async def run() -> object:
            return await decl.dispatch(uri, variables)

        return await self.invoke(
            decl, "resource", uri, run, request, params, meta, caller, emit
        )

    async def invoke(
        self,
        decl: Tool[..., object] | Prompt[..., object] | Resource[..., object],
        kind: Literal["tool", "prompt", "resource"],
        name: str,
        run: Callable[[], Awaitable[object]],
        request: Request,
        params: JsonObject,
        meta: JsonObject,
        caller: Caller,
        emit: Emit,
    ) -> JsonObject:
        """Run one call under its context, grant check and deadline; leave a receipt."""
        started = time.time()
        t0 = time.perf_counter()
        granted = resolve_grants(caller.allow, caller.principal)
        required = decl.required
        deadline = (
            trio.current_time() + decl.timeout if decl.timeout is not None else math.inf
        )
        client_info = meta.get(wire.META_CLIENT_INFO)
        ctx = ToolContext(
            request_id=request.id,
            principal=caller.principal,
            client=client_info if isinstance(client_info, dict) else None,
            client_capabilities=meta[wire.META_CLIENT_CAPABILITIES],  # type: ignore[arg-type]
            deadline=None if decl.timeout is None else deadline,
            declared=required,
            granted=granted,
            progress_token=_progress_token(meta),
            log_level=meta.get(wire.META_LOG_LEVEL),  # type: ignore[arg-type]
            emit=emit,
        )
        outcome: Outcome = "cancelled"
        error_type: str | None = None
        error_ref: str | None = None
        secrets_token = open_registry()
        token = set_current(ctx)
        try:
            missing = sorted(required - granted)
            if missing:
                outcome = "refused"
                return self._refused(request, kind, missing[0])
            # requestState binds to the arguments with secrets masked: no key holds one.
            # Masking is only needed where state is opened or sealed.
            bound = _state_params(decl, params) if "requestState" in params else params
            try:
                opened = open_round(
                    self.sealer, request.method, bound, ctx.principal_id
                )
            except BadRound as exc:
                outcome = "invalid"
                raise _invalid(request, str(exc), exc.data) from None
            ctx.input_responses, ctx.state = opened.responses, opened.state
            if opened.unsolicited:
                run = pre_answered(run, ctx, opened.unsolicited)
            # A deadline scope costs a little on every call: only make one when needed.
            deadline_scope = (
                trio.CancelScope(deadline=deadline)
                if decl.timeout is not None
                else None
            )
            ctx.cancel = CancelToken(caller.scope, deadline_scope)
            with deadline_scope or contextlib.nullcontext():
                try:
                    value = await run()
                except DecodeError as exc:
                    outcome, error_type = "invalid", qualified(type(exc))
                    return self._invalid_arguments(request, kind, exc)
                except _Stop:
                    outcome = "invalid"
                    raise
                except Refusal as exc:
                    outcome, error_type = "refused", qualified(type(exc))
                    return self._refused(request, kind, exc.capability)
                except MissingClientCapability as exc:
                    outcome, error_type = "refused", qualified(type(exc))
                    raise _missing_capability(request, exc) from None
                except Exception as exc:
                    error_type = qualified(type(exc))
                    if kind == "resource" and isinstance(exc, ResourceNotFound):
                        outcome = "invalid"
                        raise _invalid(
                            request, f"resource not found: {name}", {"uri": name}
                        ) from None
                    if isinstance(decl, Tool) and isinstance(exc, decl.errors):
                        outcome = "error"
                        return self._tool_error(exc)
                    outcome = "internal"
                    error_ref = secrets.token_hex(6)
                    log.error(
                        "%s %r (%s) failed; error reference %s",
                        kind,
                        name,
                        decl.declaration,
                        error_ref,
                        exc_info=exc,
                    )
                    raise _Stop(
                        Fault(
                            wire.INTERNAL_ERROR,
                            f"internal error (reference {error_ref}); the server's log has "
                            "the details",
                            {"reference": error_ref},
                            request.id,
                            500,
                        )
                    ) from None
            if deadline_scope is not None and deadline_scope.cancelled_caught:
                outcome = "timeout"
                return self._timed_out(request, kind, decl.timeout)
            if isinstance(value, NeedsInput):
                outcome = "refused"  # until the client is known to support the input
                result = self._ask(value, request, _state_params(decl, params), ctx)
            else:
                result = self._shape(decl, kind, name, value, request)
            outcome = "ok"
            return result
        finally:
            ctx.finish()
            reset_current(token)
            receipt = Receipt(
                kind=kind,
                declaration=decl.declaration,
                name=name,
                required=required,
                granted=granted,
                outcome=outcome,
                error_type=error_type,
                principal_id=ctx.principal_id,
                client=ctx.client.get("name") if ctx.client else None,  # type: ignore[arg-type]
                request_id=request.id,
                started=started,
                duration=time.perf_counter() - t0,
                trace_id=_otel.parse_traceparent(meta),
                error_ref=error_ref,
            )
            _otel.annotate(
                {
                    f"mcp.{kind}.{'uri' if kind == 'resource' else 'name'}": name,
                    "mcp.outcome": outcome,
                },
                name=None if kind == "resource" else f"{request.method} {name}",
                error=error_type,
            )
            try:
                self.log_receipt(receipt)
                if self.receipts is not None:
                    with trio.CancelScope(shield=True):
                        await self.deliver(receipt)
            finally:
                close_registry(secrets_token)

    def _shape(
        self,
        decl: Tool[..., object] | Prompt[..., object] | Resource[..., object],
        kind: str,
        name: str,
        value: object,
        request: Request,
    ) -> JsonObject:
        if isinstance(decl, Tool):
            return decl.reply.result(value)
        if isinstance(decl, Prompt):
            out: JsonObject = {}
            if decl.described.summary:
                out["description"] = decl.described.summary
            out["messages"] = decl.messages(value)
            return out
        return {
            "contents": decl.contents(name, value),
            "ttlMs": 0 if decl.ttl is None else round(decl.ttl * 1000),
            "cacheScope": "private",
        }

    def _ask(
        self, needs: NeedsInput, request: Request, params: JsonObject, ctx: ToolContext
    ) -> JsonObject:
        try:
            return ask(
                self.sealer,
                needs,
                request.method,
                params,
                ctx.principal_id,
                ctx.client_capabilities,
            )
        except MissingClientCapability as exc:
            raise _missing_capability(request, exc) from None

    # -- failures as results ----------------------------------------------------------------
    def _invalid_arguments(
        self, request: Request, kind: str, exc: DecodeError
    ) -> JsonObject:
        lines = [p.line() for p in exc.problems]
        detail: JsonObject = {
            "kind": "invalid_arguments",
            "problems": [{"path": p.path, "message": p.message} for p in exc.problems],
        }
        text = (
            "invalid arguments; fix every input listed and call again:\n"
            + "\n".join(lines)
        )
        if kind != "tool":
            raise _invalid(request, text, detail)
        return _error_result(text, detail)

    def _refused(self, request: Request, kind: str, capability: str) -> JsonObject:
        text = f"refused: this call needs the capability '{capability}', which this caller lacks"
        detail: JsonObject = {"kind": "refused", "capability": capability}
        if kind != "tool":
            raise _Stop(Fault(REFUSED, text, detail, request.id, 403))
        return _error_result(text, detail)

    def _tool_error(self, exc: BaseException) -> JsonObject:
        chain = [self.redact(redact_secrets(m)) for m in message_chain(exc)]
        text = "\n".join([chain[0], *(f"caused by: {m}" for m in chain[1:])])
        messages: list[JsonValue] = list(chain)
        detail: JsonObject = {
            "kind": "error",
            "type": type(exc).__name__,
            "messages": messages,
        }
        return _error_result(text, detail)

    def _timed_out(
        self, request: Request, kind: str, timeout: float | None
    ) -> JsonObject:
        text = f"the call timed out after {timeout:g} seconds and was cancelled"
        detail: JsonObject = {"kind": "timeout", "seconds": timeout}
        if kind != "tool":
            raise _Stop(Fault(wire.INTERNAL_ERROR, text, detail, request.id, 504))
        return _error_result(text, detail)

    @staticmethod
    def log_receipt(receipt: Receipt) -> None:
        """Log a receipt as a structured record on ``trio_mcp.receipts``."""
        if _receipt_logger.isEnabledFor(logging.INFO):
            _receipt_logger.info("receipt", extra={"receipt": receipt.as_record()})

    async def deliver(self, receipt: Receipt) -> None:
        """Hand a receipt to the ``receipts=`` sink; never fail the call."""
        if self.receipts is None:
            return
        try:
            with trio.move_on_after(5):
                pending = self.receipts(receipt)
                if pending is not None:
                    await pending
        except Exception:
            log.exception("the receipts sink failed; the call's result is unaffected")


def _missing_capability(request: Request, exc: MissingClientCapability) -> _Stop:
    """-32021 (HTTP 400): the call needs a client capability the request lacks."""
    return _Stop(
        Fault(
            wire.MISSING_CLIENT_CAPABILITY,
            str(exc),
            {"requiredCapabilities": exc.required},
            request.id,
            400,
        )
    )


def _state_params(
    decl: Tool[..., object] | Prompt[..., object] | Resource[..., object],
    params: JsonObject,
) -> JsonObject:
    """``params`` with write-only (``Secret``) arguments masked, for state bindings."""
    if not isinstance(decl, Tool) or not isinstance(params.get("arguments"), dict):
        return params
    return {
        **params,
        "arguments": mask_write_only(params["arguments"], decl.plan.input_schema),
    }


def _progress_token(meta: JsonObject) -> str | int | None:
    token = meta.get(wire.META_PROGRESS_TOKEN)
    if isinstance(token, str) or (
        isinstance(token, int) and not isinstance(token, bool)
    ):
        return token
    return None
