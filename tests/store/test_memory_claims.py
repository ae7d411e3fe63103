"""``MemoryStore.claim``: each key claimed once while its claim lasts, and at most
``max_keys`` claims held, refused rather than forgotten (issue 34's answered rounds).

Against a model of the rules, on Trio's mock clock with whole seconds, so claims
that end exactly now (no longer held) come up often.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp import MemoryStore
from trio_mcp._store._memory import ClaimsFull

#: (seconds to wait first, which key, how long to claim it)
STEPS = st.lists(
    st.tuples(st.integers(0, 3), st.sampled_from("abcd"), st.integers(1, 4)),
    max_size=30,
)


@given(steps=STEPS, max_keys=st.integers(1, 3))
def test_claims_follow_the_rules_at_every_moment(
    steps: list[tuple[int, str, int]], max_keys: int
) -> None:
    """True the first time and once a claim has ended; False while it lasts;
    ``ClaimsFull`` when ``max_keys`` other claims last, naming how many."""

    async def run() -> None:
        store = MemoryStore(max_keys=max_keys)
        until: dict[str, float] = {}
        for wait, key, seconds in steps:
            await trio.sleep(wait)
            now = trio.current_time()
            lasting = {k for k, t in until.items() if t > now}
            if key in lasting:
                assert await store.claim(key, seconds) is False
            elif len(lasting) >= max_keys:
                with pytest.raises(ClaimsFull) as full:
                    await store.claim(key, seconds)
                assert f"{max_keys} claims are held" == str(full.value)
            else:
                assert await store.claim(key, seconds) is True
                until[key] = now + seconds

    trio.run(run, clock=trio.testing.MockClock(autojump_threshold=0))
