"""Encoding with the same converter the decoder uses (Secret is in tests/authority)."""

from __future__ import annotations

import datetime
import uuid

import attrs
from support.values import Circle, Color, Square

from trio_mcp._authority import Secret
from trio_mcp._decode import decode, encode


@attrs.frozen
class Drawing:
    shape: Circle | Square
    color: Color
    tags: frozenset[str]
    at: datetime.datetime
    day: datetime.date
    ref: uuid.UUID
    token: Secret[str]
    pair: tuple[int, str]


def test_encode_gives_json_values_that_decode_back() -> None:
    drawing = Drawing(
        shape=Square(2.0),
        color=Color.RED,
        tags=frozenset({"a"}),
        at=datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
        day=datetime.date(2024, 1, 2),
        ref=uuid.UUID(int=7),
        token=Secret("s3cret"),
        pair=(1, "x"),
    )

    expected = {
        "shape": {"Square": {"side": 2.0}},
        "color": "red",
        "tags": ["a"],
        "at": "2024-01-02T03:04:05+00:00",
        "day": "2024-01-02",
        "ref": "00000000-0000-0000-0000-000000000007",
        "token": "**********",
        "pair": [1, "x"],
    }

    encoded = encode(drawing)
    assert expected == encoded
    assert isinstance(encoded, dict)
    assert drawing == decode(Drawing, {**encoded, "token": "s3cret"})


def test_encode_a_tagged_union_given_its_type() -> None:
    assert {"Circle": {"radius": 1.0}} == encode(Circle(1.0), Circle | Square)
