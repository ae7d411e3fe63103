"""``ToolContext``: what a handler may know about the call it is serving.

The dispatcher sets one context per call in a context variable; ``current()`` reads
it. Outside a call ``current()`` gives an empty context whose methods are harmless
no-ops, so handlers stay directly callable in plain tests. ``require()`` alone fails
closed there: it passes only where no call can be on whose behalf it runs (see
``_unchecked_is_safe``).

Progress and log notifications are gated here, not in transports: progress only
when the request carried a ``progressToken`` and only while the call is in flight,
with strictly increasing values; logs only at or above the request's ``logLevel``.
"""

from __future__ import annotations

import contextvars
import math
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import attrs
import trio

from ._authority._redact import call_values, mask_json_values, mask_text
from ._errors import MissingClientCapability, Refusal
from ._json import JsonObject, JsonValue
from ._protocol import _wire as wire
from ._protocol._apps import renders_views

if TYPE_CHECKING:
    from ._authority import Capability

__all__ = [
    "CancelToken",
    "ClientNeed",
    "Emit",
    "MissingClientCapability",
    "Refusal",
    "TaskControl",
    "ToolContext",
    "client_supports",
    "no_emit",
]

Emit = Callable[[JsonObject], Awaitable[None]]
"""Sends a notification tied to one request (progress, a log message)."""


async def no_emit(message: JsonObject) -> None:
    """Emit nothing: outside a call, and for a request whose notifications drop."""


#: What ``supports`` accepts: a ClientCapabilities mapping, or an input request (class
#: or instance, such as ``Elicit``) whose ``client_capability`` names what it needs.
ClientNeed: TypeAlias = object


def _needs_of(need: ClientNeed) -> Mapping[str, JsonValue]:
    if isinstance(need, Mapping):
        return need
    needs = getattr(need, "client_capability", None)
    if not isinstance(needs, Mapping):
        raise TypeError(
            "expected a ClientCapabilities mapping or an input request such as Elicit"
        )
    return needs


def client_supports(
    declared: Mapping[str, JsonValue], needs: Mapping[str, JsonValue]
) -> bool:
    """Return whether the ``declared`` ClientCapabilities cover ``needs``.

    Every key of ``needs`` must be declared, recursively. Elicitation is special: an
    empty ``elicitation`` need means form mode, which a client declares with
    ``elicitation: {}`` or ``elicitation: {form: {}}`` (MCP revision 2026-07-28, _meta keys).
    """
    for name, need in needs.items():
        have = declared.get(name)
        if not isinstance(have, Mapping):
            return False
        if (
            name == "elicitation"
            and need == {}
            and "url" in have
            and "form" not in have
        ):
            return False
        if isinstance(need, Mapping) and not client_supports(have, need):
            return False
    return True


class TaskControl(Protocol):
    """The tasks extension's hold on a call that may become a task, given to the
    call's context when it is built for it (``_tasks``): ``start`` makes the call a
    task (its ``CreateTaskResult`` answers the request, the call goes on) and returns
    its id; once ``started``, cancellation follows the task's ``scope`` instead of
    the request's, and ``ask`` answers the handler's questions (the task waits for
    ``tasks/update``)."""

    @property
    def started(self) -> bool: ...

    @property
    def scope(self) -> trio.CancelScope: ...

    async def start(self) -> str: ...

    async def ask(self, call: Any, needs: Any, /) -> Mapping[str, object]: ...


class CancelToken:
    """The call's cancellation, backed by Trio cancel scopes.

    It fires on ``notifications/cancelled``, a closed HTTP stream (the transport's
    scope for the request), the call's deadline (its own scope), or the close of the
    stdio or WebSocket stream the call came on (``closed``, set at the close: the
    handler may still answer within the grace period, but it is told to stop). A
    call that became a task (``task``) follows the task's scope instead of the
    request's: the request was answered.
    """

    __slots__ = ("_closed", "_request", "_scopes", "_task")

    def __init__(
        self,
        *scopes: trio.CancelScope | None,
        closed: trio.Event | None = None,
        request: trio.CancelScope | None = None,
        task: TaskControl | None = None,
    ) -> None:
        # filter(None, ...) drops the Nones (a CancelScope is always true) in C.
        self._scopes: tuple[trio.CancelScope, ...] = tuple(filter(None, scopes))
        self._closed = closed
        self._request = request
        self._task = task

    def for_task(self, task: TaskControl) -> CancelToken:
        """This token for the call once it may become the task ``task``."""
        return CancelToken(
            *self._scopes, closed=self._closed, request=self._request, task=task
        )

    @property
    def cancelled(self) -> bool:
        """Whether cancellation was requested, or the deadline passed.

        Works from a sync handler's worker thread too, so a long loop can poll it;
        an abandoned thread still running after ``trio.run`` returned reads true.
        """
        try:
            trio.lowlevel.current_task()
        except RuntimeError:
            try:
                return trio.from_thread.run_sync(self._check)
            except trio.RunFinishedError:  # the run is over, so is every call in it
                return True
            except RuntimeError:  # not a Trio worker thread: nothing to ask
                return False
        return self._check()

    def _follows(self) -> trio.CancelScope | None:
        """The scope the call's request or task lives in now."""
        task = self._task
        if task is not None and task.started:
            return task.scope
        return self._request

    def _check(self) -> bool:
        # cancel_called also turns true once a scope's deadline has passed.
        closed = self._closed
        if closed is not None and closed.is_set():
            return True
        follows = self._follows()
        if follows is not None and follows.cancel_called:
            return True
        return any(s.cancel_called for s in self._scopes)

    def cancel(self) -> None:
        """Cancel the call: every pending await inside it is dropped."""
        follows = self._follows()
        if follows is not None:
            follows.cancel()
        for scope in self._scopes:
            scope.cancel()


def _check_number(value: object, name: str) -> None:
    """A progress value must be a finite JSON number (``bool`` is not one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"progress {name} must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"progress {name} must be finite, got {value!r}")


def _check_optional_str(value: object, name: str) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


@attrs.define(eq=False, kw_only=True)
class ToolContext:
    """What a handler may know about the call it serves (``ToolContext.current()``)."""

    request_id: str | int | None = None
    principal: object | None = None
    client: JsonObject | None = None
    """The client's self-description (``clientInfo``): for display only, never trust."""
    client_capabilities: JsonObject = attrs.field(factory=dict)
    deadline: float | None = None
    """A ``trio.current_time()`` value, or None."""
    cancel: CancelToken = attrs.field(factory=CancelToken)
    input_responses: Mapping[str, object] = attrs.field(factory=dict)
    state: JsonValue = None
    """State carried from an earlier round of a multi round-trip request."""
    declared: frozenset[str] = frozenset()
    granted: frozenset[str] = frozenset()
    progress_token: str | int | None = None
    log_level: str | None = None
    task_id: str | None = None
    """The task this call runs as (tasks extension), once it is one; else None."""
    attempt: int = 1
    """Which run of its task this is: 1, then 2, ... when a durable task whose
    process died runs again on another replica (``@tool(durable=True)``)."""
    _emit: Emit = attrs.field(default=no_emit, alias="emit")
    """Where the request's notifications go (the transport's, for this request)."""
    _task: TaskControl | None = attrs.field(default=None, alias="task")
    """The tasks extension's hold on a call that may become a task, else None."""
    name: str | None = None
    """The tool's or prompt's wire name, or the resource's URI (for the log)."""
    _last_progress: float | None = None
    _in_flight: bool = True
    _outside: bool = False
    """True for the empty context ``current()`` gives outside any call."""

    @staticmethod
    def current() -> ToolContext:
        """Return the context of the call being served, or an empty one outside a call."""
        ctx = _current.get()
        if ctx is None:
            return ToolContext(request_id=None, in_flight=False, outside=True)
        return ctx

    @property
    def principal_id(self) -> str | None:
        """The principal's ``id``, ``identity`` or ``str()``, for receipts and bindings."""
        return principal_id(self.principal)

    async def progress(
        self, done: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress, if the client asked for it; otherwise do nothing.

        Values that do not increase are dropped (the protocol requires increase).

        Raises:
            TypeError: if ``done`` or ``total`` is not a number or ``message``
                not a str; ValueError: if a number is NaN or infinite (checked
                whether or not the client asked, so tests find it).
        """
        _check_number(done, "done")
        if total is not None:
            _check_number(total, "total")
        _check_optional_str(message, "message")
        await trio.lowlevel.checkpoint()
        if self.progress_token is None or not self._in_flight:
            return
        if self._last_progress is not None and done <= self._last_progress:
            return
        self._last_progress = done
        params: JsonObject = {"progressToken": self.progress_token, "progress": done}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = mask_text(message, call_values())
        await self._emit(wire.notification_message("notifications/progress", params))

    async def log(
        self, level: str, data: JsonValue, *, logger: str | None = None
    ) -> None:
        """Send a log message for this request, if at or above its ``logLevel``.

        Raises:
            ValueError: if ``level`` is not one of the protocol's levels.
            TypeError: if ``logger`` is given and not a str.
        """
        _check_optional_str(logger, "logger")
        rank = wire.LOG_LEVEL_RANK.get(level)
        if rank is None:
            raise ValueError(
                f"unknown log level {level!r}; use one of {wire.LOG_LEVELS}"
            )
        await trio.lowlevel.checkpoint()
        if self.log_level is None or not self._in_flight:
            return
        if rank < wire.LOG_LEVEL_RANK[self.log_level]:
            return
        values = call_values()
        params: JsonObject = {"level": level, "data": mask_json_values(data, values)}
        if logger is not None:
            params["logger"] = mask_text(logger, values)
        await self._emit(wire.notification_message("notifications/message", params))

    def require(self, capability: Capability | str) -> None:
        """Check that this call may use ``capability``.

        It must be declared in the tool's ``caps=`` (the ceiling) and granted by the
        host. Outside a call it fails closed: it passes only in a unit test (a Trio
        task, a Trio worker thread or the main thread, while no server serves and no
        call runs in this process), so a plain thread a handler starts, or a task
        doing work a handler handed it, cannot use what the call was not granted. A
        plain ``threading.Thread`` is always refused outside a call.

        Raises:
            Refusal: if the capability is not declared or not granted, or the
                call's grants cannot be seen from here.
        """
        name = capability if isinstance(capability, str) else capability.name
        if self._outside:
            if _unchecked_is_safe():
                return
            raise Refusal(name, declared=False, unseen=True)
        if name not in self.declared:
            raise Refusal(name, declared=False)
        if name not in self.granted:
            raise Refusal(name, declared=True)

    def supports(self, need: ClientNeed) -> bool:
        """Return whether this request's client declared what ``need`` requires.

        ``need`` is an input request class or value (``Elicit``, ``Sample``,
        ``ListRoots``, ``ElicitUrl``) or a ClientCapabilities mapping. Outside a call
        nothing is declared, so this is False.
        """
        return client_supports(self.client_capabilities, _needs_of(need))

    @property
    def renders_views(self) -> bool:
        """Whether this request's client renders MCP Apps views (``@tool(view=...)``).

        True when its capabilities declare the ``io.modelcontextprotocol/ui``
        extension with ``text/html;profile=mcp-app``; its host then shows the
        tool's view with the result. A handler needs no branch (every client gets
        the same result, whose text is what the others show); this tells one
        that wants to keep bulk data out of the model's text when a view shows it.
        """
        return renders_views(self.client_capabilities)

    def require_client(self, need: ClientNeed) -> None:
        """Check that this request's client declared what ``need`` requires.

        Raises:
            MissingClientCapability: if it did not; the client receives -32021.
        """
        needs = _needs_of(need)
        if not client_supports(self.client_capabilities, needs):
            raise MissingClientCapability(dict(needs))

    async def task_started(self) -> None:
        """Turn this call into a task now, if it may become one; else do nothing.

        For a tool declared ``@tool(task=..., task_start="handler")`` whose client
        declared the tasks extension: the client receives its ``CreateTaskResult``
        and the rest of the handler runs as the task (``task_id`` is set), with no
        progress or log notifications. Before this, the handler may answer at once
        or ask for input by multi round-trip. Elsewhere (a plain call, a client
        without the extension, a task already started) it only checkpoints.
        """
        task = self._task
        if task is None or task.started:
            await trio.lowlevel.checkpoint()
            return
        self.task_id = await task.start()
        self._in_flight = False

    def finish(self) -> None:
        """Mark the call complete: nothing more may be sent for it."""
        self._in_flight = False


def principal_id(principal: object | None) -> str | None:
    """Return a principal's identifier: its ``id``, ``identity`` or ``str()``."""
    if principal is None:
        return None
    for attr in ("id", "identity"):
        value = getattr(principal, attr, None)
        if value is not None and not callable(value):
            return str(value)
    if isinstance(principal, Mapping):
        for key in ("id", "identity", "sub"):
            if key in principal:
                return str(principal[key])
    return str(principal)


_current: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar(
    "trio_mcp_tool_context", default=None
)


class _Serving:
    """How many serve scopes are open and calls are running in this process now.

    ``require()`` outside any call reads it (``_unchecked_is_safe``). A process-wide
    count, not a flag: it falls back to zero when the server closes, so a unit test
    that used a test client and then calls a decorated function directly passes.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    @property
    def now(self) -> bool:
        """Whether a server serves, or a call runs, anywhere in this process."""
        return self._count > 0

    def scope(self) -> _Serving:
        """Count as serving for the block (a serve method's lifetime, or one call).

        The counter is its own context manager (re-entrant: it counts), not a
        generator: it is entered on every call.
        """
        return self

    def __enter__(self) -> None:
        with self._lock:
            self._count += 1

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._count -= 1


serving = _Serving()


def set_current(ctx: ToolContext) -> contextvars.Token[ToolContext | None]:
    """Install ``ctx`` for the running task (the dispatcher's business).

    The runner wraps it in ``serving.scope()``: a running call counts as serving
    even where no serve method is open (a mounted app without lifespan).
    """
    return _current.set(ctx)


def _unchecked_is_safe() -> bool:
    """Whether ``require()`` outside any call may pass: only in a unit test.

    The rule (docs/guides/authority.md):

    - a Trio task, a thread Trio started (``trio.to_thread``), or the main thread:
      passes while no server serves and no call runs in this process. Work a
      handler hands on carries the call's context (Trio copies it into tasks and
      worker threads), so it never gets here; what does get here while serving
      (a task of the serving run, outside any call) may be on a call's behalf.
    - any other thread (a plain ``threading.Thread``): refused, always. It carries
      no context, so nothing tells a thread a handler started from one a test
      started, and it may outlive the server that started it.
    """
    try:
        trio.lowlevel.current_task()
    except RuntimeError:  # not in a Trio task
        pass
    else:
        return not serving.now
    try:
        trio.from_thread.run_sync(_checkpoint_free)
    except RuntimeError:  # not one of Trio's threads, or its run is over
        if threading.current_thread() is not threading.main_thread():
            return False
    return not serving.now


def _checkpoint_free() -> None:
    """Nothing: ``trio.from_thread.run_sync`` of it tells a Trio thread from others."""


def context_in(context: contextvars.Context) -> ToolContext | None:
    """The call context installed in ``context`` (a task's), or None; for the
    blocked-loop watch, which looks at the task that holds the loop."""
    return context.get(_current)


def reset_current(token: contextvars.Token[ToolContext | None]) -> None:
    """Undo ``set_current``."""
    _current.reset(token)
