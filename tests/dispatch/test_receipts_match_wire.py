"""Receipts match the wire (issue 34): the outcome and ``error_type`` of every receipt
are those of the reply the client received.

A result without ``isError`` is ``ok`` with no error type; an ``isError`` result is
``error``, ``refused``, ``invalid`` or ``timeout`` as its detail's ``kind`` says; a
JSON-RPC error is ``internal`` (-32603), ``invalid`` (-32602), ``not_found`` (-32602
for a resource that is not there, issue 45) or ``refused``
(-32021, -32000, -31403); and every receipt but an ``ok`` one names its error. The
audit's cases: a reply that failed to encode (-32603 on the wire, ``ok`` in its
receipt) and -32021 answers without an ``error_type``; the survey found refusals,
timeouts, missing resources, escaping URIs and bad ``requestState`` without one.
"""

from __future__ import annotations

import json
import math
from typing import Any

import attrs
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trio_mcp import (
    Capability,
    Elicit,
    NeedsInput,
    Receipt,
    ResourceNotFound,
    Secret,
    Server,
    ToolError,
    ToolReply,
    ToolSpec,
    prompt,
    resource,
    tool,
)
from trio_mcp.testing import McpTestClient

CAP = Capability("wire.cap", description="Granted to nobody.")


@tool
def fine() -> str:
    """Answer."""
    return "fine"


@tool
def fails() -> str:
    """Fail for the model."""
    raise ToolError("no")


@tool
def crashes() -> str:
    """Fail for the operator."""
    raise ValueError("boom")


@tool
def misreplies() -> int:
    """Return what was not declared."""
    return "x"  # type: ignore[return-value]


@tool(caps=[CAP])
def guarded() -> str:
    """Needs a capability nobody holds."""
    return "guarded"


@tool(timeout=0.01)
async def slow() -> str:
    """Outlive the deadline."""
    await trio.sleep(1)
    return "slow"


@tool
def typed(n: int) -> int:
    """Take an integer.

    Args:
        n: The integer.
    """
    return n


@attrs.frozen
class Form:
    name: str


@tool
def asks() -> str | NeedsInput:
    """Ask the client (which declared no elicitation)."""
    return NeedsInput(requests={"k": Elicit("who?", schema=Form)})


@tool
def withholds(s: Secret[str]) -> dict[str, int]:
    """Make masking merge two keys.

    Args:
        s: The secret.
    """
    return {s.reveal(): 1, "**********": 2}


class Unencodable:
    """A hand-written tool whose result is not JSON (NaN, no output schema)."""

    def spec(self) -> ToolSpec:
        return ToolSpec("unencodable", "Return NaN.", {"type": "object"})

    async def dispatch(self, call: Any) -> ToolReply:
        return ToolReply.ok({"x": math.nan})


class Adopted:
    """A hand-written tool that fails without naming its error."""

    def spec(self) -> ToolSpec:
        return ToolSpec("adopted", "Fail plainly.", {"type": "object"})

    async def dispatch(self, call: Any) -> ToolReply:
        return ToolReply.error("plain failure")


@resource(uri="doc://{name}")
def doc(name: str) -> str:
    """A document.

    Args:
        name: Its name.
    """
    if name == "missing":
        raise ResourceNotFound(f"doc://{name}")
    return name


@prompt
def greet(who: str) -> str:
    """Greet.

    Args:
        who: Whom.
    """
    return f"hello {who}"


def server(receipts: list[Receipt]) -> Server:
    return Server(
        "wire",
        "1",
        tools=[
            fine,
            fails,
            crashes,
            misreplies,
            guarded,
            slow,
            typed,
            asks,
            withholds,
            Unencodable(),
            Adopted(),
        ],
        resources=[doc],
        prompts=[greet],
        receipts=receipts.append,
    )


Request = tuple[str, dict[str, Any]]

CASES: dict[str, tuple[Request, str, str | None]] = {
    "ok": (("tools/call", {"name": "fine"}), "ok", None),
    "tool error": (("tools/call", {"name": "fails"}), "error", "trio_mcp.ToolError"),
    "crash": (("tools/call", {"name": "crashes"}), "internal", "builtins.ValueError"),
    "bad reply": (
        ("tools/call", {"name": "misreplies"}),
        "internal",
        "trio_mcp.InvalidReply",
    ),
    "unencodable": (
        ("tools/call", {"name": "unencodable"}),
        "internal",
        "builtins.ValueError",
    ),
    "refused": (("tools/call", {"name": "guarded"}), "refused", "trio_mcp.Refusal"),
    "timeout": (("tools/call", {"name": "slow"}), "timeout", "trio.TooSlowError"),
    "bad arguments": (
        ("tools/call", {"name": "typed", "arguments": {"n": "x"}}),
        "invalid",
        "trio_mcp.DecodeError",
    ),
    "-32021": (
        ("tools/call", {"name": "asks"}),
        "refused",
        "trio_mcp.MissingClientCapability",
    ),
    "withheld": (
        ("tools/call", {"name": "withholds", "arguments": {"s": "hunter2"}}),
        "error",
        "trio_mcp.SecretWithheld",
    ),
    "adopter error": (
        ("tools/call", {"name": "adopted"}),
        "error",
        "trio_mcp.ToolError",
    ),
    "bad state": (
        (
            "tools/call",
            {"name": "fine", "requestState": "forged", "inputResponses": {}},
        ),
        "invalid",
        "trio_mcp.InvalidRequestState",
    ),
    "missing resource": (
        ("resources/read", {"uri": "doc://missing"}),
        "not_found",
        "trio_mcp.ResourceNotFound",
    ),
    "escaping uri": (
        ("resources/read", {"uri": "doc://%2e%2e"}),
        "invalid",
        "trio_mcp.EscapingVariable",
    ),
    "read": (("resources/read", {"uri": "doc://here"}), "ok", None),
    "bad prompt": (
        ("prompts/get", {"name": "greet", "arguments": {}}),
        "invalid",
        "trio_mcp.DecodeError",
    ),
    "prompt": (
        ("prompts/get", {"name": "greet", "arguments": {"who": "x"}}),
        "ok",
        None,
    ),
}

REFUSING_CODES = {-32021, -32000, -31403}


def outcome_of_wire(message: dict[str, Any]) -> set[str]:
    """The receipt outcomes the reply the client received allows."""
    if "error" in message:
        code = message["error"]["code"]
        if code == -32603:
            return {"internal"}
        if code == -32602:
            found = message["error"]["message"].startswith("resource not found: ")
            return {"not_found"} if found else {"invalid"}
        assert code in REFUSING_CODES, code
        return {"refused"}
    result = message["result"]
    if not result.get("isError"):
        return {"ok"}
    kind = result["_meta"]["dev.trio-mcp/error"]["kind"]
    return {
        "refused": {"refused"},
        "invalid_arguments": {"invalid"},
        "timeout": {"timeout"},
    }.get(kind, {"error"})


async def exchange(
    client: McpTestClient, request_id: int, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    params = {"_meta": client.meta(), **params}
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    (reply,) = await client.send_raw(json.dumps(message), settle=0)
    return dict(reply)


@pytest.mark.parametrize("case", sorted(CASES))
async def test_each_way_a_call_ends_leaves_the_receipt_of_its_reply(
    case: str,
) -> None:
    (method, params), outcome, error_type = CASES[case]
    receipts: list[Receipt] = []
    async with McpTestClient(server(receipts)) as client:
        reply = await exchange(client, 1, method, params)

    (receipt,) = receipts
    assert outcome in outcome_of_wire(reply)
    assert (outcome, error_type) == (receipt.outcome, receipt.error_type)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    order=st.lists(st.sampled_from(sorted(CASES)), min_size=1, max_size=12),
    numbers=st.lists(
        st.none()
        | st.integers()
        | st.text(max_size=3)
        | st.floats(allow_nan=False, allow_infinity=False),
        min_size=1,
        max_size=4,
    ),
)
async def test_whatever_is_called_the_receipts_say_what_the_wire_said(
    order: list[str], numbers: list[object]
) -> None:
    receipts: list[Receipt] = []
    replies: list[dict[str, Any]] = []
    async with McpTestClient(server(receipts)) as client:
        for n, case in enumerate(order):
            (method, params), _, _ = CASES[case]
            replies.append(await exchange(client, n, method, params))
        for n, value in enumerate(numbers, start=len(order)):
            params = {"name": "typed", "arguments": {"n": value}}
            replies.append(await exchange(client, n, "tools/call", params))

    assert len(replies) == len(receipts)
    by_id = {r.request_id: r for r in receipts}
    for reply in replies:
        receipt = by_id[reply["id"]]
        assert receipt.outcome in outcome_of_wire(reply), (reply, receipt)
        assert (receipt.outcome == "ok") == (receipt.error_type is None)
