"""Leaf hooks: strict scalars, formatted strings, enums, secrets and constraints.

cattrs' defaults are lenient (``int("5")``, ``bool(1)``); these hooks accept exactly
what the JSON Schema of ``_schema`` accepts and raise ``Invalid`` with a fixed
message otherwise. Containers, unions and attrs classes are in ``_shapes``.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, NoReturn, get_args, get_origin

from cattrs.errors import (
    BaseValidationError,
    ClassValidationError,
    ForbiddenExtraKeysError,
)

from .._authority._secrets import MASK, Secret
from .._schema import asserts, compile_checks, is_open, is_secret, literal_values, strip
from .._schema._constraints import Field, field_of
from .._schema._inspect import kind_of
from ._problems import Invalid
from ._verbatim import verbatim_check

if TYPE_CHECKING:
    import cattrs

__all__ = ["FORMATS", "canonical", "install_leaf_hooks", "json_key"]

Hook = Callable[[object, object], object]

_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})\Z",
    re.ASCII,
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z", re.ASCII)
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\Z")


def _str(value: object, _: object) -> str:
    if isinstance(value, str):
        return value
    raise Invalid("expected a string")


def _int(value: object, _: object) -> int:
    if type(value) is int:
        return value
    # JSON Schema's "integer" is any number with a zero fraction, 5.0 included.
    if type(value) is float and value.is_integer():
        return int(value)
    raise Invalid("expected an integer")


def _float(value: object, _: object) -> float:
    # A literal beyond a double (1e400) is a JSON number, which JSON Schema's
    # "number" accepts; every parser reads it as infinity, the nearest double, and
    # so does this (a huge int too). A reply can never carry one: ``check_as``.
    if type(value) is float:
        return value
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    raise Invalid("expected a number")


def _bool(value: object, _: object) -> bool:
    if value is True or value is False:
        return value
    raise Invalid("expected a boolean")


def _none(value: object, _: object) -> None:
    if value is None:
        return
    raise Invalid("expected null")


def _date_time(value: object, _: object) -> datetime.datetime:
    if isinstance(value, str) and _DATE_TIME.match(value):
        try:
            return datetime.datetime.fromisoformat(value.upper())
        except ValueError:
            pass
    raise Invalid("expected a date-time string (RFC 3339)")


def _date(value: object, _: object) -> datetime.date:
    if isinstance(value, str) and _DATE.match(value):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            pass
    raise Invalid("expected a date string (YYYY-MM-DD)")


def _uuid(value: object, _: object) -> uuid.UUID:
    if isinstance(value, str) and _UUID.match(value):
        return uuid.UUID(value)
    raise Invalid("expected a UUID string")


#: The ``format`` of each formatted string the table has, and its hook.
FORMATS: dict[str, Hook] = {"date-time": _date_time, "date": _date, "uuid": _uuid}


def json_key(value: object) -> tuple[str, object]:
    """Return a key equal for values JSON calls equal: 1 == 1.0, but True != 1."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)
    return (type(value).__name__, value)


def canonical(value: object) -> object:
    """Return a hashable key equal exactly when JSON Schema calls values equal."""
    if isinstance(value, list):
        return ("array", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, canonical(v)) for k, v in value.items()))
    return json_key(value)


def _choices_factory(tp: object) -> Hook:
    values = literal_values(tp) or []
    members: list[object] = list(tp) if isinstance(tp, type) else list(get_args(tp))  # type: ignore[call-overload]
    table = {json_key(v): m for v, m in zip(values, members, strict=True)}
    text = "must be one of: " + ", ".join(json.dumps(v) for v in values)

    def choose(value: object, _: object) -> object:
        if value is None or isinstance(value, str | int | float):
            found = table.get(json_key(value), table)
            if found is not table:
                return found
        raise Invalid(text)

    return choose


def _is_choices(tp: object) -> bool:
    return literal_values(tp) is not None


def _is_constrained(tp: object) -> bool:
    return get_origin(tp) is Annotated and _field(tp) is not None


def _field(tp: object) -> Field | None:
    """The Field an ``Annotated`` type's extras (Field, annotated-types) make."""
    metadata: tuple[object, ...] = tp.__metadata__  # type: ignore[attr-defined]
    return field_of(metadata, kind_of(tp.__origin__))  # type: ignore[attr-defined]


def _constrained_factory(tp: object, converter: cattrs.Converter) -> Hook:
    base: object = tp.__origin__  # type: ignore[attr-defined]
    field = _field(tp)
    if field is not None and asserts(field.json_schema):
        return _verbatim_hook(tp, base, field, converter)
    inner = converter.get_structure_hook(base)
    check = compile_checks(field) if field is not None else None
    if check is None:
        return lambda value, _: inner(value, base)

    def constrained(value: object, _: object) -> object:
        result = inner(value, base)
        messages = check(result)
        if messages:
            raise Invalid(*messages)
        return result

    return constrained


def _verbatim_hook(
    tp: object, base: object, field: Field, converter: cattrs.Converter
) -> Hook:
    """A passthrough that asserts: its keywords checked with ``jsonschema``, the
    rest by the converter and the Field's constraints, every problem reported
    together; ``Any``/``object`` keep the JSON value itself."""
    assert field.json_schema is not None
    check = verbatim_check(field.json_schema)
    limits = compile_checks(field)

    def fail(problems: list[Exception]) -> NoReturn:
        raise ClassValidationError("does not fit its schema", problems, tp)  # type: ignore[arg-type]

    if is_open(strip(base)):

        def shaped(value: object, _: object) -> object:
            problems = check(value)
            if problems:
                fail(problems)
            return value

        return shaped
    inner = converter.get_structure_hook(base)

    def typed(value: object, _: object) -> object:
        problems = check(value)
        try:
            result = inner(value, base)
        except (Invalid, BaseValidationError, ForbiddenExtraKeysError) as exc:
            fail([exc, *problems])
        messages = limits(result) if limits is not None else []
        if messages:
            problems.append(Invalid(*messages))
        if problems:
            fail(problems)
        return result

    return typed


def _secret_factory(tp: object, converter: cattrs.Converter) -> Hook:
    (inner_type,) = get_args(tp) or (str,)
    inner = converter.get_structure_hook(inner_type)
    return lambda value, _: Secret(inner(value, inner_type))


def install_leaf_hooks(converter: cattrs.Converter) -> None:
    """Register the strict scalar, format, choice, secret and constraint hooks."""
    for tp, hook in (
        (str, _str),
        (int, _int),
        (float, _float),
        (bool, _bool),
        (type(None), _none),
        (datetime.datetime, _date_time),
        (datetime.date, _date),
        (uuid.UUID, _uuid),
    ):
        converter.register_structure_hook(tp, hook)
    converter.register_structure_hook_factory(_is_choices, _choices_factory)
    converter.register_structure_hook_factory(is_secret, _secret_factory)
    converter.register_structure_hook_factory(_is_constrained, _constrained_factory)
    converter.register_unstructure_hook(datetime.datetime, datetime.datetime.isoformat)
    converter.register_unstructure_hook(datetime.date, datetime.date.isoformat)
    converter.register_unstructure_hook(uuid.UUID, str)
    converter.register_unstructure_hook_func(is_secret, lambda _: MASK)
