"""Properties of the pydantic boundary (issue 35): every problem is reported with its
path, never only the first; a returned model round-trips through its listed schema.

``test_property.py`` holds the third: decoding accepts exactly what the listed schema
accepts, for models among the other types."""

from __future__ import annotations

import datetime
from typing import Any

import attrs
import pydantic
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from trio_mcp import DecodeError, Secret, decode, encode, json_schema


class Leaf(pydantic.BaseModel):
    name: str
    qty: int
    ratio: float
    flag: bool


class Branch(pydantic.BaseModel):
    label: str = pydantic.Field(alias="branch-label")
    leaves: list[Leaf]
    by_name: dict[str, Leaf] = {}


@attrs.frozen
class Tree:
    branches: list[Branch]
    note: str


WRONG = {str: 1, int: "x", float: "x", bool: "x"}
MESSAGES = {
    str: "expected a string",
    int: "expected an integer",
    float: "expected a number",
    bool: "expected a boolean",
}
TEXT = st.text(alphabet="abc", max_size=3)
LEAF = st.fixed_dictionaries(
    {
        "name": TEXT,
        "qty": st.integers(-5, 5),
        "ratio": st.floats(-5, 5, allow_nan=False),
        "flag": st.booleans(),
    }
)
BRANCH = st.fixed_dictionaries(
    {
        "branch-label": TEXT,
        "leaves": st.lists(LEAF, max_size=3),
        "by_name": st.dictionaries(TEXT, LEAF, max_size=2),
    }
)
TREE = st.fixed_dictionaries(
    {"branches": st.lists(BRANCH, min_size=1, max_size=3), "note": TEXT}
)
LEAF_TYPES = {"name": str, "qty": int, "ratio": float, "flag": bool}


def leaves(value: dict[str, Any]) -> list[tuple[str, tuple[object, ...], type]]:
    """(path, keys to reach it, Python type) of every leaf field of a Leaf."""
    found: list[tuple[str, tuple[object, ...], type]] = []
    for b, branch in enumerate(value["branches"]):
        places = [
            *((f"branches.{b}.leaves.{i}", ("leaves", i)) for i in range(len(branch["leaves"]))),
            *((f"branches.{b}.by_name.{k}", ("by_name", k)) for k in branch["by_name"]),
        ]  # fmt: skip
        for path, keys in places:
            for name, kind in LEAF_TYPES.items():
                found.append((f"{path}.{name}", ("branches", b, *keys, name), kind))
    return found


def put(value: Any, keys: tuple[object, ...], item: object) -> None:
    for key in keys[:-1]:
        value = value[key]
    value[keys[-1]] = item


def take(value: Any, keys: tuple[object, ...]) -> None:
    for key in keys[:-1]:
        value = value[key]
    del value[keys[-1]]


@settings(max_examples=150, deadline=None)
@given(TREE, st.data())
def test_every_bad_input_is_reported_at_its_path(
    tree: dict[str, Any], data: st.DataObject
) -> None:
    every = leaves(tree)
    wrong = data.draw(
        st.sets(st.sampled_from(range(len(every)))) if every else st.just(set())
    )
    gone = data.draw(st.sets(st.sampled_from(range(len(tree["branches"])))))
    unknown = data.draw(st.booleans())
    expected = set()
    for index in wrong:
        path, keys, kind = every[index]
        put(tree, keys, WRONG[kind])
        expected.add((path, MESSAGES[kind]))
    for b in gone:
        take(tree, ("branches", b, "branch-label"))
        expected.add((f"branches.{b}.branch-label", "this field is required"))
    if unknown:
        tree["branches"][0]["label"] = "by its name, not its alias"
        expected.add(("branches.0.label", "unknown field"))

    try:
        decode(Tree, tree)
    except DecodeError as exc:
        found = [(p.path, p.message) for p in exc.problems]
    else:
        found = []

    assert sorted(expected) == sorted(found)


class Reading(pydantic.BaseModel):
    """What a tool returns: a model with every kind of field."""

    station: str
    at: datetime.datetime
    values: list[float]
    tags: frozenset[str] = frozenset()
    key: Secret[str] | None = None
    where: tuple[float, float] | None = None


READING = st.builds(
    Reading,
    station=TEXT,
    at=st.datetimes(timezones=st.just(datetime.UTC)),
    values=st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=3),
    tags=st.frozensets(TEXT, max_size=2),
    key=st.none() | TEXT.map(Secret),
    where=st.none() | st.tuples(st.floats(-90, 90), st.floats(-180, 180)),
)
VALIDATOR = Draft202012Validator(json_schema(Reading))


@settings(max_examples=150, deadline=None)
@given(READING)
def test_a_returned_model_round_trips_through_its_listed_schema(
    reading: Reading,
) -> None:
    encoded = encode(reading, Reading)
    back: Any = decode(Reading, encoded)

    assert [] == [e.message for e in VALIDATOR.iter_errors(encoded)]
    expected = (
        reading
        if reading.key is None
        else reading.model_copy(update={"key": Secret("**********")})
    )
    assert expected == back
