"""Tasks across processes: leases, fencing, resumption and the graceful hand-over.

With a shared store (``RedisStore``) every task is held by the process that runs
it through a lease it renews at each beat, under a fencing number (``_store/_leases``).
This module is that side of the task runner:

- ``beat``: renew the leases of the tasks running here (an attempt whose lease was
  taken over meanwhile is cancelled, and writes nothing more), then claim the tasks
  whose lease ran out: a durable task whose tool this server declares runs again
  here from the start (``resume``); any other ends ``failed`` (its process stopped,
  or it ran ``max_attempts``) or ``cancelled`` (``tasks/cancel`` marked it).
- ``resume``: opens the sealed start (``_durable``) and runs the call again through
  the dispatcher, as the same caller with the same grants, as the task's next
  attempt (the tasks step finds it in ``resuming``).
- ``hand_over``: a graceful stop writes every pending snapshot and gives the
  durable tasks' leases up at once, telling the other processes to claim them now.

Each claim is logged (task id, attempt, the process that gave it up) and counted
(``trio_mcp.tasks.resumed`` / ``abandoned``).
"""

from __future__ import annotations

import contextvars
import json
import logging
import time
from typing import TYPE_CHECKING, Literal, cast

import attrs
import trio

from .. import _metrics
from .._dispatch._request import Caller
from .._json import JsonObject
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Request
from .._protocol._state import InvalidState, StateSealer
from .._store import RedisStore, StoreUnavailable
from .._store._leases import Claim
from .._store._redis import TaskWrite
from ._durable import open_start
from ._record import TaskRecord, iso8601

if TYPE_CHECKING:
    from .._dispatch._dispatcher import Dispatcher
    from ._runner import TaskRunner

__all__ = ["Handover", "Resuming", "finished_view", "resuming"]

log = logging.getLogger("trio_mcp")

#: The notice that tells every process to claim released tasks now.
RELEASED_NOTICE = "task-released"


@attrs.define(eq=False)
class Resuming:
    """The attempt a resumed call runs as; the tasks step takes it once."""

    record: TaskRecord
    taken: bool = False


#: Set by ``Handover.resume`` in the Trio task that runs one resumed attempt.
resuming: contextvars.ContextVar[Resuming | None] = contextvars.ContextVar(
    "trio_mcp_resuming", default=None
)


def finished_view(
    snapshot: JsonObject,
    status: Literal["failed", "cancelled"],
    message: str,
) -> JsonObject:
    """``snapshot`` ended ``status`` with ``message`` (an error when failed)."""
    view = snapshot.get("view")
    view = dict(view) if isinstance(view, dict) else {}
    for key in ("inputRequests", "result", "error"):
        view.pop(key, None)
    view.update(status=status, statusMessage=message)
    if status == "failed":
        view["error"] = {"code": wire.INTERNAL_ERROR, "message": message}
    view["lastUpdatedAt"] = _iso_now()
    return {**snapshot, "terminal": True, "view": view}


def _iso_now() -> str:
    return iso8601(time.time())


def _retention_ms(snapshot: JsonObject) -> int:
    """How long a finished snapshot is kept: as ``TaskRecord.expires`` says."""
    view = snapshot.get("view")
    ttl_ms = view.get("ttlMs") if isinstance(view, dict) else None
    created = snapshot.get("created")
    ttl = ttl_ms / 1000 if isinstance(ttl_ms, int) else 60.0
    start = created if isinstance(created, float | int) else time.time()
    until = max(start + ttl, time.time() + min(ttl, 60.0))
    return max(1, round((until - time.time()) * 1000))


_ENDINGS: dict[str, tuple[Literal["failed", "cancelled"], str]] = {
    "orphaned": (
        "failed",
        "the process running this task stopped before the task finished",
    ),
    "cancelled": ("cancelled", "cancelled by tasks/cancel"),
    "ttl": ("failed", "the task ran past its ttlMs and was cancelled"),
}


@attrs.define(eq=False)
class Handover:
    """The shared store's side of one task runner."""

    runner: TaskRunner
    shared: RedisStore
    dispatcher: Dispatcher | None = None
    released: list[TaskRecord] = attrs.field(factory=list)

    def __attrs_post_init__(self) -> None:
        shared = self.shared
        shared.on_beat = self.beat
        shared.on_stale = self.fenced_out
        shared.notices[RELEASED_NOTICE] = lambda _: shared.beat_now()

    @property
    def sealer(self) -> StateSealer | None:
        return None if self.dispatcher is None else self.dispatcher.runner.sealer

    def has_tasks(self) -> bool:
        """Whether this server declares task tools (else it claims nothing)."""
        return self.dispatcher is not None and self.dispatcher.catalog.has_task_tools

    def durable_tools(self) -> list[str]:
        """The tools declared here with ``durable=True``: the ones this process resumes."""
        if self.dispatcher is None:
            return []
        return [
            name
            for name, entry in self.dispatcher.catalog.tools.items()
            if getattr(entry.spec, "durable", False)
        ]

    # -- the beat ---------------------------------------------------------------------
    async def beat(self) -> None:
        """Renew the leases held here; claim the ones run out (not while stopping).

        Raises:
            StoreUnavailable: if Redis does not answer (the beat is run again).
        """
        runner = self.runner
        held = {
            record.task_id: record.fence
            for record in runner.records()
            if record.fence and not record.terminal and not record.lost
        }
        for task_id in await self.shared.leases.renew(held):
            self.lose(task_id, held.get(task_id, 0))
        if runner.nursery is None or runner.stopping or not self.has_tasks():
            return
        for claim in await self.shared.leases.claim(self.durable_tools()):
            await self.take(claim)

    async def claim_one(self, task_id: str) -> bool:
        """Claim ``task_id`` now if its lease ran out (a read found it unfinished);
        whether it was.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        claims = await self.shared.leases.claim(self.durable_tools(), task_id)
        for claim in claims:
            await self.take(claim)
        return bool(claims)

    def fenced_out(self, task_id: str, fence: int) -> None:
        """A write of the attempt with ``fence`` was discarded: stop that attempt."""
        self.lose(task_id, fence)

    def lose(self, task_id: str, fence: int) -> None:
        """Another process holds the task now: cancel the attempt running here."""
        record = self.runner.forget(task_id, fence)
        if record is None:
            return
        log.warning(
            "task %s: attempt %d lost its lease (this process %s was paused or cut "
            "off from Redis past its heartbeat); another process holds the task, so "
            "this attempt is cancelled and its outcome discarded",
            task_id,
            record.attempt,
            self.shared.name,
        )

    async def take(self, claim: Claim) -> None:
        """Do what a claim says: run the task again here, or write how it ended.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        snapshot = json.loads(claim.snapshot) if claim.snapshot else {}
        if not isinstance(snapshot, dict):
            snapshot = {}
        gave_up = claim.released or claim.holder
        how = "released it" if claim.released else "stopped renewing its heartbeat"
        nursery = self.runner.nursery
        if claim.kind == "resume" and nursery is None:
            # Claimed as this process began to stop: give it straight back.
            await self.shared.leases.release(claim.task_id, claim.fence)
            await self.shared.notify(RELEASED_NOTICE, {})
            return
        if claim.kind == "resume":
            assert nursery is not None
            log.warning(
                "task %s: attempt %d claimed by %s (tool %r); %s %s",
                claim.task_id,
                claim.attempts,
                self.shared.name,
                claim.tool,
                gave_up,
                how,
            )
            _metrics.count_task(
                "resumed", "released" if claim.released else "heartbeat"
            )
            nursery.start_soon(self.resume, claim, snapshot)
            return
        status, message = self._ending(claim)
        log.warning(
            "task %s: %s (%s) after %d attempt(s); %s %s",
            claim.task_id,
            status,
            message,
            claim.attempts,
            gave_up,
            how,
        )
        if claim.kind in ("orphaned", "exhausted"):
            _metrics.count_task(
                "abandoned",
                "not_durable" if claim.kind == "orphaned" else "max_attempts",
            )
        await self.write_end(claim, snapshot, status, message)

    def _ending(self, claim: Claim) -> tuple[Literal["failed", "cancelled"], str]:
        if claim.kind == "exhausted":
            return "failed", (
                f"the task ran {claim.attempts} attempt(s), its max_attempts, and the "
                "process running each one stopped before it finished; it is not run "
                "again"
            )
        return _ENDINGS[claim.kind]

    async def write_end(
        self,
        claim: Claim,
        snapshot: JsonObject,
        status: Literal["failed", "cancelled"],
        message: str,
    ) -> None:
        """Write the task's end under the claim's fence.

        Raises:
            StoreUnavailable: if Redis does not answer in time.
        """
        ended = finished_view(snapshot, status, message)
        ended["origin"] = self.shared.origin
        write = TaskWrite.of(ended, 1, _retention_ms(ended), claim.fence, terminal=True)
        await self.shared.save_task(claim.task_id, write)

    # -- resuming ---------------------------------------------------------------------
    async def resume(self, claim: Claim, snapshot: JsonObject) -> None:
        """Run a claimed durable task again here, as its next attempt."""
        try:
            await self._resume(claim, snapshot)
        except StoreUnavailable as exc:
            log.warning(
                "task %s: attempt %d could not start (%s); its lease runs out and "
                "another claim runs it",
                claim.task_id,
                claim.attempts,
                exc,
            )

    async def _resume(self, claim: Claim, snapshot: JsonObject) -> None:
        sealer, dispatcher = self.sealer, self.dispatcher
        assert sealer is not None
        assert dispatcher is not None
        try:
            start = open_start(sealer, claim.task_id, claim.start)
        except InvalidState as exc:
            message = (
                f"the task could not be resumed: its start does not open here ({exc}); "
                "give every replica the same state_key (TRIO_MCP_STATE_KEY)"
            )
            log.error("task %s: %s", claim.task_id, message)
            await self.write_end(claim, snapshot, "failed", message)
            return
        record = self._record(claim, snapshot)
        self.runner.keep(record)
        self.runner.publish(record)
        request = Request(
            f"{claim.task_id}#{claim.attempts}",
            "tools/call",
            {
                "name": start.tool,
                "arguments": cast(JsonObject, start.arguments),
                "_meta": start.meta,
            },
        )
        box = Resuming(record)
        token = resuming.set(box)
        try:
            reply = await dispatcher.handle(
                request, Caller(principal=start.principal, allow=start.grants)
            )
        finally:
            resuming.reset(token)
        if not box.taken and not record.terminal:
            error = reply.message.get("error")
            said = error.get("message") if isinstance(error, dict) else None
            record.error = {
                "code": wire.INTERNAL_ERROR,
                "message": f"the task could not be resumed: {said}",
            }
            record.set_status("failed", record.error["message"])  # type: ignore[arg-type]
            self.runner.publish(record)

    def _record(self, claim: Claim, snapshot: JsonObject) -> TaskRecord:
        """The record of the claimed attempt: the task's id, owner and times."""
        view = snapshot.get("view")
        view = view if isinstance(view, dict) else {}
        owner, created = snapshot.get("owner"), snapshot.get("created")
        ttl_ms, poll_ms = view.get("ttlMs"), view.get("pollIntervalMs")
        runner = self.runner
        record = TaskRecord(
            claim.task_id,
            owner if isinstance(owner, str) else None,
            ttl_ms if isinstance(ttl_ms, int) else runner.ttl_ms,
            poll_ms if isinstance(poll_ms, int) else runner.poll_ms,
            created=created if isinstance(created, float) else time.time(),
            fence=claim.fence,
            attempt=claim.attempts,
            durable=True,
        )
        record.status_message = f"attempt {claim.attempts} (resumed on another process)"
        return record

    # -- stopping ---------------------------------------------------------------------
    async def hand_over(self) -> None:
        """Write every pending snapshot, give the durable tasks' leases up and tell
        the other processes to claim them: shielded, within twice the store's
        timeout, on a connection of its own (a graceful stop)."""
        shared = self.shared
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + 2 * shared.timeout
            try:
                async with shared.own_connection():
                    await self._hand_over()
            except (StoreUnavailable, OSError) as exc:
                log.error(
                    "stopping: the tasks of %s could not be handed over (%s); their "
                    "leases run out within the heartbeat and they are claimed then",
                    shared.name,
                    exc,
                )
        if scope.cancelled_caught:
            log.error(
                "stopping: handing over the tasks of %s took longer than %g s; their "
                "leases run out within the heartbeat",
                shared.name,
                2 * shared.timeout,
            )
        self.released.clear()

    async def _hand_over(self) -> None:
        shared = self.shared
        await shared.drain()
        for record in self.released:
            if await shared.leases.release(record.task_id, record.fence):
                log.warning(
                    "task %s: attempt %d released by %s (stopping); another "
                    "replica resumes it",
                    record.task_id,
                    record.attempt,
                    shared.name,
                )
        if self.released:
            await shared.notify(RELEASED_NOTICE, {})
