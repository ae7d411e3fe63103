"""``Secret[str]`` and redaction (api.md "Authority and evidence", "Precise shapes").

A secret's plaintext never appears in schemas, results, error messages (and their
``__cause__`` chain), notifications, validation errors or log records. Inside a
call every secret value seen (decoded, defaulted or constructed) is registered and
masked wherever the server shows text.
"""

from __future__ import annotations

import logging

import attrs
import pytest
from support import wire

from trio_mcp import (
    DecodeError,
    Secret,
    Server,
    ToolContext,
    ToolError,
    decode,
    encode,
    json_schema,
    tool,
)
from trio_mcp._authority import _redact
from trio_mcp.testing import McpTestClient, ProtocolError

MASK = "**********"
ERROR_KEY = "dev.trio-mcp/error"
DEFAULT = "default-plaintext-5e1b"


@attrs.frozen
class Account:
    user: str
    token: Secret[str]


class LoginFailed(ToolError):
    """Login failed."""


@tool
def login(user: str, token: Secret[str]) -> Account:
    """
    Log in and return the account.

    Args:
        user: Who.
        token: Their API token.
    """
    assert isinstance(token, Secret)
    return Account(user, token)


@tool
def reveal_length(token: Secret[str]) -> int:
    """
    Count the token's characters.

    Args:
        token: The token.
    """
    return len(token.reveal())


@tool
def fail_with(token: Secret[str]) -> int:
    """
    Fail, quoting the token in the message and its cause.

    Args:
        token: The token.
    """
    try:
        raise ValueError(f"upstream rejected {token.reveal()}")
    except ValueError as exc:
        raise LoginFailed(f"login with {token.reveal()!r} failed") from exc


@tool
async def fail_with_default(token: Secret[str] = Secret(DEFAULT)) -> int:  # noqa: B008
    """
    Fail, quoting the default token.

    Args:
        token: The token, defaulted.
    """
    raise LoginFailed(f"default {token.reveal()} refused")


@tool
def fail_with_made() -> int:
    """Fail, quoting a secret made during the call (in a worker thread)."""
    made = Secret("made-in-call-77aa")
    raise LoginFailed(f"fetched {made.reveal()} but it failed")


@tool
async def crash(token: Secret[str]) -> int:
    """
    Crash with the token in the message.

    Args:
        token: The token.
    """
    raise RuntimeError(f"crashed holding {token.reveal()}")


@tool
async def chatty(token: Secret[str]) -> int:
    """
    Log and report progress quoting the token.

    Args:
        token: The token.
    """
    ctx = ToolContext.current()
    await ctx.log(
        "info", {"note": f"using {token.reveal()}", token.reveal(): [token.reveal()]}
    )
    await ctx.progress(1, 2, message=f"sent {token.reveal()}")
    return 1


#: A logger of the package: its records pass through the secret filter.
LOG = logging.getLogger("trio_mcp.tests.secrets")


@tool
def log_with_stack(token: Secret[str]) -> int:
    """
    Log a record whose message, arguments and stack information quote the token.

    Args:
        token: The token.
    """
    record = LOG.makeRecord(
        LOG.name,
        logging.WARNING,
        __file__,
        1,
        "calling with %s",
        (token.reveal(),),
        None,
        sinfo=f"Stack (most recent call last):\n  using {token.reveal()}",
    )
    LOG.handle(record)
    return 1


def make_server() -> Server:
    return Server(
        "secrets",
        "1",
        tools=[
            log_with_stack,
            login,
            reveal_length,
            fail_with,
            fail_with_default,
            fail_with_made,
            crash,
            chatty,
        ],
    )


def test_repr_and_str_hide_the_value() -> None:
    """api.md: Secret('**********') in reprs, also inside containers."""
    secret = Secret("hunter2")

    assert "Secret('**********')" == repr(secret) == str(secret) == f"{secret}"
    assert "[Secret('**********')]" == repr([secret])
    assert "hunter2" == secret.reveal()


def test_secrets_compare_and_hash_by_value() -> None:
    secret = Secret("hunter2")

    assert Secret("hunter2") == secret
    assert Secret("other") != secret
    assert Secret("hunter2") != "hunter2"
    assert Secret(1234) == Secret(1234)
    assert Secret(1234) != Secret(1235)
    assert Secret("1234") != Secret(1234)
    assert Secret(1234) != Secret("1234")
    assert hash(Secret("hunter2")) == hash(secret)
    assert hash(Secret("hunter2")) != hash(Secret("other"))


def test_the_schema_is_a_write_only_string() -> None:
    """api.md Secrets: {"type": "string", "writeOnly": true}."""
    assert {"type": "string", "writeOnly": True} == json_schema(Secret[str])


async def test_a_defaulted_secret_parameter_shows_no_default_or_examples() -> None:
    """api.md: never a default or examples value."""
    async with McpTestClient(make_server()) as client:
        tools = {t["name"]: t for t in await client.list_tools()}

    prop = wire(tools)["fail_with_default"]["inputSchema"]["properties"]["token"]
    assert "default" not in prop
    assert "examples" not in prop
    assert DEFAULT not in repr(tools)


def test_decoding_wraps_and_encoding_masks() -> None:
    """api.md: decoding wraps; in structured output a secret is '**********'."""
    secret = decode(Secret[str], "abc")

    assert Secret("abc") == secret
    assert MASK == encode(secret)
    assert MASK == encode(secret, Secret[str])


def test_a_secret_must_be_a_string() -> None:
    with pytest.raises(DecodeError) as caught:
        decode(Secret[str], 12345)

    assert ["expected a string"] == [p.message for p in caught.value.problems]


async def test_the_handler_receives_the_plaintext_through_reveal() -> None:
    """api.md: .reveal() gives it to the handler."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("reveal_length", {"token": "12345"})

    assert 5 == result.structured


async def test_a_secret_in_a_result_is_masked() -> None:
    """api.md Secrets: in structuredContent a secret is the string '**********'."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("login", {"user": "ada", "token": "tok-123456"})

    assert {"user": "ada", "token": MASK} == result.structured
    assert "tok-123456" not in repr(result.raw)


async def test_error_messages_and_their_causes_are_redacted() -> None:
    """api.md Replies: the message chain (__cause__s) in content, redacted."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("fail_with", {"token": "tok-abcdef"})

    assert result.is_error
    assert (
        f"login with '{MASK}' failed\ncaused by: upstream rejected {MASK}"
        == result.text
    )
    assert "tok-abcdef" not in repr(result.raw)
    assert 2 == len(wire(result.meta)[ERROR_KEY]["messages"])


async def test_a_secret_default_is_redacted_in_errors() -> None:
    """Our choice: defaults count as values of this call."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("fail_with_default")

    assert f"default {MASK} refused" == result.text


async def test_a_secret_made_during_the_call_is_redacted_in_errors() -> None:
    """Our choice: Secrets constructed in the call (even in its worker thread) count."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool("fail_with_made")

    assert f"fetched {MASK} but it failed" == result.text


async def test_log_and_progress_notifications_are_redacted() -> None:
    """Our choice: ctx.log data and ctx.progress messages pass through redaction."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool(
            "chatty", {"token": "tok-logged-1"}, progress_token="p", log_level="debug"
        )

    assert 2 == len(result.notifications)
    assert "tok-logged-1" not in repr(result.notifications)
    log = next(
        n for n in result.notifications if n["method"] == "notifications/message"
    )
    assert {"note": f"using {MASK}", MASK: [MASK]} == wire(log)["params"]["data"]


async def test_an_internal_errors_log_and_traceback_are_redacted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """api.md: the traceback goes to the log, never to the client; redacted there too."""
    with caplog.at_level(logging.DEBUG):
        async with McpTestClient(make_server()) as client:
            with pytest.raises(ProtocolError) as info:
                await client.call_tool("crash", {"token": "tok-crash-9"})

    assert -32603 == info.value.code
    assert "tok-crash-9" not in repr(info.value.data) + info.value.message
    assert "tok-crash-9" not in caplog.text
    assert f"RuntimeError: crashed holding {MASK}" in caplog.text


async def test_a_log_records_message_and_stack_info_are_redacted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The filter masks ``stack_info`` as well as the message and its arguments."""
    with caplog.at_level(logging.DEBUG, logger=LOG.name):
        async with McpTestClient(make_server()) as client:
            result = await client.call_tool("log_with_stack", {"token": "tok-stack-31"})

    record = next(r for r in caplog.records if r.name == LOG.name)
    assert 1 == result.structured
    assert f"calling with {MASK}" == record.getMessage()
    assert f"Stack (most recent call last):\n  using {MASK}" == record.stack_info
    assert "tok-stack-31" not in caplog.text


async def test_validation_errors_name_paths_never_values() -> None:
    """api.md: bad arguments are listed by path; style.md: messages never echo values."""
    async with McpTestClient(make_server()) as client:
        result = await client.call_tool(
            "login",
            {"user": "tok-bad-value-1", "token": 12345678, "extra": "tok-bad-value-2"},
        )

    assert result.is_error
    assert "token" in result.text
    assert "12345678" not in repr(result.raw)
    assert "tok-bad-value" not in repr(result.raw)


def test_outside_a_call_a_dropped_secret_is_not_redacted() -> None:
    """Our choice: outside a call only living Secrets mask; a dropped one is gone."""
    Secret("outside-any-call")

    assert "outside-any-call" == _redact.redact("outside-any-call")


def test_longer_values_are_masked_first() -> None:
    """Our choice: a value that contains another is masked whole."""
    token = _redact.open_registry()
    try:
        Secret("abcd")
        Secret("abcdefgh")
        text = _redact.redact("abcdefgh abcd")
    finally:
        _redact.close_registry(token)

    assert f"{MASK} {MASK}" == text


def test_the_log_filter_covers_child_loggers_created_later() -> None:
    """A logger's filters see only its own records, so each trio_mcp.* logger has one."""
    child = logging.getLogger("trio_mcp.authority_test_child")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    child.addHandler(handler)
    token = _redact.open_registry()
    try:
        Secret("child-logged-secret")
        child.warning("saw %s", "child-logged-secret")
    finally:
        _redact.close_registry(token)
        child.removeHandler(handler)

    assert [f"saw {MASK}"] == [r.getMessage() for r in records]
