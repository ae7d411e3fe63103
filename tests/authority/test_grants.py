"""Capabilities and grants (api.md "Authority and evidence"), through the test client.

A call whose ``caps=`` are not all granted is refused before decoding reaches the
handler; ``caps=`` is also the ceiling of ``ToolContext.require``. Hints,
descriptions and the instance a method is bound to grant nothing.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from support import serving, wire
from support.mcp_http import headers_for, post

from trio_mcp import (
    Capability,
    Server,
    Tool,
    ToolContext,
    ToolHints,
    prompt,
    resource,
    tool,
)
from trio_mcp._authority import closure, resolve_grants
from trio_mcp.testing import McpTestClient, ProtocolError

if TYPE_CHECKING:
    from support.receipts import Sink

ERROR_KEY = "dev.trio-mcp/error"

desk_read = Capability("desk_read", description="Read tickets")
desk_write = Capability(
    "desk_write", description="Change tickets", requires=[desk_read]
)
billing = Capability("billing", description="Refund money")

ran: list[str] = []


def refusal(capability: str) -> str:
    """The isError text of a call refused for want of ``capability``."""
    return f"refused: this call needs the capability '{capability}', which this caller lacks"


@tool(caps=[desk_write])
def close_ticket(ticket_id: int) -> str:
    """
    Close a ticket.

    Args:
        ticket_id: The ticket to close.
    """
    ran.append("close_ticket")
    return f"closed {ticket_id}"


@tool(caps=[desk_write], hints=ToolHints(read_only=True, destructive=False))
def looks_harmless() -> str:
    """Only reads, says its hint; requires desk_write all the same (grants everything)."""
    ran.append("looks_harmless")
    return "done"


@tool
def open_tool() -> str:
    """Needs nothing."""
    return "open"


@tool(caps=[desk_read])
async def ceiling(use: str) -> str:
    """
    Use a capability inside the handler.

    Args:
        use: Which capability name to require.
    """
    ToolContext.current().require(use)
    return f"used {use}"


@attrs.define
class Desk:
    """Application state: holding capabilities as attributes grants nothing."""

    caps: tuple[Capability, ...] = (desk_write, billing)
    allow: tuple[Capability, ...] = (desk_write, billing)

    @tool(caps=[billing])
    def refund(self, amount: int) -> str:
        """
        Refund an amount.

        Args:
            amount: How much.
        """
        ran.append("refund")
        return f"refunded {amount}"


@resource(uri="ticket://{ticket_id}")
def ticket(ticket_id: str) -> str:
    """
    One ticket, unguarded.

    Args:
        ticket_id: The ticket.
    """
    return f"ticket {ticket_id}"


@prompt
def summarize(topic: str) -> str:
    """
    Summarize a topic.

    Args:
        topic: What to summarize.
    """
    return f"summarize {topic}"


desk = Desk()


def make_server(sink: Sink | None = None) -> Server:
    return Server(
        "grants",
        "1",
        tools=[close_ticket, looks_harmless, open_tool, ceiling, desk.refund],
        resources=[ticket],
        prompts=[summarize],
        receipts=sink,
    )


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    ran.clear()


async def test_a_call_without_the_grant_is_an_error_result_naming_the_capability(
    sink: Sink,
) -> None:
    """api.md: a call without the grant is an isError result and a receipt."""
    async with McpTestClient(make_server(sink)) as client:
        result = await client.call_tool("close_ticket", {"ticket_id": 7})

    assert (True, refusal("desk_read")) == (result.is_error, result.text)
    assert {"kind": "refused", "capability": "desk_read", "declared": True} == (
        result.meta[ERROR_KEY]
    )
    assert [] == ran
    assert "refused" == sink.only.outcome


async def test_the_refusal_names_the_capability_not_the_grant_mechanics() -> None:
    """Our choice: the model reads which capability is missing, not how hosts grant."""
    async with McpTestClient(make_server(), allow=[desk_read]) as client:
        result = await client.call_tool("close_ticket", {"ticket_id": 7})

    assert refusal("desk_write") == result.text
    assert "allow" not in result.text
    assert "--allow" not in result.text


async def test_a_granted_call_runs() -> None:
    """api.md: allow= grants capabilities; required ones transitively."""
    async with McpTestClient(make_server(), allow=[desk_write, desk_read]) as client:
        result = await client.call_tool("close_ticket", {"ticket_id": 7})

    assert (False, "closed 7") == (result.is_error, result.structured)


async def test_granting_a_capability_does_not_grant_what_it_requires() -> None:
    """Our choice: ``requires=`` adds requirements; a grant names each capability."""
    async with McpTestClient(make_server(), allow=[desk_write]) as client:
        result = await client.call_tool("close_ticket", {"ticket_id": 7})

    assert (True, refusal("desk_read")) == (result.is_error, result.text)
    assert "desk_read" == wire(result.meta)[ERROR_KEY]["capability"]


async def test_grants_may_be_names() -> None:
    """Our choice: allow= accepts capability names (the CLI's --allow NAME)."""
    async with McpTestClient(
        make_server(), allow=["desk_write", "desk_read"]
    ) as client:
        result = await client.call_tool("close_ticket", {"ticket_id": 7})

    assert (False, "closed 7") == (result.is_error, result.structured)


async def test_a_grant_callable_receives_the_principal(sink: Sink) -> None:
    """api.md: allow= may be a callable principal -> capabilities, asked per call."""
    seen: list[Any] = []

    def allow(principal: object) -> list[Capability]:
        seen.append(principal)
        return [desk_write, desk_read] if principal == "alice" else []

    async with McpTestClient(
        make_server(sink), principal="alice", allow=allow
    ) as alice:
        granted = await alice.call_tool("close_ticket", {"ticket_id": 1})
    async with McpTestClient(make_server(sink), principal="bob", allow=allow) as bob:
        refused = await bob.call_tool("close_ticket", {"ticket_id": 1})

    assert (False, "closed 1") == (granted.is_error, granted.structured)
    assert (True, refusal("desk_read")) == (refused.is_error, refused.text)
    assert ["alice", "bob"] == seen
    assert ["ok", "refused"] == [r.outcome for r in sink.receipts]
    assert ["alice", "bob"] == [r.principal_id for r in sink.receipts]


async def test_the_grant_is_checked_before_arguments_are_decoded(sink: Sink) -> None:
    """style.md §3: the grant check runs first; a refused caller learns nothing more."""
    async with McpTestClient(make_server(sink)) as client:
        result = await client.call_tool("close_ticket", {"ticket_id": "not a number"})

    assert (True, refusal("desk_read")) == (result.is_error, result.text)
    assert "refused" == wire(result.meta)[ERROR_KEY]["kind"]
    assert "refused" == sink.only.outcome


async def test_a_read_only_hint_grants_nothing() -> None:
    """api.md: nothing is granted by a description or hint."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("looks_harmless")

    assert (True, refusal("desk_read")) == (result.is_error, result.text)
    assert [] == ran


async def test_the_instance_a_method_is_bound_to_grants_nothing() -> None:
    """Our choice: application state (``self``) is not a grant, whatever it holds."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("refund", {"amount": 5})

    assert (True, refusal("billing")) == (result.is_error, result.text)
    assert "billing" == wire(result.meta)[ERROR_KEY]["capability"]
    assert [] == ran


async def test_an_unguarded_tool_needs_no_grant() -> None:
    """A tool without caps= runs for any caller."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("open_tool")

    assert "open" == result.structured


async def test_require_succeeds_when_declared_and_granted() -> None:
    """api.md: ctx.require(cap) checks the capability is declared and granted."""
    async with McpTestClient(make_server(), allow=[desk_read]) as client:
        result = await client.call_tool("ceiling", {"use": "desk_read"})

    assert "used desk_read" == result.structured


async def test_require_beyond_the_ceiling_is_refused_even_when_granted(
    sink: Sink,
) -> None:
    """api.md: caps= is the ceiling of require(); a grant alone is not enough."""
    async with McpTestClient(make_server(sink), allow=[desk_read, billing]) as client:
        result = await client.call_tool("ceiling", {"use": "billing"})

    # F10: the text says the tool asked beyond its own caps=, which no grant fixes.
    assert result.is_error
    assert result.text.startswith(
        "refused: the handler asked for the capability 'billing' "
        "(ToolContext.require), which its declaration does not declare in caps="
    )
    assert "the server's to fix" in result.text
    assert {"kind": "refused", "capability": "billing", "declared": False} == (
        result.meta[ERROR_KEY]
    )
    assert "refused" == sink.only.outcome
    assert "trio_mcp.Refusal" == sink.only.error_type


async def test_require_of_a_declared_capability_not_granted_names_the_grant(
    sink: Sink, caplog: pytest.LogCaptureFixture
) -> None:
    """F10: declared but not granted is the caller's (the host's grant); beyond the
    ceiling is the server's, and the operator reads it once in the log."""
    async with McpTestClient(make_server(sink)) as client:
        granted = await client.call_tool("ceiling", {"use": "desk_read"})
    stray, extra = _stray()
    with caplog.at_level(logging.WARNING, "trio_mcp"):
        server = Server("desk", "1", tools=[stray])
        async with McpTestClient(server, allow=[desk_read, extra]) as client:
            strays = [await client.call_tool("stray") for _ in range(3)]

    assert refusal("desk_read") == granted.text
    assert {"kind": "refused", "capability": "desk_read", "declared": True} == (
        granted.meta[ERROR_KEY]
    )
    assert all(r.is_error for r in strays)
    warnings = [r.getMessage() for r in caplog.records if "caps=" in r.getMessage()]
    assert 1 == len(warnings)
    assert f"stray calls ToolContext.require({extra.name!r})" in warnings[0]


#: The warning is logged once per declaration and capability for the process: each
#: run of the test (mutmut runs the tests again in one process) asks for a new one.
_RUNS = itertools.count()


def _stray() -> tuple[Tool, Capability]:
    """A tool that requires what its declaration does not declare, and that capability."""
    extra = Capability(f"billing_{next(_RUNS)}", description="Refund money")

    @tool(caps=[desk_read])
    def stray() -> str:
        """Require what the declaration does not declare."""
        ToolContext.current().require(extra)
        return "never"

    return stray, extra


def test_require_outside_a_call_checks_nothing() -> None:
    """api.md: outside a call ToolContext.current() is harmless; direct calls work."""
    assert "used billing" == _direct_ceiling("billing")


def _direct_ceiling(use: str) -> str:
    ToolContext.current().require(use)
    return f"used {use}"


async def test_a_refused_prompt_is_a_json_rpc_error_and_leaves_a_receipt(
    sink: Sink,
) -> None:
    """Our choice: prompts and reads have no isError; a refusal is -31403 (HTTP 403)."""
    guarded = Capability("topics", description="Read topics")

    @prompt(name="secret_topic", caps=[guarded])
    def secret_topic(topic: str) -> str:
        """
        A guarded prompt.

        Args:
            topic: What.
        """
        return topic

    server = Server("p", "1", prompts=[secret_topic], receipts=sink)
    async with McpTestClient(server) as client:
        with pytest.raises(ProtocolError) as info:
            await client.get_prompt("secret_topic", {"wrong": 1})  # type: ignore[dict-item]

    assert -31403 == info.value.code
    assert "topics" in info.value.message
    assert "wrong" not in info.value.message
    assert ("prompt", "refused") == (sink.only.kind, sink.only.outcome)


async def test_list_results_of_a_guarded_catalog_are_private() -> None:
    """api.md: list results are public unless a declaration has a guard (then private).

    RFC 156 Protocol 6: "any declaration", so a guarded tool makes every list private.
    """
    async with McpTestClient(make_server()) as client:
        tools = await client.request("tools/list", {})
        prompts = await client.request("prompts/list", {})
        resources = await client.request("resources/templates/list", {})

    assert "private" == tools["cacheScope"]
    assert "private" == prompts["cacheScope"]
    assert "private" == resources["cacheScope"]


async def test_an_unguarded_catalog_lists_publicly() -> None:
    """api.md: Catalog defaults: cacheScope public, ttlMs 3600000."""
    server = Server("open", "1", tools=[open_tool])
    async with McpTestClient(server) as client:
        tools = await client.request("tools/list", {})

    assert ("public", 3_600_000) == (tools["cacheScope"], tools["ttlMs"])


async def test_a_guarded_resource_makes_its_lists_private_and_reads_private() -> None:
    """Our choice: authorization-sensitive results are never public."""
    reports = Capability("reports", description="Read reports")

    @resource(uri="report://latest", ttl=60, caps=[reports])
    def latest() -> str:
        """The latest report."""
        return "report"

    server = Server("r", "1", resources=[latest])
    async with McpTestClient(server, allow=[reports]) as client:
        listed = await client.request("resources/list", {})
        read = await client.read_resource("report://latest")

    assert "private" == listed["cacheScope"]
    assert "private" == read["cacheScope"]


async def test_grants_per_principal_over_http(sink: Sink) -> None:
    """api.md: serve_http's allow= may be a function of the principal the host resolved."""
    import httpx

    def who(scope: MutableMapping[str, Any]) -> str:
        headers: dict[bytes, bytes] = dict(scope["headers"])
        return headers.get(b"x-user", b"anonymous").decode()

    def allow(principal: object) -> list[Capability]:
        return [desk_write, desk_read] if principal == "alice" else []

    server = make_server(sink)
    texts: dict[str, str] = {}
    async with (
        serving(server, allow=allow, principal=who) as base,
        httpx.AsyncClient(timeout=30) as http,
    ):
        for user in ("alice", "bob"):
            response = await post(
                http,
                base,
                "tools/call",
                {"name": "close_ticket", "arguments": {"ticket_id": 3}},
                meta=McpTestClient(server).meta(),
                headers=headers_for("tools/call", "close_ticket", **{"x-user": user}),
                wait=30,
            )
            texts[user] = response.text

    assert '"isError":false' in texts["alice"].replace(" ", "")
    assert '"isError":true' in texts["bob"].replace(" ", "")
    assert [("alice", "ok"), ("bob", "refused")] == [
        (r.principal_id, r.outcome) for r in sink.receipts
    ]


@pytest.mark.parametrize(
    "name", ["a", "desk_read", "desk.read", "desk-read", "ns:read", "A1"]
)
def test_capability_names_may_use_letters_digits_and_separators(name: str) -> None:
    assert name == Capability(name, description="d").name


@pytest.mark.parametrize("name", ["", "desk read", "desk/read", "a,b", "_", "-.:"])
def test_other_capability_names_are_refused(name: str) -> None:
    message = f"capability name {name!r} must be letters, digits, '_', '-', '.' or ':'"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        Capability(name, description="d")


def test_closure_follows_requires_transitively_once() -> None:
    a = Capability("a", description="a")
    b = Capability("b", description="b", requires=[a])
    c = Capability("c", description="c", requires=[b, a])
    loop = Capability("d", description="d", requires=[c, c])

    assert frozenset({"a", "b", "c", "d"}) == closure([loop])
    assert frozenset() == closure([])


def test_resolve_grants_takes_names_capabilities_or_a_function() -> None:
    assert frozenset({"desk_read", "x"}) == resolve_grants([desk_read, "x"], None)
    assert frozenset({"billing"}) == resolve_grants(
        lambda who: [billing] if who == "p" else [], "p"
    )
    assert frozenset() == resolve_grants(
        lambda who: [billing] if who == "p" else [], "q"
    )
