"""``x-mcp-header`` parameters and their ``Mcp-Param-*`` headers over real HTTP.

Spec (mcp-2026-07-28.md §12): for tools/call a client sends one ``Mcp-Param-{Name}``
header per ``x-mcp-header`` property with a non-null value; a missing or mismatched
header, or an invalid base64 form, is HTTP 400 with -32020.
"""

from __future__ import annotations

import base64
from typing import Annotated, Any

import httpx
import pytest
from support import serving
from support.mcp_http import headers_for, post
from support.tools import locate

from trio_mcp import (
    Field,
    InvalidDeclaration,
    Secret,
    Server,
    ToolCall,
    ToolReply,
    ToolSpec,
    tool,
)
from trio_mcp.testing import check_message


def _server() -> Server:
    return Server("headers", "1.0", tools=[locate])


async def _call(arguments: dict[str, Any], **params: str) -> httpx.Response:
    extra = {f"mcp-param-{k}": v for k, v in params.items()}
    async with serving(_server()) as url, httpx.AsyncClient() as client:
        return await post(
            client,
            url,
            "tools/call",
            {"name": "locate", "arguments": arguments},
            headers=headers_for("tools/call", "locate", **extra),
        )


def _fault(response: httpx.Response) -> int:
    message = response.json()
    check_message(message, "tools/call")
    assert response.status_code == 400
    code: int = message["error"]["code"]
    return code


async def test_the_schema_advertises_x_mcp_header() -> None:
    spec = locate.spec()

    properties = spec.input_schema["properties"]
    assert isinstance(properties, dict)
    assert {
        "type": "string",
        "description": "The region to route to.",
        "x-mcp-header": "Region",
    } == properties["region"]


async def test_matching_headers_are_accepted() -> None:
    response = await _call(
        {"region": "eu-west", "shard": 42, "fast": True},
        region="eu-west",
        shard="42",
        fast="true",
    )

    message = response.json()
    check_message(message, "tools/call")
    assert response.status_code == 200
    assert message["result"]["structuredContent"] == "eu-west/42/True"


async def test_a_missing_header_for_a_given_value_is_refused() -> None:
    response = await _call({"region": "eu-west"})

    assert _fault(response) == -32020


async def test_a_mismatched_header_is_refused() -> None:
    response = await _call({"region": "eu-west"}, region="us-east")

    assert _fault(response) == -32020


async def test_no_header_is_expected_for_an_absent_or_null_value() -> None:
    response = await _call({"region": "eu", "shard": None}, region="eu")

    assert response.status_code == 200


async def test_integers_compare_numerically() -> None:
    response = await _call({"region": "eu", "shard": 42}, region="eu", shard="42.0")

    assert response.status_code == 200


async def test_the_base64_form_is_decoded_before_comparing() -> None:
    encoded = base64.b64encode(" Zürich ".encode()).decode()
    response = await _call({"region": " Zürich "}, region=f"=?base64?{encoded}?=")

    assert response.status_code == 200


async def test_invalid_base64_is_refused() -> None:
    response = await _call({"region": "eu"}, region="=?base64?not*base64?=")

    assert _fault(response) == -32020


async def test_header_names_are_case_insensitive() -> None:
    response = await _call({"region": "eu"}, REGION="eu")

    assert response.status_code == 200


def test_an_x_mcp_header_on_a_number_is_an_invalid_declaration() -> None:
    @tool
    def bad(
        ratio: Annotated[float, Field(json_schema={"x-mcp-header": "Ratio"})],
    ) -> str:
        """
        Take a ratio.

        Args:
            ratio: A ratio.
        """
        return str(ratio)

    with pytest.raises(InvalidDeclaration, match="x-mcp-header needs a string"):
        Server("bad", "1", tools=[bad])


def test_a_repeated_x_mcp_header_name_is_an_invalid_declaration() -> None:
    @tool
    def twice(
        a: Annotated[str, Field(json_schema={"x-mcp-header": "Name"})],
        b: Annotated[str, Field(json_schema={"x-mcp-header": "name"})],
    ) -> str:
        """
        Take two names.

        Args:
            a: One.
            b: Two.
        """
        return a + b

    with pytest.raises(InvalidDeclaration, match="used twice"):
        Server("bad", "1", tools=[twice])


def test_an_x_mcp_header_on_a_secret_is_an_invalid_declaration() -> None:
    """Issue 11 "Headers": a header is kept by every proxy and access log on the way."""

    @tool
    def leaky(
        token: Annotated[Secret[str], Field(json_schema={"x-mcp-header": "Tok"})],
        backup: Annotated[
            Secret[str] | None, Field(json_schema={"x-mcp-header": "Backup"})
        ] = None,
    ) -> str:
        """
        Take a token in a header.

        Args:
            token: The token.
            backup: Another token.
        """
        return "no"

    with pytest.raises(InvalidDeclaration) as info:
        Server("bad", "1", tools=[leaky])

    assert 2 == len(info.value.problems)
    assert all(
        "Secret" in p and "remove x-mcp-header" in p for p in info.value.problems
    )
    assert "Mcp-Param-Tok" in info.value.problems[0]


class HandWritten:
    """A hand-written tool whose schema marks a write-only property as a header."""

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="hand_written",
            description="Take a token in a header.",
            input_schema={
                "type": "object",
                "properties": {
                    "tok": {"type": "string", "writeOnly": True, "x-mcp-header": "Tok"}
                },
            },
        )

    async def dispatch(self, call: ToolCall) -> ToolReply:
        return ToolReply.ok("no")


def test_a_hand_written_tool_may_not_mirror_a_write_only_property() -> None:
    """The same rule for adopters of the Tool protocol: their schemas are checked too."""
    with pytest.raises(InvalidDeclaration, match="remove x-mcp-header"):
        Server("bad", "1", tools=[HandWritten()])
