"""Units and default limits, converted once at the edge.

Durations are float seconds or ``datetime.timedelta``; sizes end in ``_bytes``.
Milliseconds exist only on the wire (``ttlMs``).
"""

from __future__ import annotations

import datetime
import math

from ._errors import InvalidArgument

__all__ = [
    "DEFAULT_LIST_TTL_SECONDS",
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "KiB",
    "MiB",
    "Seconds",
    "seconds",
    "to_ms",
]

KiB = 1024
MiB = 1024 * KiB

DEFAULT_MAX_MESSAGE_BYTES = 4 * MiB
DEFAULT_MAX_DEPTH = 128
DEFAULT_MAX_CONCURRENT = 16
DEFAULT_LIST_TTL_SECONDS = 3600.0

Seconds = float | int | datetime.timedelta


def seconds(value: Seconds | None, *, what: str, finite: bool = False) -> float | None:
    """Return ``value`` as float seconds, rejecting negative or non-numeric values,
    and NaN or infinity when ``finite`` (a deadline, a cache lifetime).

    Raises:
        McpError.InvalidArgument: for a value that is not a number or a timedelta,
            a negative value, or a NaN or infinite one if ``finite`` (also a
            ``TypeError`` and a ``ValueError``, what this raised before).
    """
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        result = value.total_seconds()
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgument(
            f"{what} must be seconds (int or float) or a timedelta, not {value!r}"
        )
    else:
        try:
            result = float(value)
        except OverflowError:  # an int beyond float: infinite for our purposes
            result = math.inf
    if finite and not math.isfinite(result):
        raise InvalidArgument(
            f"{what} must be a finite number of seconds, not {result}"
        )
    if not result >= 0:  # NaN too, when not ``finite``
        raise InvalidArgument(f"{what} must not be negative, not {result}")
    return result


def to_ms(value: float) -> int:
    """Return seconds as whole milliseconds for the wire."""
    return round(value * 1000)
