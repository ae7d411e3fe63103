"""A POST whose body is not declared JSON gets 415; one whose Accept admits neither
answer type gets 406 (issue 30). Both before the body is read or any handler runs.

Real requests (httpx) to ``serve_http`` on 127.0.0.1; every error body is a
schema-valid JSON-RPC error without id. Hypothesis draws Accept values built from
media ranges the endpoint cannot answer with, and checks the verdict against the
rule written out in the test.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from support.conn_peer import call_headers, call_json, make_server

from trio_mcp._http._media import media_refusal
from trio_mcp.testing import check_message

SOON = 10.0


@asynccontextmanager
async def client() -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str]]]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            lambda task_status: make_server().serve_http(
                port=0, task_status=task_status
            )
        )
        headers = {k.lower(): v for k, v in call_headers(port)}
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            yield http, headers
        nursery.cancel_scope.cancel()


async def post(http: httpx.AsyncClient, headers: dict[str, str]) -> httpx.Response:
    with trio.fail_after(SOON):
        return await http.post("/mcp", content=call_json(1), headers=headers)


def refusal(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    message: dict[str, Any] = json.loads(response.content)
    check_message(message, None)
    assert message.get("id") is None
    assert message["error"]["code"] == -32600
    return message


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", ""]
)
async def test_a_body_not_declared_json_gets_415(content_type: str | None) -> None:
    async with client() as (http, headers):
        if content_type is None:
            del headers["content-type"]
        else:
            headers["content-type"] = content_type
        response = await post(http, headers)
    message = refusal(response, 415)
    assert response.headers["accept"] == "application/json"
    assert message["error"]["message"].startswith("unsupported media type: ")


@pytest.mark.parametrize("accept", ["text/html", "text/html, application/xml"])
async def test_an_accept_without_json_or_event_stream_gets_406(accept: str) -> None:
    async with client() as (http, headers):
        headers["accept"] = accept
        response = await post(http, headers)
    message = refusal(response, 406)
    assert message["error"]["message"].startswith("not acceptable: ")


@pytest.mark.parametrize(
    ("content_type", "accept"),
    [
        ("application/json; charset=utf-8", "application/json, text/event-stream"),
        ("Application/JSON", "application/json"),
        ("application/json", "text/event-stream"),
        ("application/json", "*/*"),
        ("application/json", "text/html, application/*;q=0.5"),
        ("application/vnd.example+json", "text/*"),
        ("application/json", None),
    ],
)
async def test_json_with_an_answerable_accept_is_served(
    content_type: str, accept: str | None
) -> None:
    async with client() as (http, headers):
        headers["content-type"] = content_type
        if accept is None:
            del headers["accept"]
        else:
            headers["accept"] = accept
        response = await post(http, headers)
    assert response.status_code == 200
    assert response.json()["result"]["structuredContent"] == "echo 1"


_UNANSWERABLE = st.sampled_from(
    ["text/html", "application/xml", "image/png", "text/plain", "application/pdf"]
)
_ANSWERABLE = st.sampled_from(
    ["application/json", "text/event-stream", "*/*", "application/*", "text/*"]
)
_QUALITY = st.sampled_from(["", ";q=0.5", ";q=0", ";q=1", ";level=1"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), _UNANSWERABLE, _ANSWERABLE, _QUALITY),
        min_size=1,
        max_size=4,
    )
)
def test_accept_is_406_exactly_when_no_range_admits_an_answer(
    ranges: list[tuple[bool, str, str, str]],
) -> None:
    items = [
        (answerable if pick else other) + q for pick, other, answerable, q in ranges
    ]
    expected_ok = any(pick and q != ";q=0" for pick, _, _, q in ranges)
    verdict = media_refusal(
        {"content-type": "application/json", "accept": ", ".join(items)}
    )
    assert (verdict is None) == expected_ok
    if verdict is not None:
        assert verdict[0] == 406
