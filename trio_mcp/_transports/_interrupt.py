"""Ctrl-C leaves a transport as itself: a bare ``KeyboardInterrupt``.

Trio raises ``KeyboardInterrupt`` in whichever task runs when the signal arrives; in
a request's nursery it then travels on inside an exception group. Hypercorn logs a
group from the app as "Error in ASGI Framework" and keeps serving, so Ctrl-C under
load was lost, and a group reaching the top ended the process with a traceback
where ``except KeyboardInterrupt`` expected the interrupt. Here the interrupt is
taken out of its group, so every layer above sees what the user did.

Invariants:
- An exception group holding a ``KeyboardInterrupt`` (at any depth) leaves as that
  exception alone; whatever else the group held (the cancellations the interrupt
  caused, a failure beside it) is dropped, because the process is stopping.
- Any other exception, grouped or not, passes unchanged. ``SystemExit`` raised by a
  handler is a handler's failure, not the user's stop, and is left to the call
  runner.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["interrupt_in", "interrupts_unwrapped"]


def interrupt_in(error: BaseException) -> KeyboardInterrupt | None:
    """The first ``KeyboardInterrupt`` in ``error`` (a group, at any depth), if any."""
    if isinstance(error, KeyboardInterrupt):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = interrupt_in(inner)
            if found is not None:
                return found
    return None


@contextmanager
def interrupts_unwrapped() -> Iterator[None]:
    """Re-raise a ``KeyboardInterrupt`` that arrives inside an exception group alone."""
    try:
        yield
    except BaseExceptionGroup as group:
        found = interrupt_in(group)
        if found is None:
            raise
        raise found from None
