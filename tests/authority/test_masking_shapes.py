"""Masking keeps a reply whole (api.md "Trust"; issue 24 review), through real JSON:
a secret used as a ``dict[str, T]`` key is masked alike in the text block and in
``structuredContent``; a secret inside a content block's ``uri`` is masked and the
URI stays a URI; a secret whose mask would break a constrained output value (or
merge two keys) withholds the result: an ``isError`` result says so (issue 34)."""

from __future__ import annotations

import datetime
import json
import logging
from typing import Annotated, Any

import attrs
import pytest
from support import wire

from trio_mcp import (
    EmbeddedResource,
    Field,
    Receipt,
    ResourceLink,
    Secret,
    Server,
    TextResourceContents,
    Tool,
    tool,
)
from trio_mcp.testing import McpTestClient
from trio_mcp.testing._schema import check_message


@tool
def keyed(s: Secret[str]) -> dict[str, int]:
    """A secret as a key.

    Args:
        s: The secret.
    """
    return {s.reveal(): 1, "other": 2}


@tool
def colliding(s: Secret[str]) -> dict[str, int]:
    """Two keys that masking would make one.

    Args:
        s: The secret.
    """
    return {s.reveal(): 1, "**********": 2}


@tool
def linked(
    s: Secret[str], scheme: str = "file"
) -> list[ResourceLink | EmbeddedResource]:
    """Blocks whose URIs hold the secret.

    Args:
        s: The secret.
        scheme: The scheme of the link.
    """
    v = s.reveal()
    return [
        ResourceLink(uri=f"{scheme}:///x/{v}", name="n", mime_type="text/plain"),
        EmbeddedResource(TextResourceContents(uri="mem://h/" + v, text="t")),
    ]


@attrs.frozen
class Out:
    code: Annotated[str, Field(max_length=3)]
    pat: Annotated[str, Field(pattern="^[a-z]+$")]
    when: datetime.date


@tool
def constrained(s: Secret[str]) -> Out:
    """Constrained values that a secret may match.

    Args:
        s: The secret.
    """
    return Out(code="abc", pat="red", when=datetime.date(2020, 1, 1))


SERVER: list[Tool] = [keyed, colliding, linked, constrained]


async def call(name: str, receipts: list[Receipt] | None = None, **args: Any) -> Any:
    kept: list[Receipt] = [] if receipts is None else receipts
    server = Server("m", "1", tools=SERVER, receipts=kept.append)
    async with McpTestClient(server) as client:
        result = wire((await client.call_tool(name, args)).raw)
    check_message({"jsonrpc": "2.0", "id": 1, "result": result}, "tools/call")
    return result


async def test_a_secret_key_is_masked_alike_in_text_and_structured_content() -> None:
    result = await call("keyed", s="hunter2")

    assert {"**********": 1, "other": 2} == result["structuredContent"]
    assert result["structuredContent"] == json.loads(result["content"][0]["text"])
    assert "hunter2" not in json.dumps(result)


async def test_keys_that_masking_would_merge_withhold_the_reply() -> None:
    receipts: list[Receipt] = []
    result = await call("colliding", receipts, s="hunter2")

    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("a secret was withheld: ")
    assert "make two keys one" in text
    assert "hunter2" not in json.dumps(result)
    assert [("error", "trio_mcp.SecretWithheld")] == [
        (r.outcome, r.error_type) for r in receipts
    ]


async def test_a_secret_in_a_uri_is_masked_and_the_uri_stays_valid() -> None:
    result = await call("linked", s="hunter2")

    link, embedded = result["content"]
    assert "file:///x/**********" == link["uri"]
    assert "mem://h/**********" == embedded["resource"]["uri"]
    assert "hunter2" not in json.dumps(result)


async def test_a_uri_scheme_is_kept_so_the_uri_stays_a_uri() -> None:
    result = await call("linked", s="file")

    assert "file:///x/**********" == result["content"][0]["uri"]


@pytest.mark.parametrize(
    ("secret", "broken"),
    [("abc", "code: maxLength"), ("red", "pat: pattern"), ("2020", "when: format")],
)
async def test_a_secret_that_masking_would_make_break_the_schema_is_withheld(
    secret: str, broken: str, caplog: pytest.LogCaptureFixture
) -> None:
    """api.md "Hostile clients, round three": masking never produces a reply that
    breaks the output schema; the call is a tool error saying a secret was withheld."""
    receipts: list[Receipt] = []
    with caplog.at_level(logging.INFO, "trio_mcp"):
        result = await call("constrained", receipts, s=secret)

    assert result["isError"] is True
    assert "structuredContent" not in result
    text = result["content"][0]["text"]
    assert text.startswith("a secret was withheld: ")
    assert f"({broken})" in text
    assert secret not in json.dumps(result["content"])
    assert {"kind": "secret_withheld"} == result["_meta"]["dev.trio-mcp/error"]
    assert [("error", "trio_mcp.SecretWithheld")] == [
        (r.outcome, r.error_type) for r in receipts
    ]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("secret", ['hun"ter2', "hun\\ter2", "hun\nter2", "hünter2"])
async def test_a_secret_that_json_escapes_is_masked_as_any_other(secret: str) -> None:
    """Masking skips the walk when no secret is in the reply's JSON text, which
    holds only for secrets JSON writes as they are; these are found by the walk."""
    result = await call("keyed", s=secret)

    assert {"**********": 1, "other": 2} == result["structuredContent"]
    assert secret not in json.dumps(result, ensure_ascii=False)


async def test_a_reply_that_holds_no_secret_is_sent_as_the_handler_shaped_it() -> None:
    result = await call("constrained", s="not-in-the-reply")

    expected = {"code": "abc", "pat": "red", "when": "2020-01-01"}
    assert expected == result["structuredContent"]
    assert expected == json.loads(result["content"][0]["text"])
