"""``Server(...)``'s options as values (issue 37, issue 41): a signature that shows every
keyword it takes, the server's info one ``ServerInfo`` value that ``title=``,
``website_url=`` and ``icons=`` still spell (deprecated), the broadcast coming with
its store, and one ``Limits`` wherever a server is driven, ``McpTestClient(limits=)``
included."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import wire

from trio_mcp import (
    Icon,
    InvalidArgument,
    Limits,
    RedisBroadcast,
    RedisStore,
    Server,
    ServerInfo,
    ServerOptions,
    tool,
)
from trio_mcp._changes import Broadcast
from trio_mcp.testing import McpTestClient

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


@tool
def echo(text: str) -> str:
    """Echo the text.

    Args:
        text: What to echo.
    """
    return text


def test_server_shows_every_keyword_it_takes() -> None:
    """api.md "The house, round two": no ``**options`` hiding some (issue 41
    replaced issue 37's count of at most 13 parameters, which hid six)."""
    parameters = inspect.signature(Server.__init__).parameters

    assert all(p.kind is not p.VAR_KEYWORD for p in parameters.values())
    assert {"legacy", *ServerOptions.__annotations__} <= set(parameters)


def test_every_option_is_typed_and_documented_once() -> None:
    assert {"info", "title", "website_url", "icons", "broadcast", "dynamic"} == set(
        ServerOptions.__annotations__
    )
    for name in ServerOptions.__annotations__:
        assert f"{name}:" in (ServerOptions.__doc__ or ""), name


icons = st.lists(
    st.builds(
        Icon,
        st.sampled_from(["https://desk.example/a.png", "data:,"]),
        mime_type=st.none() | st.just("image/png"),
        sizes=st.sampled_from([(), ("48x48",)]),
        theme=st.none() | st.sampled_from(["light", "dark"]),
    ),
    max_size=2,
)


@given(
    title=st.none() | st.text(max_size=8),
    website_url=st.none() | st.just("https://desk.example"),
    icons=icons,
)
async def test_title_website_and_icons_spell_the_same_info(
    title: str | None, website_url: str | None, icons: list[Icon]
) -> None:
    info = ServerInfo(title=title, website_url=website_url, icons=icons)
    valued = Server("desk", "1.0", tools=[echo], info=info)
    with pytest.warns(DeprecationWarning, match=r"info=ServerInfo\("):
        spelled = Server(
            "desk",
            "1.0",
            tools=[echo],
            title=title,
            website_url=website_url,
            icons=icons,
        )
    async with McpTestClient(valued) as a, McpTestClient(spelled) as b:
        seen = [wire(await c.discover())["_meta"][SERVER_INFO] for c in (a, b)]

    assert valued.info == spelled.info == info
    assert seen[0] == seen[1] == {"name": "desk", "version": "1.0", **info.to_wire()}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"info": ServerInfo(title="A"), "title": "B"},
            "Server(...) got info= and title=: give the title, website and icons in "
            "one place, preferably info=ServerInfo(...)",
        ),
        ({"info": {"title": "A"}}, "Server(info=...) must be a trio_mcp.ServerInfo"),
        ({"dynamic": "yes"}, "Server(dynamic=...) must be True or False"),
        ({"broadcast": "redis://x"}, "Server(broadcast=...) must be a Broadcast"),
        ({"icons": ["desk.png"]}, "each of ServerInfo.icons must be a trio_mcp.Icon"),
    ],
)
def test_a_misused_option_says_what_to_give(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        Server("desk", "1.0", **options)

    assert str(refused.value).startswith(message)


def test_an_unknown_keyword_is_a_type_error_naming_it() -> None:
    """Every keyword is in the signature, so Python itself names a misspelled one
    (issue 37's own message for it went with ``**options``)."""
    options: Any = {"titel": "A"}
    with pytest.raises(TypeError, match="titel"):
        Server("desk", "1.0", **options)


def test_the_broadcast_comes_with_the_store_unless_given() -> None:
    store = RedisStore("redis://127.0.0.1:1/0", prefix="desk")
    own = RedisBroadcast("redis://127.0.0.1:1/0")

    with_store = Server("desk", "1.0", store=store)
    given_too = Server("desk", "1.0", store=store, broadcast=own)
    plain = Server("desk", "1.0")

    assert isinstance(with_store.broadcast, RedisBroadcast)
    assert "desk:changes" == with_store.broadcast.channel
    assert own is given_too.broadcast
    assert type(plain.broadcast) is Broadcast


async def test_the_test_client_serves_with_the_limits_it_is_given() -> None:
    nested = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": [[[[]]]]}
    )
    async with McpTestClient(Server("desk", "1.0"), limits=Limits(max_depth=3)) as c:
        (too_deep,) = await c.send_raw(nested)
    async with McpTestClient(Server("desk", "1.0")) as c:
        (read,) = await c.send_raw(nested)

    assert -32700 == wire(too_deep)["error"]["code"]
    assert -32700 != wire(read).get("error", {}).get("code")
