"""The ``WWW-Authenticate`` value of a bearer refusal (RFC 6750 §3, RFC 9728 §5.1),
byte for byte: what the HTTP app sends with every 401 and 403.

The OAuth tests (tests/auth) read it back over real HTTP from a real authorization
server; here each part is pinned whole, including the quoting of characters no
description, scope or URL we send holds today.
"""

from __future__ import annotations

import pytest

from trio_mcp._http._oauth import Challenge

METADATA = "https://mcp.example/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize(
    ("challenge", "header"),
    [
        (
            Challenge(401, None, "authentication required: send a bearer token"),
            f'Bearer resource_metadata="{METADATA}"',
        ),
        (
            Challenge(401, "invalid_token", "the token has expired"),
            'Bearer error="invalid_token", error_description="the token has'
            f' expired", resource_metadata="{METADATA}"',
        ),
        (
            Challenge(
                403,
                "insufficient_scope",
                "the token's scopes do not grant what this call needs",
                ("notes:read", "notes:write"),
            ),
            'Bearer error="insufficient_scope", error_description="the token\'s'
            ' scopes do not grant what this call needs", scope="notes:read'
            f' notes:write", resource_metadata="{METADATA}"',
        ),
    ],
)
def test_each_part_of_the_challenge_in_order(challenge: Challenge, header: str) -> None:
    assert header.encode("latin-1") == challenge.header(METADATA)


def test_quotes_and_backslashes_are_escaped_in_every_quoted_string() -> None:
    challenge = Challenge(403, "insufficient_scope", 'say "no" \\ twice', ('a"b',))

    assert (
        b'Bearer error="insufficient_scope", error_description="say \\"no\\" \\\\'
        b' twice", scope="a\\"b", resource_metadata="https://x/\\"m\\\\"'
    ) == challenge.header('https://x/"m\\')


def test_what_latin_1_cannot_hold_becomes_a_question_mark() -> None:
    challenge = Challenge(401, "invalid_token", "caf\u00e9 \u2603")

    assert (
        b'Bearer error="invalid_token", error_description="caf\xe9 ?",'
        b' resource_metadata="https://x/"'
    ) == challenge.header("https://x/")
