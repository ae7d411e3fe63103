"""The catalog: order, pagination, caching hints, capabilities, completion (mcp §6, §9, §10)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from support import wire

from trio_mcp import Capability, Server, prompt, resource, tool
from trio_mcp.testing import McpTestClient, ProtocolError

admin = Capability("admin", description="Administer")


def numbered_tool(i: int, **options: Any) -> Any:
    def handler() -> int:
        return i

    handler.__name__ = f"tool_{i:03d}"
    handler.__qualname__ = handler.__name__
    handler.__doc__ = f"Return {i}."
    return tool(**options)(handler)


def numbered_prompt(i: int) -> Any:
    def handler() -> str:
        return str(i)

    handler.__name__ = f"prompt_{i:03d}"
    handler.__qualname__ = handler.__name__
    handler.__doc__ = f"Say {i}."
    return prompt(handler)


@tool
def zeta() -> str:
    """Last letter."""
    return "z"


@tool
def alpha() -> str:
    """First letter."""
    return "a"


@tool
def mu() -> str:
    """Middle letter."""
    return "m"


@resource("docs://readme")
def readme() -> str:
    """The readme."""
    return "read me"


@resource(uri="docs://{page}", ttl=60, complete={"page": lambda value, _: ["index"]})
def doc_page(page: str) -> str:
    """One page of the docs."""
    return f"page {page}"


@resource(uri="secret://vault", caps=[admin])
def vault() -> str:
    """The vault."""
    return "gold"


@prompt(complete={"topic": lambda value, _: ["cats", "cars"]})
def summarise(topic: str) -> str:
    """Summarise a topic.

    Args:
        topic: What to summarise.
    """
    return f"summarise {topic}"


# -- order ------------------------------------------------------------------------------


async def test_catalog_and_tools_list_keep_the_order_of_the_list() -> None:
    """Spec SHOULD (deterministic order); our choice: exactly the list order."""
    server = Server("order", "1", tools=[zeta, alpha, mu])
    async with McpTestClient(server) as client:
        listed = [t["name"] for t in await client.list_tools()]

    assert ["zeta", "alpha", "mu"] == [s.name for s in server.catalog()]
    assert ["zeta", "alpha", "mu"] == listed


def test_catalog_lists_tools_then_resources_then_prompts() -> None:
    """api.md: server.catalog() returns the specs in list order."""
    server = Server(
        "all", "1", tools=[mu], resources=[doc_page, readme], prompts=[summarise]
    )

    assert ["mu", "doc_page", "readme", "summarise"] == [
        s.name for s in server.catalog()
    ]


# -- pagination -------------------------------------------------------------------------


async def test_more_than_a_page_of_tools_is_paginated_in_order() -> None:
    """Spec (mcp §10): the server picks the page size; nextCursor ends at the last page."""
    tools = [numbered_tool(i) for i in range(250)]
    async with McpTestClient(Server("many", "1", tools=tools)) as client:
        pages = []
        params: dict[str, Any] = {}
        while True:
            result = await client.request("tools/list", params)
            pages.append(result)
            if "nextCursor" not in result:
                break
            params = {"cursor": result["nextCursor"]}
        everything = await client.list_tools()

    assert [100, 100, 50] == [len(wire(p)["tools"]) for p in pages]
    assert [f"tool_{i:03d}" for i in range(250)] == [t["name"] for t in everything]
    assert [f"tool_{i:03d}" for i in range(250)] == [
        wire(t)["name"] for p in pages for t in wire(p)["tools"]
    ]


async def test_every_page_lists_the_same_tools_each_time_it_is_asked() -> None:
    """Pages are encoded once and reused: asking again, or asking for the second
    page first, gives the same tools; a description holding NUL, JSON escapes or a
    lone surrogate comes back as written."""

    def tool_999() -> int:
        return 999

    tool_999.__doc__ = 'NUL \x00 quote " slash \\ lone \ud800 end'
    odd = tool(tool_999)
    tools = [numbered_tool(i) for i in range(150)] + [odd]
    async with McpTestClient(Server("again", "1", tools=tools)) as client:
        first = await client.request("tools/list")
        second = await client.request("tools/list", {"cursor": first["nextCursor"]})
        again = await client.request("tools/list", {"cursor": first["nextCursor"]})
        first_again = await client.request("tools/list")

    assert first == first_again
    assert second == again
    names = [wire(t)["name"] for t in [*wire(first)["tools"], *wire(second)["tools"]]]
    assert [f"tool_{i:03d}" for i in range(150)] + ["tool_999"] == names
    assert (
        'NUL \x00 quote " slash \\ lone \ud800 end'
        == wire(second)["tools"][-1]["description"]
    )


async def test_a_list_that_fits_one_page_has_no_next_cursor() -> None:
    """Spec (mcp §10): nextCursor is absent at the end."""
    async with McpTestClient(Server("one", "1", tools=[alpha])) as client:
        result = await client.request("tools/list", {})

    assert "nextCursor" not in result


async def test_exactly_one_full_page_has_no_next_cursor() -> None:
    """Our choice: no empty trailing page."""
    tools = [numbered_tool(i) for i in range(100)]
    async with McpTestClient(Server("hundred", "1", tools=tools)) as client:
        result = await client.request("tools/list", {})

    assert 100 == len(wire(result)["tools"])
    assert "nextCursor" not in result


async def test_an_empty_cursor_is_a_valid_cursor_for_the_first_page() -> None:
    """Spec (mcp §10): an empty-string cursor is valid."""
    async with McpTestClient(Server("one", "1", tools=[alpha, mu])) as client:
        result = await client.request("tools/list", {"cursor": ""})

    assert ["alpha", "mu"] == [wire(t)["name"] for t in wire(result)["tools"]]


async def test_cursors_are_opaque_and_a_forged_offset_is_refused() -> None:
    """Spec (mcp §10): cursors are opaque; one we did not issue is -32602."""
    tools = [numbered_tool(i) for i in range(150)]
    forged = base64.urlsafe_b64encode(b"tools:9999").decode()
    async with McpTestClient(Server("many", "1", tools=tools)) as client:
        first = await client.request("tools/list", {})
        with pytest.raises(ProtocolError) as info:
            await client.request("tools/list", {"cursor": forged})

    assert not wire(first)["nextCursor"].isdigit()
    assert -32602 == info.value.code


async def test_prompts_are_paginated_like_tools() -> None:
    """Spec (mcp §10): pagination applies to prompts/list too."""
    prompts = [numbered_prompt(i) for i in range(120)]
    async with McpTestClient(Server("many", "1", prompts=prompts)) as client:
        first = await client.request("prompts/list", {})
        everything = await client.list_prompts()

    assert 100 == len(wire(first)["prompts"])
    assert 120 == len(everything)


# -- caching ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("server/discover", {}),
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
    ],
)
async def test_lists_of_an_unguarded_catalog_are_public_for_an_hour(
    method: str, params: dict[str, Any]
) -> None:
    """api.md catalog defaults: cacheScope public, ttlMs 3600000."""
    server = Server(
        "cache", "1", tools=[alpha], resources=[readme, doc_page], prompts=[summarise]
    )
    async with McpTestClient(server) as client:
        result = await client.request(method, params)

    assert ("public", 3_600_000) == (result["cacheScope"], result["ttlMs"])


async def test_a_tool_list_with_a_guarded_tool_is_private() -> None:
    """api.md: a declaration with an authorization guard makes its list private."""
    guarded = numbered_tool(1, caps=[admin])
    async with McpTestClient(Server("g", "1", tools=[alpha, guarded])) as client:
        result = await client.request("tools/list", {})

    assert ("private", 3_600_000) == (result["cacheScope"], result["ttlMs"])


async def test_a_resource_list_with_a_guarded_resource_is_private() -> None:
    """api.md: caps= on a resource makes resources/list private."""
    async with McpTestClient(Server("g", "1", resources=[readme, vault])) as client:
        result = await client.request("resources/list", {})

    assert "private" == result["cacheScope"]


async def test_a_resource_read_is_private_and_immediately_stale_by_default() -> None:
    """api.md: without ttl= a read is cacheScope private, ttlMs 0."""
    async with McpTestClient(Server("r", "1", resources=[readme])) as client:
        result = await client.read_resource("docs://readme")

    assert ("private", 0) == (result["cacheScope"], result["ttlMs"])
    assert [{"uri": "docs://readme", "mimeType": "text/plain", "text": "read me"}] == (
        result["contents"]
    )


async def test_a_resource_ttl_sets_the_reads_ttl_in_milliseconds() -> None:
    """api.md: ttl= (seconds) sets ttlMs."""
    async with McpTestClient(Server("r", "1", resources=[doc_page])) as client:
        result = await client.read_resource("docs://intro")

    assert ("private", 60_000) == (result["cacheScope"], result["ttlMs"])
    assert "page intro" == wire(result)["contents"][0]["text"]


async def test_static_resources_and_templates_are_listed_separately() -> None:
    """api.md: a URI with variables is a template (resources/templates/list)."""
    async with McpTestClient(Server("r", "1", resources=[doc_page, readme])) as client:
        static = await client.list_resources()
        templates = await client.list_resource_templates()

    assert ["docs://readme"] == [r["uri"] for r in static]
    assert ["docs://{page}"] == [t["uriTemplate"] for t in templates]


async def test_a_static_uri_wins_over_a_template_that_also_matches() -> None:
    """Our choice: an exact URI is more specific than a pattern."""
    async with McpTestClient(Server("r", "1", resources=[doc_page, readme])) as client:
        result = await client.read_resource("docs://readme")

    assert "read me" == wire(result)["contents"][0]["text"]


# -- capabilities -----------------------------------------------------------------------


async def test_discover_advertises_only_what_the_catalog_has() -> None:
    """Spec (mcp §6.1): advertised capabilities match real behaviour."""
    async with McpTestClient(Server("tools-only", "1", tools=[alpha])) as client:
        tools_only = wire(await client.discover())["capabilities"]
        with pytest.raises(ProtocolError) as prompts_error:
            await client.request("prompts/list", {})
        with pytest.raises(ProtocolError) as resources_error:
            await client.request("resources/list", {})

    assert {"tools": {"listChanged": False}} == {
        k: v for k, v in tools_only.items() if k != "logging"
    }
    assert -32601 == prompts_error.value.code
    assert -32601 == resources_error.value.code


async def test_an_empty_server_answers_discover_and_nothing_else() -> None:
    """Spec: server/discover is always served; nothing is advertised for nothing."""
    async with McpTestClient(Server("empty", "1")) as client:
        discovered = await client.discover()
        with pytest.raises(ProtocolError) as info:
            await client.request("tools/list", {})

    assert ["2026-07-28"] == discovered["supportedVersions"]
    assert set(wire(discovered)["capabilities"]) <= {"logging"}
    assert -32601 == info.value.code


async def test_discover_carries_instructions_and_server_info() -> None:
    """Spec (mcp §6.1): instructions, and serverInfo in _meta."""
    server = Server("named", "2.5", tools=[alpha], instructions="Be brief.")
    async with McpTestClient(server) as client:
        discovered = await client.discover()

    assert "Be brief." == discovered["instructions"]
    assert {"name": "named", "version": "2.5"} == wire(discovered)["_meta"][
        "io.modelcontextprotocol/serverInfo"
    ]


async def test_every_result_carries_server_info() -> None:
    """Spec SHOULD (mcp §3): serverInfo on every result."""
    async with McpTestClient(Server("named", "2.5", tools=[alpha])) as client:
        listed = await client.request("tools/list", {})
        called = await client.call_tool("alpha")

    assert (
        "named" == wire(listed)["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
    )
    assert "named" == wire(called.meta)["io.modelcontextprotocol/serverInfo"]["name"]


# -- completion -------------------------------------------------------------------------


async def test_completion_is_advertised_and_answers_for_prompts() -> None:
    """Spec (mcp §6.7): completion/complete for a known prompt argument."""
    async with McpTestClient(Server("c", "1", prompts=[summarise])) as client:
        discovered = await client.discover()
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "summarise"},
                "argument": {"name": "topic", "value": "ca"},
            },
        )

    assert "completions" in wire(discovered)["capabilities"]
    assert isinstance(wire(result)["completion"]["values"], list)


async def test_completion_answers_for_a_resource_template() -> None:
    """Spec (mcp §6.7): ref/resource may name a template."""
    async with McpTestClient(Server("c", "1", resources=[doc_page])) as client:
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "docs://{page}"},
                "argument": {"name": "page", "value": "in"},
            },
        )

    assert isinstance(wire(result)["completion"]["values"], list)


@pytest.mark.parametrize(
    "params",
    [
        {
            "ref": {"type": "ref/prompt", "name": "nope"},
            "argument": {"name": "topic", "value": ""},
        },
        {
            "ref": {"type": "ref/resource", "uri": "nope://{x}"},
            "argument": {"name": "x", "value": ""},
        },
        {
            "ref": {"type": "ref/tool", "name": "summarise"},
            "argument": {"name": "topic", "value": ""},
        },
        {"ref": {"type": "ref/prompt", "name": "summarise"}},
    ],
    ids=["unknown-prompt", "unknown-template", "bad-ref-type", "no-argument"],
)
async def test_completion_with_an_invalid_ref_or_argument_is_invalid_params(
    params: dict[str, Any],
) -> None:
    """Spec (mcp §6.7): -32602 for an invalid ref or arguments."""
    async with McpTestClient(Server("c", "1", prompts=[summarise])) as client:
        with pytest.raises(ProtocolError) as info:
            await client.request("completion/complete", params)

    assert -32602 == info.value.code


async def test_completion_is_not_served_for_a_tools_only_catalog() -> None:
    """Spec (mcp §6.7): -32601 without the completions capability."""
    async with McpTestClient(Server("t", "1", tools=[alpha])) as client:
        discovered = await client.discover()
        with pytest.raises(ProtocolError) as info:
            await client.request(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "x"},
                    "argument": {"name": "a", "value": ""},
                },
            )

    assert "completions" not in wire(discovered)["capabilities"]
    assert -32601 == info.value.code
