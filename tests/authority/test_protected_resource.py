"""``ProtectedResource`` as a value: RFC 9728 documents, challenges and refusals.

The HTTP tests (tests/transports/test_http_access.py) serve these through a real
Hypercorn; here each rule is pinned exactly, without I/O, so a changed character in
a document or a loosened check fails a test.
"""

from __future__ import annotations

from typing import Any

import pytest

from trio_mcp import ProtectedResource
from trio_mcp._http._oauth import WELL_KNOWN, well_known_url

AUTH = "https://auth.example.com"


def test_the_well_known_suffix_is_rfc_9728s() -> None:
    assert "/.well-known/oauth-protected-resource" == WELL_KNOWN


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        (
            "https://mcp.example.com/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        ),
        (
            "https://mcp.example.com/api/mcp/",
            "https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp",
        ),
        (
            "http://127.0.0.1:8000",
            "http://127.0.0.1:8000/.well-known/oauth-protected-resource",
        ),
        (
            "https://mcp.example.com/",
            "https://mcp.example.com/.well-known/oauth-protected-resource",
        ),
        (
            "https://mcp.example.com/mcp?tenant=a",
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp?tenant=a",
        ),
    ],
)
def test_the_metadata_url_is_derived_as_rfc_9728_section_3_1_says(
    resource: str, expected: str
) -> None:
    assert expected == well_known_url(resource)


def test_a_minimal_document_names_the_resource_servers_and_header_bearer() -> None:
    described = ProtectedResource(authorization_servers=[AUTH])

    assert {
        "resource": "https://mcp.example.com/mcp",
        "authorization_servers": [AUTH],
        "bearer_methods_supported": ["header"],
    } == described.document("https://mcp.example.com/mcp")


def test_a_full_document_carries_every_field_declared() -> None:
    described = ProtectedResource(
        authorization_servers=(AUTH, "http://127.0.0.1:9000"),
        scopes_supported=("mcp:tools", "mcp:read"),
        resource="https://public.example.com/mcp",
        resource_name="Example tools",
        resource_documentation="https://docs.example.com/mcp",
    )

    assert {
        "resource": "https://public.example.com/mcp",
        "authorization_servers": [AUTH, "http://127.0.0.1:9000"],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp:tools", "mcp:read"],
        "resource_name": "Example tools",
        "resource_documentation": "https://docs.example.com/mcp",
    } == described.document("http://127.0.0.1:8000/mcp")


def test_empty_strings_are_declared_values_and_kept() -> None:
    described = ProtectedResource(
        authorization_servers=[AUTH], resource_name="", resource_documentation=""
    )

    document = described.document("https://mcp.example.com/mcp")

    assert ("", "") == (document["resource_name"], document["resource_documentation"])


@pytest.mark.parametrize(
    ("scopes", "expected"),
    [
        ((), 'Bearer resource_metadata="https://m.example/.well-known/x"'),
        (
            ("mcp:tools",),
            'Bearer resource_metadata="https://m.example/.well-known/x", '
            'scope="mcp:tools"',
        ),
        (
            ("a", "b c"),
            'Bearer resource_metadata="https://m.example/.well-known/x", scope="a b c"',
        ),
    ],
)
def test_the_challenge_names_the_metadata_and_the_scopes(
    scopes: tuple[str, ...], expected: str
) -> None:
    described = ProtectedResource(authorization_servers=[AUTH], scopes_supported=scopes)

    assert expected.encode() == described.challenge("https://m.example/.well-known/x")


def test_quotes_and_backslashes_are_escaped_in_the_challenge() -> None:
    described = ProtectedResource(
        authorization_servers=[AUTH], scopes_supported=['say"hi', "back\\slash"]
    )

    challenge = described.challenge('https://m.example/a"b\\c')

    assert (
        b'Bearer resource_metadata="https://m.example/a\\"b\\\\c", '
        b'scope="say\\"hi back\\\\slash"'
    ) == challenge


def test_a_character_outside_latin_1_becomes_a_question_mark() -> None:
    described = ProtectedResource(authorization_servers=[AUTH])

    assert b'Bearer resource_metadata="https://m.example/caf\xe9/?"' == (
        described.challenge("https://m.example/café/\u2603")
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"authorization_servers": []},
            "authorization_servers needs at least one issuer URL, such as "
            "'https://auth.example.com'",
        ),
        (
            {"authorization_servers": ["auth.example.com"]},
            "authorization server 'auth.example.com' must be an http(s) issuer URL "
            "without query or fragment (RFC 8414 §2)",
        ),
        (
            {"authorization_servers": [AUTH, "ftp://auth.example.com"]},
            "authorization server 'ftp://auth.example.com' must be an http(s) issuer "
            "URL without query or fragment (RFC 8414 §2)",
        ),
        (
            {"authorization_servers": ["https://"]},
            "authorization server 'https://' must be an http(s) issuer URL without "
            "query or fragment (RFC 8414 §2)",
        ),
        (
            {"authorization_servers": [AUTH + "?x=1"]},
            "authorization server 'https://auth.example.com?x=1' must be an http(s) "
            "issuer URL without query or fragment (RFC 8414 §2)",
        ),
        (
            {"authorization_servers": [AUTH + "#top"]},
            "authorization server 'https://auth.example.com#top' must be an http(s) "
            "issuer URL without query or fragment (RFC 8414 §2)",
        ),
        (
            {"authorization_servers": [AUTH], "resource": "/mcp"},
            "resource '/mcp' must be the absolute http(s) URL clients use for the MCP "
            "endpoint, without fragment (RFC 9728 §2)",
        ),
        (
            {"authorization_servers": [AUTH], "resource": "wss://m.example/mcp"},
            "resource 'wss://m.example/mcp' must be the absolute http(s) URL clients "
            "use for the MCP endpoint, without fragment (RFC 9728 §2)",
        ),
        (
            {"authorization_servers": [AUTH], "resource": "https://m.example/mcp#a"},
            "resource 'https://m.example/mcp#a' must be the absolute http(s) URL "
            "clients use for the MCP endpoint, without fragment (RFC 9728 §2)",
        ),
    ],
)
def test_what_clients_would_refuse_is_refused_with_the_rule(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as refused:  # noqa: PT011 - the message is checked whole
        ProtectedResource(**kwargs)

    assert message == str(refused.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"authorization_servers": ["http://auth.example.com"]},
        {"authorization_servers": [AUTH + "/tenant/a"]},
        {"authorization_servers": [AUTH], "resource": "http://127.0.0.1:8000/mcp"},
        {"authorization_servers": [AUTH], "resource": "https://m.example/mcp?t=1"},
    ],
)
def test_http_and_https_issuers_and_resources_are_accepted(
    kwargs: dict[str, Any],
) -> None:
    described = ProtectedResource(**kwargs)

    assert described.authorization_servers == tuple(kwargs["authorization_servers"])


@pytest.mark.parametrize("field", ["authorization_servers", "scopes_supported"])
def test_a_bare_string_is_refused_rather_than_split_into_letters(field: str) -> None:
    kwargs: dict[str, Any] = {"authorization_servers": [AUTH], field: "mcp:tools"}

    with pytest.raises(TypeError) as refused:
        ProtectedResource(**kwargs)

    assert "expected a list of strings, got the string 'mcp:tools'" == str(
        refused.value
    )
