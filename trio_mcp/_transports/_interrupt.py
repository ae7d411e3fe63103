"""Ctrl-C leaves a transport as itself: a bare ``KeyboardInterrupt`` (or ``SystemExit``).

Trio raises ``KeyboardInterrupt`` in whichever task runs when the signal arrives; in
a request's nursery it then travels on inside an exception group. Hypercorn logs a
group from the app as "Error in ASGI Framework" and keeps serving, so Ctrl-C under
load was lost, and a group reaching the top ended the process with a traceback
where ``except KeyboardInterrupt`` expected the interrupt. Here the interrupt is
taken out of its group, so every layer above sees what the user did.

Invariants:
- An exception group holding a ``KeyboardInterrupt`` or ``SystemExit`` (at any depth)
  leaves as that exception alone; whatever else the group held (the cancellations
  the interrupt caused, a failure beside it) is dropped, because the process is
  stopping.
- Any other exception, grouped or not, passes unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["STOPS", "interrupts_unwrapped", "stop_in"]

#: What a user or the interpreter raises to stop the process.
STOPS = (KeyboardInterrupt, SystemExit)


def stop_in(error: BaseException) -> BaseException | None:
    """The first ``KeyboardInterrupt`` or ``SystemExit`` in ``error``, if any."""
    if isinstance(error, STOPS):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = stop_in(inner)
            if found is not None:
                return found
    return None


@contextmanager
def interrupts_unwrapped() -> Iterator[None]:
    """Re-raise an interrupt that arrives inside an exception group on its own."""
    try:
        yield
    except BaseExceptionGroup as group:
        found = stop_in(group)
        if found is None:
            raise
        raise found from None
