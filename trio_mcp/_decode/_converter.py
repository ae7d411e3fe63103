"""The one converter, and decode/encode on top of it.

Built once at import: unknown keys forbidden, detailed validation on, strict hooks
for every row of the type table. ``decode`` refuses a type the schema refuses, so
decoding accepts exactly what ``json_schema(tp)`` accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from typing import TYPE_CHECKING, TypeVar, overload

import cattrs
from cattrs.errors import BaseValidationError

from .._errors import DecodeError
from .._schema import json_schema
from ._hooks import install_leaf_hooks
from ._problems import Invalid, problems_of
from ._shapes import install_shape_hooks

if TYPE_CHECKING:
    from .._json import JsonValue

__all__ = ["converter", "decode", "encode"]

T = TypeVar("T")

converter = cattrs.Converter(
    forbid_extra_keys=True,
    detailed_validation=True,
    # JSON has arrays only: tuples and sets encode as lists.
    unstruct_collection_overrides={Set: list, Sequence: list},
)
"""The converter every decode and encode uses; hooks are built once per type."""
install_shape_hooks(converter)
install_leaf_hooks(converter)

_plans: dict[object, Callable[[object, object], object]] = {}


def _plan(tp: object) -> Callable[[object, object], object]:
    try:
        return _plans[tp]
    except KeyError:
        pass
    except TypeError:  # an unhashable annotation: plan it every time
        json_schema(tp)
        return converter.get_structure_hook(tp)
    json_schema(tp)  # raises UnsupportedType for anything outside the table
    hook = converter.get_structure_hook(tp)
    _plans[tp] = hook
    return hook


@overload
def decode(tp: type[T], value: JsonValue) -> T: ...
@overload
def decode(tp: object, value: JsonValue) -> object: ...
def decode(tp: object, value: JsonValue) -> object:
    """Return ``value`` decoded as ``tp``, accepting exactly what its schema accepts.

    Raises:
        DecodeError: listing every problem (path and message), not only the first.
        UnsupportedType: if ``tp`` has no JSON Schema.
    """
    hook = _plan(tp)
    try:
        return hook(value, tp)
    except (Invalid, BaseValidationError) as exc:
        raise DecodeError(problems_of(exc)) from None


def encode(value: object, tp: object | None = None) -> JsonValue:
    """Return the JSON value of ``value``; ``tp`` picks hooks (tagged unions, secrets).

    Secrets encode as ``"**********"``, sets and tuples as arrays, enums as values.
    """
    result: JsonValue = converter.unstructure(value, unstructure_as=tp)
    return result
