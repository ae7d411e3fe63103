"""The process-wide machinery of redaction, rule by rule.

``_LiveSecrets`` (the weak registry of living secrets: order, pruning), the record
factory (installed once, chained, reinstalled), the ``trio_mcp`` loggers' filter and
the fast path of ``redact_json``. Each test starts from a state it sets up itself
(a fresh ``_LiveSecrets``, the standard record factory, a logger without the filter),
because the rest of the suite has installed everything long before it runs.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Iterator

import attrs
import pytest

from trio_mcp import Secret
from trio_mcp._authority import _redact
from trio_mcp._authority._redact import MASK, SecretFilter

# -- _LiveSecrets: a fresh registry, held weakly, pruned as it grows ---------------------


class Held:
    """A stand-in for ``Secret`` as ``_LiveSecrets`` sees it: weakly referable, revealable."""

    def __init__(self, value: object) -> None:
        self.value = value

    def reveal(self) -> object:
        return self.value


def _add(live: _redact._LiveSecrets, value: object) -> Held:
    held = Held(value)
    live.add(held, value)
    return held


def test_a_new_registry_is_empty() -> None:
    assert ((), frozenset()) == _redact._LiveSecrets().snapshot()


def test_texts_come_longest_first_whatever_their_letters() -> None:
    live = _redact._LiveSecrets()
    kept = [_add(live, v) for v in ("zzzz", "aaaaaaaa", "mmmmmm")]

    ordered, as_set = live.snapshot()

    assert ("aaaaaaaa", "mmmmmm", "zzzz") == ordered
    assert frozenset(ordered) == as_set
    assert not live._stale  # rebuilt once, then served from the cache
    assert len(kept) == 3


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("abcd", "abcd"),
        (b"bad\xff-bytes", "bad\ufffd-bytes"),
        (123456789, "123456789"),
    ],
)
def test_text_bytes_and_other_values_are_masked_as_they_print(
    value: object, text: str
) -> None:
    live = _redact._LiveSecrets()
    held = _add(live, value)

    assert (text,) == live.snapshot()[0]
    assert held.value == value


@pytest.mark.parametrize("value", ["abc", b"abc", 123, ""])
def test_values_shorter_than_four_characters_are_not_held(value: object) -> None:
    live = _redact._LiveSecrets()
    held = _add(live, value)

    assert ((), frozenset()) == live.snapshot()
    assert {} == live._refs
    assert held.value == value


def test_the_registry_prunes_the_dead_once_it_outgrows_its_bound() -> None:
    """Adding is O(1): the dead are dropped when more than 64 (then twice the living)."""
    live = _redact._LiveSecrets()
    kept = [_add(live, f"secret-{i:04}") for i in range(64)]
    assert (64, 64) == (len(live._refs), live._prune_at)

    kept.append(_add(live, "secret-0064"))  # the 65th: all alive, none dropped

    assert (65, 130) == (len(live._refs), live._prune_at)


def test_a_prune_drops_exactly_the_dead() -> None:
    live = _redact._LiveSecrets()
    kept = [_add(live, f"secret-{i:04}") for i in range(64)]
    last = Held("secret-last")  # made while all live: its id is not a dead one's
    del kept[:61]

    live.add(last, last.value)

    assert (4, 64) == (len(live._refs), live._prune_at)
    assert {"secret-0061", "secret-0062", "secret-0063", "secret-last"} == set(
        live.snapshot()[0]
    )


def test_a_dead_secret_leaves_the_next_snapshot() -> None:
    live = _redact._LiveSecrets()
    kept = _add(live, "short-lived")
    assert ("short-lived",) == live.snapshot()[0]

    del kept

    assert ((), frozenset()) == live.snapshot()


# -- the per-call registry with no living secret anywhere ------------------------------


@pytest.fixture
def nothing_living(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide the secrets the rest of the suite keeps alive, behind a fresh registry."""
    monkeypatch.setattr(_redact, "_LIVE", _redact._LiveSecrets())


@pytest.mark.usefixtures("nothing_living")
def test_a_call_registry_alone_makes_redaction_active() -> None:
    assert not _redact.active()
    token = _redact.open_registry()
    try:
        assert not _redact.active()  # open, but nothing registered yet
        _redact.register("in-call-only")
        record = logging.LogRecord(
            "x", logging.INFO, __file__, 1, "%s", ("in-call-only",), None
        )
        _redact.redact_record(record)
        assert _redact.active()
    finally:
        _redact.close_registry(token)

    assert (MASK, None) == (record.msg, record.args)
    assert not _redact.active()


# -- the record factory ------------------------------------------------------------------


@pytest.fixture
def standard_factory() -> Iterator[None]:
    """The standard library's own record factory, as before anything installed ours."""
    original = logging.getLogRecordFactory()
    logging.setLogRecordFactory(logging.LogRecord)
    try:
        yield
    finally:
        logging.setLogRecordFactory(original)


def _record(message: str, *args: object) -> logging.LogRecord:
    factory = logging.getLogRecordFactory()
    return factory("x", logging.INFO, __file__, 1, message, args, None)


@pytest.mark.usefixtures("standard_factory")
def test_the_first_secret_installs_the_factory_once() -> None:
    first = Secret(f"first-{uuid.uuid4().hex}")
    installed = logging.getLogRecordFactory()
    second = Secret(f"second-{uuid.uuid4().hex}")

    assert installed is not logging.LogRecord
    assert installed is logging.getLogRecordFactory()
    assert (
        f"{MASK} and {MASK}"
        == _record("%s and %s", first.reveal(), second.reveal()).getMessage()
    )


@pytest.mark.usefixtures("standard_factory")
def test_the_factory_wraps_the_one_in_place_with_its_arguments() -> None:
    made: list[dict[str, object]] = []

    def tagging(*args: object, **kwargs: object) -> logging.LogRecord:
        made.append(dict(kwargs))
        record = logging.LogRecord(*args, **kwargs)  # type: ignore[arg-type]
        record.tagged = True
        return record

    logging.setLogRecordFactory(tagging)
    secret = Secret(f"wrapped-{uuid.uuid4().hex}")
    record = logging.getLogRecordFactory()(
        name="x",
        level=logging.INFO,
        pathname=__file__,
        lineno=1,
        msg="token %s",
        args=(secret.reveal(),),
        exc_info=None,
    )

    assert (f"token {MASK}", True) == (
        record.getMessage(),
        getattr(record, "tagged", None),
    )
    assert "token %s" == made[-1]["msg"]  # keywords reach the wrapped factory


# -- the trio_mcp loggers' filter --------------------------------------------------------


def _has_filter(logger: logging.Logger) -> bool:
    return any(isinstance(f, SecretFilter) for f in logger.filters)


def test_every_trio_mcp_logger_gets_the_filter_and_no_other() -> None:
    root = logging.getLogger("trio_mcp")
    for found in [f for f in root.filters if isinstance(f, SecretFilter)]:
        root.removeFilter(found)
    child = logging.getLogger(f"trio_mcp.test_{uuid.uuid4().hex}")
    lookalike = logging.getLogger(f"trio_mcpish.test_{uuid.uuid4().hex}")
    outsider = logging.getLogger(f"elsewhere.trio_mcp.{uuid.uuid4().hex}")

    _redact.install_log_filter()
    _redact.install_log_filter()

    assert (True, True, False, False) == tuple(
        map(_has_filter, (root, child, lookalike, outsider))
    )
    assert 1 == sum(isinstance(f, SecretFilter) for f in child.filters)


def test_a_record_handled_by_a_trio_mcp_logger_is_masked() -> None:
    """A record rebuilt from a queue (``makeLogRecord``) skips the factory: the filter masks it."""
    child = logging.getLogger(f"trio_mcp.test_{uuid.uuid4().hex}")
    child.propagate = False
    seen: list[str] = []

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    child.addHandler(Seen())
    secret = Secret(f"queued-{uuid.uuid4().hex}")
    _redact.install_log_filter()

    queued = {"msg": "got %s", "args": (secret.reveal(),), "levelno": logging.INFO}
    child.handle(logging.makeLogRecord(queued))

    assert [f"got {MASK}"] == seen


# -- records and JSON --------------------------------------------------------------------


class Discreet(Exception):
    """An exception whose message hides what its repr shows."""

    def __str__(self) -> str:
        return "something failed"


def test_an_exception_whose_repr_holds_a_secret_is_dropped_from_the_record() -> None:
    secret = Secret(f"repr-only-{uuid.uuid4().hex}")
    try:
        raise Discreet(secret.reveal())
    except Discreet as exc:
        record = logging.LogRecord(
            "x",
            logging.ERROR,
            __file__,
            1,
            "failed",
            None,
            (type(exc), exc, exc.__traceback__),
        )

    _redact.redact_record(record)

    assert record.exc_info is None
    assert record.exc_text is not None
    assert record.exc_text.endswith("Discreet: something failed")


@pytest.mark.parametrize(
    "plaintext",
    ['say "hi" now', "back\\slash-1", "tab\there-1", "line\nbreak-1", "bell\x07-1"],
)
def test_secrets_the_json_encoder_escapes_are_masked_in_json(plaintext: str) -> None:
    secret = Secret(plaintext)

    masked = _redact.redact_json({"k": [f"<{plaintext}>"], plaintext: 1})

    assert {"k": [f"<{MASK}>"], MASK: 1} == masked
    assert secret.reveal() == plaintext


def test_a_value_json_cannot_encode_is_still_masked() -> None:
    secret = Secret(f"beside-nan-{uuid.uuid4().hex}")

    masked = _redact.redact_json({"n": math.nan, "s": secret.reveal()})

    assert isinstance(masked, dict)
    assert MASK == masked["s"]


@attrs.define
class Lazy:
    """An attrs value with a field that is never set."""

    token: Secret[str] = attrs.field(init=False)
    other: Secret[str] = attrs.field(factory=lambda: Secret("lazy-other-1"))


def test_register_in_skips_an_attrs_field_that_was_never_set() -> None:
    value = Lazy()
    token = _redact.open_registry()
    try:
        _redact.register_in(value)
        registered = _redact._values.get()
    finally:
        _redact.close_registry(token)

    assert {"lazy-other-1"} == registered
