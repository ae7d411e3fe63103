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

from contextlib import AbstractContextManager
from types import TracebackType
from typing import Final

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


class _Unwrapping:
    """The context manager ``interrupts_unwrapped`` returns: stateless, so one is shared.

    A class rather than ``@contextmanager``: it wraps every HTTP request, and a
    generator per request cost more than the check itself.
    """

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(error, BaseExceptionGroup):
            found = interrupt_in(error)
            if found is not None:
                raise found from None


_UNWRAPPING: Final = _Unwrapping()


def interrupts_unwrapped() -> AbstractContextManager[None]:
    """Re-raise a ``KeyboardInterrupt`` that arrives inside an exception group alone."""
    return _UNWRAPPING
