"""F12 (issue 34): a sealed ``requestState`` answered once cannot replay its round.

The revision's multi round-trip server rules: to prevent replay, bind the
principal, a short expiry, the method and a digest of the params (done since issue
24), and "one-time use has to be enforced on the server". A state that opened is
claimed in the server's store until it would have expired; a second retry with it
is -32602 with an ``invalid`` receipt (``trio_mcp.InvalidRequestState``), and the
handler does not run again. A retry whose responses do not fit claims nothing, so
the client may correct them. With a ``RedisStore`` the claim holds on every replica.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.scale_procs import RedisServer

from trio_mcp import (
    Elicit,
    MemoryStore,
    NeedsInput,
    Receipt,
    RedisStore,
    Server,
    ToolContext,
    tool,
)
from trio_mcp._dispatch._rounds import Answered, BadRound
from trio_mcp.testing import McpTestClient, ProtocolError

CAPS: dict[str, Any] = {"elicitation": {}}
KEY = b"k" * 32


@attrs.frozen
class Confirm:
    sure: bool


transfers: list[int] = []


@tool
def transfer(amount: int) -> str | NeedsInput:
    """Move money once the user confirms.

    Args:
        amount: How much.
    """
    answer = ToolContext.current().input_responses.get("confirm")
    if answer is None:
        return NeedsInput(requests={"confirm": Elicit(f"Move {amount}?", Confirm)})
    transfers.append(amount)
    return f"moved {amount}"


YES = {"confirm": {"action": "accept", "content": {"sure": True}}}


def server(receipts: list[Receipt] | None = None, **options: Any) -> Server:
    return Server(
        "bank",
        "1",
        tools=[transfer],
        state_key=KEY,
        receipts=None if receipts is None else receipts.append,
        **options,
    )


async def asked(client: McpTestClient, amount: int) -> str:
    first = await client.call_tool("transfer", {"amount": amount})
    state = first.raw["requestState"]
    assert isinstance(state, str)
    return state


async def retry(
    client: McpTestClient, state: str, amount: int, responses: Any = YES
) -> str | ProtocolError:
    try:
        result = await client.call_tool(
            "transfer",
            {"amount": amount},
            input_responses=responses,
            request_state=state,
        )
    except ProtocolError as exc:
        return exc
    return str(result.structured)


async def test_an_answered_round_cannot_be_replayed() -> None:
    transfers.clear()
    receipts: list[Receipt] = []
    async with McpTestClient(server(receipts), client_capabilities=CAPS) as client:
        state = await asked(client, 10)
        first = await retry(client, state, 10)
        again = await retry(client, state, 10)

    assert "moved 10" == first
    assert isinstance(again, ProtocolError)
    assert -32602 == again.code
    assert "answered already" in again.message
    assert [10] == transfers
    assert ("invalid", "trio_mcp.InvalidRequestState") == (
        receipts[-1].outcome,
        receipts[-1].error_type,
    )


async def test_responses_that_do_not_fit_claim_nothing() -> None:
    transfers.clear()
    async with McpTestClient(server(), client_capabilities=CAPS) as client:
        state = await asked(client, 5)
        bad = {"confirm": {"action": "accept", "content": {"sure": "very"}}}
        refused = await retry(client, state, 5, bad)
        fixed = await retry(client, state, 5)

    assert isinstance(refused, ProtocolError)
    assert "inputResponses" in refused.message
    assert "moved 5" == fixed
    assert [5] == transfers


async def test_the_claim_lasts_until_the_state_would_have_expired(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Past the sealer's ttl the state no longer opens anyway: the claim can go."""
    answered = Answered(MemoryStore(), ttl=600)
    await answered.first("v2.token")
    await trio.sleep(599)
    with pytest.raises(BadRound, match="answered already"):
        await answered.first("v2.token")
    await trio.sleep(2)
    await answered.first("v2.token")


async def test_when_every_claim_is_held_a_retry_is_busy_not_replayable() -> None:
    transfers.clear()
    store = MemoryStore(max_keys=2)
    async with McpTestClient(server(store=store), client_capabilities=CAPS) as c:
        states = [await asked(c, n) for n in range(3)]
        results = [await retry(c, s, n) for n, s in enumerate(states)]

    assert ["moved 0", "moved 1"] == results[:2]
    assert isinstance(results[2], ProtocolError)
    assert -32000 == results[2].code
    assert [0, 1] == transfers


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(picks=st.lists(st.integers(0, 4), min_size=1, max_size=12))
async def test_each_state_opens_once_whatever_the_order_of_retries(
    picks: list[int],
) -> None:
    """Property: retries picking any of five states, any number of times, in any
    order: each state moves its money once, every other retry is refused."""
    transfers.clear()
    async with McpTestClient(server(), client_capabilities=CAPS) as client:
        states = [await asked(client, n) for n in range(5)]
        outcomes = [await retry(client, states[n], n) for n in picks]

    seen: set[int] = set()
    for n, outcome in zip(picks, outcomes, strict=True):
        if n in seen:
            assert isinstance(outcome, ProtocolError), outcome
        else:
            assert f"moved {n}" == outcome
            seen.add(n)
    assert sorted(seen) == sorted(transfers)


async def test_a_round_answered_on_one_replica_is_refused_on_another(
    redis_server: RedisServer,
) -> None:
    transfers.clear()
    a = server(store=RedisStore(redis_server.url, prefix="replay"))
    b = server(store=RedisStore(redis_server.url, prefix="replay"))
    async with (
        a.task_nursery(),
        b.task_nursery(),
        McpTestClient(a, client_capabilities=CAPS) as on_a,
        McpTestClient(b, client_capabilities=CAPS) as on_b,
    ):
        state = await asked(on_a, 7)
        first = await retry(on_a, state, 7)
        replayed = await retry(on_b, state, 7)

    assert "moved 7" == first
    assert isinstance(replayed, ProtocolError)
    assert "answered already" in replayed.message
    assert [7] == transfers
