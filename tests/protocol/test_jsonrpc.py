"""parse_message in-process: every message sorted, every refusal whole.

The transports' tests see these answers through the wire; here each one is the
whole value (code, message, id, the HTTP status Streamable HTTP answers with), so a
changed word or status is caught where it is made.
"""

from __future__ import annotations

import pytest

from trio_mcp._protocol._jsonrpc import Fault, Notification, Request, parse_message

INVALID = -32600
PARSE = -32700


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[]",
            Fault(
                INVALID,
                "invalid request: batches are not supported; send one message",
                http_status=400,
            ),
        ),
        (
            "3",
            Fault(
                INVALID,
                "invalid request: a message must be a JSON object",
                http_status=400,
            ),
        ),
        (
            '{"id":7,"method":"x"}',
            Fault(
                INVALID,
                'invalid request: "jsonrpc" must be "2.0"',
                request_id=7,
                http_status=400,
            ),
        ),
        (
            '{"jsonrpc":"1.0","id":"a","method":"x"}',
            Fault(
                INVALID,
                'invalid request: "jsonrpc" must be "2.0"',
                request_id="a",
                http_status=400,
            ),
        ),
        (
            '{"jsonrpc":"2.0","id":7,"result":{}}',
            Fault(
                INVALID,
                'invalid request: "method" must be a string; clients send only '
                "requests and notifications",
                request_id=7,
                http_status=400,
            ),
        ),
        (
            '{"jsonrpc":"2.0","id":1.5,"method":"x"}',
            Fault(
                INVALID,
                'invalid request: "id" must be a string or an integer',
                http_status=400,
            ),
        ),
        (
            '{"jsonrpc":"2.0","id":null,"method":"x"}',
            Fault(
                INVALID,
                'invalid request: "id" must be a string or an integer',
                http_status=400,
            ),
        ),
        (
            '{"jsonrpc":"2.0","id":true,"method":"x"}',
            Fault(
                INVALID,
                'invalid request: "id" must be a string or an integer',
                http_status=400,
            ),
        ),
        (
            "{",
            Fault(PARSE, "parse error: the message is not valid JSON", http_status=400),
        ),
        (
            "NaN",
            Fault(PARSE, "parse error: the message is not valid JSON", http_status=400),
        ),
        (
            b"\xff",
            Fault(PARSE, "parse error: the message is not valid JSON", http_status=400),
        ),
        (
            "[" * 4 + "]" * 4,
            Fault(
                PARSE,
                "parse error: the message nests deeper than 3 levels",
                http_status=400,
            ),
        ),
    ],
)
def test_each_refusal_is_the_whole_fault(text: str | bytes, expected: Fault) -> None:
    assert expected == parse_message(text, max_depth=3)


def test_requests_and_notifications_are_sorted_by_their_id() -> None:
    assert Request(7, "tools/list", {"a": 1}) == parse_message(
        '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}}'
    )
    assert Request("x", "ping", None) == parse_message(
        b'{"jsonrpc":"2.0","id":"x","method":"ping"}'
    )
    assert Notification("notifications/cancelled", {"requestId": 7}) == parse_message(
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}'
    )


def test_a_message_at_the_depth_limit_is_read() -> None:
    assert Request(1, "x", [[[]]]) == parse_message(
        '{"jsonrpc":"2.0","id":1,"method":"x","params":[[[]]]}', max_depth=4
    )
