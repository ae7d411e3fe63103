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

import logging
import re
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
    resource,
    tool,
)
from trio_mcp._dispatch._rounds import Answered, BadRound
from trio_mcp.testing import McpTestClient, ProtocolError

CAPS: dict[str, Any] = {"elicitation": {}}
KEY = b"k" * 32
#: A Redis nobody listens on: every command of the store fails at once.
NOWHERE = "redis://127.0.0.1:1/0"


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
#: docs/errors.md's wording of a replayed round.
ANSWERED = (
    "invalid requestState: this round was answered already (a state is good for "
    "one retry); start the request again"
)


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
    assert ANSWERED == again.message
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
    assert (
        "server busy: too many multi round-trip states are open (2 claims are "
        "held); retry later"
    ) == results[2].message
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


async def test_with_the_store_down_each_state_still_opens_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Redis unreachable: the claims are this process's, one per state, so a
    replay on the same replica is still refused while another state opens, and
    the log says why the store was not used."""
    transfers.clear()
    down = server(store=RedisStore(NOWHERE, prefix="replay"))
    with caplog.at_level(logging.WARNING, "trio_mcp"):
        async with McpTestClient(down, client_capabilities=CAPS) as client:
            state, other = await asked(client, 3), await asked(client, 4)
            first = await retry(client, state, 3)
            again = await retry(client, state, 3)
            second = await retry(client, other, 4)

    assert ["moved 3", "moved 4"] == [first, second]
    assert isinstance(again, ProtocolError)
    assert ANSWERED == again.message
    assert [3, 4] == transfers
    warnings = [
        r.getMessage() for r in caplog.records if "requestState:" in r.getMessage()
    ]
    assert 3 == len(warnings)
    for line in warnings:
        match = re.fullmatch(
            r"requestState: the store failed \((.+)\); claiming locally", line
        )
        assert match is not None, line
        # Refused, or not connected yet: either way the reason, never "None".
        assert NOWHERE in match[1] or "the store is not running" in match[1]


async def test_a_state_opens_only_for_the_caller_it_was_sealed_for() -> None:
    transfers.clear()
    bank = server()
    async with (
        McpTestClient(bank, client_capabilities=CAPS, principal="alice") as alice,
        McpTestClient(bank, client_capabilities=CAPS, principal="bob") as bob,
    ):
        state = await asked(alice, 9)
        stolen = await retry(bob, state, 9)
        own = await retry(alice, state, 9)

    assert isinstance(stolen, ProtocolError)
    assert -32602 == stolen.code
    assert stolen.message.startswith("invalid requestState: requestState does not ")
    assert "moved 9" == own
    assert [9] == transfers


@resource("vault://{name}")
def vault(name: str) -> str | NeedsInput:
    """A record read once the user confirms."""
    if ToolContext.current().input_responses.get("confirm") is None:
        return NeedsInput(requests={"confirm": Elicit(f"Read {name}?", Confirm)})
    return f"record {name}"


async def test_a_reads_state_opens_only_for_the_uri_it_was_sealed_for() -> None:
    vaults = Server("vaults", "1", resources=[vault], state_key=KEY)
    async with McpTestClient(vaults, client_capabilities=CAPS) as client:
        first = await client.request("resources/read", {"uri": "vault://a"})
        state = first["requestState"]
        with pytest.raises(ProtocolError) as other:
            await client.request(
                "resources/read",
                {"uri": "vault://b", "inputResponses": YES, "requestState": state},
            )
        own: Any = await client.request(
            "resources/read",
            {"uri": "vault://a", "inputResponses": YES, "requestState": state},
        )

    assert -32602 == other.value.code
    assert other.value.message.startswith(
        "invalid requestState: requestState does not "
    )
    assert "record a" == own["contents"][0]["text"]
