"""Titles and icons: on the server (``serverInfo``) and on every kind of declaration.

The test client validates every message against the revision's schema, so these
tests also show that the ``Implementation``, ``Tool``, ``Resource``,
``ResourceTemplate`` and ``Prompt`` entries carrying them are valid.
"""

from __future__ import annotations

import pytest
from support import wire

from trio_mcp import Icon, Server, ServerInfo, prompt, resource, tool
from trio_mcp.testing import McpTestClient

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
PNG = Icon("https://example.com/desk.png", mime_type="image/png", sizes=("48x48",))
SVG = Icon("data:image/svg+xml;base64,PHN2Zy8+", theme="dark")


@tool(title="Look up", icons=[PNG])
def look_up(query: str) -> str:
    """Look something up.

    Args:
        query: What to look for.
    """
    return query


@resource(uri="desk://motd", title="Message of the day", icons=[SVG])
def motd() -> str:
    """Today's message."""
    return "hello"


@resource(uri="desk://tickets/{ticket_id}", title="Ticket", icons=[PNG, SVG])
def ticket(ticket_id: str) -> str:
    """One ticket.

    Args:
        ticket_id: The ticket's id.
    """
    return ticket_id


@prompt(title="Greeting", icons=[PNG])
def greet(name: str) -> str:
    """Greet someone.

    Args:
        name: Who to greet.
    """
    return f"Hello {name}"


def desk(**kwargs: object) -> Server:
    return Server(
        "desk",
        "1.0",
        tools=[look_up],
        resources=[motd, ticket],
        prompts=[greet],
        **kwargs,  # type: ignore[arg-type]
    )


async def test_server_title_website_and_icons_are_in_server_info() -> None:
    """Revision: serverInfo is an Implementation with title, websiteUrl, icons."""
    info = ServerInfo(
        title="Support desk", website_url="https://desk.example", icons=[PNG]
    )
    server = desk(info=info)
    async with McpTestClient(server) as client:
        discovered = await client.discover()
        listed = await client.request("tools/list", {})

    expected = {
        "name": "desk",
        "version": "1.0",
        "title": "Support desk",
        "websiteUrl": "https://desk.example",
        "icons": [
            {
                "src": "https://example.com/desk.png",
                "mimeType": "image/png",
                "sizes": ["48x48"],
            }
        ],
    }
    assert expected == wire(discovered)["_meta"][SERVER_INFO]
    assert expected == wire(listed)["_meta"][SERVER_INFO]


async def test_server_info_without_extras_is_name_and_version() -> None:
    async with McpTestClient(desk()) as client:
        discovered = await client.discover()

    assert {"name": "desk", "version": "1.0"} == wire(discovered)["_meta"][SERVER_INFO]


async def test_declaration_titles_and_icons_reach_every_list() -> None:
    """Revision: Tool, Resource, ResourceTemplate and Prompt carry title and icons."""
    async with McpTestClient(desk()) as client:
        tools = await client.list_tools()
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()

    png, svg = PNG.to_wire(), SVG.to_wire()
    assert ("Look up", [png]) == (tools[0]["title"], tools[0]["icons"])
    assert ("Message of the day", [svg]) == (
        resources[0]["title"],
        resources[0]["icons"],
    )
    assert ("Ticket", [png, svg]) == (templates[0]["title"], templates[0]["icons"])
    assert ("Greeting", [png]) == (prompts[0]["title"], prompts[0]["icons"])
    assert {"src": svg["src"], "theme": "dark"} == svg


@pytest.mark.parametrize(
    "kwargs",
    [{"icons": ["https://example.com/x.png"]}, {"title": 3}, {"website_url": b"x"}],
    ids=["icon-as-string", "title-not-str", "url-not-str"],
)
def test_bad_server_extras_are_refused_when_the_server_is_built(
    kwargs: dict[str, object],
) -> None:
    with pytest.raises(TypeError, match="Server"):
        desk(**kwargs)


def test_an_icon_theme_is_light_or_dark() -> None:
    """Revision: Icon.theme is "light" or "dark"."""
    with pytest.raises(ValueError, match="theme"):
        Icon("https://example.com/x.png", theme="blue")


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((1, "1"), {}, "Server(name=...) takes a string, got int 1"),
        (("s", 2.0), {}, "Server(version=...) takes a string, got float 2.0"),
        (("s", None), {}, "Server(version=...) takes a string, got NoneType None"),
        (
            ("s", "1"),
            {"instructions": 5},
            "Server(instructions=...) takes a string, got int 5",
        ),
    ],
    ids=["name-int", "version-float", "version-none", "instructions-int"],
)
def test_a_non_string_identity_is_refused_when_the_server_is_built(
    args: tuple[object, ...], kwargs: dict[str, object], message: str
) -> None:
    """serverInfo and instructions go out as given, so they are checked up front."""
    with pytest.raises(TypeError) as caught:
        Server(*args, **kwargs)  # type: ignore[arg-type]

    assert message == str(caught.value)
