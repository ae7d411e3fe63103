"""A reply that breaks its declaration, seen from the test client, the receipts and
the log (api.md "The way out").

Each such request is a JSON-RPC -32603 with an error reference; its receipt says
``internal`` with ``trio_mcp.InvalidReply`` as the error type and the same
reference; one ERROR record on the ``trio_mcp`` logger carries the reference and
the exception that says what did not fit. Before the reply guard, ``-> int``
returning ``"abc"`` was sent as ``structuredContent`` and the receipt of a reply
that failed to encode said ``cancelled`` with no error type.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from support import wire
from support.wayout_server import BAD_PROMPTS, BAD_RESOURCES, BAD_TOOLS, make_server

from trio_mcp import InvalidReply, Receipt
from trio_mcp.testing import McpTestClient, ProtocolError

INTERNAL_ERROR = -32603

Case = tuple[str, str, str, str]
"""(kind, name or URI, what the log says, which client method)."""

CASES: list[Case] = [
    *(("tool", name, says, "call_tool") for name, says in BAD_TOOLS.items()),
    *(("prompt", name, says, "get_prompt") for name, says in BAD_PROMPTS.items()),
    *(("resource", uri, says, "read_resource") for uri, says in BAD_RESOURCES.items()),
]


def _request(
    client: McpTestClient, method: str, name: str
) -> Callable[[], Awaitable[Any]]:
    if method == "call_tool":
        return lambda: client.call_tool(name, {})
    if method == "get_prompt":
        return lambda: client.get_prompt(name)
    return lambda: client.read_resource(name)


@pytest.mark.parametrize(("kind", "name", "says", "method"), CASES)
async def test_a_bad_reply_is_internal_with_a_receipt_and_a_log_record(
    kind: str, name: str, says: str, method: str, caplog: pytest.LogCaptureFixture
) -> None:
    receipts: list[Receipt] = []
    server = make_server(receipts=receipts.append)

    with caplog.at_level(logging.ERROR, logger="trio_mcp"):
        async with McpTestClient(server) as client:
            with pytest.raises(ProtocolError) as caught:
                await _request(client, method, name)()
            after = await client.call_tool("add", {"a": 20, "b": 22})

    assert caught.value.code == INTERNAL_ERROR
    reference = wire(caught.value.data)["reference"]
    assert reference in caught.value.message
    assert after.structured == 42
    bad = receipts[0]
    assert (bad.kind, bad.name, bad.outcome) == (kind, name, "internal")
    assert bad.error_type == "trio_mcp.InvalidReply"
    assert bad.error_ref == reference
    assert receipts[1].outcome == "ok"
    (record,) = [r for r in caplog.records if r.name == "trio_mcp"]
    assert reference in record.getMessage()
    assert record.exc_info is not None
    error = record.exc_info[1]
    assert isinstance(error, InvalidReply)
    assert says in str(error)
    assert "wayout_server:" in str(error)  # the declaration to fix


async def test_the_client_never_sees_the_mismatch_or_the_value() -> None:
    """The details go to the log; the client gets a generic message and a reference."""
    async with McpTestClient(make_server()) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("int_as_str", {})

    reference = wire(caught.value.data)["reference"]
    # The reference is random hex: it may spell the value "abc" by chance.
    message = caught.value.message.replace(reference, "<reference>")
    assert "abc" not in message
    assert "integer" not in message
    assert set(wire(caught.value.data)) == {"reference"}


async def test_bad_replies_interleaved_with_good_ones_leave_one_receipt_each() -> None:
    receipts: list[Receipt] = []
    names = sorted(BAD_TOOLS)

    async with McpTestClient(make_server(receipts=receipts.append)) as client:
        for number, name in enumerate(names):
            with pytest.raises(ProtocolError):
                await client.call_tool(name, {})
            echoed = await client.call_tool("echo", {"text": f"\udc80{number}"})
            assert echoed.structured == f"\udc80{number}"

    assert [(r.name, r.outcome) for r in receipts] == [
        pair for name in names for pair in ((name, "internal"), ("echo", "ok"))
    ]
