"""The rules of the per-call secret registry, one by one: what is registered, how
deep ``register_in`` looks, the order of masking, and the log filter's fields.

test_secret_redaction.py shows the same rules end to end through a served call;
these tests pin each rule's edges, where an end-to-end test cannot reach (a value
nested 17 levels deep, a record whose message cannot be formatted).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from trio_mcp import Secret
from trio_mcp._authority import (
    SecretFilter,
    close_registry,
    mask_write_only,
    open_registry,
    redact,
    redact_json,
    register_in,
)
from trio_mcp._authority._redact import MASK, register
from trio_mcp._json import JsonValue


@pytest.fixture
def registry() -> Iterator[None]:
    """An open registry, as during a call."""
    token = open_registry()
    yield
    close_registry(token)


@attrs.frozen
class Login:
    user: str
    token: Secret[str]


def nested(value: object, levels: int) -> object:
    for _ in range(levels):
        value = [value]
    return value


# -- register: what counts as plaintext -----------------------------------------------


@pytest.mark.usefixtures("registry")
@pytest.mark.parametrize(
    ("value", "text", "masked"),
    [
        ("s3cret", "use s3cret now", f"use {MASK} now"),
        (b"byt\xc3\xa9s", "got bytés", f"got {MASK}"),
        (b"bad\xff!", "got bad\ufffd!", f"got {MASK}"),
        (12345, "pin 12345", f"pin {MASK}"),
        (1234, "pin 1234", f"pin {MASK}"),
        (123, "pin 123", "pin 123"),
        ("", "nothing to mask", "nothing to mask"),
        (b"", "nothing to mask", "nothing to mask"),
        ("ab", "tab", f"t{MASK}"),
    ],
)
def test_what_register_masks(value: object, text: str, masked: str) -> None:
    """Text as is, bytes as UTF-8 (replacing errors), other values by str() when
    that has at least four characters; short text is still registered."""
    register(value)

    assert masked == redact(text)


def test_register_outside_a_call_does_nothing() -> None:
    register("outside-1")

    assert "outside-1" == redact("outside-1")


@pytest.mark.usefixtures("registry")
@pytest.mark.parametrize(
    "order", [("secret", "my-secret-token"), ("my-secret-token", "secret")]
)
def test_longer_values_are_masked_before_the_values_inside_them(
    order: tuple[str, str],
) -> None:
    """Longest first, whatever the alphabet says: 'secret' sorts after
    'my-secret-token' but must not cut it in two."""
    for value in order:
        register(value)

    assert f"{MASK} and {MASK}" == redact("my-secret-token and secret")


# -- register_in: where Secret values are found ---------------------------------------


def _found(value: object, plaintext: str) -> bool:
    token = open_registry()
    try:
        register_in(value)
        return MASK == redact(plaintext)
    finally:
        close_registry(token)


@pytest.mark.parametrize(
    "shape",
    [
        lambda s: s,
        lambda s: {"k": s},
        lambda s: [s],
        lambda s: (1, s),
        lambda s: {s},
        lambda s: frozenset([s]),
        lambda s: Login("ada", s),
        lambda s: {"logins": [Login("ada", s)]},
        lambda s: ("x", {"y": (Login("a", s),)}),
    ],
    ids=["bare", "dict", "list", "tuple", "set", "frozenset", "attrs", "deep", "mixed"],
)
def test_register_in_finds_secrets_in_containers_and_attrs_values(
    shape: Any,
) -> None:
    # Made outside a registry, so only register_in can register it; three
    # characters, below the length every living Secret is masked at process-wide.
    secret = Secret("f42")

    assert _found(shape(secret), "f42")


def test_register_in_looks_16_levels_deep_and_no_deeper() -> None:
    secret = Secret("d7x")

    assert _found(nested(secret, 16), "d7x")
    assert not _found(nested(secret, 17), "d7x")
    assert _found({"a": nested(secret, 15)}, "d7x")
    assert not _found({"a": nested(secret, 16)}, "d7x")
    assert _found(nested(Login("u", secret), 15), "d7x")
    assert not _found(nested(Login("u", secret), 16), "d7x")


def test_register_in_leaves_other_iterables_alone() -> None:
    """A generator would be used up by looking; only real containers are read."""
    secret = Secret("l3z")
    lazy = (s for s in [secret])

    assert not _found(lazy, "l3z")
    assert secret is next(lazy)


def test_register_in_outside_a_call_does_nothing() -> None:
    register_in(Secret("nowhere-9"))

    assert "nowhere-9" == redact("nowhere-9")


# -- redact_json -------------------------------------------------------------------------


@pytest.mark.usefixtures("registry")
def test_redact_json_masks_strings_and_keys_at_any_depth() -> None:
    register("tok-5")
    value: JsonValue = {"tok-5": ["a tok-5", {"k": "tok-5"}, 5, None, True]}

    assert {MASK: [f"a {MASK}", {"k": MASK}, 5, None, True]} == redact_json(value)


def test_redact_json_without_secrets_is_the_identity() -> None:
    value: JsonValue = {"a": ["b"]}

    assert value is redact_json(value)


# -- the log filter ---------------------------------------------------------------------


def _record(msg: object, args: Any = None, exc_info: Any = None) -> logging.LogRecord:
    return logging.LogRecord(
        "trio_mcp.t", logging.INFO, __file__, 1, msg, args, exc_info
    )


@pytest.mark.usefixtures("registry")
def test_a_message_that_cannot_be_formatted_is_masked_as_written() -> None:
    register("fmt-secret")
    # An application's logger: a trio_mcp logger's message text is ours, kept as
    # written and only its arguments masked (test_every_logger).
    record = logging.LogRecord(
        "app",
        logging.INFO,
        __file__,
        1,
        "holding fmt-secret %d",
        ("not a number",),
        None,
    )

    assert SecretFilter().filter(record)
    assert (f"holding {MASK} %d ('not a number',)", None) == (record.msg, record.args)


@pytest.mark.usefixtures("registry")
def test_a_record_without_secrets_in_it_is_left_as_it_was() -> None:
    register("absent-1")
    record = _record("plain %s", ("text",))

    assert SecretFilter().filter(record)
    assert ("plain %s", ("text",)) == (record.msg, record.args)


@pytest.mark.usefixtures("registry")
def test_a_traceback_is_formatted_masked_and_the_exception_dropped() -> None:
    register("exc-secret")
    try:
        raise ValueError("failed with exc-secret")
    except ValueError:
        record = _record("failed", exc_info=sys.exc_info())

    assert SecretFilter().filter(record)
    assert record.exc_info is None
    assert record.exc_text is not None
    assert record.exc_text.endswith(f"ValueError: failed with {MASK}")


@pytest.mark.usefixtures("registry")
def test_an_exception_without_a_traceback_is_formatted_masked_too() -> None:
    """exc_info may carry an exception that was never raised (no traceback)."""
    register("bare-secret")
    error = ValueError("bare-secret leaked")
    record = _record("failed", exc_info=(ValueError, error, None))

    assert SecretFilter().filter(record)
    assert (None, f"ValueError: {MASK} leaked") == (record.exc_info, record.exc_text)


@pytest.mark.usefixtures("registry")
def test_an_already_formatted_traceback_is_masked() -> None:
    register("text-secret")
    record = _record("failed")
    record.exc_text = "Traceback: text-secret"

    assert SecretFilter().filter(record)
    assert f"Traceback: {MASK}" == record.exc_text


def test_outside_a_call_records_pass_untouched() -> None:
    record = _record("free %s", ("text",))
    record.exc_text = "Traceback: text"

    assert SecretFilter().filter(record)
    assert ("free %s", ("text",), "Traceback: text") == (
        record.msg,
        record.args,
        record.exc_text,
    )


# -- mask_write_only: a Secret never enters a key ---------------------------------------

WRITE_ONLY: JsonValue = {"type": "string", "writeOnly": True}


@pytest.mark.parametrize(
    ("schema", "value", "masked"),
    [
        (WRITE_ONLY, "s", MASK),
        ({"anyOf": [WRITE_ONLY, {"type": "null"}]}, "s", MASK),
        ({"oneOf": [{"type": "integer"}, WRITE_ONLY]}, "s", MASK),
        ({"allOf": [WRITE_ONLY]}, "s", MASK),
        (
            {"type": "array", "prefixItems": [{"type": "string"}, WRITE_ONLY]},
            ["a", "b", "c"],
            ["a", MASK, "c"],
        ),
        (
            {"type": "array", "prefixItems": [WRITE_ONLY], "items": {"type": "string"}},
            ["a", "b"],
            [MASK, "b"],
        ),
        ({"type": "array", "items": WRITE_ONLY}, ["a", "b"], [MASK, MASK]),
        ({"type": "array", "prefixItems": "bad", "items": WRITE_ONLY}, ["a"], [MASK]),
        (
            {
                "type": "object",
                "properties": {"t": WRITE_ONLY},
                "additionalProperties": {},
            },
            {"t": "x", "u": "y"},
            {"t": MASK, "u": "y"},
        ),
        (
            {"type": "object", "additionalProperties": WRITE_ONLY},
            {"t": "x"},
            {"t": MASK},
        ),
        ({"type": "string"}, "s", "s"),
        (True, "s", "s"),
    ],
)
def test_mask_write_only(
    schema: JsonValue, value: JsonValue, masked: JsonValue
) -> None:
    assert masked == mask_write_only(value, schema)
