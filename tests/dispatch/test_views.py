"""MCP Apps on the wire: tools list their views, views read back as MCP App HTML.

Everything goes through ``McpTestClient`` (real JSON, each message checked against
the revision's schema), and the extension's own fields through the spec's shapes
(``support/apps.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import wire
from support.apps import (
    APPS_CLIENT,
    MIME,
    UI,
    check_listed_tools,
    check_resource,
    check_view_read,
)
from support.legacy import LegacyPeer

from trio_mcp import (
    DuplicateName,
    InvalidDeclaration,
    Receipt,
    Server,
    ToolContext,
    ToolReply,
    ToolSpec,
    View,
    resource,
    tool,
)
from trio_mcp.testing import McpTestClient

HTML = "<!doctype html><title>board</title><p>tickets</p>"


def board() -> View:
    """The ticket board, a new value each time."""
    return View(
        "ui://desk/board",
        HTML,
        name="Ticket board",
        description="The open tickets of a team, by state.",
        csp={"connectDomains": ["https://api.desk.example"]},
        prefers_border=True,
    )


BOARD = board()
BOARD_UI = {
    "csp": {"connectDomains": ["https://api.desk.example"]},
    "prefersBorder": True,
}


@tool(view=BOARD, visibility=("model", "app"))
def show_board(team: str) -> str:
    """Show a team's open tickets on a board.

    Args:
        team: The team whose tickets to show.
    """
    return f"3 open tickets for {team}"


@tool(view=BOARD, visibility=("app",))
def move_ticket(ticket: str, state: str) -> str:
    """Move a ticket to another state (the board's buttons call it).

    Args:
        ticket: The ticket to move.
        state: Where it goes.
    """
    return f"{ticket} is {state}"


@tool
def count_tickets() -> int:
    """Count the open tickets."""
    return 3


def desk(**options: Any) -> Server:
    return Server(
        "desk", "1.0", tools=[show_board, move_ticket, count_tickets], **options
    )


# -- listing and reading -------------------------------------------------------------
async def test_tools_list_their_view_and_who_may_call_them() -> None:
    async with McpTestClient(desk()) as client:
        tools = {t["name"]: t for t in wire(await client.list_tools())}

    check_listed_tools(tools.values())
    assert {
        "ui": {"resourceUri": "ui://desk/board", "visibility": ["model", "app"]}
    } == (tools["show_board"]["_meta"])
    assert {"ui": {"resourceUri": "ui://desk/board", "visibility": ["app"]}} == (
        tools["move_ticket"]["_meta"]
    )
    assert "_meta" not in tools["count_tickets"]


async def test_the_view_of_the_tools_is_listed_once_as_mcp_app_html() -> None:
    async with McpTestClient(desk()) as client:
        resources = wire(await client.list_resources())

    for entry in resources:
        check_resource(entry)
    assert [
        {
            "uri": "ui://desk/board",
            "name": "Ticket board",
            "description": "The open tickets of a team, by state.",
            "mimeType": MIME,
            "_meta": {"ui": BOARD_UI},
        }
    ] == resources


async def test_the_view_reads_back_as_its_html_with_its_settings() -> None:
    async with McpTestClient(desk()) as client:
        result = wire(await client.read_resource("ui://desk/board"))

    contents = check_view_read(result, "ui://desk/board")
    assert HTML == contents["text"]
    assert {"ui": BOARD_UI} == contents["_meta"]


async def test_a_view_without_settings_reads_back_without_meta() -> None:
    plain = View("ui://desk/plain", HTML)
    server = Server("desk", "1.0", tools=[tool(view=plain)(count_tickets.fn)])

    async with McpTestClient(server) as client:
        [listed] = wire(await client.list_resources())
        result = wire(await client.read_resource("ui://desk/plain"))

    assert {"uri": "ui://desk/plain", "name": "ui://desk/plain", "mimeType": MIME} == (
        listed
    )
    assert "_meta" not in check_view_read(result, "ui://desk/plain")


async def test_a_view_also_given_in_resources_is_the_same_resource() -> None:
    again = board()
    server = desk(resources=[again, BOARD])

    async with McpTestClient(server) as client:
        resources = wire(await client.list_resources())

    assert ["ui://desk/board"] == [r["uri"] for r in resources]


async def test_a_view_given_only_in_resources_is_served(tmp_path: Path) -> None:
    page = tmp_path / "help.html"
    page.write_text("<p>Help</p>", encoding="utf-8")

    @resource(uri="desk://readme")
    def readme() -> str:
        """How the desk works."""
        return "read me"

    server = Server("desk", "1.0", resources=[readme, View("ui://desk/help", page)])

    async with McpTestClient(server) as client:
        listed = [r["uri"] for r in wire(await client.list_resources())]
        result = wire(await client.read_resource("ui://desk/help"))
        discovered = wire(await client.discover())

    assert ["desk://readme", "ui://desk/help"] == listed
    assert "<p>Help</p>" == check_view_read(result, "ui://desk/help")["text"]
    assert {} == discovered["capabilities"]["extensions"][UI]


async def test_a_hand_written_tool_links_its_view_like_a_decorated_one() -> None:
    class Refresh:
        def spec(self) -> ToolSpec:
            return ToolSpec(
                "refresh",
                "Refresh the board.",
                {"type": "object"},
                view=BOARD,
                visibility=["app"],
            )

        async def dispatch(self, call: object) -> ToolReply:
            return ToolReply.ok("refreshed")

    server = Server("desk", "1.0", tools=[Refresh()])

    async with McpTestClient(server) as client:
        [listed] = wire(await client.list_tools())
        result = wire(await client.read_resource("ui://desk/board"))

    assert "ui://desk/board" == listed["_meta"]["ui"]["resourceUri"]
    assert HTML == check_view_read(result, "ui://desk/board")["text"]


async def test_reading_a_view_leaves_a_receipt() -> None:
    receipts: list[Receipt] = []

    async with McpTestClient(desk(receipts=receipts.append)) as client:
        await client.read_resource("ui://desk/board")

    [receipt] = receipts
    assert ("resource", "ui://desk/board", "ok") == (
        receipt.kind,
        receipt.name,
        receipt.outcome,
    )
    assert "view ui://desk/board" == receipt.declaration


# -- the extension is advertised only with a view -------------------------------------------
async def test_the_extension_is_advertised_when_a_view_exists() -> None:
    async with McpTestClient(desk()) as client:
        discovered = wire(await client.discover())

    assert {UI: {}} == discovered["capabilities"]["extensions"]
    assert "resources" in discovered["capabilities"]


async def test_a_server_without_a_view_does_not_advertise_it() -> None:
    server = Server("desk", "1.0", tools=[count_tickets])

    async with McpTestClient(server) as client:
        discovered = wire(await client.discover())

    assert "extensions" not in discovered["capabilities"]


@resource(uri="desk://readme")
def readme() -> str:
    """How the desk works."""
    return "read me"


@resource(uri="desk://tickets/{ticket}")
def ticket_page(ticket: str) -> str:
    """One ticket.

    Args:
        ticket: The ticket's id.
    """
    return ticket


def resources_without_views(legacy: bool = False) -> Server:
    """Resources of both kinds (a plain one, a template) and no view."""
    return Server(
        "desk",
        "1.0",
        tools=[count_tickets],
        resources=[readme, ticket_page],
        legacy=legacy,
    )


async def test_resources_without_a_view_do_not_advertise_it() -> None:
    """Resources alone, plain or templated, are no view: no extension."""
    async with McpTestClient(resources_without_views()) as client:
        discovered = wire(await client.discover())
        templates = wire(await client.list_resource_templates())

    assert ["desk://tickets/{ticket}"] == [t["uriTemplate"] for t in templates]
    assert "resources" in discovered["capabilities"]
    assert "extensions" not in discovered["capabilities"]


async def test_resources_without_a_view_do_not_advertise_it_to_an_old_host() -> None:
    async with LegacyPeer(resources_without_views(legacy=True)) as peer:
        initialized = await peer.initialize()

    assert "resources" in initialized["capabilities"]
    assert "extensions" not in initialized["capabilities"]


async def test_it_is_advertised_beside_the_other_extensions() -> None:
    @tool(task="optional", view=BOARD)
    def export(team: str) -> str:
        """Export a team's board.

        Args:
            team: The team.
        """
        return team

    server = Server("desk", "1.0", tools=[export])

    async with McpTestClient(server) as client:
        discovered = wire(await client.discover())

    assert {UI: {}, "io.modelcontextprotocol/tasks": {}} == (
        discovered["capabilities"]["extensions"]
    )


async def test_a_catalog_replaced_without_views_stops_advertising_them() -> None:
    server = desk(dynamic=True)
    server.replace(tools=[count_tickets])

    async with McpTestClient(server) as client:
        discovered = wire(await client.discover())
        resources = wire(await client.list_resources())

    assert "extensions" not in discovered["capabilities"]
    assert [] == resources


# -- clients with and without the extension ----------------------------------------------
@tool(view=BOARD)
def who_renders(team: str) -> str:
    """Say whether the caller renders the board.

    Args:
        team: The team.
    """
    shown = "on the board" if ToolContext.current().renders_views else "as text"
    return f"{team}: 3 open tickets, {shown}"


@pytest.mark.parametrize(
    ("capabilities", "renders"),
    [
        (APPS_CLIENT, True),
        ({"extensions": {UI: {"mimeTypes": ["text/html; profile=mcp-app"]}}}, True),
        ({}, False),
        ({"extensions": {UI: {}}}, False),
        ({"extensions": {UI: {"mimeTypes": ["text/html"]}}}, False),
        ({"extensions": {UI: {"mimeTypes": "text/html;profile=mcp-app"}}}, False),
        ({"extensions": {"io.modelcontextprotocol/tasks": {}}}, False),
    ],
)
async def test_the_context_says_whether_the_caller_renders_views(
    capabilities: dict[str, Any], renders: bool
) -> None:
    server = Server("desk", "1.0", tools=[who_renders])

    async with McpTestClient(server, client_capabilities=capabilities) as client:
        result = await client.call_tool("who_renders", {"team": "web"})

    shown = "on the board" if renders else "as text"
    assert f"web: 3 open tickets, {shown}" == result.text


async def test_every_client_gets_the_same_tool_and_its_text() -> None:
    async with McpTestClient(desk(), client_capabilities=APPS_CLIENT) as apps:
        apps_tools = await apps.list_tools()
        apps_result = await apps.call_tool("show_board", {"team": "web"})
    async with McpTestClient(desk()) as plain:
        plain_tools = await plain.list_tools()
        plain_result = await plain.call_tool("show_board", {"team": "web"})

    assert apps_tools == plain_tools
    assert apps_result.raw == plain_result.raw
    assert "3 open tickets for web" == plain_result.text


def test_outside_a_call_nothing_renders_views() -> None:
    assert not ToolContext.current().renders_views


# -- refusals at Server(...) -----------------------------------------------------------
@pytest.mark.parametrize(
    ("uri", "csp"),
    [
        ("https://desk.example/board", None),
        ("ui://desk/board", {"connectDomains": ["https://api.example.com/v1"]}),
    ],
)
def test_a_view_a_host_could_not_sandbox_never_reaches_the_server(
    uri: str, csp: dict[str, list[str]] | None
) -> None:
    with pytest.raises(InvalidDeclaration, match="View"):
        Server("desk", "1.0", resources=[View(uri, HTML, csp=csp)])


def test_two_views_with_one_uri_and_different_html_are_refused() -> None:
    other = View("ui://desk/board", "<p>another board</p>")

    with pytest.raises(InvalidDeclaration) as caught:
        Server("desk", "1.0", tools=[show_board, tool(view=other)(count_tickets.fn)])

    message = str(caught.value)
    assert "tool 'show_board' and tool 'count_tickets'" in message
    assert "two views with the URI ui://desk/board and their HTML differs" in message
    assert "give one of them another URI" in message


def test_two_views_with_one_uri_and_different_settings_are_refused() -> None:
    bordered = View("ui://desk/board", HTML, prefers_border=False)

    with pytest.raises(InvalidDeclaration, match="their settings differ"):
        desk(resources=[bordered])


def test_the_same_html_from_a_file_and_a_string_is_one_view(tmp_path: Path) -> None:
    page = tmp_path / "board.html"
    page.write_text(HTML, encoding="utf-8")
    from_file = View("ui://desk/plain", page)
    from_text = View("ui://desk/plain", HTML)

    server = Server(
        "desk",
        "1.0",
        tools=[tool(view=from_file)(count_tickets.fn)],
        resources=[from_text],
    )

    assert 1 == sum(
        1 for spec in server.catalog() if getattr(spec, "uri", "") == "ui://desk/plain"
    )


@pytest.mark.parametrize(
    ("write", "says"),
    [
        (None, "No such file"),
        ("directory", "Is a directory"),
        (b"\xff\xfe<p>", "codec can't decode"),
        (b"  \n", "is empty"),
    ],
)
def test_an_unreadable_html_file_is_refused(
    tmp_path: Path, write: bytes | str | None, says: str
) -> None:
    page = tmp_path / "board.html"
    if write == "directory":
        page.mkdir()
    elif isinstance(write, bytes):
        page.write_bytes(write)
    view = View("ui://desk/board", page)

    with pytest.raises(InvalidDeclaration) as caught:
        Server("desk", "1.0", tools=[tool(view=view)(count_tickets.fn)])

    message = str(caught.value)
    assert "tool 'count_tickets': View('ui://desk/board')" in message
    assert str(page) in message
    assert says in message


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    missing = View("ui://desk/missing", tmp_path / "missing.html")
    other = View("ui://desk/board", "<p>another</p>")

    with pytest.raises(InvalidDeclaration) as caught:
        desk(resources=[missing, other])

    assert 2 == len(caught.value.problems)


def test_a_view_uri_served_by_another_resource_is_a_duplicate() -> None:
    @resource(uri="ui://desk/board")
    def board() -> str:
        """Not a view."""
        return "text"

    with pytest.raises(DuplicateName, match="ui://desk/board"):
        desk(resources=[board])


def test_a_tool_only_a_view_may_call_needs_a_view() -> None:
    @tool(visibility=("app",))
    def refresh() -> str:
        """Refresh the board."""
        return "ok"

    with pytest.raises(InvalidDeclaration, match="tool 'refresh': visibility=") as c:
        Server("desk", "1.0", tools=[refresh])

    assert "the server serves no view" in str(c.value)
    assert Server("desk", "1.0", tools=[refresh, show_board]).catalog()


def test_a_views_file_is_read_when_the_server_is_built(tmp_path: Path) -> None:
    page = tmp_path / "board.html"
    page.write_text("<p>first</p>", encoding="utf-8")
    server = Server(
        "desk", "1.0", resources=[View("ui://desk/board", page)], dynamic=True
    )
    page.write_text("<p>second</p>", encoding="utf-8")

    async def read() -> str:
        async with McpTestClient(server) as client:
            result = wire(await client.read_resource("ui://desk/board"))
        return str(result["contents"][0]["text"])

    assert "<p>first</p>" == trio.run(read)
    server.replace(resources=[View("ui://desk/board", page)])
    assert "<p>second</p>" == trio.run(read)


# -- Hypothesis: whatever a view holds, it reads back as written ---------------------------
origins = st.from_regex(
    r"https://[a-z]{1,8}\.example(:[1-9][0-9]{0,3})?", fullmatch=True
)
csp = st.dictionaries(
    st.sampled_from(
        ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"]
    ),
    st.lists(origins, max_size=3),
)
permissions: st.SearchStrategy[dict[str, dict[str, Any]]] = st.dictionaries(
    st.sampled_from(["camera", "microphone", "geolocation", "clipboardWrite"]),
    st.just({}),
)
views = st.builds(
    View,
    st.from_regex(r"ui://[a-z0-9]{1,8}(/[a-zA-Z0-9._~-]{1,8}){0,3}", fullmatch=True),
    st.text(min_size=1).filter(str.strip),
    name=st.none() | st.text(min_size=1, max_size=20),
    description=st.none() | st.text(min_size=1, max_size=40),
    csp=st.none() | csp,
    permissions=st.none() | permissions,
    domain=st.none() | st.from_regex(r"[a-z0-9]{1,12}\.example", fullmatch=True),
    prefers_border=st.none() | st.booleans(),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    view=views,
    visibility=st.none()
    | st.sampled_from([("model",), ("app",), ("model", "app"), ("app", "model")]),
)
async def test_whatever_a_view_holds_it_reads_back_as_written(
    view: View, visibility: Any
) -> None:
    linked = tool(view=view, visibility=visibility)(count_tickets.fn)
    server = Server("desk", "1.0", tools=[linked])

    async with McpTestClient(server, client_capabilities=APPS_CLIENT) as client:
        [listed_tool] = wire(await client.list_tools())
        [listed] = wire(await client.list_resources())
        result = wire(await client.read_resource(view.uri))

    check_listed_tools([listed_tool])
    check_resource(listed)
    contents = check_view_read(result, view.uri)
    ui = listed_tool["_meta"]["ui"]
    assert view.uri == ui["resourceUri"]
    assert (None if visibility is None else list(visibility)) == ui.get("visibility")
    assert view.html == contents["text"]
    expected: dict[str, Any] = {}
    if view.csp is not None:
        expected["csp"] = {k: list(v) for k, v in view.csp.items()}
    if view.permissions is not None:
        expected["permissions"] = {key: {} for key in view.permissions}
    if view.domain is not None:
        expected["domain"] = view.domain
    if view.prefers_border is not None:
        expected["prefersBorder"] = view.prefers_border
    assert expected == contents.get("_meta", {}).get("ui", {})
    assert expected == listed.get("_meta", {}).get("ui", {})
    assert (view.name or view.uri) == listed["name"]
    assert view.description == listed.get("description")


async def test_each_distinct_view_is_served_once_however_often_it_is_given() -> None:
    """A view given twice is one resource; the views after it are still served, each
    under its own URI (two URIs are never compared as one)."""
    other = View("ui://desk/other", "<p>the other board</p>")

    async with McpTestClient(desk(resources=[BOARD, BOARD, other])) as client:
        resources = wire(await client.list_resources())

    assert ["ui://desk/board", "ui://desk/other"] == sorted(r["uri"] for r in resources)


def test_every_unreadable_view_is_named_with_where_it_was_given(tmp_path: Path) -> None:
    """One view that cannot be read does not hide the next one's problem."""
    first = View("ui://desk/first", tmp_path / "first.html")
    second = View("ui://desk/second", tmp_path / "second.html")

    with pytest.raises(InvalidDeclaration) as caught:
        desk(resources=[first, second])

    problems = caught.value.problems
    assert 2 == len(problems)
    assert all(p.startswith("resources=: ") for p in problems), problems
    assert "first.html" in problems[0]
    assert "second.html" in problems[1]


def test_a_tool_the_model_may_call_needs_no_view() -> None:
    @tool(visibility=("model",))
    def refresh() -> str:
        """Refresh the board."""
        return "ok"

    assert Server("desk", "1.0", tools=[refresh]).catalog()


def test_the_problems_of_views_say_what_to_do_word_for_word() -> None:
    @tool(visibility=("app",))
    def refresh() -> str:
        """Refresh the board."""
        return "ok"

    with pytest.raises(InvalidDeclaration) as unreachable:
        Server("desk", "1.0", tools=[refresh])
    other = View("ui://desk/board", "<p>another board</p>")
    with pytest.raises(InvalidDeclaration) as conflict:
        desk(resources=[other])

    assert [
        "tool 'refresh': visibility=('app',) leaves it to views (hidden from the "
        "model), but the server serves no view; link a View to a tool, or add 'model'"
    ] == list(unreachable.value.problems)
    assert [
        "resources= and tool 'show_board' link two views with the URI ui://desk/board "
        "and their HTML differs; a host fetches a view by its URI alone, so give one "
        "of them another URI, or link the same View"
    ] == list(conflict.value.problems)
