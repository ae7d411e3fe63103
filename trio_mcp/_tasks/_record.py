"""One task of the tasks extension (SEP-2663): its status, its answer, its questions.

A ``TaskRecord`` is plain state, changed only from Trio tasks of one process (no
locks: nothing here awaits while changing it). ``view()`` renders it as the
extension's ``DetailedTask``, which ``tasks/get`` returns and ``notifications/tasks``
carries. Input requests a running task asks are kept under keys minted here, unique
over the task's life as the extension requires, even when a handler asks the same
key again in a later round.
"""

from __future__ import annotations

import datetime
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Literal

import attrs
import trio

from .._declare import InputRequest, read_response
from .._errors import DecodeError, Problem
from .._json import JsonObject, JsonValue

__all__ = ["BadResponses", "Status", "TaskRecord", "iso8601"]

Status = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class BadResponses(Exception):
    """``tasks/update`` answered an outstanding request with a value that does not fit.

    Nothing of that update is applied; ``problems`` lists each bad response.
    """

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__(
            "invalid inputResponses; nothing was applied:\n"
            + "\n".join(p.line() for p in problems)
        )


def iso8601(timestamp: float) -> str:
    """``timestamp`` (``time.time()``) as an ISO 8601 UTC string with milliseconds."""
    moment = datetime.datetime.fromtimestamp(timestamp, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_task_id() -> str:
    """An unguessable task id: the id is all a caller needs to reach a task."""
    return secrets.token_urlsafe(18)


@attrs.define(eq=False)
class TaskRecord:
    """A task's state, as ``tasks/get`` shows it, and the scope that can cancel it."""

    task_id: str
    owner: str | None
    """The principal id of the caller that created it; only it may reach the task."""
    ttl_ms: int
    poll_ms: int
    created: float = attrs.field(factory=time.time)
    updated: float = 0.0
    status: Status = "working"
    status_message: str | None = None
    result: JsonObject | None = None
    error: JsonObject | None = None
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    """The task's own scope: ``tasks/cancel`` cancels it; its deadline is the TTL."""
    cancel_requested: bool = False
    pending: dict[str, tuple[str, InputRequest]] = attrs.field(factory=dict)
    """Outstanding input requests: wire key -> (the handler's key, the request)."""
    asked: JsonObject = attrs.field(factory=dict)
    """The outstanding requests as sent (``inputRequests``), the call's secrets masked."""
    answers: dict[str, object] = attrs.field(factory=dict)
    """Decoded responses by the handler's key, for the round being asked."""
    answered: trio.Event = attrs.field(factory=trio.Event)
    used_keys: set[str] = attrs.field(factory=set)
    version: int = 0
    """Counts the snapshots written to a shared store, so only the newest is kept."""
    fence: int = 0
    """The fencing number this attempt holds the task under in a shared store
    (0: not shared). A write carrying another one is discarded there."""
    attempt: int = 1
    """Which run of the task this is (a durable task runs again elsewhere)."""
    durable: bool = False
    lost: bool = False
    """Another process took the task over (this attempt's lease ran out): this
    attempt is cancelled and writes nothing more."""

    def __attrs_post_init__(self) -> None:
        self.updated = self.created

    @property
    def terminal(self) -> bool:
        """Whether the task has reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in TERMINAL

    @property
    def expires(self) -> float:
        """When a finished task may be forgotten (``time.time()``).

        Its TTL from creation must have passed, and it must have been finished for
        the TTL again (at most a minute), so a task that ran to its TTL stays
        readable as ``failed`` for a while.
        """
        ttl = self.ttl_ms / 1000
        return max(self.created + ttl, self.updated + min(ttl, 60.0))

    def retention_ms(self) -> int:
        """How long a shared store keeps this state (renewed at each change)."""
        now = time.time()
        if self.terminal:
            return max(1, round((self.expires - now) * 1000))
        ttl = self.ttl_ms / 1000
        return max(1, round((self.created + ttl - now + min(ttl, 60.0) + 5) * 1000))

    def snapshot(self, origin: str) -> JsonObject:
        """What a shared store keeps: the owner, the view, and which process runs it."""
        return {
            "owner": self.owner,
            "origin": origin,
            "terminal": self.terminal,
            "durable": self.durable,
            "attempt": self.attempt,
            "created": self.created,
            "view": self.view(),
        }

    def set_status(self, status: Status, message: str | None = None) -> None:
        """Move to ``status`` (terminal statuses are final)."""
        if self.terminal:
            return
        self.status, self.status_message = status, message
        self.updated = time.time()

    # -- the wire shapes ------------------------------------------------------------------
    def base(self) -> JsonObject:
        """The extension's ``Task`` fields, without anything status-specific."""
        out: JsonObject = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            out["statusMessage"] = self.status_message
        out["createdAt"] = iso8601(self.created)
        out["lastUpdatedAt"] = iso8601(self.updated)
        out["ttlMs"] = self.ttl_ms
        out["pollIntervalMs"] = self.poll_ms
        return out

    def view(self) -> JsonObject:
        """The ``DetailedTask``: the base fields plus what the status carries."""
        out = self.base()
        if self.status == "input_required":
            out["inputRequests"] = {
                key: request
                for key, request in self.asked.items()
                if key in self.pending
            }
        elif self.status == "completed" and self.result is not None:
            out["result"] = self.result
        elif self.status == "failed" and self.error is not None:
            out["error"] = self.error
        return out

    # -- input requests inside the task --------------------------------------------------
    def ask(
        self,
        requests: Mapping[str, InputRequest],
        mask: Callable[[JsonObject], JsonObject] | None = None,
    ) -> None:
        """Surface ``requests`` on ``tasks/get``; ``answered`` is set once all arrive.

        ``mask`` masks the running call's secrets in the ``inputRequests`` as sent:
        they are rendered (and masked) once, here, so neither ``tasks/get`` nor a
        shared store ever sees a question's plaintext.
        """
        self.pending = {self._mint(key): (key, r) for key, r in requests.items()}
        asked: JsonObject = {
            key: request.to_wire() for key, (_, request) in self.pending.items()
        }
        self.asked = asked if mask is None else mask(asked)
        self.answers = {}
        self.answered = trio.Event()
        self.set_status("input_required")

    def _mint(self, key: str) -> str:
        """A wire key for the handler's ``key``, never used before in this task
        (a later attempt's keys name it: ``key~2``, so no answer to an earlier
        attempt's question can be taken for its own)."""
        if self.attempt > 1:
            key = f"{key}~{self.attempt}"
        wire_key, n = key, 1
        while wire_key in self.used_keys:
            n += 1
            wire_key = f"{key}#{n}"
        self.used_keys.add(wire_key)
        return wire_key

    def answer(self, responses: Mapping[str, JsonValue]) -> bool:
        """Take the responses to outstanding requests; ignore any other key.

        All or nothing: if one response does not fit, none is taken. Returns
        whether anything was taken.

        Raises:
            BadResponses: naming every response that does not fit its request.
        """
        taken: dict[str, tuple[str, object]] = {}
        problems: list[Problem] = []
        for wire_key, raw in responses.items():
            if wire_key not in self.pending:
                continue
            key, request = self.pending[wire_key]
            try:
                taken[wire_key] = (key, read_response(request.descriptor(), raw))
            except DecodeError as exc:
                problems.extend(
                    Problem(
                        ".".join(p for p in ("inputResponses", wire_key, q.path) if p),
                        q.message,
                    )
                    for q in exc.problems
                )
        if problems:
            raise BadResponses(problems)
        for wire_key, (key, value) in taken.items():
            del self.pending[wire_key]
            self.answers[key] = value
        if taken and not self.pending:
            # Working again at once, so no poll sees input_required with nothing asked.
            self.set_status("working")
            self.answered.set()
        elif taken:
            self.updated = time.time()
        return bool(taken)
