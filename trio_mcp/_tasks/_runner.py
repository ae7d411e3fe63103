"""The tasks extension (SEP-2663) on Trio: tool calls that outlive their request.

A tool declared ``@tool(task="optional")`` (or ``"required"``) answers a client
that declares ``io.modelcontextprotocol/tasks`` with a ``CreateTaskResult``; the
call goes on in a nursery the server owns while serving (``TaskRunner.open``, which
every serve method and the ASGI lifespan enter), under the task's own cancel scope
and deadline. The request starts it with ``nursery.start``: the handler runs inside
the request until the task exists (at once, or when a ``task_start="handler"`` tool
awaits ``ToolContext.task_started()``), so anything that ends the call before that
(an answer, a multi round-trip question, an error) is the request's own reply.

The extension is two steps of the call chain (``_dispatch/_runner``):
``run_as_task``, before every other step, runs the rest of the chain in the task
nursery, so the call (grants, middleware, deadline, reply guard, masking, one
receipt) is the same as any call's; ``begin``, just before the handler, starts
the task of a ``task_start="call"`` tool once the grants let the call through.
Starting the task detaches the call from its request (``_steps``): its
notifications stop, its cancellation follows the task's scope, and its questions
are answered through the task: a ``NeedsInput`` puts the task in
``input_required``, ``tasks/update`` delivers the answers, and the handler runs
again with them, as a multi round-trip retry would. ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` reach a task by its
unguessable id, only for the principal that created it. Status changes go to listen
streams that asked for the task's id (``notifications/tasks``).

State is in memory, per process, unless the server has a shared store
(``RedisStore``): then each change is also written there as a snapshot, so
``tasks/get`` answers on any replica (and after the worker that ran the task is
gone, within its TTL); ``tasks/update`` and ``tasks/cancel`` for a task running
elsewhere are passed to the process that runs it; and listen streams hear of
changes made anywhere. A task call whose record cannot be written (Redis down)
fails at once with -32603; calls that are not tasks never touch the store. Each
task is held by a lease under a fencing number (``_handover``): a task whose process
stopped fails, or runs again elsewhere if it is durable, and only the attempt that
holds the fence writes. Leaving the nursery (a graceful stop) fails the tasks still
running, or releases the durable ones, and writes them before the store closes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from .._authority import call_values
from .._changes import Change
from .._context import client_supports, principal_id, serving
from .._declare import NeedsInput
from .._dispatch._call import Call, Ending, Middleware
from .._dispatch._mask import mask_input_required, text_mask
from .._dispatch._request import Checked, Failure
from .._errors import InvalidReply, MissingClientCapability
from .._json import JsonObject, JsonValue
from .._protocol import _wire as wire
from .._store import MemoryStore, RedisStore, Store, StoreUnavailable
from .._store._leases import Start
from .._store._redis import TaskWrite
from ._durable import DurableStart, seal_start
from ._handover import Handover
from ._record import TERMINAL, BadResponses, TaskRecord
from ._steps import TaskSteps, declares_tasks, missing_extension

if TYPE_CHECKING:
    from .._dispatch._dispatcher import Dispatcher

__all__ = ["DEFAULT_TTL_MS", "POLL_INTERVAL_MS", "TaskRunner", "declares_tasks"]

log = logging.getLogger("trio_mcp")

#: How long a task may run and be read (``ttlMs``): one hour from its creation.
DEFAULT_TTL_MS = 3_600_000
#: The polling interval suggested to clients (``pollIntervalMs``).
POLL_INTERVAL_MS = 500
#: Most tasks kept at once; beyond it, calls run synchronously (the server decides).
MAX_TASKS = 10_000


Handler = Callable[[Checked], Awaitable[JsonObject]]


def _question_mask() -> Callable[[JsonObject], JsonObject] | None:
    """Masks the running call's secrets in a task's ``inputRequests``
    (docs/guides/authority.md, "Secrets"), as ``Runner.finish`` masks an ``input_required`` result outside a task."""
    values = call_values()
    if not values:
        return None
    mask = text_mask(values)

    def masked(asked: JsonObject) -> JsonObject:
        out = mask_input_required({"inputRequests": asked}, mask)["inputRequests"]
        assert isinstance(out, dict)
        return out

    return masked


def task_runner(publish: Callable[[Change], object], store: Store) -> TaskRunner:
    """The dispatcher's task host: ``Dispatcher(tasks=task_runner)``."""
    return TaskRunner(publish, store=store)


class TaskRunner:
    """The tasks of one dispatcher: their records, and the nursery they run in.

    Args:
        publish: Offers a task's change to this process's listen streams.
        ttl_ms: Each task's ``ttlMs``: its deadline, and how long it stays readable.
        poll_ms: The ``pollIntervalMs`` suggested to clients.
        max_tasks: Most tasks kept at once.
        store: Where task records are shared (a ``RedisStore``); its connection
            is held while the task nursery is open.
    """

    def __init__(
        self,
        publish: Callable[[Change], object],
        *,
        store: Store | None = None,
        ttl_ms: int = DEFAULT_TTL_MS,
        poll_ms: int = POLL_INTERVAL_MS,
        max_tasks: int = MAX_TASKS,
    ) -> None:
        self._publish = publish
        self.ttl_ms = ttl_ms
        self.poll_ms = poll_ms
        self.max_tasks = max_tasks
        self._records: dict[str, TaskRecord] = {}
        self.nursery: trio.Nursery | None = None
        """Where tasks run, while ``open`` holds it."""
        self.steps = TaskSteps(self)
        """The extension's steps of a task tool's chain."""
        self.store = store if store is not None else MemoryStore()
        self._shared = store if isinstance(store, RedisStore) else None
        self.stopping = False
        """Set when the nursery closes: tasks still running are handed over."""
        self.handover: Handover | None = None
        """Leases, fencing and resumption, with a shared store (``_handover``)."""
        if self._shared is not None:
            self._shared.on_op = self._apply
            self._shared.on_change = self._changed_elsewhere
            self.handover = Handover(self, self._shared)

    def attach(self, dispatcher: Dispatcher) -> None:
        """Know the dispatcher whose tasks these are: a durable task claimed here
        runs again through it."""
        if self.handover is not None:
            self.handover.dispatcher = dispatcher

    # -- the nursery ------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """Whether a nursery is open, so calls can become tasks."""
        return self.nursery is not None

    @asynccontextmanager
    async def open(self) -> AsyncIterator[None]:
        """Run tasks in a nursery for the duration of the block.

        Re-entrant: an inner block (a second transport of the same server) uses the
        outer block's nursery. Leaving the outermost block cancels the tasks still
        running: they end ``failed`` (their process stops), or, durable with a
        shared store, are released to another replica; with a shared store they
        are written there before its connection closes. An exception from the
        block is raised as itself, not wrapped in an exception group.
        """
        if self.nursery is not None:
            yield
            return
        self.stopping = False
        try:
            with serving.scope():  # require() outside a call is refused meanwhile
                async with self.store.running():
                    try:
                        async with trio.open_nursery() as nursery:
                            self.nursery = nursery
                            try:
                                yield
                            finally:
                                self.nursery = None
                                self.stopping = True
                                nursery.cancel_scope.cancel()
                    finally:
                        if self.handover is not None:
                            await self.handover.hand_over()
        except BaseExceptionGroup as group:
            if len(group.exceptions) == 1:
                only = group.exceptions[0]
                raise only from only.__cause__  # keeps its cause, drops the group
            raise

    # -- the steps -----------------------------------------------------------------------
    @property
    def outer(self) -> Middleware:
        """``run_as_task``: the first step of a task tool's chain (``_steps``)."""
        return self.steps.run_as_task

    @property
    def inner(self) -> Middleware:
        """``begin``: the step before a task tool's handler (``_steps``)."""
        return self.steps.begin

    def room(self) -> bool:
        """Whether another task may be kept (finished ones past their TTL are
        forgotten first)."""
        if len(self._records) >= self.max_tasks:
            self._purge()
        return len(self._records) < self.max_tasks

    def keep(self, record: TaskRecord) -> None:
        """Keep a task that has started: ``tasks/*`` and listen streams find it."""
        self._records[record.task_id] = record

    def records(self) -> Iterator[TaskRecord]:
        """The tasks kept here (a copy: safe to iterate across awaits)."""
        return iter(list(self._records.values()))

    def forget(self, task_id: str, fence: int) -> TaskRecord | None:
        """Another process took ``task_id`` over from the attempt with ``fence``:
        cancel that attempt here, and read the task from the store from now on."""
        record = self._records.get(task_id)
        if record is None or record.fence != fence:
            return None
        del self._records[task_id]
        if record.lost:
            return None
        record.lost = True
        record.scope.cancel()
        return record

    def stopped(self, record: TaskRecord) -> None:
        """The server stops while ``record`` runs: a durable task with a shared
        store is released (another replica resumes it); any other fails."""
        if record.lost:
            return
        if record.durable and self.handover is not None:
            record.status_message = (
                f"attempt {record.attempt} was released by a stopping process; "
                "another replica resumes it"
            )
            record.updated = time.time()
            self.handover.released.append(record)
        else:
            message = "the process running this task stopped before the task finished"
            record.error = {"code": wire.INTERNAL_ERROR, "message": message}
            record.set_status("failed", message)
        self.publish(record)

    async def ask(
        self, record: TaskRecord, call: Call, needs: NeedsInput
    ) -> dict[str, object]:
        """Surface ``needs`` on the task and wait until every request is answered.

        Raises:
            MissingClientCapability: if the client cannot answer a request.
            InvalidReply: if ``needs`` asks for nothing.
        """
        if not needs.requests:
            raise InvalidReply(
                call.target.declaration,
                "NeedsInput inside a task must ask for something",
            )
        capabilities = call.context.client_capabilities
        for request in needs.requests.values():
            if not client_supports(capabilities, request.client_capability):
                raise MissingClientCapability(dict(request.client_capability))
        record.ask(needs.requests, _question_mask())
        self.publish(record)
        await record.answered.wait()
        return dict(record.answers)

    def settle(self, record: TaskRecord, ending: Ending | None) -> None:
        """Record how the task ended and announce it (nothing, for an attempt
        another process took over)."""
        if record.lost:
            return
        if record.scope.cancelled_caught or ending is None:
            if record.cancel_requested:
                record.set_status("cancelled", "cancelled by tasks/cancel")
            else:
                message = (
                    f"the task ran past its ttlMs ({record.ttl_ms}) and was cancelled"
                )
                record.error = {"code": wire.INTERNAL_ERROR, "message": message}
                record.set_status("failed", message)
        elif ending.error is not None:
            record.error = ending.error
            said = ending.error.get("message")
            record.set_status("failed", said if isinstance(said, str) else None)
        else:
            assert ending.result is not None
            record.result = _inlined(ending.result)
            record.set_status("completed")
        self.publish(record)

    # -- tasks/get, tasks/update, tasks/cancel --------------------------------------------
    def methods(self) -> dict[str, Handler]:
        """The extension's methods, for the dispatcher's table."""
        return {
            wire.TASKS_GET: self._get,
            wire.TASKS_UPDATE: self._update,
            wire.TASKS_CANCEL: self._cancel,
        }

    async def _find(self, request: Checked) -> TaskRecord | JsonObject:
        """The task a request names, if its client declared the extension and owns it:
        its record when it runs here, else its snapshot from the shared store.

        Raises:
            Failure: -32021 without the extension; -32602 for an unknown task;
                -32603 if the shared store cannot be reached.
        """
        method = request.method
        if not declares_tasks(request.meta):
            raise missing_extension(method)
        task_id = request.params.get("taskId")
        if not isinstance(task_id, str):
            raise Failure.invalid(f"{method} needs params.taskId (a string)")
        found = await self._lookup(task_id)
        owner = (
            found.owner if isinstance(found, TaskRecord) else (found or {}).get("owner")
        )
        if found is None or owner != principal_id(request.caller.principal):
            raise _unknown(task_id)
        return found

    async def _lookup(self, task_id: str) -> TaskRecord | JsonObject | None:
        """The live record of ``task_id`` here, else its snapshot in the shared store."""
        record = self._alive(task_id)
        if record is not None or self._shared is None:
            return record
        try:
            snapshot = await self._shared.load_task(task_id)
            if (
                snapshot is None
                or snapshot.get("terminal") is not False
                or snapshot.get("durable") is True
            ):
                return snapshot
            # Not durable and unfinished: if its lease ran out, it fails now, for
            # good (fenced), before anyone is told so.
            assert self.handover is not None
            if await self.handover.claim_one(task_id):
                return await self._shared.load_task(task_id)
            return snapshot
        except StoreUnavailable as exc:
            raise _store_failure(f"reading task '{task_id}'", exc) from None

    async def _get(self, request: Checked) -> JsonObject:
        found = await self._find(request)
        if isinstance(found, TaskRecord):
            return found.view()
        view = found.get("view")
        assert isinstance(view, dict)
        return view

    async def _update(self, request: Checked) -> JsonObject:
        found = await self._find(request)
        responses = request.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise Failure.invalid(
                "tasks/update needs params.inputResponses, an object of responses by "
                "the keys of the task's inputRequests"
            )
        if not isinstance(found, TaskRecord):
            return await self._update_elsewhere(found, responses)
        try:
            taken = found.answer(responses)
        except BadResponses as exc:
            raise _bad_responses(exc) from None
        if taken:
            self.publish(found)
        return {}

    async def _update_elsewhere(
        self, snapshot: JsonObject, responses: JsonObject
    ) -> JsonObject:
        """Pass answers to the process running the task, if it asks for any of them."""
        view = snapshot.get("view")
        asked = view.get("inputRequests") if isinstance(view, dict) else None
        if not isinstance(asked, dict) or not set(asked) & set(responses):
            return {}  # nothing it asks for: ignored, as here
        answer = await self._ask_owner(
            snapshot, {"op": "update", "responses": responses}
        )
        problems = answer.get("problems")
        if isinstance(problems, list):
            raise Failure.invalid(str(answer.get("message")), {"problems": problems})
        return {}

    async def _cancel(self, request: Checked) -> JsonObject:
        found = await self._find(request)
        if not isinstance(found, TaskRecord):
            view = found.get("view")
            if isinstance(view, dict) and view.get("status") not in TERMINAL:
                await self._cancel_elsewhere(found)
            return {}
        if not found.terminal:
            if found.durable and self._shared is not None:
                # Marked first: should this process die before it writes the task
                # cancelled, no later attempt runs.
                try:
                    await self._shared.leases.mark_cancelled(found.task_id)
                except StoreUnavailable as exc:
                    raise _store_failure(
                        f"cancelling task '{found.task_id}'", exc
                    ) from None
            found.cancel_requested = True
            found.scope.cancel()
        return {}

    async def _cancel_elsewhere(self, snapshot: JsonObject) -> None:
        """Mark the task cancelled in the store (no attempt runs again), then stop
        the running one: through its process, or, if its lease ran out, here."""
        assert self._shared is not None
        assert self.handover is not None
        view = snapshot.get("view")
        task_id = view.get("taskId") if isinstance(view, dict) else None
        assert isinstance(task_id, str)
        try:
            await self._shared.leases.mark_cancelled(task_id)
            if await self.handover.claim_one(task_id):
                return
        except StoreUnavailable as exc:
            raise _store_failure(f"cancelling task '{task_id}'", exc) from None
        # If its process does not answer, the mark ends the task when its lease
        # runs out.
        with contextlib.suppress(Failure):
            await self._ask_owner(snapshot, {"op": "cancel"})

    async def _ask_owner(self, snapshot: JsonObject, op: JsonObject) -> JsonObject:
        assert self._shared is not None
        view = snapshot.get("view")
        task_id = view.get("taskId") if isinstance(view, dict) else None
        origin = snapshot.get("origin")
        assert isinstance(task_id, str)
        assert isinstance(origin, str)
        try:
            answer = await self._shared.ask_owner(origin, {**op, "id": task_id})
        except StoreUnavailable as exc:
            raise _store_failure(f"reaching task '{task_id}'", exc) from None
        if answer.get("gone") is True:
            raise _unknown(task_id)
        return answer

    # -- the shared store's side -----------------------------------------------------------
    async def persist(
        self, record: TaskRecord, call: Call, durable: DurableStart | None
    ) -> None:
        """Write a new task's record, its lease (fence 1) and, for a durable one,
        its sealed start, before anyone learns its id.

        Raises:
            Failure: -32603 (HTTP 503) if the shared store cannot be reached.
        """
        shared = self._shared
        if shared is None:
            return
        tool = call.name
        record.version, record.fence = 1, 1
        record.durable = durable is not None
        sealed = ""
        if durable is not None:
            assert self.handover is not None
            assert self.handover.sealer is not None
            sealed = seal_start(
                self.handover.sealer,
                record.task_id,
                durable,
                record.ttl_ms / 1000 + 60.0,
            )
        max_attempts = getattr(call.spec, "max_attempts", 1)
        body = json.dumps(record.snapshot(shared.origin))
        start = Start(record.durable, tool, max_attempts, sealed, record.ttl_ms)
        try:
            await shared.leases.create(
                record.task_id,
                body,
                shared.message(record.task_id, body),
                record.retention_ms(),
                start,
            )
        except StoreUnavailable as exc:
            what = f"tool '{tool}' runs as a task, and starting it"
            raise _store_failure(what, exc) from None

    async def _apply(self, op: JsonObject) -> JsonObject:
        """Answer another process's request for a task running here; never raises."""
        task_id = op.get("id")
        record = self._records.get(task_id) if isinstance(task_id, str) else None
        if record is None:
            return {"gone": True}
        if op.get("op") == "cancel":
            if not record.terminal:
                record.cancel_requested = True
                record.scope.cancel()
            return {}
        responses = op.get("responses")
        if op.get("op") != "update" or not isinstance(responses, dict):
            return {}
        try:
            taken = record.answer(responses)
        except BadResponses as exc:
            failure = _bad_responses(exc)
            assert isinstance(failure.data, dict)
            return {"message": failure.message, **failure.data}
        if taken:
            self.publish(record)
        return {}

    def _changed_elsewhere(self, task_id: str) -> None:
        """A task running in another process changed: tell listen streams here."""
        if task_id not in self._records:
            self._publish(Change.task(task_id))

    # -- listen streams -------------------------------------------------------------------
    async def listen_filter(self, requested: JsonValue, request: Checked) -> list[str]:
        """The task ids of a listen request's filter that this caller may follow.

        Raises:
            Failure: -32602 for a malformed ``taskIds``; -32021 if the client asks
                for task notifications without declaring the extension.
        """
        ids = requested.get("taskIds") if isinstance(requested, dict) else None
        if ids is None:
            return []
        if not isinstance(ids, list) or not all(isinstance(t, str) for t in ids):
            raise Failure.invalid("params.notifications.taskIds must be a list of ids")
        if not declares_tasks(request.meta):
            raise missing_extension("subscriptions/listen with taskIds")
        owner = principal_id(request.caller.principal)
        kept: list[str] = []
        for task_id in dict.fromkeys(t for t in ids if isinstance(t, str)):
            found = await self._lookup(task_id)
            if isinstance(found, TaskRecord):
                if found.owner == owner:
                    kept.append(task_id)
            elif found is not None and found.get("owner") == owner:
                kept.append(task_id)
        return kept

    def view(self, task_id: str) -> JsonObject | None:
        """The task as ``tasks/get`` would show it now, or None once it is gone."""
        record = self._records.get(task_id)
        if record is not None:
            return record.view()
        return None if self._shared is None else self._shared.cached_view(task_id)

    def publish(self, record: TaskRecord) -> None:
        """Tell listen streams following the task that its status changed.

        With a shared store the change is also written there (soon, in order), which
        announces it to the other processes.
        """
        self._publish(Change.task(record.task_id))
        shared = self._shared
        if shared is not None and record.task_id in self._records and not record.lost:
            record.version += 1
            write = TaskWrite.of(
                record.snapshot(shared.origin),
                record.version,
                record.retention_ms(),
                record.fence,
                terminal=record.terminal,
            )
            shared.save_task_soon(record.task_id, write)

    def _alive(self, task_id: str) -> TaskRecord | None:
        """The task ``task_id``, unless it is unknown or finished and past its TTL."""
        record = self._records.get(task_id)
        if record is not None and record.terminal and record.expires <= time.time():
            del self._records[task_id]
            return None
        return record

    def _purge(self) -> None:
        """Forget every finished task whose TTL has passed."""
        now = time.time()
        expired = [
            task_id
            for task_id, record in self._records.items()
            if record.terminal and record.expires <= now
        ]
        for task_id in expired:
            del self._records[task_id]


def _unknown(task_id: str) -> Failure:
    return Failure.invalid(
        f"unknown task '{task_id}': it never existed, expired, or belongs to "
        "another caller",
        {"taskId": task_id},
    )


def _bad_responses(exc: BadResponses) -> Failure:
    return Failure.invalid(
        str(exc),
        {"problems": [{"path": p.path, "message": p.message} for p in exc.problems]},
    )


def _store_failure(what: str, exc: StoreUnavailable) -> Failure:
    """-32603 (HTTP 503): the shared task store did not answer; retrying may work."""
    return Failure(
        wire.INTERNAL_ERROR,
        f"{what} needs the shared task store, which cannot be reached now ({exc}); "
        "retry later",
        {"retryable": True},
        http_status=503,
        outcome="internal",
        error_type="trio_mcp.StoreUnavailable",
    )


def _inlined(result: JsonObject) -> JsonObject:
    """A ``CallToolResult`` as a completed task inlines it: no ``resultType``, no serverInfo."""
    out = {k: v for k, v in result.items() if k != "resultType"}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k != wire.META_SERVER_INFO}
        if meta:
            out["_meta"] = meta
        else:
            del out["_meta"]
    return out
