"""Process-wide redaction: every logger, every thread, every living Secret.

A ``Secret`` constructed anywhere (module level, from the environment, in a library)
is held weakly by the process-wide registry; while it lives its plaintext is masked
in every log record the process makes, whichever logger, handler or thread. These
tests use real loggers and handlers of the standard library.
"""

from __future__ import annotations

import gc
import logging
import threading
import types
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.strategies import json_trees

from trio_mcp import Secret
from trio_mcp._authority import _redact

MASK = "**********"


class Keep(logging.Handler):
    """A handler that keeps each formatted record and all of its attributes."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.lines.append(self.format(record) + repr(record.__dict__))

    def messages(self) -> list[str]:
        """Each kept record's message, as its handlers would render it."""
        return [r.getMessage() for r in self.records]


@contextmanager
def kept(name: str, *, alone: bool = False) -> Iterator[tuple[logging.Logger, Keep]]:
    """The logger ``name`` with a ``Keep`` handler for the block; ``alone``: like a
    library's own logger, it does not propagate and logs every level."""
    logger = logging.getLogger(name)
    if alone:
        logger.propagate = False
        logger.setLevel(logging.DEBUG)
    handler = Keep()
    logger.addHandler(handler)
    try:
        yield logger, handler
    finally:
        logger.removeHandler(handler)


@pytest.fixture
def third_party() -> Iterator[tuple[logging.Logger, Keep]]:
    """A library's logger that does not propagate and has its own handler."""
    with kept(f"some_library.{uuid.uuid4().hex}", alone=True) as pair:
        yield pair


def _plaintext() -> str:
    return f"plain-{uuid.uuid4().hex}"


def _living() -> tuple[str, Secret[str]]:
    """A fresh plaintext and the Secret holding it (alive while the caller keeps it)."""
    value = _plaintext()
    return value, Secret(value)


def test_a_living_secret_is_masked_in_a_third_party_logger(
    third_party: tuple[logging.Logger, Keep],
) -> None:
    """No call is running and the logger is not ours: the record is still masked."""
    logger, handler = third_party
    value, token = _living()
    logger.warning("calling with key=%s", token.reveal())
    logger.info("dict form %(key)s", {"key": value})

    assert [f"calling with key={MASK}", f"dict form {MASK}"] == [
        r.getMessage() for r in handler.records
    ]
    assert [] == [line for line in handler.lines if value in line]


def test_a_plain_threads_log_is_masked(
    third_party: tuple[logging.Logger, Keep],
) -> None:
    """A thread started by hand inherits no context; the process-wide registry holds."""
    logger, handler = third_party
    value, token = _living()

    thread = threading.Thread(target=lambda: logger.error("in thread: %s", value))
    thread.start()
    thread.join()

    assert [f"in thread: {MASK}"] == handler.messages()
    assert token.reveal() == value


def test_a_traceback_holding_a_secret_is_rendered_masked(
    third_party: tuple[logging.Logger, Keep],
) -> None:
    """The exception is formatted and masked; no handler gets the original."""
    logger, handler = third_party
    value, token = _living()
    try:
        raise ConnectionError(f"refused {token.reveal()}")
    except ConnectionError:
        logger.exception("upstream")

    (record,) = handler.records
    assert record.exc_info is None
    assert f"ConnectionError: refused {MASK}" in (record.exc_text or "")
    assert value not in handler.lines[0]


def test_a_clean_traceback_keeps_its_exception(
    third_party: tuple[logging.Logger, Keep],
) -> None:
    """Our choice: handlers that read ``exc_info`` (error trackers) keep it when clean."""
    logger, handler = third_party
    token = Secret(_plaintext())
    try:
        raise KeyError("missing")
    except KeyError:
        logger.exception("lookup")

    (record,) = handler.records
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], KeyError)
    assert token.reveal().startswith("plain-")


def test_a_secret_is_masked_exactly_while_it_lives(
    third_party: tuple[logging.Logger, Keep],
) -> None:
    """Weakly held: a dropped Secret keeps no plaintext alive in the registry."""
    logger, handler = third_party
    value, token = _living()
    logger.warning("alive %s", value)
    del token
    gc.collect()
    logger.warning("dropped %s", value)

    assert [f"alive {MASK}", f"dropped {value}"] == [
        r.getMessage() for r in handler.records
    ]


def test_equal_secrets_are_held_by_identity(
    third_party: tuple[logging.Logger, Keep],
) -> None:
    """Two equal Secrets: dropping one leaves the other masking the value."""
    logger, handler = third_party
    value = _plaintext()
    first, second = Secret(value), Secret(value)
    assert first == second
    del first
    gc.collect()
    logger.warning("still %s", value)

    assert [f"still {MASK}"] == handler.messages()
    assert second.reveal() == value


def test_short_values_are_masked_only_inside_their_call() -> None:
    """Our choice: under four characters, process-wide masking would hit every log."""
    short = Secret("ab1")
    token = _redact.open_registry()
    try:
        Secret("ab1")
        inside = _redact.redact("x ab1 y")
    finally:
        _redact.close_registry(token)

    assert f"x {MASK} y" == inside
    assert "x ab1 y" == _redact.redact("x ab1 y")
    assert short.reveal() == "ab1"


def test_a_record_factory_installed_later_is_wrapped_again(
    third_party: tuple[logging.Logger, Keep],
) -> None:
    """Someone replacing the record factory without chaining does not switch us off."""
    logger, handler = third_party
    original = logging.getLogRecordFactory()
    logging.setLogRecordFactory(logging.LogRecord)
    try:
        value = _plaintext()
        token = Secret(value)  # the next Secret (or call) reinstalls the wrapper
        logger.warning("after replacement %s", token.reveal())
    finally:
        logging.setLogRecordFactory(original)

    assert [f"after replacement {MASK}"] == handler.messages()


def test_records_built_without_a_logger_are_masked_by_the_filter() -> None:
    """``makeLogRecord`` (queues, sockets): SecretFilter on a handler masks them."""
    value, token = _living()
    record = logging.makeLogRecord({"msg": "queued %s", "args": (value,)})
    keep = Keep()
    keep.addFilter(_redact.SecretFilter())
    keep.handle(record)

    assert [f"queued {MASK}"] == keep.messages()
    assert token.reveal() == value


_ALPHABET = st.characters(codec="utf-8", exclude_characters="*")


@given(
    secrets=st.lists(st.text(_ALPHABET, min_size=4, max_size=12), max_size=5),
    fillers=st.lists(st.text(_ALPHABET, max_size=8), min_size=6, max_size=6),
)
def test_no_living_secret_survives_redaction(
    secrets: list[str], fillers: list[str]
) -> None:
    """Longest first, and a mask never forms a new match: none remains, even overlapping."""
    held = [Secret(value) for value in secrets]
    text = "".join(f + s for f, s in zip(fillers, [*secrets, ""], strict=False))
    text += "".join(fillers[len(secrets) :])

    redacted = _redact.redact(text)

    assert [] == [value for value in secrets if value in redacted]
    assert len(held) == len(secrets)


_JSON = json_trees(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    width=4,
    max_leaves=20,
)


@given(secrets=st.lists(st.text(min_size=4, max_size=8), max_size=3), value=_JSON)
def test_redact_json_fast_path_agrees_with_the_walk(
    secrets: list[str], value: object
) -> None:
    """Skipping a value whose JSON text holds no secret never skips a secret."""
    held = [Secret(s) for s in secrets]
    planted = {"planted": [*secrets, value]}

    fast = _redact.redact_json(planted)  # type: ignore[arg-type]
    walked = _redact._redact_json(planted, _redact._masked())  # type: ignore[arg-type]

    assert walked == fast
    assert len(held) == len(secrets)


def test_our_own_message_text_is_kept_and_only_its_arguments_masked() -> None:
    """A secret that happens to be a word of our own message ("declared") masks the
    argument that holds it, never the message text: the line stays readable."""
    with kept(f"trio_mcp.{uuid.uuid4().hex}", alone=True) as (logger, handler):
        token = Secret("declared")
        logger.error("tool %r does not fit what was declared: %s", "t", "declared!")
        logger.error("mapping %(word)s was declared", {"word": "declared"})

    assert [
        f"tool 't' does not fit what was declared: {MASK}!",
        f"mapping {MASK} was declared",
    ] == handler.messages()
    assert token.reveal() == "declared"


@attrs.frozen
class Holder:
    """An object whose repr shows what it holds."""

    held: str


def test_a_logger_whose_name_only_starts_like_ours_is_masked_whole() -> None:
    """``trio_mcp_plugin`` is not ours: its message is rendered and masked."""
    value, token = _living()
    with kept(f"trio_mcp_plugin.{uuid.uuid4().hex}") as (logger, handler):
        logger.error("key=%s", value)

    assert [f"key={MASK}"] == handler.messages()
    assert token.reveal() == value


def test_our_root_logger_keeps_its_message_text_too() -> None:
    token = Secret("declared")
    with kept("trio_mcp") as (logger, handler):
        logger.error("what was declared: %s", "declared!")
        logger.error("what was declared: %s", Holder("x"))

    assert [
        f"what was declared: {MASK}!",
        "what was declared: Holder(held='x')",
    ] == handler.messages()
    assert token.reveal() == "declared"


def test_an_argument_whose_repr_holds_a_secret_masks_the_rendered_line() -> None:
    """Our own logger, an argument that is no string but shows a secret (as a tuple,
    a dict, or another mapping of arguments): the whole line is rendered, masked."""
    value, token = _living()
    with kept(f"trio_mcp.{uuid.uuid4().hex}") as (logger, handler):
        logger.error("got %s", Holder(value))
        logger.error("got %(h)s", {"h": Holder(value)})
        logger.error("got %(k)s", types.MappingProxyType({"k": value}))

    assert [
        f"got Holder(held='{MASK}')",
        f"got Holder(held='{MASK}')",
        f"got {MASK}",
    ] == handler.messages()
    assert [] == [line for line in handler.lines if value in line]
    assert token.reveal() == value
