"""The process around a serve method: Trio required, signals stop it gracefully.

A serve method is an ordinary async function that stops when its nursery is
cancelled, so embedding it never touches process-wide state. When it is the
function ``trio.run`` was given (``trio.run(server.serve_stdio)``, ``server.run()``,
``trio-mcp run``), nobody else will turn Ctrl-C or SIGTERM into a clean stop, so it
does: SIGINT and SIGTERM start a graceful shutdown (HTTP listen streams get their
results, requests get a moment to finish), a second signal cancels at once, and the
serve method returns normally instead of ending in a KeyboardInterrupt traceback.
A SIGINT that the process was started ignoring (``cmd &`` in a script) stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Generic, TypeVar

import trio

from .._errors import McpError

__all__ = [
    "AnnouncingStatus",
    "TokenScopes",
    "announce",
    "banner",
    "owns_the_process",
    "require_trio",
    "stop_on_signals",
]


def require_trio(method: str) -> None:
    """Fail with what to do when a serve method is awaited outside Trio.

    Raises:
        McpError: under asyncio (``asyncio.run(server.serve_stdio())``) or any
            other event loop, where Trio's internals would fail obscurely.
    """
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        raise McpError(
            f"server.{method}() runs under Trio, not asyncio or another event loop: "
            f"use trio.run(server.{method}) or server.run() (which does that), or run "
            "it in a Trio nursery"
        ) from None


def owns_the_process() -> bool:
    """Whether the current task is what ``trio.run`` was given, in the main thread.

    Only then may a serve method take over SIGINT and SIGTERM: under a caller's
    nursery, signals are the caller's business.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    parent = trio.lowlevel.current_task().parent_nursery
    return (
        parent is not None and parent.parent_task is trio.lowlevel.current_root_task()
    )


def _stop_signals() -> list[int]:
    wanted: list[int] = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        wanted.append(signal.SIGINT)
    return wanted


@contextlib.asynccontextmanager
async def stop_on_signals(
    shutdown: Callable[[], None] = lambda: None, grace: float = 0.0
) -> AsyncIterator[None]:
    """Within the block, SIGINT or SIGTERM stop it: ``shutdown()``, then cancel.

    The first signal calls ``shutdown`` (a graceful stop the block may finish by
    itself) and cancels the block ``grace`` seconds later at the latest; a second
    signal cancels it at once. The block then ends normally.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised: BaseException | None = None
    with trio.open_signal_receiver(*_stop_signals()) as received:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(
                    _watch, received, nursery.cancel_scope, shutdown, grace
                )
                yield
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            if len(group.exceptions) != 1:  # pragma: no cover - _watch never raises
                raise
            raised = group.exceptions[0]
    if raised is not None:
        # What the body raised, as it would without this block: the serve methods
        # raise McpError.Transport and friends, not a group around one.
        raise raised


async def _watch(
    received: trio.abc.ReceiveChannel[int] | AsyncIterator[int],
    scope: trio.CancelScope,
    shutdown: Callable[[], None],
    grace: float,
) -> None:
    stopping = False
    async for _ in received:
        if stopping:
            scope.cancel()
            return
        stopping = True
        shutdown()
        scope.deadline = min(scope.deadline, trio.current_time() + grace)


def banner(
    name: str,
    version: str,
    kinds: Iterable[str],
    where: str,
    allow: object,
    revisions: Iterable[str],
) -> str:
    """The one line a server prints to stderr when it starts serving.

    It says what a user needs to see that the server is up and what it serves
    (a stdio server waiting for its client otherwise looks hung): the server and
    its version, the transport, the catalog, the grant and the protocol
    revisions (a handshake-era client gets nothing from a modern-only server).
    """
    kinds = list(kinds)
    counts = ", ".join(
        f"{kinds.count(kind)} {kind}{'' if kinds.count(kind) == 1 else 's'}"
        for kind in ("tool", "resource", "prompt")
    )
    if isinstance(allow, TokenScopes):
        names = [str(getattr(cap, "name", cap)) for cap in allow.allow]
        granted = ", ".join([*names, "what each token's scopes map to"])
    elif isinstance(allow, list | tuple | set | frozenset):
        names = [str(getattr(cap, "name", cap)) for cap in allow]
        granted = ", ".join(names) or "nothing"
    elif callable(allow):
        granted = "per caller"
    else:  # a one-shot iterable: not consumed for a banner
        granted = "as given"
    return (
        f"trio-mcp: serving {name} {version} over {where}: {counts}; "
        f"granted: {granted}; revisions: {', '.join(revisions)}"
    )


class TokenScopes:
    """The grant of a server that checks bearer tokens: ``allow`` to every caller,
    and to each caller what its token's scopes map to (``auth=``)."""

    def __init__(self, allow: Iterable[object]) -> None:
        self.allow = list(allow)


_Started = TypeVar("_Started")


class AnnouncingStatus(Generic[_Started]):
    """A ``task_status`` that prints the banner once serving has started (for a
    bound port, naming it), then reports the start."""

    def __init__(
        self, outer: trio.TaskStatus[_Started], line: Callable[[_Started], str]
    ) -> None:
        self.outer = outer
        self.line = line

    def started(self, value: _Started = None) -> None:  # type: ignore[assignment]
        announce(self.line(value))
        self.outer.started(value)


def announce(line: str) -> None:
    """Print a banner line to stderr (flushed: stderr may be a pipe)."""
    print(line, file=sys.stderr, flush=True)
