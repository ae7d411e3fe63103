"""The mirrored-header rules of Streamable HTTP as tables (revision 2026-07-28,
"Streamable HTTP headers"): each rule's refusal is compared whole (code, message,
request id, HTTP status), so a changed word or a lost id shows.

The end-to-end behaviour over Hypercorn is in test_http.py, test_http_edges.py and
test_http_param_headers.py; these tables pin every branch of the rules themselves.
"""

from __future__ import annotations

from typing import Any

import pytest

from trio_mcp._protocol._headers import (
    ParamHeader,
    check_param_headers,
    check_routing_headers,
    check_version_header,
    decode_header_value,
    param_headers,
)
from trio_mcp._protocol._jsonrpc import Fault

VERSION = "2026-07-28"


def mismatch(text: str, request_id: str | int = 7) -> Fault:
    return Fault(
        -32020, f"header mismatch: {text}", request_id=request_id, http_status=400
    )


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ("plain", "plain"),
        ("  padded \t", "padded"),
        ("=?base64?SGVsbG8=?=", "Hello"),
        (" =?base64?w6k=?= ", "é"),
        ("=?base64?SGVsbG8?=", None),  # missing padding: not strict base64
        ("=?base64?SGV sbG8=?=", None),
        ("=?base64?/w==?=", None),  # 0xff is not UTF-8
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # no closing ?=: a plain value
        ("SGVsbG8=?=", "SGVsbG8=?="),
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),
    ],
)
def test_decode_header_value(raw: str, decoded: str | None) -> None:
    assert decoded == decode_header_value(raw)


@pytest.mark.parametrize(
    ("headers", "fault"),
    [
        ({"mcp-protocol-version": VERSION}, None),
        ({"mcp-protocol-version": f" {VERSION} "}, None),
        ({}, mismatch("the MCP-Protocol-Version header is required")),
        (
            {"mcp-protocol-version": "2025-11-25"},
            mismatch("MCP-Protocol-Version does not match _meta protocolVersion"),
        ),
    ],
)
def test_check_version_header(headers: dict[str, str], fault: Fault | None) -> None:
    assert fault == check_version_header(headers, VERSION, 7)


NAMED = {"name": "echo", "arguments": {}}


@pytest.mark.parametrize(
    ("headers", "method", "params", "fault"),
    [
        ({"mcp-method": "tools/list"}, "tools/list", {}, None),
        ({"mcp-method": " tools/list "}, "tools/list", {}, None),
        ({}, "tools/list", {}, mismatch("the Mcp-Method header is required")),
        (
            {"mcp-method": "tools/call"},
            "tools/list",
            {},
            mismatch("Mcp-Method does not match the request's method"),
        ),
        ({"mcp-method": "tools/call", "mcp-name": "echo"}, "tools/call", NAMED, None),
        (
            {"mcp-method": "tools/call"},
            "tools/call",
            NAMED,
            mismatch("the Mcp-Name header is required for tools/call"),
        ),
        (
            {"mcp-method": "tools/call", "mcp-name": "=?base64?!!?="},
            "tools/call",
            NAMED,
            mismatch("Mcp-Name has an invalid base64 value"),
        ),
        (
            {"mcp-method": "tools/call", "mcp-name": "other"},
            "tools/call",
            NAMED,
            mismatch("Mcp-Name does not match params.name"),
        ),
        (
            {"mcp-method": "prompts/get", "mcp-name": "p"},
            "prompts/get",
            {"name": "p"},
            None,
        ),
        (
            {"mcp-method": "resources/read", "mcp-name": "a://b"},
            "resources/read",
            {"uri": "a://b"},
            None,
        ),
        (
            {"mcp-method": "resources/read", "mcp-name": "a://c"},
            "resources/read",
            {"uri": "a://b"},
            mismatch("Mcp-Name does not match params.uri"),
        ),
    ],
)
def test_check_routing_headers(
    headers: dict[str, str], method: str, params: dict[str, Any], fault: Fault | None
) -> None:
    assert fault == check_routing_headers(headers, method, params, 7)


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


NOT_A_NAME = (
    "parameter '{}': x-mcp-header must be a header name "
    "(letters, digits and !#$%&'*+.^_`|~-)"
)
NOT_A_SCALAR = (
    "parameter '{}': x-mcp-header needs a string, integer or boolean parameter"
)
SECRET = (
    "parameter '{}': x-mcp-header would copy a Secret into the Mcp-Param-{} HTTP "
    "header, which proxies and access logs keep; remove x-mcp-header from this "
    "parameter"
)


@pytest.mark.parametrize(
    ("schema", "headers", "problems"),
    [
        (_schema(a={"type": "string"}), [], []),
        (
            _schema(a={"type": "string", "x-mcp-header": "A"}),
            [ParamHeader("a", "A", "string")],
            [],
        ),
        (
            _schema(
                a={"type": "integer", "x-mcp-header": "Count"},
                b={"type": "boolean", "x-mcp-header": "Fast"},
            ),
            [ParamHeader("a", "Count", "integer"), ParamHeader("b", "Fast", "boolean")],
            [],
        ),
        (
            _schema(
                a={"anyOf": [{"type": "string"}, {"type": "null"}], "x-mcp-header": "A"}
            ),
            [ParamHeader("a", "A", "string")],
            [],
        ),
        (
            _schema(
                bad={"type": "string", "x-mcp-header": "has space"},
                nope={"type": "string", "x-mcp-header": 5},
                ok={"type": "string", "x-mcp-header": "Ok"},
            ),
            [ParamHeader("ok", "Ok", "string")],
            [NOT_A_NAME.format("bad"), NOT_A_NAME.format("nope")],
        ),
        (
            _schema(
                a={"type": "string", "x-mcp-header": "Same"},
                b={"type": "string", "x-mcp-header": "same"},
                c={"type": "string", "x-mcp-header": "Other"},
            ),
            [ParamHeader("a", "Same", "string"), ParamHeader("c", "Other", "string")],
            ["parameter 'b': x-mcp-header 'same' is used twice"],
        ),
        (
            _schema(
                a={"type": "array", "x-mcp-header": "A"},
                b={
                    "anyOf": [{"type": "string"}, {"type": "integer"}],
                    "x-mcp-header": "B",
                },
                c={"anyOf": [{"type": "string"}, True], "x-mcp-header": "C"},
                d={"anyOf": [{"type": "null"}], "x-mcp-header": "D"},
                e={"x-mcp-header": "E"},
                f={"type": "number", "x-mcp-header": "F"},
                g={"type": "string", "x-mcp-header": "G"},
            ),
            [ParamHeader("g", "G", "string")],
            [NOT_A_SCALAR.format(p) for p in "abcdef"],
        ),
        (
            _schema(
                a={"type": "string", "writeOnly": True, "x-mcp-header": "A"},
                b={
                    "anyOf": [{"type": "string", "writeOnly": True}, {"type": "null"}],
                    "x-mcp-header": "B",
                },
                c={"type": "string", "writeOnly": False, "x-mcp-header": "C"},
                d={"anyOf": "not a list", "type": "string", "x-mcp-header": "D"},
            ),
            [ParamHeader("c", "C", "string"), ParamHeader("d", "D", "string")],
            [SECRET.format(p, p.upper()) for p in "ab"],
        ),
        ({"type": "object"}, [], []),
        ({"type": "object", "properties": ["not", "an", "object"]}, [], []),
        (
            _schema(a=True, b={"type": "string", "x-mcp-header": "B"}),
            [ParamHeader("b", "B", "string")],
            [],
        ),
    ],
)
def test_param_headers(
    schema: dict[str, Any], headers: list[ParamHeader], problems: list[str]
) -> None:
    assert (headers, problems) == param_headers(schema)


DECLARED = [
    ParamHeader("region", "Region", "string"),
    ParamHeader("count", "Count", "integer"),
    ParamHeader("fast", "Fast", "boolean"),
]


def _invalid(name: str) -> Fault:
    return mismatch(f"Mcp-Param-{name} has an invalid value")


def _differs(name: str, prop: str) -> Fault:
    return mismatch(f"Mcp-Param-{name} does not match arguments.{prop}")


@pytest.mark.parametrize(
    ("arguments", "headers", "fault"),
    [
        ({}, {}, None),
        ({"region": None, "count": None}, {}, None),
        ("not an object", {}, None),
        (
            {"region": "eu", "count": 3, "fast": True},
            {
                "mcp-param-region": "eu",
                "mcp-param-count": "3",
                "mcp-param-fast": "true",
            },
            None,
        ),
        ({"fast": False}, {"mcp-param-fast": "false"}, None),
        ({"count": 3}, {"mcp-param-count": "3.0"}, None),
        ({"count": 2.5}, {"mcp-param-count": "2.5"}, None),
        ({"region": "é"}, {"mcp-param-region": "=?base64?w6k=?="}, None),
        (
            {"count": 3},
            {},
            mismatch("the Mcp-Param-Count header is required when 'count' is given"),
        ),
        ({"region": "é"}, {"mcp-param-region": "é"}, _invalid("Region")),
        ({"region": "eu"}, {"mcp-param-region": "=?base64?!!?="}, _invalid("Region")),
        ({"region": "eu"}, {"mcp-param-region": "us"}, _differs("Region", "region")),
        ({"count": 3}, {"mcp-param-count": "4"}, _differs("Count", "count")),
        ({"count": 3}, {"mcp-param-count": "three"}, _differs("Count", "count")),
        ({"count": True}, {"mcp-param-count": "1"}, _differs("Count", "count")),
        ({"count": "3"}, {"mcp-param-count": "3"}, _differs("Count", "count")),
        ({"fast": True}, {"mcp-param-fast": "false"}, _differs("Fast", "fast")),
        ({"fast": False}, {"mcp-param-fast": "true"}, _differs("Fast", "fast")),
        ({"fast": False}, {"mcp-param-fast": "False"}, _differs("Fast", "fast")),
        ({"fast": 1}, {"mcp-param-fast": "true"}, _differs("Fast", "fast")),
        (
            {"region": "us", "count": 9},
            {"mcp-param-region": "us"},
            mismatch("the Mcp-Param-Count header is required when 'count' is given"),
        ),
    ],
)
def test_check_param_headers(
    arguments: Any, headers: dict[str, str], fault: Fault | None
) -> None:
    assert fault == check_param_headers(headers, DECLARED, arguments, 7)
