"""``View`` and ``@tool(view=..., visibility=...)``: checked when made, spelled as SEP-1865.

A view that a host could not sandbox as its author meant (a URI outside ``ui://``, a
CSP entry that is not an origin, a permission the spec does not define) never gets
as far as a ``Server``: it is refused where it is written, saying what to write.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_mcp import (
    InvalidArgument,
    InvalidDeclaration,
    McpError,
    ToolSpec,
    View,
    tool,
)

HTML = "<!doctype html><title>board</title><p>tickets</p>"


def make(**settings: Any) -> View:
    return View("ui://desk/board", HTML, **settings)


# -- the value ------------------------------------------------------------------------
def test_the_settings_are_sent_in_the_specs_spelling() -> None:
    view = make(
        csp={
            "connectDomains": ["https://api.example.com", "wss://live.example.com"],
            "resourceDomains": ["https://*.cdn.example.com"],
            "frameDomains": [],
            "baseUriDomains": ["https://example.com:8443"],
        },
        permissions={"camera": {}, "clipboardWrite": {}},
        domain="a904794854a047f6.claudemcpcontent.com",
        prefers_border=False,
    )

    assert {
        "csp": {
            "connectDomains": ["https://api.example.com", "wss://live.example.com"],
            "resourceDomains": ["https://*.cdn.example.com"],
            "frameDomains": [],
            "baseUriDomains": ["https://example.com:8443"],
        },
        "permissions": {"camera": {}, "clipboardWrite": {}},
        "domain": "a904794854a047f6.claudemcpcontent.com",
        "prefersBorder": False,
    } == view.ui()


def test_a_view_without_settings_sends_none() -> None:
    assert {} == make().ui()


def test_a_view_is_a_frozen_value_equal_to_the_same_view() -> None:
    csp = {"connectDomains": ["https://api.example.com"]}
    view = make(csp=csp)
    csp["connectDomains"].append("https://evil.example")

    assert make(csp={"connectDomains": ["https://api.example.com"]}) == view
    assert hash(make(csp={"connectDomains": ["https://api.example.com"]})) == hash(view)
    assert make() != view
    with pytest.raises(AttributeError):
        view.uri = "ui://other"  # type: ignore[misc]


def test_a_path_is_kept_to_be_read_by_the_server(tmp_path: Path) -> None:
    view = View("ui://desk/board", tmp_path / "not-yet-written.html")

    assert tmp_path / "not-yet-written.html" == view.html


# -- refusals, each saying what to write -------------------------------------------------
@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("https://desk.example/board", "write it as 'ui://desk.example/board'"),
        ("board", "write it as 'ui://board'"),
        ("UI://desk/board", "starts with 'ui://'"),
        ("ui://", "percent-encode"),
        ("ui://desk/my board", "percent-encode"),
        ("ui://desk/{ticket}", "template braces"),
        ("ui://desk/board#top", "fragment"),
        ("ui://desk/100%", "bare '%'"),
    ],
)
def test_a_uri_outside_ui_is_refused(uri: str, says: str) -> None:
    with pytest.raises(InvalidDeclaration, match="View") as caught:
        View(uri, HTML)

    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        (
            "https://api.example.com/v1",
            "has a path; drop it: 'https://api.example.com'",
        ),
        ("https://api.example.com/", "has a path; drop it: 'https://api.example.com'"),
        ("https://api.example.com?x=1", "has a path; drop it"),
        ("api.example.com", "has no scheme; write 'https://api.example.com'"),
        ("ftp://files.example.com", "has the scheme 'ftp'"),
        ("javascript://x", "has the scheme 'javascript'"),
        ("*", "is not scheme://host[:port]"),
        ("'self'", "is not scheme://host[:port]"),
        ("https://a.example.com; script-src *", "which is no DNS name"),
        ("https://a.example.com https://b.example.com", "which is no DNS name"),
        ("https://user@api.example.com", "which is no DNS name"),
        ("https://api.example.com:99999", "a port is 0-65535"),
        ("https://api.example.com:80/x", "has a path"),
        ("https://[::1", "is not scheme://host[:port]"),
        ("https://[nothing]", "which is no DNS name"),
        ("https://[fe80::1%eth0]", "which is no DNS name"),
        pytest.param(
            "https://a.example:" + "9" * 5000, "a port is 0-65535", id="huge-port"
        ),
        ("https://*", "which is no DNS name"),
        ("https://a.*.example.com", "which is no DNS name"),
    ],
)
def test_a_csp_entry_that_is_not_an_origin_is_refused(entry: str, says: str) -> None:
    with pytest.raises(InvalidDeclaration) as caught:
        make(csp={"connectDomains": [entry]})

    message = str(caught.value)
    assert "View('ui://desk/board'): csp['connectDomains']" in message
    assert says in message


def test_an_unknown_csp_key_names_the_specs_keys() -> None:
    with pytest.raises(InvalidDeclaration, match="unknown key 'connect_domains'") as c:
        make(csp={"connect_domains": ["https://api.example.com"]})

    assert "connectDomains, resourceDomains, frameDomains, baseUriDomains" in str(
        c.value
    )


@pytest.mark.parametrize("value", ["https://api.example.com", b"https://x", 3])
def test_a_csp_key_takes_a_list_not_one_string(value: object) -> None:
    with pytest.raises(InvalidArgument, match="takes a list of origins"):
        make(csp={"connectDomains": value})


def test_csp_takes_a_mapping() -> None:
    with pytest.raises(InvalidArgument, match="csp= takes a mapping"):
        make(csp=["https://api.example.com"])


@pytest.mark.parametrize(
    ("permissions", "error", "says"),
    [
        (
            {"clipboard-write": {}},
            InvalidDeclaration,
            "unknown permission 'clipboard-write'",
        ),
        ({"camera": True}, InvalidDeclaration, "takes an empty mapping {}"),
        ({"camera": {"always": True}}, InvalidDeclaration, "takes an empty mapping {}"),
        (["camera"], InvalidArgument, "permissions= takes a mapping"),
    ],
)
def test_a_permission_outside_the_spec_is_refused(
    permissions: object, error: type[McpError], says: str
) -> None:
    with pytest.raises(error) as caught:
        make(permissions=permissions)

    assert says in str(caught.value)


@pytest.mark.parametrize(
    ("settings", "error", "says"),
    [
        ({"html": ""}, InvalidDeclaration, "the HTML is empty"),
        ({"html": "  \n"}, InvalidDeclaration, "the HTML is empty"),
        (
            {"html": b"<p>"},
            InvalidArgument,
            "takes the HTML as a str or a pathlib.Path",
        ),
        ({"name": ""}, InvalidDeclaration, "name='' says nothing"),
        ({"description": 3}, InvalidArgument, "description= takes a string"),
        ({"domain": "my host"}, InvalidDeclaration, "without spaces"),
        ({"domain": ""}, InvalidDeclaration, "the dedicated domain"),
        ({"domain": 1}, InvalidArgument, "domain= takes a string"),
        ({"prefers_border": 1}, InvalidArgument, "True, False or None"),
        ({"uri": 7}, InvalidArgument, "takes a string such as 'ui://"),
    ],
)
def test_other_settings_are_checked(
    settings: dict[str, Any], error: type[McpError], says: str
) -> None:
    given = {"uri": "ui://desk/board", "html": HTML, **settings}

    with pytest.raises(error) as caught:
        View(**given)

    assert says in str(caught.value)


# -- Hypothesis: whatever the text, what is accepted is an origin --------------------------
label = st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
dns = st.lists(label, min_size=1, max_size=4).map(".".join)
hosts = st.one_of(
    st.tuples(st.booleans(), dns).map(lambda w: ("*." if w[0] else "") + w[1]),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
)
origins = st.builds(
    lambda scheme, host, port: f"{scheme}://{host}{'' if port is None else f':{port}'}",
    st.sampled_from(["http", "https", "ws", "wss", "HTTPS"]),
    hosts,
    st.none() | st.integers(0, 65535),
)


@given(st.lists(origins, max_size=4))
def test_every_origin_is_accepted_and_sent_as_written(entries: list[str]) -> None:
    view = make(csp={"resourceDomains": entries})

    assert {"csp": {"resourceDomains": entries}} == view.ui()


@given(origins, st.sampled_from(["/", "/v1", "?q=1", "#x", " ", ";", ",", "/*", "'"]))
def test_an_origin_with_anything_after_it_is_refused(origin: str, tail: str) -> None:
    with pytest.raises(InvalidDeclaration, match="is not an origin"):
        make(csp={"frameDomains": [origin + tail]})


@settings(max_examples=300)
@given(
    st.text(st.characters(codec="utf-8"), max_size=40) | origins.map(lambda o: o + "x")
)
def test_whatever_text_is_accepted_is_a_bare_origin(entry: str) -> None:
    try:
        make(csp={"connectDomains": [entry]})
    except InvalidDeclaration:
        return
    split = urlsplit(entry)
    assert split.scheme.lower() in ("http", "https", "ws", "wss")
    assert entry.partition("://")[2] == split.netloc
    assert ("", "", "") == (split.path, split.query, split.fragment)
    assert not set(entry) & set(" \t\r\n;,'\"@\\")
    assert entry.isascii()


ui_chars = string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@/?"
ui_tails = st.lists(
    st.sampled_from(ui_chars) | st.from_regex(r"%[0-9A-Fa-f]{2}", fullmatch=True),
    min_size=1,
    max_size=30,
).map("".join)


@given(ui_tails)
def test_every_ui_uri_is_accepted(tail: str) -> None:
    assert f"ui://{tail}" == View(f"ui://{tail}", HTML).uri


@settings(max_examples=300)
@given(st.text(max_size=30).map(lambda t: "ui://" + t) | st.text(max_size=30))
def test_whatever_uri_is_accepted_starts_with_ui_and_holds_no_fragment_or_braces(
    uri: str,
) -> None:
    try:
        View(uri, HTML)
    except InvalidDeclaration:
        return
    assert uri.startswith("ui://")
    assert len(uri) > len("ui://")
    assert uri.isascii()
    assert uri.isprintable()
    assert not set(uri) & set("#{} ")
    for at in (i for i, c in enumerate(uri) if c == "%"):
        assert set(uri[at + 1 : at + 3]) <= set(string.hexdigits)
        assert 3 == len(uri[at : at + 3])


# -- @tool(view=..., visibility=...) ----------------------------------------------------
def show_board(team: str) -> str:
    """Show a team's open tickets on a board.

    Args:
        team: The team whose tickets to show.
    """
    return f"3 open tickets for {team}"


def test_a_tools_entry_names_its_view_and_who_may_call_it() -> None:
    board = make()
    listed = tool(view=board, visibility=("model", "app"))(show_board).spec().to_wire()
    hidden = tool(view=board, visibility=["app"])(show_board).spec().to_wire()
    plain = tool(show_board).spec().to_wire()

    assert {
        "ui": {"resourceUri": "ui://desk/board", "visibility": ["model", "app"]}
    } == (listed["_meta"])
    assert {"ui": {"resourceUri": "ui://desk/board", "visibility": ["app"]}} == (
        hidden["_meta"]
    )
    assert "_meta" not in plain


def test_a_view_without_visibility_lists_only_its_uri() -> None:
    entry = tool(view=make())(show_board).spec().to_wire()

    assert {"ui": {"resourceUri": "ui://desk/board"}} == entry["_meta"]


def test_the_decorated_tool_is_still_called_directly() -> None:
    assert "3 open tickets for web" == tool(view=make())(show_board)("web")


@pytest.mark.parametrize(
    "visibility", [(), ("agent",), ("app", "app"), "app", ("model", "app", "model")]
)
def test_a_visibility_outside_model_and_app_is_refused(visibility: object) -> None:
    with pytest.raises(InvalidDeclaration, match="visibility=") as caught:
        tool(view=make(), visibility=visibility)(show_board)  # type: ignore[call-overload]

    assert "test_view:show_board" in str(caught.value)


def test_view_takes_a_view() -> None:
    with pytest.raises(InvalidDeclaration, match=r"view= takes a View\('ui://"):
        tool(view="ui://desk/board")(show_board)  # type: ignore[call-overload]


def test_a_hand_written_spec_is_checked_the_same_way() -> None:
    spec = ToolSpec(
        "refresh",
        "Refresh the board.",
        {"type": "object"},
        view=make(),
        visibility=["app"],
    )

    assert ("app",) == spec.visibility
    assert {"ui": {"resourceUri": "ui://desk/board", "visibility": ["app"]}} == (
        spec.to_wire()["_meta"]
    )
    with pytest.raises(InvalidDeclaration, match="ToolSpec: visibility="):
        ToolSpec("refresh", "Refresh.", {"type": "object"}, visibility=["bot"])
    with pytest.raises(TypeError):
        ToolSpec("refresh", "Refresh.", {"type": "object"}, view="ui://desk/board")  # type: ignore[arg-type]
