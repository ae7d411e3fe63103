"""``Upstream(...)``: what it refuses at construction, and what it never shows."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp import Capability, McpError, Upstream


@pytest.mark.parametrize(
    "target",
    [
        "ftp://example.com/mcp",
        "example.com/mcp",
        "http:///no-host",
        "http://127.0.0.1:port/mcp",
        "http://127.0.0.1:99999/mcp",
        [],
        ["python", ""],
        ["python", 3],
        b"http://127.0.0.1/mcp",
        {"url": "http://127.0.0.1/mcp"},
        42,
    ],
)
def test_a_target_that_is_no_url_command_or_server_is_refused(target: object) -> None:
    with pytest.raises(McpError.InvalidArgument, match=r"Upstream\(target\)"):
        Upstream(target)


@pytest.mark.parametrize("name", ["Authorization", "cookie", "Proxy-Authorization"])
def test_forwarding_the_inbound_credentials_is_refused(name: str) -> None:
    with pytest.raises(
        McpError.InvalidArgument, match="credentials never reach"
    ) as raised:
        Upstream("http://127.0.0.1:1/mcp", forward_headers=[name])

    assert "auth=" in str(raised.value)


@pytest.mark.parametrize("name", ["host", "Content-Length", "mcp-session-id"])
def test_forwarding_a_header_each_hop_writes_itself_is_refused(name: str) -> None:
    with pytest.raises(McpError.InvalidArgument, match="writes it for each hop"):
        Upstream("http://127.0.0.1:1/mcp", forward_headers=[name])


def test_forwarded_header_names_are_kept_lower_cased_once() -> None:
    upstream = Upstream(
        "http://127.0.0.1:1/mcp", forward_headers=["X-Request-Id", "x-request-id"]
    )

    assert ("x-request-id",) == upstream.forward_headers


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("prefix", "has space"),
        ("prefix", "x" * 65),
        ("timeout", 0),
        ("timeout", float("nan")),
        ("connect_timeout", -1),
        ("era", "2025"),
        ("tools", "search"),
        ("caps", ["admin"]),
        ("auth", ""),
        ("auth", "two words"),
        ("auth", 42),
        ("headers", [("x", "y")]),
        ("headers", {"bad name": "v"}),
        ("headers", {"x-name\n": "v"}),
        ("forward_headers", ["x-request-id\n"]),
        ("prefix", "gh_\n"),
        ("headers", {"x-key": "line\r\nbreak"}),
    ],
)
def test_each_keyword_refuses_what_cannot_work(keyword: str, value: object) -> None:
    with pytest.raises(McpError.InvalidArgument, match="Upstream"):
        Upstream("http://127.0.0.1:1/mcp", **{keyword: value})


def test_a_header_value_is_never_quoted_in_its_error() -> None:
    with pytest.raises(McpError.InvalidArgument) as raised:
        Upstream("http://127.0.0.1:1/mcp", headers={"x-key": "s3cret\n"})

    assert "s3cret" not in str(raised.value)


def test_the_repr_and_label_show_no_credential() -> None:
    upstream = Upstream(
        "https://alice:pa55word@api.example:8443/mcp?api_key=k3y#frag",
        headers={"X-Api-Key": "h3ader"},
        auth="t0ken",
        caps=[Capability("gh.read", description="Read GitHub")],
    )
    command = Upstream(["python", "server.py", "--token", "arg5ecret"])

    shown = repr(upstream) + upstream.label + repr(command) + command.label
    assert "https://api.example:8443/mcp" == upstream.label
    assert "python" == command.label
    for secret in ("alice", "pa55word", "k3y", "frag", "h3ader", "t0ken", "arg5ecret"):
        assert secret not in shown


@given(st.text(max_size=40))
def test_a_prefix_either_keeps_names_valid_or_is_refused(prefix: str) -> None:
    try:
        upstream = Upstream("http://127.0.0.1:1/mcp", prefix=prefix)
    except McpError.InvalidArgument:
        return
    name = upstream.served_name("search")
    assert name.endswith("search")
    assert all(c.isascii() and (c.isalnum() or c in "_.-") for c in name)


def test_the_allow_list_names_the_upstreams_tools() -> None:
    upstream = Upstream("http://127.0.0.1:1/mcp", tools=["search"])

    assert upstream.serves_tool("search")
    assert not upstream.serves_tool("delete")
    assert Upstream("http://127.0.0.1:1/mcp").serves_tool("delete")
