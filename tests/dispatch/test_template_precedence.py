"""F9 (issue 34): which declaration serves a URI that several could match.

Decided: precedence, not refusal (whether two RFC 6570 templates can match one
URI is easy to see for two and surprising to be refused for): a static URI first,
then the templates in the order of ``resources=``; the first whose template
matches serves the read, and the same rule answers ``is_updatable`` and
``notify_updated``. docs/guides/resources-prompts.md says so.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import wire

from trio_mcp import Resource, Server, resource
from trio_mcp.testing import McpTestClient


@resource(uri="notes://{name}")
def by_name(name: str) -> str:
    """A note by its name.

    Args:
        name: The name.
    """
    return f"by name: {name}"


@resource(uri="notes://{+path}", updatable=True)
def by_path(path: str) -> str:
    """A note by its path.

    Args:
        path: The path.
    """
    return f"by path: {path}"


@resource(uri="notes://index")
def index() -> str:
    """The index."""
    return "the index"


async def read(server: Server, uri: str) -> str:
    async with McpTestClient(server) as client:
        text: str = wire(await client.read_resource(uri))["contents"][0]["text"]
    return text


@pytest.mark.parametrize(
    ("order", "uri", "served"),
    [
        ((by_name, by_path), "notes://a", "by name: a"),
        ((by_path, by_name), "notes://a", "by path: a"),
        ((by_name, by_path), "notes://a/b", "by path: a/b"),
        ((by_name, by_path, index), "notes://index", "the index"),
        ((index, by_path), "notes://index", "the index"),
    ],
)
async def test_static_first_then_the_first_template_listed(
    order: tuple[Resource, ...], uri: str, served: str
) -> None:
    assert served == await read(Server("n", "1", resources=list(order)), uri)


@settings(deadline=None)
@given(name=st.from_regex(r"\A[a-z]{1,8}\Z"), path_first=st.booleans())
async def test_notify_updated_follows_the_declaration_that_serves(
    name: str, path_first: bool
) -> None:
    """``by_path`` is updatable and ``by_name`` is not: a one-segment URI can be
    announced only when ``by_path`` is listed first, because only then it serves it."""
    order: list[Resource] = [by_path, by_name] if path_first else [by_name, by_path]
    server = Server("n", "1", resources=order)
    uri = f"notes://{name}"

    if path_first:
        await server.notify_updated(uri)
    else:
        with pytest.raises(ValueError, match="updatable"):
            await server.notify_updated(uri)
    assert f"by {'path' if path_first else 'name'}: {name}" == await read(server, uri)
