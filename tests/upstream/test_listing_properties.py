"""Whatever an upstream lists, a gateway serves only what the revision allows.

An upstream's listing is another program's output. Drawn listings (plausible
members with arbitrary JSON values beside well-formed ones) go through the
gateway's reading of them: it never raises, keeps the catalog buildable, and every
list it would send validates against the official 2026-07-28 schema.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.strategies import json_trees

from trio_mcp import Upstream
from trio_mcp._dispatch import Catalog
from trio_mcp._dispatch._call import Call
from trio_mcp._json import JsonObject
from trio_mcp._upstream._entries import Listing, entries
from trio_mcp.testing._schema import check_message

leaves = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
anything = json_trees(leaves)
names = st.sampled_from(
    ["search", "a b", "", "x" * 130, "read.me", "ü", "x\n"]
) | st.text(max_size=8)
schemas = st.sampled_from(
    [
        {"type": "object"},
        {"type": "object", "properties": {"q": {"type": "string"}}},
        {"type": "string"},
        {"type": "object", "properties": 3},
    ]
)


def members(**values: st.SearchStrategy[Any]) -> st.SearchStrategy[JsonObject]:
    """Objects holding some of ``values``' members (each well-formed or not)."""
    return st.fixed_dictionaries(
        {}, optional={k: v | anything for k, v in values.items()}
    )


icons = st.lists(
    st.fixed_dictionaries(
        {"src": st.text(max_size=5) | anything},
        optional={"theme": st.sampled_from(["dark", "light", "dim"])},
    ),
    max_size=2,
)
tools = members(
    name=names,
    description=st.text(max_size=5),
    inputSchema=schemas,
    outputSchema=schemas,
    annotations=st.fixed_dictionaries({}, optional={"readOnlyHint": st.booleans()}),
    icons=icons,
    execution=st.just({"taskSupport": "optional"}),
    _meta=st.dictionaries(st.text(max_size=4), leaves, max_size=2),
)
prompts = members(
    name=names,
    arguments=st.lists(
        members(name=names, required=st.booleans(), title=st.text(max_size=3)),
        max_size=2,
    ),
    icons=icons,
)
resources = members(
    uri=st.sampled_from(["note://a", "note://{x}", "", "file:///etc"]),
    name=names,
    size=st.integers(),
    annotations=st.fixed_dictionaries(
        {}, optional={"priority": st.floats(), "audience": st.just(["user"])}
    ),
)
templates = members(
    uriTemplate=st.sampled_from(["note://{x}", "note://{#x}", "plain", "{+p}"]),
    name=names,
    mimeType=st.text(max_size=4),
)


async def _never(method: str, params: JsonObject, call: Call) -> JsonObject:
    raise AssertionError("nothing is sent while listing")  # pragma: no cover


def _lists(catalog: Catalog) -> dict[str, tuple[str, list[JsonObject]]]:
    return {
        "tools/list": ("tools", catalog.wire_tools),
        "prompts/list": ("prompts", catalog.wire_prompts),
        "resources/list": ("resources", catalog.wire_resources),
        "resources/templates/list": ("resourceTemplates", catalog.wire_templates),
    }


@settings(max_examples=150, deadline=None)
@example([{"name": "x\n", "inputSchema": {"type": "object"}}], [], [], [])
@example([{"name": "", "inputSchema": {"type": "object"}}], [], [], [])
@given(
    st.lists(tools | anything, max_size=3),
    st.lists(prompts, max_size=3),
    st.lists(resources, max_size=3),
    st.lists(templates, max_size=3),
)
def test_what_a_gateway_lists_of_any_listing_fits_the_revision(
    tool_items: list[Any],
    prompt_items: list[Any],
    resource_items: list[Any],
    template_items: list[Any],
) -> None:
    upstream = Upstream("http://127.0.0.1:1/mcp", prefix="up_")
    listing = Listing(tool_items, prompt_items, resource_items, template_items)

    found = entries(upstream, listing, _never)
    catalog = Catalog((), (), (), found)

    for method, (key, items) in _lists(catalog).items():
        check_message(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    key: items,
                    "resultType": "complete",
                    "ttlMs": 0,
                    "cacheScope": "public",
                },
            },
            method,
        )
    for tool in catalog.wire_tools:
        assert re.fullmatch(r"up_[A-Za-z0-9_.-]{1,125}", str(tool["name"]))
        assert "execution" not in tool
