"""Decoding and encoding pydantic models (api.md "Where Python users already are",
issue 35): every problem at its path, in one ``DecodeError`` with the attrs
problems; unknown keys refused as the listed schema says; the model's own
validators reported without quoting what was sent; encoding as the schema names it."""

from __future__ import annotations

import datetime
import math
from typing import Annotated, Any

import attrs
import pydantic
import pytest
from decoding import problems
from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from trio_mcp import Secret, decode, encode, json_schema


class Filter(BaseModel):
    name: str = pydantic.Field(min_length=1)
    value: int = pydantic.Field(ge=0)


class Query(BaseModel):
    filters: list[Filter]
    since: datetime.date | None = None


@attrs.frozen
class Envelope:
    query: Query
    page: int = 1


class Booking(BaseModel):
    start: int
    end: int
    code: str = "A"

    @field_validator("code")
    @classmethod
    def known(cls, code: str) -> str:
        if code.startswith("x"):
            raise ValueError(f"the code {code} is unknown")  # quotes what was sent
        if code.startswith("y"):
            raise ValueError("codes never start with y")
        return code

    @model_validator(mode="after")
    def ordered(self) -> Booking:
        if self.start > self.end:
            raise ValueError("start must not be after end")
        return self


class Strict(BaseModel):
    model_config = ConfigDict(strict=True)
    count: int
    day: datetime.date


class Ignoring(BaseModel):
    a: int


class Allowing(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int


class Aliased(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    sender: str = pydantic.Field(alias="from")


class Doubled(BaseModel):
    n: int

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def twice(self) -> int:
        return 2 * self.n


class Login(BaseModel):
    user: str
    token: Secret[str]


class Base(BaseModel):
    a: int


class Derived(Base):
    b: int = 2


def test_every_problem_is_reported_with_its_path_beside_the_attrs_ones() -> None:
    value = {
        "query": {
            "filters": [{"name": "", "value": 1}, {"value": -1, "zz": 0}, "f"],
            "since": "2026-02-30",
        },
        "page": "2",
    }

    assert [
        ("page", "expected an integer"),
        ("query.filters.0.name", "must have at least 1 character"),
        ("query.filters.1.name", "this field is required"),
        ("query.filters.1.value", "must be at least 0"),
        ("query.filters.1.zz", "unknown field"),
        ("query.filters.2", "expected an object"),
        ("query.since", "expected a date string (YYYY-MM-DD)"),
    ] == sorted(problems(Envelope, value))


def test_a_valid_value_decodes_into_the_model() -> None:
    found = decode(Envelope, {"query": {"filters": [{"name": "a", "value": 2}]}})

    assert Envelope(Query(filters=[Filter(name="a", value=2)])) == found


def test_the_models_validators_report_at_their_path_without_quoting() -> None:
    assert [("code", "is not valid")] == problems(
        Booking, {"start": 1, "end": 2, "code": "xyz"}
    )
    assert [("code", "codes never start with y")] == problems(
        Booking, {"start": 1, "end": 2, "code": "yes"}
    )
    assert [("", "start must not be after end")] == problems(
        Booking, {"start": 3, "end": 2}
    )


def test_validators_run_only_once_the_shape_fits() -> None:
    assert [("end", "expected an integer")] == problems(
        Booking, {"start": 3, "end": "2", "code": "xyz"}
    )


def test_a_strict_model_takes_what_its_schema_takes() -> None:
    """The schema says integer (5.0 is one) and a date string: so does decoding."""
    found = decode(Strict, {"count": 5.0, "day": "2026-01-02"})

    assert Strict(count=5, day=datetime.date(2026, 1, 2)) == found
    assert [("count", "expected an integer")] == problems(
        Strict, {"count": "5", "day": "2026-01-02"}
    )


def test_unknown_keys_are_refused_unless_the_model_allows_them() -> None:
    assert [("b", "unknown field")] == problems(Ignoring, {"a": 1, "b": 2})
    kept = decode(Allowing, {"a": 1, "b": [2]})

    assert {"b": [2]} == kept.model_extra
    assert {"a": 1, "b": [2]} == encode(kept)


def test_keys_are_the_aliases_the_schema_lists() -> None:
    me = Aliased.model_validate({"from": "me"})

    assert ["from"] == json_schema(Aliased)["required"]
    assert me == decode(Aliased, {"from": "me"})
    assert {"from": "me"} == encode(me)
    assert ("sender", "unknown field") in problems(Aliased, {"sender": "me"})


def test_encoding_leaves_out_computed_fields_and_encodes_as_declared() -> None:
    assert {"n": 2} == encode(Doubled(n=2))
    assert {"a": 1} == encode(Derived(a=1), Base)
    assert {"a": 1, "b": 2} == encode(Derived(a=1))


def test_a_secret_in_a_model_decodes_to_a_secret_and_encodes_masked() -> None:
    login = decode(Login, {"user": "ann", "token": "hunter2"})

    assert isinstance(login.token, Secret)
    assert "hunter2" == login.token.reveal()
    assert "hunter2" not in repr(login)
    assert {"user": "ann", "token": "**********"} == encode(login)
    assert login == Login(user="ann", token=Secret("hunter2"))


def test_a_value_that_is_not_the_model_does_not_encode_as_it() -> None:
    with pytest.raises(TypeError, match="a dict is not a Filter"):
        encode({"name": "a", "value": 1}, Filter)


def test_a_pydantic_field_on_a_parameter_type_is_enforced() -> None:
    tp = Annotated[list[int], pydantic.Field(min_length=1, description="Ids")]

    assert [("", "must have at least 1 item")] == problems(tp, [])
    assert [("", "must be at least 1")] == problems(
        Annotated[int, pydantic.Field(ge=1)], 0
    )


def test_a_decoded_model_is_the_models_own_class() -> None:
    found: Any = decode(list[Filter | None], [{"name": "a", "value": 0}, None])

    assert [Filter(name="a", value=0), None] == found


class Numbers(BaseModel):
    ratio: float
    ratios: dict[str, list[float]] = {}
    count: int = 0


def test_numbers_beyond_a_double_or_64_bits_decode_as_the_schema_says() -> None:
    """docs/limits.md: a ``number`` takes a 400-digit integer (as infinity), an
    ``integer`` takes ``1e300``; pydantic's own types refuse both."""
    huge = 10**400
    found = decode(
        Numbers, {"ratio": -huge, "ratios": {"a": [1, huge]}, "count": 1e300}
    )

    assert (
        Numbers(ratio=-math.inf, ratios={"a": [1.0, math.inf]}, count=int(1e300))
        == found
    )
    assert huge == decode(Numbers, {"ratio": 0, "count": huge}).count
    assert [("count", "expected an integer")] == problems(
        Numbers, {"ratio": 0, "count": 1e400}
    )
