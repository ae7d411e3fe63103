"""Time what process-wide redaction adds to each log record.

    .venv/bin/python bench/redact_logging.py [--records 20000]

Prints microseconds per record, best of five rounds, for a logger whose handler formats
every record (as a StreamHandler would, into memory): without the redacting record factory,
with it and no living ``Secret``, and with 1, 10, 100 and 1000 living secrets; then a
record whose message holds a secret, and an exception record; then what masking a
100-item tool result costs (``redact_json``, as the reply guard runs it) with the same
numbers of living secrets. Figures, not a test.
"""

from __future__ import annotations

import argparse
import gc
import io
import logging
import secrets
import time
from collections.abc import Callable

from trio_mcp import Secret
from trio_mcp._authority import _redact


def _logger() -> logging.Logger:
    logger = logging.getLogger("bench.redact")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    logger.handlers[:] = [handler]
    return logger


def _best(records: int, emit: Callable[[], None]) -> float:
    """Best of five rounds, in microseconds per record."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(records):
            emit()
        rounds.append((time.perf_counter() - start) / records * 1e6)
        logging.getLogger("bench.redact").handlers[0].stream = io.StringIO()  # type: ignore[attr-defined]
    return min(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    records = max(1, min(parser.parse_args().records, 1_000_000))
    logger = _logger()

    def plain() -> None:
        logger.info("user %s asked for %d items", "ada", 20)

    print(f"{'case':<44} us/record")
    logging.setLogRecordFactory(logging.LogRecord)
    print(f"{'no redaction (stdlib factory)':<44} {_best(records, plain):9.2f}")
    _redact.install_log_filter()
    print(f"{'factory, no living Secret':<44} {_best(records, plain):9.2f}")
    held: list[Secret[str]] = []
    for count in (1, 10, 100, 1000):
        held += [Secret(secrets.token_hex(16)) for _ in range(count - len(held))]
        print(f"{f'factory, {count} living secrets':<44} {_best(records, plain):9.2f}")
    leaked = held[0].reveal()

    def holding() -> None:
        logger.info("calling upstream with %s", leaked)

    def failing() -> None:
        try:
            raise ConnectionError("upstream refused")
        except ConnectionError:
            logger.exception("upstream")

    print(f"{'message holds a secret, 1000 living':<44} {_best(records, holding):9.2f}")
    few = max(1, records // 10)
    print(f"{'exception record, 1000 living':<44} {_best(few, failing):9.2f}")
    del held
    gc.collect()
    _results(records)


def _results(records: int) -> None:
    """Microseconds to mask a 100-item result, best of five rounds."""
    result = {"items": [{"id": i, "title": f"ticket {i}"} for i in range(100)]}
    calls = max(1, records // 20)
    print(f"{'case':<44} us/result")
    held: list[Secret[str]] = []
    for count in (0, 1, 10, 100, 1000):
        held += [Secret(secrets.token_hex(16)) for _ in range(count - len(held))]
        rounds = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(calls):
                _redact.redact_json(result)  # type: ignore[arg-type]
            rounds.append((time.perf_counter() - start) / calls * 1e6)
        print(f"{f'100-item result, {count} living secrets':<44} {min(rounds):9.2f}")


if __name__ == "__main__":
    main()
