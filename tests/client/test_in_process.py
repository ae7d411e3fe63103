"""The client against a ``Server`` in this process: values, errors, rounds, deadlines."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from support.upstream import cancelled_across, make_server, tour, wait_for_text

from trio_mcp import McpError
from trio_mcp.client import Client, InputRequest
from trio_mcp.testing import McpTestClient


async def test_every_kind_of_request_gives_its_value() -> None:
    async with Client(make_server()) as client:
        assert "2026-07-28" == client.server.revision
        await tour(client)


async def test_list_methods_follow_every_cursor() -> None:
    server = make_server(many=True)
    async with McpTestClient(server) as direct:
        first_page = await direct.request("tools/list")

    async with Client(server) as client:
        tools = await client.list_tools()

    assert "nextCursor" in first_page
    assert 128 == len(tools)
    assert len(tools) == len({t["name"] for t in tools})


async def test_a_cancelled_scope_cancels_the_handler(tmp_path: Path) -> None:
    async with Client(make_server()) as client:
        await cancelled_across(client, tmp_path / "mark")
        added = await client.call_tool("add", {"a": 2, "b": 3})
    assert {"total": 5} == added.structured


async def test_a_deadline_raises_timeout_and_cancels_the_handler(
    tmp_path: Path,
) -> None:
    mark = tmp_path / "mark"
    async with Client(make_server(), timeout=5) as client:
        with pytest.raises(McpError.Timeout, match=r"did not answer within 0\.5 s"):
            await client.call_tool("wait_cancel", {"mark": str(mark)}, timeout=0.5)
        await wait_for_text(mark, "cancelled")


async def test_the_clients_timeout_is_the_default_deadline(tmp_path: Path) -> None:
    async with Client(make_server(), timeout=0.5) as client:
        with pytest.raises(McpError.Transport):
            await client.call_tool("wait_cancel", {"mark": str(tmp_path / "m")})


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_input_requests_are_answered_by_on_input(era: str) -> None:
    """In either era: 2026-07-28 input rounds, or the handshake era's own requests."""
    asked: list[InputRequest] = []

    async def on_input(request: InputRequest) -> dict[str, object]:
        asked.append(request)
        if request.method == "elicitation/create":
            return {"action": "accept", "content": {"name": "Ada"}}
        if request.method == "roots/list":
            return {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "hi"},
            "model": "m",
        }

    server = make_server(legacy=True)
    async with Client(server, on_input=on_input, era=era) as client:  # type: ignore[arg-type]
        greeted = await client.call_tool("greet")
        both = await client.call_tool("roots_and_model")

    assert "hello Ada" == greeted.text
    assert "2 roots; model said hi" == both.text
    assert "Your name?" == asked[0].params["message"]
    assert {"roots/list", "sampling/createMessage"} == {r.method for r in asked[1:]}


async def test_without_on_input_no_capability_is_declared() -> None:
    async with Client(make_server()) as client:
        with pytest.raises(McpError.Remote) as raised:
            await client.call_tool("greet")

    assert -32021 == raised.value.code
    assert {"elicitation": {}} == raised.value.data["requiredCapabilities"]  # type: ignore[index,call-overload]


async def test_a_completion_is_a_value() -> None:
    async with Client(make_server()) as client:
        completion = await client.complete(
            {"type": "ref/prompt", "name": "review"}, "language", "R"
        )

    assert ["Rust", "Ruby"] == completion.values
    assert not completion.has_more


async def test_an_error_raised_in_the_block_leaves_it_as_raised() -> None:
    with pytest.raises(McpError.Remote):
        async with Client(make_server()) as client:
            await client.call_tool("nope")
    with pytest.raises(KeyError):
        async with Client(make_server()):
            raise KeyError("mine")


@pytest.mark.parametrize(
    "target", ["ftp://x", "", [], ["python", 3], 42, "mcp.example.com"]
)
def test_a_target_that_is_none_of_the_four_is_refused(target: object) -> None:
    with pytest.raises(McpError.InvalidArgument, match="URL"):
        Client(target)  # type: ignore[arg-type]


def test_an_era_or_timeout_that_cannot_work_is_refused() -> None:
    with pytest.raises(McpError.InvalidArgument, match="era="):
        Client(make_server(), era="2025")  # type: ignore[arg-type]
    with pytest.raises(McpError.InvalidArgument, match="timeout="):
        Client(make_server(), timeout=0)


async def test_a_client_outside_its_block_says_so() -> None:
    client = Client(make_server())
    with pytest.raises(McpError.InvalidArgument, match="async with"):
        await client.list_tools()
    async with client:
        pass
    with pytest.raises(McpError.InvalidArgument, match="async with"):
        client.server  # noqa: B018


async def test_forcing_the_legacy_era_on_a_modern_only_server_fails_clearly() -> None:
    with pytest.raises(McpError.Remote, match="initialize"):
        async with Client(make_server(), era="legacy"):
            pass


async def test_a_dual_era_server_in_process_can_be_spoken_to_in_either_era() -> None:
    async with Client(make_server(legacy=True), era="legacy") as client:
        assert "2025-11-25" == client.server.revision
        await tour(client)
    async with Client(make_server(legacy=True)) as client:
        assert "2026-07-28" == client.server.revision


async def test_leaving_the_block_stops_the_server_task() -> None:
    with trio.fail_after(10):
        async with Client(make_server()) as client:
            await client.call_tool("echo", {"text": "x"})
