"""The one converter, and decode/encode on top of it.

Built on first use, not on import: unknown keys forbidden, detailed validation on,
strict hooks for every row of the type table. ``decode`` refuses a type the schema
refuses, so decoding accepts exactly what ``json_schema(tp)`` accepts.

cattrs (with typing_extensions) and this package's hook modules are a fifth of
``import trio_mcp``; a server needs them from its first decode or encode, a program
that only imports the package (a CLI, a test collection) never does. The hot path
pays nothing for it: ``decode`` finds its plan in a dict, ``encode`` reads one global.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence, Set
from typing import TYPE_CHECKING, TypeVar, overload

from .._errors import DecodeError
from .._schema import json_schema

if TYPE_CHECKING:
    import cattrs

    from .._json import JsonValue

__all__ = ["decode", "encode", "get_converter"]

T = TypeVar("T")

_converter: cattrs.Converter | None = None
_build_lock = threading.Lock()
#: What a structure hook raises for a value that does not fit; set with the converter.
_rejections: tuple[type[BaseException], ...] = ()


def get_converter() -> cattrs.Converter:
    """The converter every decode and encode uses; hooks are built once per type."""
    return _converter or _build()


def _build() -> cattrs.Converter:
    """Import cattrs and build the converter, once (worker threads may race here)."""
    global _converter, _rejections
    with _build_lock:
        if _converter is None:
            import cattrs
            from cattrs.errors import BaseValidationError

            from ._hooks import install_leaf_hooks
            from ._problems import Invalid
            from ._shapes import install_shape_hooks

            converter = cattrs.Converter(
                forbid_extra_keys=True,
                detailed_validation=True,
                # JSON has arrays only: tuples and sets encode as lists.
                unstruct_collection_overrides={Set: list, Sequence: list},
            )
            install_shape_hooks(converter)
            install_leaf_hooks(converter)
            _rejections = (Invalid, BaseValidationError)
            _converter = converter
        return _converter


_plans: dict[object, Callable[[object, object], object]] = {}


def _plan(tp: object) -> Callable[[object, object], object]:
    try:
        return _plans[tp]
    except KeyError:
        pass
    except TypeError:  # an unhashable annotation: plan it every time
        json_schema(tp)
        return get_converter().get_structure_hook(tp)
    json_schema(tp)  # raises UnsupportedType for anything outside the table
    hook = get_converter().get_structure_hook(tp)
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
    except _rejections as exc:  # set by _build, which _plan ran before the hook existed
        from ._problems import problems_of

        raise DecodeError(problems_of(exc)) from None


def encode(value: object, tp: object | None = None) -> JsonValue:
    """Return the JSON value of ``value``; ``tp`` picks hooks (tagged unions, secrets).

    Secrets encode as ``"**********"``, sets and tuples as arrays, enums as values.
    """
    result: JsonValue = (_converter or _build()).unstructure(value, unstructure_as=tp)
    return result
