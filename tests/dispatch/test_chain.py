"""The one chain (issue 37): what a middleware step returns is what the client gets,
masked; the built-in steps are steps like any other; a call's receipt says what the
wire said. Through real JSON (``McpTestClient`` validates every message)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.tools import echo

from trio_mcp import Call, Ending, InvalidArgument, Next, Receipt, Secret, Server, tool
from trio_mcp._json import JsonObject
from trio_mcp.testing import McpTestClient, ProtocolError

MASK = "**********"


@tool
def login(user: str, token: Secret[str]) -> str:
    """Log in.

    Args:
        user: Who.
        token: Their token.
    """
    return f"{user} is in"


def text_result(text: str) -> JsonObject:
    return {"content": [{"type": "text", "text": text}], "isError": False}


async def test_a_steps_changed_reply_is_what_the_client_gets() -> None:
    async def shout(call: Call, next: Next) -> Ending:
        ending = await next(call)
        assert ending.result is not None
        changed = {**ending.result, "structuredContent": "CHANGED"}
        changed["content"] = [{"type": "text", "text": "CHANGED"}]
        return attrs.evolve(ending, result=changed)

    server = Server("chain", "1.0", tools=[echo], middleware=[shout])
    async with McpTestClient(server) as client:
        result = await client.call_tool("echo", {"text": "quiet"})

    assert "CHANGED" == result.structured
    assert "CHANGED" == result.text


async def test_a_steps_own_reply_revealing_a_secret_is_masked() -> None:
    async def reveal(call: Call, next: Next) -> Ending:
        token = call.arguments["token"]
        assert isinstance(token, Secret)
        return Ending(outcome="ok", result=text_result(f"token={token.reveal()}"))

    receipts: list[Receipt] = []
    server = Server(
        "chain", "1.0", tools=[login], middleware=[reveal], receipts=receipts.append
    )
    async with McpTestClient(server) as client:
        result = await client.call_tool("login", {"user": "ada", "token": "s3cr3t-x"})

    assert f"token={MASK}" == result.text
    assert "s3cr3t-x" not in str(result.raw)
    assert ["ok"] == [r.outcome for r in receipts]


async def test_a_steps_error_revealing_a_secret_is_masked() -> None:
    async def refuse(call: Call, next: Next) -> Ending:
        token = call.arguments["token"]
        assert isinstance(token, Secret)
        return Ending.refused(f"no entry with {token.reveal()}")

    server = Server("chain", "1.0", tools=[login], middleware=[refuse])
    async with McpTestClient(server) as client:
        with pytest.raises(ProtocolError) as raised:
            await client.call_tool("login", {"user": "ada", "token": "s3cr3t-x"})

    assert f"no entry with {MASK}" == raised.value.message


async def test_a_handlers_reply_is_masked_before_a_step_sees_it() -> None:
    seen: list[Ending] = []

    @tool
    def leak(token: Secret[str]) -> str:
        """Leak the token.

        Args:
            token: The token.
        """
        return f"it is {token.reveal()}"

    async def keep(call: Call, next: Next) -> Ending:
        ending = await next(call)
        seen.append(ending)
        return ending

    server = Server("chain", "1.0", tools=[leak], middleware=[keep])
    async with McpTestClient(server) as client:
        result = await client.call_tool("leak", {"token": "s3cr3t-x"})

    assert f"it is {MASK}" == result.structured
    assert "s3cr3t-x" not in repr(seen[0].result)


async def test_a_reply_that_cannot_be_encoded_is_internal_in_its_receipt() -> None:
    async def nan(call: Call, next: Next) -> Ending:
        await next(call)
        return Ending(outcome="ok", result={**text_result("x"), "n": float("nan")})

    receipts: list[Receipt] = []
    server = Server(
        "chain", "1.0", tools=[echo], middleware=[nan], receipts=receipts.append
    )
    async with McpTestClient(server) as client:
        with pytest.raises(ProtocolError) as raised:
            await client.call_tool("echo", {"text": "x"})

    assert -32603 == raised.value.code
    [receipt] = receipts
    assert ("internal", "builtins.ValueError") == (
        receipt.outcome,
        receipt.error_type,
    )


@settings(max_examples=40, deadline=None)
@given(
    secret=st.text(min_size=1, max_size=12).filter(lambda s: s.strip() == s),
    around=st.text(max_size=12),
)
async def test_masking_twice_changes_nothing(secret: str, around: str) -> None:
    """The handler's reply is masked before the steps and what they return is
    masked again: a secret the mask itself holds (``*``) is not masked twice."""

    @tool
    def say(token: Secret[str], text: str) -> str:
        """Say a text with the token in it.

        Args:
            token: The token.
            text: Around it.
        """
        return f"{text}{token.reveal()}{text}"

    async def through(call: Call, next: Next) -> Ending:
        return await next(call)

    plain = Server("once", "1.0", tools=[say])
    chained = Server("twice", "1.0", tools=[say], middleware=[through])
    arguments = {"token": secret, "text": around}
    async with McpTestClient(plain) as a, McpTestClient(chained) as b:
        once = await a.call_tool("say", arguments)
        twice = await b.call_tool("say", arguments)

    assert once.structured == twice.structured


OUTCOMES = {"ok", "error", "refused", "invalid", "cancelled", "timeout", "internal"}
JSON_ISH = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.none()))


@given(
    outcome=st.one_of(st.sampled_from(["ok", "error", "refused"]), st.text(max_size=8)),
    result=st.one_of(st.none(), st.just({"content": []}), JSON_ISH),
    http_status=st.one_of(st.integers(0, 700), st.booleans(), st.floats()),
    headers=st.one_of(
        st.just(()),
        st.lists(st.tuples(st.text(max_size=4), st.text(max_size=4)), max_size=2),
        st.lists(st.tuples(st.integers()), max_size=2),
        st.text(max_size=3),
    ),
)
def test_an_ending_is_built_or_refused_with_invalid_argument(
    outcome: object, result: object, http_status: object, headers: object
) -> None:
    """A step's own ``Ending(...)``: every argument that cannot work is an
    ``InvalidArgument`` naming the field, never another exception or a silent
    ending the wire cannot carry."""
    arguments: dict[str, Any] = {
        "outcome": outcome,
        "result": result,
        "http_status": http_status,
        "headers": headers,
    }
    fits = (
        outcome in OUTCOMES
        and (result is None or isinstance(result, dict))
        and type(http_status) is int
        and 100 <= http_status <= 599
        and not isinstance(headers, str)
        and all(
            isinstance(h, tuple) and len(h) == 2 and all(isinstance(p, str) for p in h)
            for h in headers  # type: ignore[attr-defined]
        )
    )
    if not fits:
        with pytest.raises(InvalidArgument, match=r"^Ending\."):
            Ending(**arguments)
        return
    ending = Ending(**arguments)
    assert outcome == ending.outcome
    assert (http_status, tuple(headers)) == (ending.http_status, ending.headers)  # type: ignore[arg-type]
