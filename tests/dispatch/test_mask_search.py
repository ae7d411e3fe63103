"""The reply's search before the structural mask, and the mask's schema plan.

The call runner encodes a result once; when no secret's JSON-escaped form is in
that text, no string or key of the result holds a secret, so the structural mask
would change nothing and is skipped (``may_hold``). These properties hold that
promise for arbitrary JSON (escapes, control characters, DEL, non-ASCII, astral
characters, lone surrogates and so the ASCII fallback) and arbitrary secrets, drawn
also from the value's own strings and keys and from the revision's vocabulary."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.vocabulary import VOCABULARY

from trio_mcp import Secret, Server, tool
from trio_mcp._dispatch._mask import (
    mask_structured,
    may_hold,
    text_mask,
)
from trio_mcp._json import JsonObject, JsonValue, encode_message
from trio_mcp.testing import McpTestClient

#: Characters whose JSON form differs between or within the two encodings.
_AWKWARD = '"\\\x00\x08\x1f\x7f\n\r\t\u2028é€😀\ud800\udbff\udc00\udfff*/'
CHARS = st.one_of(st.sampled_from(_AWKWARD), st.characters(exclude_categories=()))
TEXT = st.text(CHARS, max_size=8)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(TEXT | st.sampled_from(VOCABULARY), inner, max_size=4)
    ),
    max_leaves=24,
)


def strings(value: Any) -> list[str]:
    """Every string and key inside ``value``."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    return []


def every_string_masked(value: Any, mask: Any) -> Any:
    """``value`` with every string and key masked: more than any structural mask."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, list):
        return [every_string_masked(item, mask) for item in value]
    if isinstance(value, dict):
        return {mask(k): every_string_masked(v, mask) for k, v in value.items()}
    return value


@st.composite
def value_and_secrets(draw: st.DrawFn) -> tuple[JsonValue, tuple[str, ...]]:
    """A JSON value and secrets: its own strings (whole or a slice, maybe with a
    character more), the revision's vocabulary, arbitrary text."""
    value = draw(JSON)
    own = strings(value)
    secrets = []
    for _ in range(draw(st.integers(1, 3))):
        source = draw(st.sampled_from(["own", "vocabulary", "text"]))
        if source == "own" and own:
            text = draw(st.sampled_from(own))
            i = draw(st.integers(0, len(text)))
            j = draw(st.integers(i, len(text)))
            secret = text[i:j] + draw(st.sampled_from(["", "", draw(CHARS)]))
        elif source == "vocabulary":
            secret = draw(st.sampled_from(VOCABULARY))
        else:
            secret = draw(TEXT)
        secrets.append(secret)
    return value, tuple(sorted(secrets, key=len, reverse=True))


@settings(max_examples=400, deadline=None)
@given(value_and_secrets())
def test_the_search_skips_only_a_value_no_mask_would_change(
    drawn: tuple[JsonValue, tuple[str, ...]],
) -> None:
    value, secrets = drawn
    body = encode_message(value)
    if may_hold(body, secrets):
        return
    assert not [s for s in strings(value) for v in secrets if v in s]
    mask = text_mask(secrets)
    assert every_string_masked(value, mask) == value
    vocabulary: JsonValue = {"enum": list(VOCABULARY)}
    assert mask_structured(value, vocabulary, mask) == value


@settings(max_examples=200, deadline=None)
@given(value_and_secrets())
def test_a_secret_in_any_string_or_key_is_always_found(
    drawn: tuple[JsonValue, tuple[str, ...]],
) -> None:
    value, secrets = drawn
    body = encode_message(value)
    for secret in secrets:
        if any(secret in s for s in strings(value)):
            assert may_hold(body, (secret,))


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        ({"k": 'a "quoted" b'}, '"quoted"'),
        ({"k": "line\nbreak"}, "\nbr"),
        ({"k": "del\x7fx"}, "\x7fx"),
        ({"k": "ctl\x01"}, "\x01"),
        ({"k": "back\\slash"}, "\\s"),
        ({"k": "ünïcödé"}, "cödé"),
        ({"k": "astral 😀"}, "😀"),
        # A lone surrogate anywhere makes the whole reply ASCII escapes.
        ({"k": "ünï\ud800", "j": "del\x7f é"}, "\x7f é"),
        ({"k": "x\udfffy"}, "\udfffy"),
        ({"k": "x\udfffy", "j": "del\x7fx"}, "l\x7fx"),
        ({"the secret key": 1}, "secret"),
    ],
)
def test_escaped_secrets_are_found(value: JsonValue, secret: str) -> None:
    assert may_hold(encode_message(value), (secret,))


def test_an_absent_secret_is_not_found_even_beside_its_escapes() -> None:
    body = encode_message({"k": 'say "hi"\n', "\\": "é"})
    assert not may_hold(body, ("hi\n", '"hi" ', "\ud800", "e\u0301"))


# -- through a server --------------------------------------------------------------
@tool
def keyed(token: Secret[str], other: str) -> dict[str, str]:
    """Answer with the secret as a key only (a ``dict[str, T]`` key is data).

    Args:
        token: The secret.
        other: A value to stand beside it.
    """
    return {token.reveal(): other, "plain": other}


@tool
def quiet(token: Secret[str], text: str) -> str:
    """Reveal the secret and answer without it.

    Args:
        token: The secret.
        text: The answer.
    """
    token.reveal()
    return text


SERVER = Server("search", "1.0", tools=[keyed, quiet])


@pytest.mark.parametrize("secret", ['k"ey', "ke\ny", "kéy", "k\x7fy", "k😀y"])
async def test_a_secret_only_in_a_key_is_masked_through_its_escapes(
    secret: str,
) -> None:
    async with McpTestClient(SERVER) as client:
        got = await client.call_tool("keyed", {"token": secret, "other": "v"})
    structured = got.raw["structuredContent"]
    assert isinstance(structured, dict)
    assert secret not in structured
    assert not [s for s in strings(got.raw) if secret in s]


async def test_a_reply_without_the_secret_is_sent_as_it_was() -> None:
    async with McpTestClient(SERVER) as client:
        got = await client.call_tool("quiet", {"token": "s3cr3t", "text": "a\nb é"})
    result: JsonObject = got.raw
    assert result["content"] == [{"type": "text", "text": "a\nb é"}]
