"""Calls of tools, prompts and resources, and what runs around every one.

``tools/call``, ``prompts/get`` and ``resources/read`` find their entry, build the
call value (``ToolCall``, ``PromptGet``, ``ResourceRead``) and go through
``Calls.invoke``, the same for every adopter:

1. open the call: its ``ToolContext``, the host's grants, the secrets registry;
2. check the grants against the entry's ``caps`` (before any argument is read);
3. open a multi round-trip ``requestState`` if one was sent;
4. run ``dispatch`` under the entry's deadline, mapping what it raises to a ``Failure``;
5. guard the reply: check it against the spec, mask secrets, encode it;
6. leave a receipt, however the call ended.

Steps fail by raising ``Failure``; ``invoke`` catches it once, and is the one place
that catches bare ``Exception`` from a handler or from the way out: such a request
ends with -32603 and an error reference, its traceback goes to the log, and the
server goes on.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Literal, TypeVar

import attrs
import trio

from .. import _metrics, _otel
from .._authority import (
    Outcome,
    Receipt,
    ReceiptSink,
    close_registry,
    mask_write_only,
    open_registry,
    redact_json,
    resolve_grants,
)
from .._authority import receipt_logger as _receipt_logger
from .._context import (
    CancelToken,
    MissingClientCapability,
    Refusal,
    ToolContext,
    reset_current,
    set_current,
)
from .._declare import (
    ABSENT,
    NeedsInput,
    PromptGet,
    PromptReply,
    PromptSpec,
    ResourceRead,
    ResourceReply,
    ResourceSpec,
    ToolCall,
    ToolReply,
    ToolSpec,
    _Absent,
    content_blocks,
    qualified,
)
from .._declare._threads import ThreadsExhausted
from .._errors import DecodeError, InvalidReply, ResourceNotFound
from .._json import JsonObject, JsonValue, dumps, encode_message
from .._protocol import _wire as wire
from .._protocol._headers import check_param_headers
from .._protocol._state import Binding, StateSealer
from ._catalog import Catalog, Entry, ToolEntry
from ._request import Failure, Incoming, Reply
from ._rounds import BadRound, ask, open_round, pre_answered, round_binding

if TYPE_CHECKING:
    from .._tasks import TaskRunner

__all__ = ["Calls", "Kind"]

E = TypeVar("E")
log = logging.getLogger("trio_mcp")

Kind = Literal["tool", "prompt", "resource"]
AnyReply = ToolReply | PromptReply | ResourceReply
AnyEntry = Entry
_REPLY_TYPES: dict[Kind, type[AnyReply]] = {
    "tool": ToolReply,
    "prompt": PromptReply,
    "resource": ResourceReply,
}


@attrs.define(slots=True)
class Ending:
    """How one call ended: its result, or the failure it ended with."""

    outcome: Outcome
    reply: Reply | None = None
    failure: Failure | None = None
    error_type: str | None = None
    error_ref: str | None = None
    started: float = 0.0
    """Wall-clock time the call started (``time.time()``)."""
    duration: float = 0.0
    """Seconds the call took, up to its receipt."""


class Calls:
    """The dispatcher's call handlers and what runs around every call.

    A base of ``Dispatcher``, which sets these attributes; they are read on each
    call, so replacing one (a new catalog) takes effect at once.
    """

    catalog: Catalog
    sealer: StateSealer
    receipts: ReceiptSink | None
    server_info: JsonObject
    tasks: TaskRunner

    def encode_result(self, request_id: str | int, result: JsonObject) -> bytes:
        """The response carrying ``result``, with ``resultType`` and serverInfo, encoded.

        Raises:
            ValueError: for NaN or infinity; TypeError for a value that is not JSON.
        """
        result.setdefault("resultType", "complete")
        result_meta = result.setdefault("_meta", {})
        assert isinstance(result_meta, dict)
        result_meta[wire.META_SERVER_INFO] = self.server_info
        return encode_message(wire.result_message(request_id, result))

    # -- the three call methods ---------------------------------------------------------
    async def _tools_call(self, inc: Incoming) -> Reply:
        name, entry = _named(inc, self.catalog.tools, "tool")
        arguments = inc.params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise Failure.invalid("params.arguments must be an object")
        headers = inc.caller.headers
        if headers is not None and entry.param_headers:
            fault = check_param_headers(headers, entry.param_headers, arguments, inc.id)
            if fault is not None:
                raise Failure.of(fault)
        call = ToolCall(name, arguments or {}, inc.id, inc.caller.principal)
        if entry.spec.task is not None:
            return await self.tasks.call_tool(self, inc, entry, call)
        return await self.invoke(
            inc, entry, "tool", name, lambda: entry.adopter.dispatch(call)
        )

    async def _prompts_get(self, inc: Incoming) -> Reply:
        name, entry = _named(inc, self.catalog.prompts, "prompt")
        raw = inc.params.get("arguments")

        async def get() -> AnyReply:
            # Checked here, after the grant check, so a refused caller learns
            # nothing about the arguments and a bad call still leaves a receipt.
            arguments = _prompt_arguments(entry.spec, raw)
            return await entry.adopter.dispatch(
                PromptGet(name, arguments, inc.id, inc.caller.principal)
            )

        return await self.invoke(inc, entry, "prompt", name, get)

    async def _resources_read(self, inc: Incoming) -> Reply:
        uri = _required_str(inc, "uri", "resources/read")
        found = self.catalog.find_resource(uri)
        if found is None:
            raise Failure.invalid(f"resource not found: {uri}", {"uri": uri})
        entry, variables = found
        read = ResourceRead(uri, variables, inc.id, inc.caller.principal)

        async def run() -> AnyReply:
            _refuse_escaping(uri, entry.template.escape(variables))
            try:
                return await entry.adopter.dispatch(read)
            except ResourceNotFound as exc:
                raise Failure.invalid(
                    f"resource not found: {uri}", {"uri": uri}
                ) from exc

        return await self.invoke(inc, entry, "resource", uri, run)

    # -- around every call ---------------------------------------------------------------
    async def invoke(
        self,
        inc: Incoming,
        entry: AnyEntry,
        kind: Kind,
        name: str,
        run: Callable[[], Awaitable[AnyReply]],
    ) -> Reply:
        """Run one call through the steps of the module docstring; leave a receipt.

        Raises:
            Failure: when the call ends with a JSON-RPC error.
        """
        started, t0 = time.time(), time.perf_counter()
        ctx = self._context(inc, entry)
        secrets_token = open_registry()
        token = set_current(ctx)
        ending = Ending("cancelled")
        try:
            ending = await self._attempt(inc, entry, kind, run, ctx)
        finally:
            ctx.finish()
            reset_current(token)
            try:
                _annotate_span(kind, name, inc, ending)
                _metrics.note_outcome(ending.outcome)
                if self.receipts is not None or _receipt_logger.isEnabledFor(
                    logging.INFO
                ):
                    ending.started, ending.duration = started, time.perf_counter() - t0
                    await self._account(_receipt(inc, entry, (kind, name), ctx, ending))
            finally:
                close_registry(secrets_token)
        if ending.reply is not None:
            return ending.reply
        assert ending.failure is not None
        if kind == "tool" and ending.failure.tool_result:
            result = _error_result(ending.failure.message, ending.failure.data)
            return Reply(self.encode_result(inc.id, result))
        raise ending.failure

    async def _attempt(
        self,
        inc: Incoming,
        entry: AnyEntry,
        kind: Kind,
        run: Callable[[], Awaitable[AnyReply]],
        ctx: ToolContext,
    ) -> Ending:
        """Steps 2-5; every way they can end, as a value."""
        try:
            missing = sorted(entry.required - ctx.granted)
            if missing:
                raise Failure.refused(missing[0])
            run = self._open_round(inc, entry, ctx, run)
            reply = await self._run(inc, entry, run, ctx)
            return self._guard(inc, entry, kind, reply, ctx)
        except Failure as failure:
            return Ending(failure.outcome, failure=failure)
        except Exception as exc:
            internal = Failure.unexpected(
                exc, "%s %r (%s)", kind, entry.name, entry.declaration
            )
            return Ending("internal", failure=internal, error_ref=internal.reference)

    def _context(self, inc: Incoming, entry: AnyEntry) -> ToolContext:
        """The ``ToolContext`` of one call, with the host's grants resolved once."""
        meta = inc.meta
        timeout = entry.spec.timeout
        client_info = meta.get(wire.META_CLIENT_INFO)
        return ToolContext(
            request_id=inc.id,
            principal=inc.caller.principal,
            client=client_info if isinstance(client_info, dict) else None,
            client_capabilities=meta[wire.META_CLIENT_CAPABILITIES],  # type: ignore[arg-type]
            deadline=None if timeout is None else trio.current_time() + timeout,
            declared=entry.required,
            granted=resolve_grants(inc.caller.allow, inc.caller.principal),
            progress_token=_progress_token(meta),
            log_level=meta.get(wire.META_LOG_LEVEL),  # type: ignore[arg-type]
            emit=inc.emit,
        )

    def _open_round(
        self,
        inc: Incoming,
        entry: AnyEntry,
        ctx: ToolContext,
        run: Callable[[], Awaitable[AnyReply]],
    ) -> Callable[[], Awaitable[AnyReply]]:
        """Step 3: read the ``requestState`` of an earlier round into the context."""
        if "requestState" not in inc.params and "inputResponses" not in inc.params:
            return run
        try:
            opened = open_round(self.sealer, inc.params, _binding(inc, entry, ctx))
        except BadRound as exc:
            raise Failure.invalid(str(exc), exc.data) from None
        ctx.input_responses, ctx.state = opened.responses, opened.state
        if opened.unsolicited:
            return pre_answered(run, ctx, opened.unsolicited)
        return run

    async def _run(
        self,
        inc: Incoming,
        entry: AnyEntry,
        run: Callable[[], Awaitable[AnyReply]],
        ctx: ToolContext,
    ) -> AnyReply:
        """Step 4: ``dispatch`` under the deadline; what it raises, as failures."""
        # A deadline scope costs a little on every call: only make one when needed.
        deadline = (
            None if ctx.deadline is None else trio.CancelScope(deadline=ctx.deadline)
        )
        ctx.cancel = CancelToken(inc.scope, deadline)
        try:
            with deadline or contextlib.nullcontext():
                reply = await run()
        except DecodeError as exc:
            raise Failure.bad_arguments(
                [(p.path, p.message) for p in exc.problems], qualified(type(exc))
            ) from None
        except Refusal as exc:
            raise Failure.refused(exc.capability, qualified(type(exc))) from None
        except MissingClientCapability as exc:
            raise Failure.missing_capability(exc, qualified(type(exc))) from None
        except ThreadsExhausted as exc:
            raise Failure.busy(str(exc), qualified(type(exc))) from None
        if deadline is not None and deadline.cancelled_caught:
            raise Failure.timed_out(entry.spec.timeout or 0.0)
        return reply

    def _guard(
        self,
        inc: Incoming,
        entry: AnyEntry,
        kind: Kind,
        reply: AnyReply,
        ctx: ToolContext,
    ) -> Ending:
        """Step 5: the reply, checked against the spec, secrets masked, encodable.

        Raises:
            InvalidReply: if the reply does not fit what the entry declared.
            Failure: if it asks for input the client cannot give.
        """
        expected = _REPLY_TYPES[kind]
        if not isinstance(reply, expected):  # an adopter may return anything
            raise InvalidReply(
                entry.declaration,
                f"dispatch() returned a {type(reply).__name__}, not a "
                f"{expected.__name__}",
            )
        if reply.needs is not None:
            body = self.encode_result(inc.id, self._ask(inc, entry, reply.needs, ctx))
            return Ending("ok", reply=Reply(body))
        result = _result(entry, reply)
        # Encoded here, inside the call: the way out cannot fail after the receipt.
        body = self.encode_result(inc.id, redact_json(result))  # type: ignore[arg-type]
        if isinstance(reply, ToolReply) and reply.is_error:
            return Ending("error", reply=Reply(body), error_type=reply.error_type)
        return Ending("ok", reply=Reply(body))

    def _ask(
        self, inc: Incoming, entry: AnyEntry, needs: NeedsInput, ctx: ToolContext
    ) -> JsonObject:
        try:
            return ask(
                self.sealer, needs, _binding(inc, entry, ctx), ctx.client_capabilities
            )
        except MissingClientCapability as exc:
            raise Failure.missing_capability(exc) from None

    # -- step 6 ----------------------------------------------------------------------------
    async def _account(self, receipt: Receipt) -> None:
        """Leave the receipt of a call: to the log and the sink."""
        self.log_receipt(receipt)
        if self.receipts is not None:
            with trio.CancelScope(shield=True):
                await self.deliver(receipt)

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


# -- shaping replies ---------------------------------------------------------------------
def _result(entry: AnyEntry, reply: AnyReply) -> JsonObject:
    """The protocol result (without ``resultType``) for a reply of the entry's kind."""
    if isinstance(entry, ToolEntry) and isinstance(reply, ToolReply):
        return _tool_result(entry, reply)
    if isinstance(reply, PromptReply):
        return _prompt_result(reply)
    assert isinstance(reply, ResourceReply)
    assert isinstance(entry.spec, ResourceSpec)
    return _resource_result(entry.spec, reply)


def _tool_result(entry: ToolEntry, reply: ToolReply) -> JsonObject:
    """A ``CallToolResult`` (without ``resultType``) for a checked tool reply."""
    spec = entry.spec
    blocks: list[JsonValue] = [
        b.to_wire()
        for b in content_blocks(list(reply.content), where=entry.declaration)
    ]
    if reply.is_error:
        detail: JsonObject = {"kind": "error"} if reply.detail is None else reply.detail
        return {"content": blocks, "isError": True, "_meta": {wire.META_ERROR: detail}}
    structured = reply.structured
    if spec.output_schema is not None:
        if structured is ABSENT:
            raise InvalidReply(
                entry.declaration,
                "the tool declares an output schema but the reply has no structured content",
            )
        if entry.check_output is not None:  # a FunctionTool's was checked already
            entry.check_output(structured)  # type: ignore[arg-type]
    result: JsonObject = {"content": blocks}
    if not isinstance(structured, _Absent):
        if not blocks:
            blocks.append({"type": "text", "text": dumps(structured)})
        result["structuredContent"] = structured
    result["isError"] = False
    return result


def _prompt_result(reply: PromptReply) -> JsonObject:
    out: JsonObject = {}
    if reply.description:
        out["description"] = reply.description
    out["messages"] = [m.to_wire() for m in reply.messages]
    return out


def _resource_result(spec: ResourceSpec, reply: ResourceReply) -> JsonObject:
    return {
        "contents": [c.to_wire() for c in reply.contents],
        "ttlMs": 0 if spec.ttl is None else round(spec.ttl * 1000),
        "cacheScope": "private",
    }


def _error_result(text: str, detail: JsonValue) -> JsonObject:
    return {
        "content": [{"type": "text", "text": text}],
        "isError": True,
        "_meta": {wire.META_ERROR: detail},
    }


# -- small readers ------------------------------------------------------------------------
def _named(inc: Incoming, table: Mapping[str, E], kind: str) -> tuple[str, E]:
    """The name a ``tools/call`` or ``prompts/get`` asks for, and its catalog entry."""
    name = _required_str(inc, "name", inc.request.method)
    entry = table.get(name)
    if entry is None:
        raise Failure.invalid(
            f"unknown {kind} '{name}'; call {kind}s/list for the catalog"
        )
    return name, entry


def _required_str(inc: Incoming, key: str, method: str) -> str:
    value = inc.params.get(key)
    if not isinstance(value, str):
        raise Failure.invalid(f"{method} needs params.{key} (a string)")
    return value


def _refuse_escaping(uri: str, escape: tuple[str, str] | None) -> None:
    """Refuse a template match whose variable escapes its place (``..``, ``/``, ...)."""
    if escape is not None:
        name, why = escape
        raise Failure.invalid(
            f"resource URI variable '{name}' holds {why}, which is refused; "
            "name the resource without it",
            {"uri": uri},
        )


def _prompt_arguments(spec: PromptSpec, raw: JsonValue) -> dict[str, str]:
    """Check ``prompts/get`` arguments against the spec: strings, known, complete.

    Raises:
        DecodeError: listing every problem.
    """
    from .._errors import Problem

    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise DecodeError([Problem("", "arguments must be an object of strings")])
    known = {a.name for a in spec.arguments}
    problems = [Problem(k, "unknown argument") for k in raw if k not in known]
    problems += [
        Problem(k, "expected a string")
        for k, v in raw.items()
        if k in known and not isinstance(v, str)
    ]
    problems += [
        Problem(a.name, "this argument is required")
        for a in spec.arguments
        if a.required and a.name not in raw
    ]
    if problems:
        raise DecodeError(problems)
    return {k: v for k, v in raw.items() if isinstance(v, str)}


def _error_type(ending: Ending) -> str | None:
    failure = ending.failure
    return failure.error_type if failure is not None else ending.error_type


def _receipt(
    inc: Incoming,
    entry: AnyEntry,
    called: tuple[Kind, str],
    ctx: ToolContext,
    ending: Ending,
) -> Receipt:
    """The receipt of a call that ended with ``ending`` (its times are set later)."""
    kind, name = called
    error_type = _error_type(ending)
    return Receipt(
        kind=kind,
        declaration=entry.declaration,
        name=name,
        required=entry.required,
        granted=ctx.granted,
        outcome=ending.outcome,
        error_type=error_type,
        principal_id=ctx.principal_id,
        client=ctx.client.get("name") if ctx.client else None,  # type: ignore[arg-type]
        request_id=inc.id,
        started=ending.started,
        duration=ending.duration,
        trace_id=_otel.parse_traceparent(inc.meta),
        error_ref=ending.error_ref,
    )


def _annotate_span(kind: Kind, name: str, inc: Incoming, ending: Ending) -> None:
    """Put the call's name and outcome on the request's span."""
    _otel.annotate(
        {
            f"mcp.{kind}.{'uri' if kind == 'resource' else 'name'}": name,
            "mcp.outcome": ending.outcome,
        },
        name=None if kind == "resource" else f"{inc.request.method} {name}",
        error=_error_type(ending),
    )


def _binding(inc: Incoming, entry: AnyEntry, ctx: ToolContext) -> Binding:
    """What this call's round state is bound to (secret arguments masked)."""
    params = _state_params(entry, inc.params)
    return round_binding(inc.request.method, params, ctx.principal_id)


def _state_params(entry: AnyEntry, params: JsonObject) -> JsonObject:
    """``params`` with write-only (``Secret``) arguments masked, for state bindings."""
    spec = entry.spec
    if not isinstance(spec, ToolSpec) or not isinstance(params.get("arguments"), dict):
        return params
    return {
        **params,
        "arguments": mask_write_only(params["arguments"], spec.input_schema),
    }


def _progress_token(meta: JsonObject) -> str | int | None:
    token = meta.get(wire.META_PROGRESS_TOKEN)
    if isinstance(token, str) or (
        isinstance(token, int) and not isinstance(token, bool)
    ):
        return token
    return None
