"""The one call runner: ``run(call) -> Ending``, the same for every call.

``tools/call``, ``prompts/get``, ``resources/read`` and ``completion/complete``
each build one ``Call`` (``new_call``) and hand it to ``Runner.run``; so do tasks.
``run`` installs the call's context and passes the call down one chain of steps,
built once per server, outermost first:

1. ``account``: times the call, names it on the span, leaves the receipt;
   ``limit``: answers a call the HTTP app found no place for (``Caller.busy``)
   with -32000, HTTP 503 and ``Retry-After``, and refuses a caller whose rate
   limit is spent (``Caller.retry_after``) with -32000, HTTP 429 and
   ``Retry-After``; either way the call is timed, measured and leaves a receipt;
2. ``grant``: refuses a caller without every capability the declaration needs
   (with a bearer token whose scopes fall short, the 403 step-up);
3. the server's ``middleware=`` steps, in the order given;
4. ``finish``: masks the secrets of what the handler produced, encodes the result;
5. ``answer``: opens the round (``requestState``), runs the handler under its
   deadline (again with the answers while a task's rounds go on), and shapes the
   reply by its target.

A middleware step is ``step(call, next) -> Ending``; ``next`` is the rest of the
chain, a ``_Link`` built once, never a closure made per call. The runner's own steps
call the next one of their own directly (``account`` runs ``limit`` and ``grant``
inline, ``finish`` awaits ``answer``): they are fixed, so a link between them would
only cost a frame on every call. ``run`` never raises for a
handler's failure: ``answer`` turns whatever the handler raised into an ending, and
``account`` does the same for a step that raised. Any ``BaseException`` but Trio's
own cancellation is such a failure (a panic: -32603 and an ``internal`` receipt).
``run`` is protected from ``KeyboardInterrupt``, so a real Ctrl-C is delivered to
the main task (and stops the server) instead of surfacing inside a handler.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from typing import Any

import attrs
import trio

from .. import _metrics, _otel
from .._authority import (
    Receipt,
    ReceiptSink,
    call_values,
    close_registry,
    mask_write_only,
    open_registry,
    resolve_grants,
    wrap_write_only,
)
from .._authority import receipt_logger as _receipt_logger
from .._context import (
    CancelToken,
    MissingClientCapability,
    Refusal,
    ToolContext,
    reset_current,
    serving,
    set_current,
)
from .._declare import NeedsInput, ToolSpec, qualified
from .._declare._threads import ThreadsExhausted
from .._errors import DecodeError
from .._json import JsonObject, encode_message
from .._protocol import _wire as wire
from .._protocol._state import Binding, StateSealer
from ._call import AnyReply, Call, Ending, Middleware, Next, Rounds, Target
from ._mask import Mask, mask_error, mask_input_required, may_hold, text_mask
from ._request import Failure, Incoming
from ._rounds import BadRound, ask, open_round, round_binding

__all__ = [
    "BUSY_TYPE",
    "RATE_LIMITED_TYPE",
    "Runner",
    "finish_result",
    "is_cancellation",
    "log_receipt",
    "new_call",
    "busy",
    "rate_limited",
]

log = logging.getLogger("trio_mcp")

#: How a call ended when nothing else was recorded: its task was cancelled.
_CANCELLED = Ending("cancelled")


def new_call(
    inc: Incoming,
    target: Target,
    name: str,
    arguments: Mapping[str, Any],
    rounds: Rounds | None = None,
) -> Call:
    """The call value of one request: its context, grants and deadline resolved.

    A ``Secret`` argument (a ``writeOnly`` value of the input schema) is wrapped in
    ``Secret`` here, so no step sees its plaintext.
    """
    timeout = target.timeout
    deadline = None if timeout is None else trio.current_time() + timeout
    scope = None if deadline is None else trio.CancelScope(deadline=deadline)
    # A stream's close fires ctx.cancel at once (docs/limits.md); a task outlives it, and an
    # HTTP app's close() lets requests go on.
    closed = inc.closing if rounds is None and inc.caller.stream else None
    context = _context(
        inc, target, deadline, CancelToken(inc.scope, scope, closed=closed)
    )
    spec = target.spec
    if isinstance(spec, ToolSpec) and getattr(target, "write_only", False):
        arguments = wrap_write_only(arguments, spec.input_schema)  # type: ignore[arg-type,assignment]
    return Call(
        inc.request.method,  # type: ignore[arg-type]
        name,
        arguments,
        inc.caller.principal,
        inc.id,
        context,
        spec,
        target=target,
        incoming=inc,
        deadline=scope,
        rounds=rounds,
    )


def _context(
    inc: Incoming, target: Target, deadline: float | None, cancel: CancelToken
) -> ToolContext:
    """The ``ToolContext`` of one call, with the host's grants resolved once."""
    meta = inc.meta
    client_info = meta.get(wire.META_CLIENT_INFO)
    return ToolContext(
        request_id=inc.id,
        principal=inc.caller.principal,
        client=client_info if isinstance(client_info, dict) else None,
        client_capabilities=meta[wire.META_CLIENT_CAPABILITIES],  # type: ignore[arg-type]
        deadline=deadline,
        cancel=cancel,
        declared=target.required,
        granted=resolve_grants(inc.caller.allow, inc.caller.principal),
        progress_token=_progress_token(meta),
        log_level=meta.get(wire.META_LOG_LEVEL),  # type: ignore[arg-type]
        emit=inc.emit,
    )


def is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is Trio's cancellation (alone, or a group of nothing else)."""
    if isinstance(exc, trio.Cancelled):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(trio.Cancelled)[1] is None
    return False


def finish_result(result: JsonObject, server_info: JsonObject) -> JsonObject:
    """Give a result its ``resultType`` (``complete`` unless set) and serverInfo."""
    result.setdefault("resultType", "complete")
    result_meta = result.setdefault("_meta", {})
    assert isinstance(result_meta, dict)
    result_meta[wire.META_SERVER_INFO] = server_info
    return result


@attrs.frozen
class _Link:
    """One step and the rest of the chain after it: what ``next`` is."""

    step: Middleware
    rest: Next

    async def __call__(self, call: Call) -> Ending:
        return await self.step(call, self.rest)


class Runner:
    """Runs calls through the chain of the module docstring.

    Args:
        sealer: Seals and opens multi round-trip ``requestState``.
        receipts: The ``receipts=`` sink, or None.
        server_info: ``serverInfo``, put on every result.
        middleware: The server's steps, outermost first.
    """

    def __init__(
        self,
        sealer: StateSealer,
        receipts: ReceiptSink | None,
        server_info: JsonObject,
        middleware: tuple[Middleware, ...] = (),
    ) -> None:
        self.sealer = sealer
        self.receipts = receipts
        self.server_info = server_info
        chain: Next = self.finish
        for step in reversed(middleware):
            chain = _Link(step, chain)
        self._after_grants = chain
        """The middleware steps, then ``finish`` and ``answer``."""

    @trio.lowlevel.enable_ki_protection
    async def run(self, call: Call) -> Ending:
        """Run ``call`` through the chain; return how it ended.

        Raises only Trio's cancellation (after the receipt says ``cancelled``).
        """
        ctx = call.context
        token = set_current(ctx)
        secrets = open_registry()
        try:
            with serving.scope():
                return await self.account(call, self._after_grants)
        finally:
            ctx.finish()
            reset_current(token)
            close_registry(secrets)

    # -- 1. the receipt ---------------------------------------------------------------
    async def account(self, call: Call, next: Next) -> Ending:
        """Time the call and leave its receipt, however it ended; in between,
        ``limit`` and ``grant``, then ``next``."""
        started, t0 = time.time(), time.perf_counter()
        ending = _CANCELLED
        try:
            refusal = self.limit(call) or self.grant(call)
            ending = refusal if refusal is not None else await next(call)
        except BaseException as exc:
            if is_cancellation(exc):
                raise
            ending = crash(call, exc)
        finally:
            _annotate_span(call, ending)
            _metrics.note_outcome(ending.outcome, busy=_is_busy(ending))
            if self.receipts is not None or _receipt_logger.isEnabledFor(logging.INFO):
                duration = time.perf_counter() - t0
                await self.leave(_receipt(call, ending, started, duration))
        return ending

    async def leave(self, receipt: Receipt) -> None:
        """Leave a receipt: to the ``trio_mcp.receipts`` log and the sink."""
        log_receipt(receipt)
        await self.deliver(receipt)

    async def deliver(self, receipt: Receipt) -> None:
        """Hand a receipt to the ``receipts=`` sink, shielded; never fail the call."""
        if self.receipts is None:
            return
        with trio.CancelScope(shield=True):
            await self._deliver(receipt)

    async def _deliver(self, receipt: Receipt) -> None:
        assert self.receipts is not None
        try:
            with trio.move_on_after(5):
                pending = self.receipts(receipt)
                if pending is not None:
                    await pending
        except BaseException as exc:
            # Any BaseException (SystemExit, a KeyboardInterrupt the sink raised: the
            # call runs protected from the real signal) is the sink's panic, contained
            # like a handler's; only Trio's cancellation goes on.
            if is_cancellation(exc):
                raise
            log.exception("the receipts sink failed; the call's result is unaffected")

    # -- 1b. the rate limit -------------------------------------------------------------
    def limit(self, call: Call) -> Ending | None:
        """Answer "busy" a call the HTTP app found no place for; refuse a caller
        whose rate limit it found spent. None: the call goes on."""
        caller = call._incoming.caller
        if caller.retry_after is not None:
            return rate_limited(caller.retry_after)
        if caller.busy is not None:
            return busy(caller.busy)
        return None

    # -- 2. the grants ----------------------------------------------------------------
    def grant(self, call: Call) -> Ending | None:
        """Refuse a caller the host did not grant every capability the call needs.
        None: the call goes on.

        With a bearer token (``auth=``) whose scopes fall short where other scopes
        would grant the rest, the refusal is the 403 step-up (``insufficient_scope``).
        """
        missing = call.required - call.context.granted
        if not missing:
            return None
        step_up = call._incoming.caller.step_up
        challenge = None if step_up is None else step_up(missing)
        if challenge is not None:
            return insufficient_scope(*challenge)
        return call._target.failed(Failure.refused(min(missing)))

    # -- 4. masking and encoding --------------------------------------------------------
    async def finish(self, call: Call) -> Ending:
        """Run ``answer``; mask the secrets in what the handler produced; encode the
        result once."""
        ending = await self.answer(call)
        values = call_values()
        try:
            result = ending.result
            if result is None:
                return _masked_error(ending, values)
            body = encode_message(finish_result(result, self.server_info))
            if values and may_hold(body, values):
                result = _masked(call, result, text_mask(values))
                body = encode_message(finish_result(result, self.server_info))
        except Exception as exc:
            return crash(call, exc)
        # The constructor, not attrs.evolve: this runs on every call (3 us, not 8).
        return Ending(
            ending.outcome,
            result,
            ending.error,
            ending.http_status,
            ending.headers,
            ending.error_type,
            ending.error_ref,
            body,
        )

    # -- 5. the handler -----------------------------------------------------------------
    async def answer(self, call: Call) -> Ending:
        """Run the handler and shape its reply; every way it ends, as an ending."""
        target = call._target
        try:
            self._open_round(call)
            reply = await _under_deadline(call)
            if reply.needs is not None:
                return Ending("ok", result=self._ask(call, reply.needs))
            return target.shaped(reply)
        except Failure as failure:
            return target.failed(failure)
        except BaseException as exc:
            if is_cancellation(exc):
                raise
            return crash(call, exc)

    def _open_round(self, call: Call) -> None:
        """Read the ``requestState`` of an earlier round into the context.

        ``inputResponses`` without a ``requestState`` answer nothing asked yet: they
        are ignored, so the handler runs once and asks (MCP revision 2026-07-28,
        multi round-trip server rules: re-request rather than fail).
        """
        params = call._incoming.params
        if "requestState" not in params and "inputResponses" not in params:
            return
        try:
            opened = open_round(self.sealer, params, _binding(call))
        except BadRound as exc:
            raise Failure.invalid(str(exc), exc.data) from None
        call.context.input_responses, call.context.state = (
            opened.responses,
            opened.state,
        )

    def _ask(self, call: Call, needs: NeedsInput) -> JsonObject:
        """The ``input_required`` result of ``needs``, its state sealed to the call."""
        ctx = call.context
        try:
            return ask(self.sealer, needs, _binding(call), ctx.client_capabilities)
        except MissingClientCapability as exc:
            raise Failure.missing_capability(exc) from None


async def _under_deadline(call: Call) -> AnyReply:
    """The handler's reply, under the call's deadline; what it raises, as failures."""
    deadline = call._deadline
    run = call._target.answer if call._rounds is None else _rounds
    try:
        if deadline is None:
            reply = await run(call)
        else:
            with deadline:
                reply = await run(call)
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
        raise Failure.timed_out(call._target.timeout or 0.0)
    return reply


async def _rounds(call: Call) -> AnyReply:
    """Run the handler; while a task's rounds answer what it needs, run it again."""
    target, rounds, ctx = call._target, call._rounds, call.context
    assert rounds is not None  # a call without rounds runs its target's answer alone
    await rounds.begin(call)
    reply = await target.answer(call)
    while reply.needs is not None:
        responses = await rounds.answer(call, reply.needs)
        if responses is None:
            break
        ctx.input_responses, ctx.state = responses, reply.needs.state
        reply = await target.answer(call)
    return reply


def log_receipt(receipt: Receipt) -> None:
    """Log a receipt as a structured record on ``trio_mcp.receipts``."""
    if _receipt_logger.isEnabledFor(logging.INFO):
        _receipt_logger.info("receipt", extra={"receipt": receipt.as_record()})


#: The receipt's ``error_type`` of a call refused by its rate limit.
RATE_LIMITED_TYPE = "trio_mcp.RateLimit"


def rate_limited(wait: float) -> Ending:
    """-32000 with HTTP 429 and ``Retry-After``: the caller's rate limit is spent."""
    after = max(1, math.ceil(wait))
    ending = Ending.refused(
        f"rate limited: this caller has used its calls for now; retry after {after} s",
        data={"retryable": True, "retryAfterSeconds": after},
        http_status=429,
        headers=(("retry-after", str(after)),),
        code=wire.SERVER_BUSY,
    )
    return attrs.evolve(ending, error_type=RATE_LIMITED_TYPE)


#: The receipt's ``error_type`` of a call answered "busy" (no slot, no waiting place).
BUSY_TYPE = "trio_mcp.Busy"

#: Seconds a client told "busy" is asked to wait before it tries again.
BUSY_RETRY_AFTER = 1


def busy(reason: str) -> Ending:
    """-32000 with HTTP 503 and ``Retry-After``: no call slot or waiting place is free."""
    ending = Ending.refused(
        wire.busy_message(reason),
        data={"retryable": True},
        http_status=503,
        headers=(("retry-after", str(BUSY_RETRY_AFTER)),),
        code=wire.SERVER_BUSY,
    )
    return attrs.evolve(ending, error_type=BUSY_TYPE)


def _is_busy(ending: Ending) -> bool:
    """Whether the call was refused for want of room (503): busy, not a refusal."""
    return ending.http_status == 503 and ending.outcome == "refused"


#: The receipt's ``error_type`` of a call refused for its token's scopes.
INSUFFICIENT_SCOPE_TYPE = "insufficient_scope"


def insufficient_scope(message: str, challenge: str) -> Ending:
    """HTTP 403 with ``WWW-Authenticate: Bearer error="insufficient_scope", ...``."""
    ending = Ending.refused(
        message, headers=(("www-authenticate", challenge),), http_status=403
    )
    return attrs.evolve(ending, error_type=INSUFFICIENT_SCOPE_TYPE)


def crash(call: Call, exc: BaseException) -> Ending:
    """-32603 for what nobody planned for (a panic too), logged under a reference."""
    target = call._target
    failure = Failure.unexpected(
        exc, "%s %r (%s)", target.kind, call.name, target.declaration
    )
    return target.failed(failure)


def _masked(call: Call, result: JsonObject, mask: Mask) -> JsonObject:
    """``result`` with the call's secrets masked where its handler wrote text."""
    if result.get("resultType") == "input_required":
        return mask_input_required(result, mask)
    return call._target.masked(result, mask)


def _masked_error(ending: Ending, values: tuple[str, ...]) -> Ending:
    """An error ending whose message or data may hold a handler's text, masked."""
    error = ending.error
    if error is None or not values:
        return ending
    return attrs.evolve(ending, error=mask_error(error, text_mask(values)))


def _binding(call: Call) -> Binding:
    """What this call's round state is bound to (secret arguments masked)."""
    params = call._incoming.params
    spec = call.spec
    if isinstance(spec, ToolSpec) and isinstance(params.get("arguments"), dict):
        params = {
            **params,
            "arguments": mask_write_only(params["arguments"], spec.input_schema),
        }
    return round_binding(call.method, params, call.context.principal_id)


def _receipt(call: Call, ending: Ending, started: float, duration: float) -> Receipt:
    """The receipt of a call that ended with ``ending``."""
    target, ctx = call._target, call.context
    return Receipt(
        kind=target.kind,
        declaration=target.declaration,
        name=call.name,
        required=target.required,
        granted=ctx.granted,
        outcome=ending.outcome,
        error_type=ending.error_type,
        principal_id=ctx.principal_id,
        client=ctx.client.get("name") if ctx.client else None,  # type: ignore[arg-type]
        request_id=call.request_id,
        started=started,
        duration=duration,
        trace_id=_otel.parse_traceparent(call._incoming.meta),
        error_ref=ending.error_ref,
    )


def _annotate_span(call: Call, ending: Ending) -> None:
    """Put the call's name and outcome on the request's span, if it has one."""
    if not _otel.spanning():
        return
    kind = call._target.kind
    uri = kind == "resource"
    _otel.annotate(
        {
            f"mcp.{kind}.{'uri' if uri else 'name'}": call.name,
            "mcp.outcome": ending.outcome,
        },
        name=None if uri else f"{call.method} {call.name}",
        error=ending.error_type,
    )


def _progress_token(meta: JsonObject) -> str | int | None:
    token = meta.get(wire.META_PROGRESS_TOKEN)
    if isinstance(token, str) or (
        isinstance(token, int) and not isinstance(token, bool)
    ):
        return token
    return None
