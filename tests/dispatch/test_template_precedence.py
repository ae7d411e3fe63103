"""F9: which declaration serves a URI that several could match.

Issue 34 decided precedence among templates; issue 44 reverses it: two resource
templates that can match one URI are refused when the server is built (which one
served it depended on the order of ``resources=``, which a reader of either
declaration cannot see), naming both and a URI both match. A static URI still comes
before every template, and ``notify_updated`` follows the declaration that serves.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import wire

from trio_mcp import InvalidDeclaration, Resource, Server, resource
from trio_mcp._declare import UriTemplate
from trio_mcp._declare._overlap import shared_uri
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
        ((by_name, index), "notes://a", "by name: a"),
        ((by_path, index), "notes://a/b", "by path: a/b"),
        ((by_path, index), "notes://index", "the index"),
        ((index, by_path), "notes://index", "the index"),
    ],
)
async def test_a_static_uri_comes_before_a_template(
    order: tuple[Resource, ...], uri: str, served: str
) -> None:
    assert served == await read(Server("n", "1", resources=list(order)), uri)


def test_two_templates_that_can_match_one_uri_are_refused() -> None:
    with pytest.raises(InvalidDeclaration) as info:
        Server("n", "1", resources=[by_name, by_path])

    assert (
        "resource templates 'notes://{name}' (test_template_precedence:by_name) and "
        "'notes://{+path}' (test_template_precedence:by_path) both match 'notes://x'"
    ) in str(info.value)


@settings(deadline=None)
@given(name=st.from_regex(r"\A[a-z]{1,8}\Z"), updatable=st.booleans())
async def test_notify_updated_follows_the_declaration_that_serves(
    name: str, updatable: bool
) -> None:
    """``by_path`` is updatable and ``by_name`` is not: a URI can be announced only
    when the declaration that serves it is."""
    server = Server("n", "1", resources=[by_path if updatable else by_name, index])
    uri = f"notes://{name}"

    if updatable:
        await server.notify_updated(uri)
    else:
        with pytest.raises(ValueError, match="updatable"):
            await server.notify_updated(uri)
    served = await read(server, uri)
    assert served in (f"by {'path' if updatable else 'name'}: {name}", "the index")


@pytest.mark.parametrize(
    ("first", "second", "shared"),
    [
        ("notes://{name}", "notes://{+path}", "notes://x"),
        ("notes://{name}", "docs://{name}", None),
        ("a://{x}/b", "a://{y}/c", None),
        ("a://{x}/b", "a://c/{y}", "a://c/b"),
        ("a://{x}", "a://{x}/{y}", None),
        ("a://{+x}", "a://{x}/{y}", "a://x/x"),
        ("a://{x}.json", "a://{y}.{z}", "a://x.json"),
        ("file:///{+p}", "file:///etc/{n}", "file:///etc/x"),
        ("pair://{a}{b}", "pair://{c}", "pair://xx"),
        ("x://{a}?q", "x://{b}", None),
        ("x://{+a}#f", "x://{+b}", None),
    ],
)
def test_the_shared_uri_of_two_templates(
    first: str, second: str, shared: str | None
) -> None:
    assert shared == shared_uri(first, second)
    assert shared == shared_uri(second, first)


PIECES = st.sampled_from(["a", "b", "/", ".", "{v}", "{+v}", "?", "x"])
TEMPLATES = st.lists(PIECES, min_size=1, max_size=5).map(
    lambda parts: "t://" + "".join(p.replace("v", f"v{i}") for i, p in enumerate(parts))
)
URIS = st.lists(st.sampled_from(["a", "b", "/", ".", "?", "x", "y"]), max_size=7).map(
    lambda parts: "t://" + "".join(parts)
)


@example(first="t://{v0}", second="t://{+v0}", uri="t://y")
@example(first="t://{v0}/a", second="t://a{+v1}", uri="t://a/a")
@given(first=TEMPLATES, second=TEMPLATES, uri=URIS)
def test_a_shared_uri_is_found_exactly_when_one_exists(
    first: str, second: str, uri: str
) -> None:
    """Property: the URI ``shared_uri`` gives matches both templates; when it gives
    none, no URI drawn matches both."""
    a = UriTemplate.parse(first, where="a")
    b = UriTemplate.parse(second, where="b")
    shared = shared_uri(first, second)
    if shared is not None:
        assert a.match(shared) is not None
        assert b.match(shared) is not None
    elif a.match(uri) is not None:
        assert b.match(uri) is None
