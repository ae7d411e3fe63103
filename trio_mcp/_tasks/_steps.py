"""The tasks extension's two steps of a task tool's chain.

``run_as_task`` runs before every other step: when the client declared the
extension and a task nursery is open, the rest of the chain runs in that nursery,
so the call (grants, middleware, deadline, reply guard, masking, one receipt) is
the same as any call's and may outlive its request. ``begin`` runs just before the
handler and starts the task of a ``task_start="call"`` tool, once the grants let
the call through. ``run_as_task`` hands the rest of the chain the call with its
``_TaskCall`` (``Call.task``, and the context's, whose ``task_started`` starts it).
Starting the task (``_TaskCall.start``) detaches the call from its request: the
request is answered with the ``CreateTaskResult`` (the edge then gives back what
the request held, a call slot), the call's notifications stop, its cancellation
follows the task's scope, and its questions are answered through
``tasks/update``.

A durable task claimed by this process after its own stopped (``_handover``) comes
through the same chain, as a call the dispatcher answers: ``run_as_task`` finds the
attempt in ``resuming`` and runs the call as that task, started and detached.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs
import trio

from .._context import principal_id
from .._declare import NeedsInput, ToolSpec, qualified
from .._dispatch._call import Call, Ending, Next
from .._dispatch._request import Failure
from .._dispatch._targets import error_ending
from .._errors import MissingClientCapability
from .._json import JsonObject
from .._protocol import _wire as wire
from ._durable import DurableStart
from ._handover import resuming
from ._record import TaskRecord, new_task_id

if TYPE_CHECKING:
    from ._runner import TaskRunner

__all__ = ["TaskSteps", "declares_tasks", "missing_extension"]

log = logging.getLogger("trio_mcp")

_REQUIRED: JsonObject = {"extensions": {wire.TASKS_EXTENSION: {}}}


def declares_tasks(meta: JsonObject) -> bool:
    """Whether the request's ``clientCapabilities`` declare the tasks extension."""
    caps = meta.get(wire.META_CLIENT_CAPABILITIES)
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and isinstance(
        extensions.get(wire.TASKS_EXTENSION), dict
    )


def missing_extension(what: str) -> Failure:
    """-32021: ``what`` needs a client that declared the tasks extension."""
    return Failure.missing_capability(
        MissingClientCapability(
            _REQUIRED,
            f"{what} needs the tasks extension: declare "
            f"extensions['{wire.TASKS_EXTENSION}'] in _meta clientCapabilities",
        ),
        qualified(MissingClientCapability),
    )


@attrs.define(eq=False)
class TaskSteps:
    """The steps of the tasks ``host`` (its records, nursery and store)."""

    host: TaskRunner
    _warned: bool = False

    async def run_as_task(self, call: Call, next: Next) -> Ending:
        """Run a call of a tool that may become a task: as a task, when its client
        declared the extension and a task nursery is open; else as any call.

        A ``task="required"`` tool called without the extension ends with -32021.
        """
        spec = call.spec
        assert isinstance(spec, ToolSpec)
        host = self.host
        resumed = resuming.get()
        if resumed is not None and not resumed.taken:
            resumed.taken = True
            task = _TaskCall(host, call, resumed.record, trio.TASK_STATUS_IGNORED)
            return await task.resume(next)
        declared = declares_tasks(call.request.meta)
        if not declared and spec.task == "required":
            return error_ending(
                missing_extension(f"tool '{spec.name}' runs only as a task; it")
            )
        nursery = host.nursery
        if not declared or nursery is None or not host.room():
            if declared and nursery is None and not self._warned:
                self._warned = True
                log.warning(
                    "tool %r was called as a task but no task nursery is open, so it "
                    "runs synchronously; serve with serve_http/serve_stdio, or wrap a "
                    "mounted app's serving in `async with server.task_nursery():`",
                    spec.name,
                )
            return await next(call)
        ending: Ending = await nursery.start(self._task, call, next)
        return ending

    async def begin(self, call: Call, next: Next) -> Ending:
        """Start the task of a ``task_start="call"`` tool before its handler runs
        (after the grants: a refused call is answered, never made a task)."""
        if call.spec.task_start == "call":  # type: ignore[union-attr]
            await call.context.task_started()
        return await next(call)

    async def _task(
        self,
        call: Call,
        next: Next,
        task_status: trio.TaskStatus[Ending] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """One call that may become a task; reports the request's ending through
        ``task_status`` (the task's ``CreateTaskResult`` once it starts)."""
        record = TaskRecord(
            new_task_id(),
            principal_id(call.principal),
            self.host.ttl_ms,
            self.host.poll_ms,
        )
        await _TaskCall(self.host, call, record, task_status).execute(next)


@attrs.define(eq=False)
class _TaskCall:
    """One tool call that may become a task: the request's part, then the task's.

    Until ``start`` the call belongs to its request (its notifications reach the
    request, its ending is the request's); from then on it runs as the task
    ``record``, detached from the request, and only ``tasks/get`` and listen
    streams see it.
    """

    runner: TaskRunner
    call: Call
    record: TaskRecord
    task_status: trio.TaskStatus[Ending]
    started: bool = False

    async def execute(self, next: Next) -> None:
        """Run the rest of the chain; settle the task, or hand the request its
        ending."""
        record, call = self.record, self.call
        context = attrs.evolve(
            call.context, task=self, cancel=call.context.cancel.for_task(self)
        )
        if self.started:  # a resumed attempt: a task from the start
            context.task_id, context.attempt = record.task_id, record.attempt
            context.finish()
        call = attrs.evolve(call, context=context, task=self)
        ending: Ending | None = None
        try:
            # The scope absorbs a cancellation (tasks/cancel, the deadline).
            with record.scope:
                ending = await next(call)
            if not self.started:
                assert ending is not None
                self.task_status.started(ending)
                return
            self.runner.settle(record, ending)
        finally:
            if self.started and not record.terminal:
                self.runner.stopped(record)

    async def resume(self, next: Next) -> Ending:
        """Run the call as a claimed attempt of its durable task: started at once,
        under the task's scope and what is left of its TTL."""
        record = self.record
        self.started = True
        left = record.created + record.ttl_ms / 1000 - time.time()
        record.scope.deadline = trio.current_time() + max(0.0, left)
        await self.execute(next)
        return Ending(outcome="ok", result={})

    async def start(self) -> str:
        """Make the call a task: answer the request with ``CreateTaskResult``.

        Raises:
            Failure: -32603 (HTTP 503) if the shared store cannot be reached.
        """
        record, runner, call = self.record, self.runner, self.call
        spec = call.spec
        durable = None
        if isinstance(spec, ToolSpec) and spec.durable:
            durable = DurableStart(
                call.name,
                dict(call.arguments),
                call.principal,
                call.context.granted,
                call.request.meta,
            )
        await runner.persist(record, call, durable)
        self.started = True
        record.scope.deadline = trio.current_time() + runner.ttl_ms / 1000
        runner.keep(record)
        created: JsonObject = {"resultType": "task", **record.base()}
        self.task_status.started(Ending(outcome="ok", result=created))
        return record.task_id

    @property
    def scope(self) -> trio.CancelScope:
        """The task's scope: the call's cancellation follows it once started."""
        return self.record.scope

    async def ask(self, call: Call, needs: NeedsInput) -> Mapping[str, object]:
        """The task's questions, answered through ``tasks/update``."""
        return await self.runner.ask(self.record, call, needs)
