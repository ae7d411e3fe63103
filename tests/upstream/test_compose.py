"""A ``Server`` composed in process (``Upstream(server)``): names, collisions, the
chain, cancellation and what the composed server is sent.

The composed server is a real ``Server`` and the gateway is driven through real
JSON (``McpTestClient``): what a client of the gateway sees is what a client of the
composed server sees, under the gateway's names and rules.
"""

from __future__ import annotations

import pytest
import trio
from support.receipts import Sink
from support.tools import add, echo, greet, steps

from trio_mcp import (
    Capability,
    Ending,
    McpError,
    Server,
    ToolContext,
    Upstream,
    resource,
    tool,
)
from trio_mcp.testing import McpTestClient, ProtocolError

READ = Capability("notes.read", description="Read the notes")
ADMIN = Capability("notes.admin", description="Administer the notes")


@resource("note://{name}")
def note(name: str) -> str:
    """A note by name.

    Args:
        name: The note's name.
    """
    return f"note {name}"


@resource("note://index")
def index() -> str:
    """The index of the notes."""
    return "a, b"


@tool(caps=[ADMIN])
def purge() -> str:
    """Purge every note (needs notes.admin)."""
    return "purged"


def notes_server() -> Server:
    return Server(
        "notes",
        "1",
        tools=[add, echo, steps, purge],
        resources=[note, index],
        prompts=[greet],
    )


async def test_a_composed_servers_catalog_is_served_under_the_prefix() -> None:
    gateway = Server("gw", "1", upstreams=[Upstream(notes_server(), prefix="n_")])

    async with McpTestClient(gateway) as client:
        tools = [t["name"] for t in await client.list_tools()]
        prompts = [p["name"] for p in await client.list_prompts()]
        resources = [r["uri"] for r in await client.list_resources()]
        templates = [t["uriTemplate"] for t in await client.list_resource_templates()]

    assert ["n_add", "n_echo", "n_steps", "n_purge"] == tools
    assert ["n_greet"] == prompts
    assert ["note://index"] == resources  # URIs as the upstream names them
    assert ["note://{name}"] == templates


async def test_a_relayed_call_gives_what_the_composed_server_gives() -> None:
    inner = notes_server()
    gateway = Server("gw", "1", upstreams=[Upstream(inner, prefix="n_")])

    async with McpTestClient(inner) as direct, McpTestClient(gateway) as proxied:
        want = await direct.call_tool("add", {"a": 2, "b": 3})
        got = await proxied.call_tool("n_add", {"a": 2, "b": 3})
        want_prompt = await direct.get_prompt("greet", {"name": "Ada"})
        got_prompt = await proxied.get_prompt("n_greet", {"name": "Ada"})
        want_read = await direct.read_resource("note://b")
        got_read = await proxied.read_resource("note://b")
        bad = await proxied.call_tool("n_add", {"a": "two"})

    assert (want.content, want.structured, want.is_error) == (
        got.content,
        got.structured,
        got.is_error,
    )
    assert {"name": "gw", "version": "1"} == got.meta[
        "io.modelcontextprotocol/serverInfo"
    ]
    assert want_prompt["messages"] == got_prompt["messages"]
    assert want_read["contents"] == got_read["contents"]
    assert bad.is_error  # the composed server's own invalid-arguments result
    assert "invalid arguments" in bad.text


async def test_the_allow_list_serves_only_the_named_tools() -> None:
    gateway = Server("gw", "1", upstreams=[Upstream(notes_server(), tools=["echo"])])

    async with McpTestClient(gateway) as client:
        tools = [t["name"] for t in await client.list_tools()]
        with pytest.raises(ProtocolError, match="unknown tool 'add'"):
            await client.call_tool("add", {"a": 1, "b": 2})

    assert ["echo"] == tools


def test_a_composed_name_the_server_serves_is_refused_at_construction() -> None:
    with pytest.raises(McpError.DuplicateName, match="tool name 'echo'") as raised:
        Server("gw", "1", tools=[echo], upstreams=[Upstream(notes_server())])

    assert "prefix" in str(raised.value)


def test_two_composed_servers_with_one_name_are_refused_at_construction() -> None:
    with pytest.raises(McpError.DuplicateName, match="server 'notes'"):
        Server(
            "gw",
            "1",
            upstreams=[
                Upstream(notes_server(), prefix="a_"),
                Upstream(notes_server(), prefix="b_"),  # the same resource URIs
            ],
        )


async def test_the_upstreams_caps_are_required_and_its_receipt_names_it() -> None:
    sink = Sink()
    gateway = Server(
        "gw",
        "1",
        upstreams=[Upstream(notes_server(), prefix="n_", caps=[READ])],
        receipts=sink,
    )

    async with McpTestClient(gateway) as refused_client:
        refused = await refused_client.call_tool("n_echo", {"text": "hi"})
    async with McpTestClient(gateway, allow=["notes.read"]) as client:
        allowed = await client.call_tool("n_echo", {"text": "hi"})

    assert refused.is_error
    assert "notes.read" in refused.text
    assert "hi" == allowed.structured
    first, second = sink.receipts
    assert ("refused", "ok") == (first.outcome, second.outcome)
    assert "server 'notes'" == second.upstream
    assert "n_echo" == second.name
    assert {"notes.read"} == second.required


async def test_a_composed_declarations_own_caps_are_required_of_the_caller() -> None:
    gateway = Server("gw", "1", upstreams=[Upstream(notes_server(), prefix="n_")])

    async with McpTestClient(gateway) as client:
        refused = await client.call_tool("n_purge")
    async with McpTestClient(gateway, allow=["notes.admin"]) as admin:
        allowed = await admin.call_tool("n_purge")

    assert refused.is_error
    assert "notes.admin" in refused.text
    assert "purged" == allowed.structured


async def test_middleware_of_the_gateway_sees_and_can_answer_a_relayed_call() -> None:
    seen: list[str] = []

    async def watch(call, next):  # type: ignore[no-untyped-def]
        seen.append(call.name)
        if call.name == "n_purge":
            return Ending.refused("purging through the gateway is off")
        return await next(call)

    gateway = Server(
        "gw",
        "1",
        upstreams=[Upstream(notes_server(), prefix="n_")],
        middleware=[watch],
    )
    async with McpTestClient(gateway, allow=["notes.admin"]) as client:
        await client.call_tool("n_echo", {"text": "x"})
        with pytest.raises(ProtocolError, match="purging through the gateway is off"):
            await client.call_tool("n_purge")

    assert ["n_echo", "n_purge"] == seen


async def test_progress_of_the_composed_handler_reaches_the_inbound_caller() -> None:
    gateway = Server("gw", "1", upstreams=[Upstream(notes_server(), prefix="n_")])

    async with McpTestClient(gateway) as client:
        result = await client.call_tool("n_steps", {"count": 3}, progress_token="p")

    params = [n["params"] for n in result.notifications]
    assert [1, 2, 3] == [p["progress"] for p in params]  # type: ignore[index,call-overload]
    assert {"p"} == {p["progressToken"] for p in params}  # type: ignore[index,call-overload]


cancelled_inside = trio.Event()
started_inside = trio.Event()


@tool
async def wait_forever() -> str:
    """Wait until cancelled."""
    started_inside.set()
    try:
        await trio.sleep_forever()
    finally:
        cancelled_inside.set()
    raise AssertionError("cancelled before")  # pragma: no cover


@pytest.fixture
def fresh_events() -> None:
    global cancelled_inside, started_inside
    cancelled_inside, started_inside = trio.Event(), trio.Event()


@pytest.mark.usefixtures("fresh_events")
async def test_an_inbound_cancel_reaches_the_composed_handler() -> None:
    sink = Sink()
    inner = Server("waits", "1", tools=[wait_forever])
    gateway = Server("gw", "1", upstreams=[Upstream(inner)], receipts=sink)

    async with McpTestClient(gateway) as client, trio.open_nursery() as nursery:
        nursery.start_soon(client.call_tool, "wait_forever")
        with trio.fail_after(5):
            await started_inside.wait()
        await client.notify("notifications/cancelled", {"requestId": 1})
        with trio.fail_after(1):
            await cancelled_inside.wait()
        nursery.cancel_scope.cancel()

    assert "cancelled" == sink.only.outcome


@pytest.mark.usefixtures("fresh_events")
async def test_the_upstreams_timeout_ends_the_composed_handler() -> None:
    inner = Server("waits", "1", tools=[wait_forever])
    gateway = Server("gw", "1", upstreams=[Upstream(inner, timeout=0.2)])

    async with McpTestClient(gateway) as client:
        with trio.fail_after(5):
            result = await client.call_tool("wait_forever")

    assert cancelled_inside.is_set()
    assert result.is_error
    assert "timed out after 0.2 seconds" in result.text


async def test_the_composed_server_is_asked_with_the_inbound_grants_only() -> None:
    seen: list[frozenset[str]] = []

    @tool
    def granted() -> str:
        """Say what this call was granted."""
        seen.append(ToolContext.current().granted)
        return "ok"

    inner = Server("grants", "1", tools=[granted])
    gateway = Server("gw", "1", upstreams=[Upstream(inner)])
    async with McpTestClient(gateway, allow=["notes.read"]) as client:
        await client.call_tool("granted")

    assert [frozenset({"notes.read"})] == seen


async def test_a_composed_servers_catalog_change_reaches_the_gateways_clients() -> None:
    @tool
    def late() -> str:
        """A tool added while serving."""
        return "late"

    inner = Server("inner", "1", tools=[echo], dynamic=True)
    gateway = Server("gw", "1", upstreams=[Upstream(inner, prefix="i_")])
    fixed = Server("fixed", "1", upstreams=[Upstream(notes_server(), prefix="n_")])

    async with McpTestClient(gateway) as client:
        async with client.listen(tools_list_changed=True) as listen:
            inner.replace(tools=[echo, late])
            notice = await listen.next(timeout=10)
        names = [t["name"] for t in await client.list_tools()]
        result = await client.call_tool("i_late")
        changing = (await client.discover())["capabilities"]
    async with McpTestClient(fixed) as client:
        fixing = (await client.discover())["capabilities"]

    assert "notifications/tools/list_changed" == notice["method"]
    assert ["i_echo", "i_late"] == names
    assert "late" == result.structured
    assert {"listChanged": True} == changing["tools"]  # type: ignore[index,call-overload]
    assert {"listChanged": False} == fixing["tools"]  # type: ignore[index,call-overload]


@tool(task="optional")
async def long_job(n: int) -> int:
    """A job that may run as a task.

    Args:
        n: A number.
    """
    return n * 2


async def test_a_task_tool_is_served_as_a_plain_tool() -> None:
    inner = Server("jobs", "1", tools=[long_job])
    gateway = Server("gw", "1", upstreams=[Upstream(inner)])

    async with McpTestClient(inner) as direct:
        inner_capabilities = (await direct.discover())["capabilities"]
    async with McpTestClient(gateway) as client:
        capabilities = (await client.discover())["capabilities"]
        result = await client.call_tool("long_job", {"n": 21})

    assert "io.modelcontextprotocol/tasks" in str(inner_capabilities)
    assert "io.modelcontextprotocol/tasks" not in str(capabilities)
    assert 42 == result.structured
