"""List pages encoded once and spliced into each reply: the bytes are the reply's.

A list reply encodes its envelope with a stand-in where the items go, then
``Pages.splice`` puts the page's items (encoded the first time the page was asked
for) in its place. Whatever the items and the envelope hold, the decoded reply must
be the one a whole encode would give, page after page, asked once or twice.
"""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trio_mcp._dispatch._pages import InvalidCursor, Pages
from trio_mcp._json import JsonObject, JsonValue, encode_message, loads

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values: st.SearchStrategy[JsonValue] = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)
    ),
    max_leaves=8,
)
items_strategy = st.lists(st.dictionaries(st.text(), values, max_size=3), max_size=12)


def reply(
    pages: Pages, params: JsonObject, envelope: str
) -> tuple[JsonObject, JsonObject]:
    """The decoded reply for ``params``, and the result before the splice."""
    result, offset = pages.result(params)
    result["note"] = envelope  # any text the envelope carries (server info, ...)
    body = pages.splice(
        encode_message({"jsonrpc": "2.0", "id": 1, "result": result}), offset
    )
    message = loads(body)
    assert isinstance(message, dict)
    decoded = message["result"]
    assert isinstance(decoded, dict)
    return decoded, result


@settings(max_examples=200, deadline=None)
@given(items=items_strategy, size=st.integers(1, 5), envelope=st.text())
def test_walking_the_pages_twice_gives_every_item_once_in_order(
    items: list[JsonObject], size: int, envelope: str
) -> None:
    pages = Pages("tools", "tools", items, size)
    for _ in range(2):  # the second walk reads the pages kept by the first
        walked: list[JsonValue] = []
        params: JsonObject = {}
        while True:
            decoded, result = reply(pages, params, envelope)
            page = decoded["tools"]
            assert isinstance(page, list)
            assert envelope == decoded["note"]
            assert len(page) <= size
            assert page or not items  # no empty page after the last one
            walked.extend(page)
            if "nextCursor" not in result:
                break
            params = {"cursor": result["nextCursor"]}
        assert items == walked


def test_a_cursor_of_another_list_is_refused_and_the_last_page_has_none() -> None:
    tools = Pages("tools", "tools", [{"name": str(i)} for i in range(5)], 2)
    prompts = Pages("prompts", "prompts", [{"name": str(i)} for i in range(5)], 2)
    second = tools.result({})[0]["nextCursor"]
    third = tools.result({"cursor": second})[0]["nextCursor"]
    last, offset = tools.result({"cursor": third})

    with pytest.raises(InvalidCursor):
        prompts.result({"cursor": second})
    assert "nextCursor" not in last
    assert 4 == offset


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("cursor", "message"),
    [
        (7, "the cursor must be a string"),
        ("!!!", "the cursor is not one this server issued"),
        (_cursor("tools:0"), "the cursor is not one this server issued"),
        (_cursor("tools:6"), "the cursor is not one this server issued"),
        (_cursor("tools:-2"), "the cursor is not one this server issued"),
        (_cursor("tools:x"), "the cursor is not one this server issued"),
        (_cursor("prompts:2"), "the cursor is not one this server issued"),
    ],
)
def test_a_cursor_the_server_did_not_issue_is_refused_saying_so(
    cursor: JsonValue, message: str
) -> None:
    pages = Pages("tools", "tools", [{"name": str(i)} for i in range(5)], 2)

    with pytest.raises(InvalidCursor) as caught:
        pages.result({"cursor": cursor})
    assert message == str(caught.value)


def test_an_empty_cursor_is_the_first_page() -> None:
    pages = Pages("tools", "tools", [{"name": str(i)} for i in range(5)], 2)

    assert pages.result({}) == pages.result({"cursor": ""})
    assert 0 == pages.result({"cursor": ""})[1]
