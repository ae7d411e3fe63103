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
"""

from __future__ import annotations

import logging
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
                record.set_status("cancelled", "the server stopped serving")
                self.runner.publish(record)

    async def start(self) -> str:
        """Make the call a task: answer the request with ``CreateTaskResult``.

        Raises:
            Failure: -32603 (HTTP 503) if the shared store cannot be reached.
        """
        record, runner = self.record, self.runner
        await runner.persist(record, self.call.name)
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
