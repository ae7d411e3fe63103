"""What the decode tests share: the problems a refused value is reported with."""

from __future__ import annotations

import pytest

from trio_mcp import DecodeError, decode

__all__ = ["problems"]


def problems(tp: object, value: object) -> list[tuple[str, str]]:
    """Decoding ``value`` as ``tp`` fails; each problem's path and message, in order."""
    with pytest.raises(DecodeError) as caught:
        decode(tp, value)  # type: ignore[call-overload]
    return [(p.path, p.message) for p in caught.value.problems]
