"""The chain every call runs through, and the runner's own steps.

``tools/call``, ``prompts/get``, ``resources/read`` and ``completion/complete``
each build one ``Call`` (``new_call``) and pass it down one chain of steps, each
``step(call, next) -> Ending``, built once per edge (``Runner.chain``; an edge is
a transport's way in, with the steps it contributes), outermost first:

1. the tasks extension's ``run_as_task`` (tools that may run as tasks): the rest
   of the chain runs in the server's task nursery, so the call may outlive its
   request;
2. ``account``: installs the call's context, times the call, names it on the span,
   leaves the receipt however it ended;
3. the edge's steps: what a transport decides per call (HTTP: room for the call,
   the caller's rate limit, a bearer token's step-up; stdio: "busy");
4. ``grant``: refuses a caller without every capability the declaration needs;
5. ``encode``: masks the call's secrets in whatever the rest of the chain returned
   (a middleware step's own or changed reply included) and encodes the result once;
6. the server's ``middleware=`` steps, in the order given;
7. ``mask`` (only with ``middleware=``): masks what the handler produced before any
   middleware step sees it;
8. the tasks extension's ``begin`` (``task_start="call"``: the task starts here);
9. ``answer``, the end of the chain: opens the round (``requestState``), runs the
   handler under its deadline (again with the answers while a task's rounds go
   on), and shapes the reply by its target.

A step's ``next`` is the rest of the chain, a closure made once with the chain,
never per call. No step raises for a handler's failure: ``answer`` turns whatever
the handler raised into an ending, and ``account`` does the same for a step that
raised (a ``Failure`` is a step's way to end the call with its error). Any ``BaseException`` but Trio's own cancellation is such a failure (a
panic: -32603 and an ``internal`` receipt). ``account`` is protected from
``KeyboardInterrupt``, so a real Ctrl-C is delivered to the main task (and stops
the server) instead of surfacing inside a handler.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Coroutine, Iterable, Mapping
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
)
from .._authority import receipt_logger as _receipt_logger
from .._context import (
    MissingClientCapability,
    Refusal,
    reset_current,
    serving,
    set_current,
)
from .._declare import NeedsInput, ToolSpec, qualified
from .._declare._threads import ThreadsExhausted
from .._errors import DecodeError
from .._json import JsonObject, JsonValue, encode_message
from .._protocol import _wire as wire
from .._protocol._state import Binding, StateSealer
from .._store import MemoryStore
from .._store._memory import ClaimsFull
from ._call import AnyReply, Call, Ending, Middleware, Next
from ._mask import (
    Mask,
    MaskingFailed,
    mask_error,
    mask_input_required,
    may_hold,
    text_mask,
)
from ._receipt import annotate_span, log_receipt, receipt
from ._request import (
    BAD_STATE_TYPE,
    CANCELLED_TYPE,
    Failure,
)
from ._rounds import Answered, BadRound, Round, ask, open_round, round_binding

__all__ = [
    "Runner",
    "chain",
    "crash",
    "finish_result",
    "is_cancellation",
    "log_receipt",
]

log = logging.getLogger("trio_mcp")

#: How a call ended when nothing else was recorded: its task was cancelled.
_CANCELLED = Ending(outcome="cancelled", error_type=CANCELLED_TYPE)


def chain(steps: Iterable[Middleware], last: Next) -> Next:
    """The chain of ``steps`` (outermost first) ending in ``last``: what the first
    step's caller awaits."""
    rest = last
    for step in reversed(tuple(steps)):
        rest = _link(step, rest)
    return rest


def _link(step: Middleware, rest: Next) -> Next:
    """``next`` for the step before ``step``: runs ``step`` with the rest after it.

    A plain function that returns the step's coroutine, not a coroutine of its own:
    awaiting ``next(call)`` awaits the step itself, so a link costs no frame of its
    own on every call (a stdio ``echo`` call: 3.6k instructions of 463k).
    """

    def next(call: Call, /) -> Coroutine[Any, Any, Ending]:
        return step(call, rest)

    next.__qualname__ = f"next({getattr(step, '__qualname__', repr(step))})"
    return next


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


class Runner:
    """The runner's own steps, and the chains they make with everyone else's.

    Args:
        sealer: Seals and opens multi round-trip ``requestState``.
        receipts: The ``receipts=`` sink, or None.
        server_info: ``serverInfo``, put on every result.
        middleware: The server's steps, outermost first.
        answered: The rounds answered already (each ``requestState`` opens once);
            by default in this process's memory.
    """

    def __init__(
        self,
        sealer: StateSealer,
        receipts: ReceiptSink | None,
        server_info: JsonObject,
        middleware: tuple[Middleware, ...] = (),
        answered: Answered | None = None,
    ) -> None:
        self.sealer = sealer
        self.answered = answered or Answered(MemoryStore(), sealer.ttl)
        self.receipts = receipts
        self.server_info = server_info
        self.middleware = middleware
        # What the handler produced is masked before a middleware step sees it;
        # without middleware, ``encode`` masks it, and a second pass (an encode and
        # a search per call that holds a secret) would buy nothing.
        self.before_middleware: tuple[Middleware, ...] = (
            (self.mask,) if middleware else ()
        )

    def chain(
        self,
        edge: Iterable[Middleware] = (),
        *,
        outer: Iterable[Middleware] = (),
        inner: Iterable[Middleware] = (),
    ) -> Next:
        """The chain of a call through an edge with ``edge`` steps; ``outer`` steps
        run before ``account``, ``inner`` ones just before the handler (the tasks
        extension's)."""
        return chain(
            (
                *outer,
                self.account,
                *edge,
                self.grant,
                self.encode,
                *self.middleware,
                *self.before_middleware,
                *inner,
            ),
            self.answer,
        )

    # -- 2. the context and the receipt -------------------------------------------------
    @trio.lowlevel.enable_ki_protection
    async def account(self, call: Call, next: Next) -> Ending:
        """Install the call's context; time the call and leave its receipt,
        however it ended (a step that raised included)."""
        ctx = call.context
        token = set_current(ctx)
        secrets = open_registry()
        started, t0 = time.time(), time.perf_counter()
        ending = _CANCELLED
        try:
            with serving:  # counts the call as serving (``require()``)
                try:
                    ending = await next(call)
                except Failure as failure:  # a step's way to end the call
                    ending = call.target.failed(failure)
                except BaseException as exc:
                    if is_cancellation(exc):
                        raise
                    ending = crash(call, exc)
                finally:
                    if _otel.spanning():
                        annotate_span(call, ending)
                    # Refused for want of room (503): busy, not a refusal.
                    _metrics.note_outcome(
                        ending.outcome,
                        busy=ending.http_status == 503 and ending.outcome == "refused",
                    )
                    if self.receipts is not None or _receipt_logger.isEnabledFor(
                        logging.INFO
                    ):
                        duration = time.perf_counter() - t0
                        await self.leave(receipt(call, ending, started, duration))
        finally:
            ctx.finish()
            reset_current(token)
            close_registry(secrets)
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

    # -- 4. the grants ------------------------------------------------------------------
    async def grant(self, call: Call, next: Next) -> Ending:
        """Refuse a caller the host did not grant every capability the call needs."""
        missing = call.target.required - call.context.granted
        if missing:
            return call.target.failed(Failure.refused(min(missing)))
        return await next(call)

    # -- 5. masking what goes out, and encoding it --------------------------------------
    async def encode(self, call: Call, next: Next) -> Ending:
        """Mask the call's secrets in what the rest of the chain returned; encode
        the result once, as the client receives it."""
        ending = await next(call)
        values = call_values()
        try:
            result = ending.result
            if result is None:
                return _masked_error(ending, values)
            body = encode_message(finish_result(result, self.server_info))
            if values and may_hold(body, values):
                result = _masked(call, result, text_mask(values))
                body = encode_message(finish_result(result, self.server_info))
        except MaskingFailed as exc:
            return call.target.failed(Failure.withheld(str(exc)))
        except Exception as exc:
            return crash(call, exc)
        return Ending(
            outcome=ending.outcome,
            result=result,
            error=ending.error,
            http_status=ending.http_status,
            headers=ending.headers,
            error_type=ending.error_type,
            error_ref=ending.error_ref,
            body=body,
        )

    # -- 7. masking what the handler produced ---------------------------------------------
    async def mask(self, call: Call, next: Next) -> Ending:
        """Mask the call's secrets in what the handler produced, before any
        middleware step sees it (a step may keep an ending: a cache)."""
        ending = await next(call)
        values = call_values()
        if not values:
            return ending
        result = ending.result
        if result is None:
            return _masked_error(ending, values)
        try:
            if not may_hold(encode_message(result), values):
                return ending
            masked = _masked(call, result, text_mask(values))
        except MaskingFailed as exc:
            return call.target.failed(Failure.withheld(str(exc)))
        except Exception as exc:
            return crash(call, exc)
        return attrs.evolve(ending, result=masked)

    # -- 9. the handler ------------------------------------------------------------------
    async def answer(self, call: Call) -> Ending:
        """Run the handler and shape its reply; every way it ends, as an ending."""
        target = call.target
        try:
            opened = await self._open_round(call)
            if opened is None:
                reply = await _under_deadline(call)
            else:
                round_call = _in_round(call, opened.responses, opened.state)
                reply = await _installed(round_call, _under_deadline(round_call))
            if reply.needs is not None:
                return Ending(outcome="ok", result=self._ask(call, reply.needs))
            return target.shaped(reply)
        except Failure as failure:
            return target.failed(failure)
        except BaseException as exc:
            if is_cancellation(exc):
                raise
            return crash(call, exc)

    async def _open_round(self, call: Call) -> Round | None:
        """Open the ``requestState`` of an earlier round, once: a state that opened
        is claimed (``Answered``), so no retry replays it. None: no round.

        ``inputResponses`` without a ``requestState`` answer nothing asked yet: they
        are ignored, so the handler runs once and asks (MCP revision 2026-07-28,
        multi round-trip server rules: re-request rather than fail).
        """
        params = call.request.params
        if "requestState" not in params and "inputResponses" not in params:
            return None
        try:
            opened = open_round(self.sealer, params, _binding(call))
            token = params.get("requestState")
            if isinstance(token, str):
                await self.answered.first(token)
        except ClaimsFull as exc:
            raise Failure.busy(
                f"too many multi round-trip states are open ({exc})", "trio_mcp.Busy"
            ) from None
        except BadRound as exc:
            raise Failure.invalid(
                str(exc), exc.data, error_type=BAD_STATE_TYPE
            ) from None
        return opened

    def _ask(self, call: Call, needs: NeedsInput) -> JsonObject:
        """The ``input_required`` result of ``needs``, its state sealed to the call."""
        ctx = call.context
        try:
            return ask(self.sealer, needs, _binding(call), ctx.client_capabilities)
        except MissingClientCapability as exc:
            raise Failure.missing_capability(exc, qualified(type(exc))) from None


async def _under_deadline(call: Call) -> AnyReply:
    """The handler's reply, under the call's deadline; what it raises, as failures."""
    deadline = call.deadline
    try:
        if deadline is None:
            reply = await call.target.answer(call)
            if reply.needs is not None:
                reply = await _rounds(call, reply)
        else:
            with deadline:
                reply = await call.target.answer(call)
                if reply.needs is not None:
                    reply = await _rounds(call, reply)
    except DecodeError as exc:
        raise Failure.bad_arguments(
            [(p.path, p.message) for p in exc.problems], qualified(type(exc))
        ) from None
    except Refusal as exc:
        if not exc.declared and not exc.unseen:
            _beyond_ceiling(call, exc.capability)
        raise Failure.refused(
            exc.capability,
            qualified(type(exc)),
            declared=exc.declared,
            why=str(exc) if exc.unseen else None,
        ) from None
    except MissingClientCapability as exc:
        raise Failure.missing_capability(exc, qualified(type(exc))) from None
    except ThreadsExhausted as exc:
        raise Failure.busy(str(exc), qualified(type(exc))) from None
    if deadline is not None and deadline.cancelled_caught:
        raise Failure.timed_out(call.target.timeout or 0.0)
    return reply


async def _rounds(call: Call, reply: AnyReply) -> AnyReply:
    """While the call's task answers what the handler needs (a task's rounds), run
    it again with the answers. Awaited only for a reply that needs input: a call
    that needs none costs no frame here."""
    task = call.task
    while reply.needs is not None:
        if task is None or not task.started:
            break  # the request asks: an input_required result
        answers = await task.ask(call, reply.needs)
        call = _in_round(call, answers, reply.needs.state)
        reply = await _installed(call, call.target.answer(call))
    return reply


def _in_round(call: Call, responses: Mapping[str, object], state: JsonValue) -> Call:
    """The call of one round: its answers travel as values, in a context of its own
    (the call's, with the round's ``input_responses`` and ``state``)."""
    context = attrs.evolve(call.context, input_responses=responses, state=state)
    return attrs.evolve(call, context=context)


async def _installed(call: Call, running: Awaitable[AnyReply]) -> AnyReply:
    """Await ``running`` (the handler's run for ``call``) with the round's context
    installed (``ToolContext.current()``); it is finished after the run."""
    token = set_current(call.context)
    try:
        return await running
    finally:
        call.context.finish()
        reset_current(token)


_CEILING_LOGGED: set[tuple[str, str]] = set()


def _beyond_ceiling(call: Call, capability: str) -> None:
    """Log, once per declaration and capability, that a handler required a
    capability its declaration does not declare (a bug no grant fixes)."""
    declaration = call.target.declaration
    if (declaration, capability) in _CEILING_LOGGED or len(_CEILING_LOGGED) > 1024:
        return
    _CEILING_LOGGED.add((declaration, capability))
    log.warning(
        "%s calls ToolContext.require(%r) but does not declare it in caps=, so "
        "every such call is refused whatever the host grants; add it to caps=",
        declaration,
        capability,
    )


def crash(call: Call, exc: BaseException) -> Ending:
    """-32603 for what nobody planned for (a panic too), logged under a reference."""
    target = call.target
    failure = Failure.unexpected(
        exc, "%s %r (%s)", target.kind, call.name, target.declaration
    )
    return target.failed(failure)


def _masked(call: Call, result: JsonObject, mask: Mask) -> JsonObject:
    """``result`` with the call's secrets masked where its handler wrote text."""
    if result.get("resultType") == "input_required":
        return mask_input_required(result, mask)
    return call.target.masked(result, mask)


def _masked_error(ending: Ending, values: tuple[str, ...]) -> Ending:
    """An error ending whose message or data may hold a handler's text, masked."""
    error = ending.error
    if error is None or not values:
        return ending
    return attrs.evolve(ending, error=mask_error(error, text_mask(values)))


def _binding(call: Call) -> Binding:
    """What this call's round state is bound to (secret arguments masked)."""
    params = call.request.params
    spec = call.spec
    if isinstance(spec, ToolSpec) and isinstance(params.get("arguments"), dict):
        params = {
            **params,
            "arguments": mask_write_only(params["arguments"], spec.input_schema),
        }
    return round_binding(call.method, params, call.context.principal_id)
