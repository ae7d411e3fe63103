"""``Limits.blocked_warning``: seconds or a timedelta, positive, checked when built
(the warning itself: tests/transports/test_blocked_loop.py)."""

from __future__ import annotations

import datetime
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp import Limits


@given(
    st.one_of(
        st.floats(min_value=1e-9, allow_infinity=True, allow_nan=False),
        st.integers(min_value=1, max_value=10**6),
        st.timedeltas(min_value=datetime.timedelta(microseconds=1)),
    )
)
def test_blocked_warning_takes_positive_seconds_or_a_timedelta(
    value: float | datetime.timedelta,
) -> None:
    expected = value.total_seconds() if isinstance(value, datetime.timedelta) else value

    assert float(expected) == Limits(blocked_warning=value).blocked_warning


@given(
    st.one_of(
        st.floats(max_value=0) | st.just(math.nan),
        st.integers(max_value=0),
        st.timedeltas(max_value=datetime.timedelta(0)),
    )
)
def test_blocked_warning_refuses_zero_negative_and_nan_naming_the_field(
    value: float | datetime.timedelta,
) -> None:
    with pytest.raises(ValueError, match="blocked_warning"):
        Limits(blocked_warning=value)


@pytest.mark.parametrize("value", ["1", None, True, [1]])
def test_blocked_warning_of_the_wrong_type_is_a_type_error_naming_the_field(
    value: object,
) -> None:
    with pytest.raises(TypeError, match="blocked_warning"):
        Limits(blocked_warning=value)  # type: ignore[arg-type]
