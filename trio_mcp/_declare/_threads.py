"""Worker threads for synchronous handlers, with a budget for the ones that linger.

Trio cannot stop a thread: a cancelled or timed-out synchronous handler's thread is
abandoned and runs on until its function returns. Those lingering threads must not
take the places new calls need (Trio's shared default limiter of 40 did, and a
limiter of our own merely moved the wall), and they must not pile up without end.
So a thread is never waited for: a call either starts its thread at once or, when
``MAX_LINGERING_THREADS`` abandoned threads are still running, is refused at once
(``ThreadsExhausted``; the dispatcher answers -32000 "server busy", HTTP 503), and
the replica reports itself degraded on ``/healthz`` until threads return.

Invariants:
- One budget per ``trio.run`` (a ``RunVar``), shared by every transport of the run.
- ``lingering`` counts threads whose caller stopped waiting; threads whose caller
  still waits are bounded by the transports' ``max_concurrent``, so at most
  ``MAX_LINGERING_THREADS`` plus the running calls' threads exist.
- A refusal is counted (``refused``) and never starts a thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final, TypeVar

import attrs
import trio

__all__ = [
    "MAX_LINGERING_THREADS",
    "ThreadBudget",
    "ThreadsExhausted",
    "thread_budget",
    "worker_threads",
]

#: Abandoned handler threads that may still be running before new synchronous calls
#: are refused (docs/limits.md "Worker threads" has the measurement behind it).
MAX_LINGERING_THREADS: Final = 128

R = TypeVar("R")


class ThreadsExhausted(Exception):
    """No handler thread may start: too many abandoned ones are still running."""

    def __init__(self, lingering: int) -> None:
        super().__init__(
            f"{lingering} abandoned synchronous handler threads are still running "
            f"(the budget is {MAX_LINGERING_THREADS}); a cancelled or timed-out "
            "synchronous handler keeps its thread until it returns"
        )
        self.lingering = lingering


@attrs.define(eq=False)
class ThreadBudget:
    """The threads of one ``trio.run``: how many linger, how many calls were refused."""

    max_lingering: int = MAX_LINGERING_THREADS
    limiter: trio.CapacityLimiter = attrs.field(
        factory=lambda: trio.CapacityLimiter(math.inf)
    )
    """Holds a token per live thread, abandoned ones included (Trio releases it
    when the function returns)."""
    waited_on: int = 0
    """Threads whose caller still waits for them."""
    refused: int = 0
    """Calls refused because the budget was spent."""

    @property
    def lingering(self) -> int:
        """Threads still running although nobody waits for them."""
        return max(0, int(self.limiter.borrowed_tokens) - self.waited_on)

    @property
    def spent(self) -> bool:
        """Whether new synchronous calls are being refused."""
        return self.lingering >= self.max_lingering

    async def run(self, fn: Callable[[], R]) -> R:
        """Run ``fn`` in a worker thread now, or refuse at once.

        Raises:
            ThreadsExhausted: if the budget of lingering threads is spent.
        """
        if self.spent:
            self.refused += 1
            raise ThreadsExhausted(self.lingering)
        self.waited_on += 1
        try:
            return await trio.to_thread.run_sync(
                fn, abandon_on_cancel=True, limiter=self.limiter
            )
        finally:
            self.waited_on -= 1


_budget: trio.lowlevel.RunVar[ThreadBudget] = trio.lowlevel.RunVar(
    "trio_mcp_thread_budget"
)


def thread_budget() -> ThreadBudget:
    """The thread budget of this ``trio.run``."""
    try:
        return _budget.get()
    except LookupError:
        budget = ThreadBudget()
        _budget.set(budget)
        return budget


_others: trio.lowlevel.RunVar[trio.CapacityLimiter] = trio.lowlevel.RunVar(
    "trio_mcp_other_threads"
)


def worker_threads() -> trio.CapacityLimiter:
    """The limiter for the framework's other blocking work (completers, file reads).

    Apart from the handlers' budget, so that a running completion is never counted
    as a lingering handler thread; at most ``MAX_LINGERING_THREADS`` at once, so
    abandoned completers stay bounded (beyond that, a completion waits).
    """
    try:
        return _others.get()
    except LookupError:
        limiter = trio.CapacityLimiter(MAX_LINGERING_THREADS)
        _others.set(limiter)
        return limiter
