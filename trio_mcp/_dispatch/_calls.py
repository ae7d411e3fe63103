"""Calls of tools, prompts and resources, and what runs around every one.

The handlers of ``tools/call``, ``prompts/get`` and ``resources/read``. Each call
runs under a ``ToolContext``, a capability check, the declaration's deadline, and
leaves a ``Receipt`` however it ends. This is the one place that
catches bare ``Exception``: a failing handler becomes -32603 with a reference, its
traceback goes to the log, and the server goes on. Refusals, bad arguments, tool
errors and timeouts become error results (for tools) or faults (for the others).
"""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Literal

import trio

from .. import _otel
from .._authority import (
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
from .._protocol._headers import check_param_headers
from .._protocol._jsonrpc import Fault, Request
from .._protocol._state import StateSealer
from ._catalog import Catalog
from ._request import Caller, Stop, invalid, missing_capability
from ._rounds import BadRound, ask, open_round, pre_answered

__all__ = ["REFUSED", "Calls", "message_chain", "qualified"]

log = logging.getLogger("trio_mcp")

#: Application code (outside JSON-RPC's reserved range) for a refused prompt or read.
REFUSED = -31403


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


class Calls:
    """The dispatcher's call handlers and what runs around every call.

    A base of ``Dispatcher``, which sets these attributes; they are read on each
    call, so replacing one (a new catalog, a test's sealer) takes effect at once.
    """

    catalog: Catalog
    sealer: StateSealer
    receipts: ReceiptSink | None
    redact: Callable[[str], str]

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
            raise invalid(request, "tools/call needs params.name (a string)")
        decl = self.catalog.tools.get(name)
        if decl is None:
            raise invalid(
                request, f"unknown tool '{name}'; call tools/list for the catalog"
            )
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise invalid(request, "params.arguments must be an object")
        if caller.headers is not None and decl.param_headers:
            fault = check_param_headers(
                caller.headers, decl.param_headers, arguments, request.id
            )
            if fault is not None:
                raise Stop(fault)

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
            raise invalid(request, "prompts/get needs params.name (a string)")
        decl = self.catalog.prompts.get(name)
        if decl is None:
            raise invalid(
                request, f"unknown prompt '{name}'; call prompts/list for the catalog"
            )
        arguments = params.get("arguments")

        async def run() -> object:
            # Checked here, after the grant check, so a refused caller learns
            # nothing about the arguments and a bad call still leaves a receipt.
            problems = decl.check_arguments(arguments)
            if problems:
                raise invalid(
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
            raise invalid(request, "resources/read needs params.uri (a string)")
        found = self.catalog.find_resource(uri)
        if found is None:
            raise invalid(request, f"resource not found: {uri}", {"uri": uri})
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
        ctx = _context(decl, request, meta, caller, emit, granted, deadline)
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
                raise invalid(request, str(exc), exc.data) from None
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
                except Stop:
                    outcome = "invalid"
                    raise
                except Refusal as exc:
                    outcome, error_type = "refused", qualified(type(exc))
                    return self._refused(request, kind, exc.capability)
                except MissingClientCapability as exc:
                    outcome, error_type = "refused", qualified(type(exc))
                    raise missing_capability(request, exc) from None
                except Exception as exc:
                    error_type = qualified(type(exc))
                    if kind == "resource" and isinstance(exc, ResourceNotFound):
                        outcome = "invalid"
                        raise invalid(
                            request, f"resource not found: {name}", {"uri": name}
                        ) from None
                    if isinstance(decl, Tool) and isinstance(exc, decl.errors):
                        outcome = "error"
                        return self._tool_error(exc)
                    outcome = "internal"
                    error_ref, stop = _internal_error(decl, kind, name, request, exc)
                    raise stop from None
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
            _annotate_span(kind, name, request, outcome, error_type)
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
            raise missing_capability(request, exc) from None

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
            raise invalid(request, text, detail)
        return _error_result(text, detail)

    def _refused(self, request: Request, kind: str, capability: str) -> JsonObject:
        text = f"refused: this call needs the capability '{capability}', which this caller lacks"
        detail: JsonObject = {"kind": "refused", "capability": capability}
        if kind != "tool":
            raise Stop(Fault(REFUSED, text, detail, request.id, 403))
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
            raise Stop(Fault(wire.INTERNAL_ERROR, text, detail, request.id, 504))
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


def _context(
    decl: Tool[..., object] | Prompt[..., object] | Resource[..., object],
    request: Request,
    meta: JsonObject,
    caller: Caller,
    emit: Emit,
    granted: frozenset[str],
    deadline: float,
) -> ToolContext:
    """The ``ToolContext`` of one call, before its grants are checked."""
    client_info = meta.get(wire.META_CLIENT_INFO)
    return ToolContext(
        request_id=request.id,
        principal=caller.principal,
        client=client_info if isinstance(client_info, dict) else None,
        client_capabilities=meta[wire.META_CLIENT_CAPABILITIES],  # type: ignore[arg-type]
        deadline=None if decl.timeout is None else deadline,
        declared=decl.required,
        granted=granted,
        progress_token=_progress_token(meta),
        log_level=meta.get(wire.META_LOG_LEVEL),  # type: ignore[arg-type]
        emit=emit,
    )


def _internal_error(
    decl: Tool[..., object] | Prompt[..., object] | Resource[..., object],
    kind: str,
    name: str,
    request: Request,
    exc: Exception,
) -> tuple[str, Stop]:
    """Log an unexpected failure under a fresh reference; the -32603 that names it."""
    error_ref = secrets.token_hex(6)
    log.error(
        "%s %r (%s) failed; error reference %s",
        kind,
        name,
        decl.declaration,
        error_ref,
        exc_info=exc,
    )
    return error_ref, Stop(
        Fault(
            wire.INTERNAL_ERROR,
            f"internal error (reference {error_ref}); the server's log has the details",
            {"reference": error_ref},
            request.id,
            500,
        )
    )


def _annotate_span(
    kind: str,
    name: str,
    request: Request,
    outcome: Outcome,
    error_type: str | None,
) -> None:
    """Put the call's name and outcome on the request's span."""
    _otel.annotate(
        {
            f"mcp.{kind}.{'uri' if kind == 'resource' else 'name'}": name,
            "mcp.outcome": outcome,
        },
        name=None if kind == "resource" else f"{request.method} {name}",
        error=error_type,
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
