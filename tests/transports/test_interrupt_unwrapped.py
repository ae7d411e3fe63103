"""``interrupts_unwrapped``: an interrupt leaves its exception groups, nothing else does."""

from __future__ import annotations

import pytest
import trio
from trio.testing import MockClock

from trio_mcp._interrupt import interrupts_unwrapped


async def _raise(error: BaseException) -> None:
    await trio.lowlevel.checkpoint()
    raise error


async def _raise_anyway(error: BaseException) -> None:
    """Raise even when the nursery is cancelled first: both errors are in the group."""
    with trio.CancelScope(shield=True):
        await trio.sleep(0.01)
    raise error


async def _nested(stop: BaseException) -> None:
    with interrupts_unwrapped():
        async with trio.open_nursery() as outer:
            outer.start_soon(trio.sleep_forever)
            async with trio.open_nursery() as inner:
                inner.start_soon(_raise_anyway, ValueError("beside it"))
                inner.start_soon(_raise, stop)


def test_an_interrupt_in_nested_nurseries_leaves_bare() -> None:
    with pytest.raises(KeyboardInterrupt) as caught:
        trio.run(_nested, KeyboardInterrupt(), clock=MockClock(autojump_threshold=0))
    assert type(caught.value) is KeyboardInterrupt


def test_a_system_exit_in_a_group_stays_grouped() -> None:
    """A handler's ``sys.exit()`` is its failure, not the user's Ctrl-C."""
    with pytest.raises(BaseExceptionGroup) as caught:
        trio.run(_nested, SystemExit(3), clock=MockClock(autojump_threshold=0))
    assert caught.group_contains(SystemExit, depth=2)


async def test_a_group_without_an_interrupt_passes_unchanged() -> None:
    with pytest.raises(ExceptionGroup) as caught:
        await _failing()
    assert caught.group_contains(ValueError, match="a failure")


async def _failing() -> None:
    with interrupts_unwrapped():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_raise, ValueError("a failure"))


def test_a_bare_exception_passes_unchanged() -> None:
    with pytest.raises(LookupError), interrupts_unwrapped():
        raise LookupError
