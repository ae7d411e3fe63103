"""The checks of public constructors' arguments: each misuse one ``InvalidArgument``.

A value built with an argument that cannot work (a number where a string belongs,
``Limits(max_concurrent=0)``, ``Icon(theme="blue")``) fails where it is built, with
a message that names the class and field and says what to give:
``Icon.theme must be 'light', 'dark' or None, not 'blue'``. ``InvalidArgument`` is a
``ValueError`` and a ``TypeError`` too, so code that caught what these constructors
raised before keeps working.

The validators have attrs' signature ``(instance, attribute, value)`` and cost what
attrs' own do; converters take the name they report. No attrs import at run time,
no I/O: every layer may use this module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ._errors import InvalidArgument

if TYPE_CHECKING:
    import attrs

__all__ = [
    "Validator",
    "as_tuple",
    "at_least",
    "count",
    "each",
    "finite_number",
    "flag",
    "integer",
    "invalid",
    "mapping",
    "of_type",
    "one_of",
    "optional",
    "positive",
    "string",
    "text",
]

T = TypeVar("T")
Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def field_name(instance: object, attribute: attrs.Attribute[Any]) -> str:
    """``Class.field`` as the caller spells it (a private ``_value`` as ``value``)."""
    name = getattr(attribute, "alias", None) or attribute.name.lstrip("_")
    return f"{type(instance).__name__}.{name}"


def invalid(where: str, expected: str, value: object) -> InvalidArgument:
    """``where must be expected, not value``: the one wording of a misuse."""
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return InvalidArgument(f"{where} must be {expected}, not {shown}")


def text(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A ``str``."""
    if not isinstance(value, str):
        raise invalid(field_name(instance, attribute), "a str", value)


def flag(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """``True`` or ``False``."""
    if not isinstance(value, bool):
        raise invalid(field_name(instance, attribute), "True or False", value)


def mapping(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A ``dict`` (a JSON object)."""
    if not isinstance(value, dict):
        raise invalid(field_name(instance, attribute), "a dict (a JSON object)", value)


def of_type(kinds: type | tuple[type, ...], expected: str) -> Validator:
    """An instance of ``kinds``, described to the user as ``expected``."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if not isinstance(value, kinds):
            raise invalid(field_name(instance, attribute), expected, value)

    return check


def optional(validator: Validator) -> Validator:
    """``None``, or what ``validator`` accepts (its message then says "or None")."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is None:
            return
        try:
            validator(instance, attribute, value)
        except InvalidArgument as exc:
            raise InvalidArgument(_or_none(str(exc))) from None

    return check


def _or_none(message: str) -> str:
    head, sep, tail = message.partition(", not ")
    return f"{head} or None{sep}{tail}" if sep else message


def integer(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """An ``int`` that is not a ``bool``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(field_name(instance, attribute), "an integer", value)


def at_least(minimum: int) -> Validator:
    """An ``int`` (not a ``bool``) of at least ``minimum``."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise invalid(
                field_name(instance, attribute),
                f"an integer of at least {minimum}",
                value,
            )

    return check


def finite_number(
    instance: object, attribute: attrs.Attribute[Any], value: object
) -> None:
    """An ``int`` or ``float`` (not a ``bool``) that is neither NaN nor infinite."""
    if not is_finite_number(value):
        raise invalid(field_name(instance, attribute), "a finite number", value)


def is_finite_number(value: object) -> bool:
    """Whether ``value`` is a number a float holds that is not NaN or infinite."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any float
        return False


def one_of(*choices: object) -> Validator:
    """One of ``choices`` (compared with ``==``, types included: ``True`` is not 1)."""
    expected = _choices(choices)

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if not any(type(value) is type(c) and value == c for c in choices):
            raise invalid(field_name(instance, attribute), expected, value)

    return check


def _choices(choices: tuple[object, ...]) -> str:
    shown = [repr(c) for c in choices]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + f" or {shown[-1]}"


def each(validator: Validator, expected: str) -> Validator:
    """A tuple (after ``as_tuple``) whose every item ``validator`` accepts; the
    message names the item: "each of Icon.sizes must be a str, not 5"."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        for item in value:  # type: ignore[attr-defined]
            try:
                validator(instance, attribute, item)
            except InvalidArgument:
                where = f"each of {field_name(instance, attribute)}"
                raise invalid(where, expected, item) from None

    return check


def as_tuple(value: Iterable[T], where: str, expected: str) -> tuple[T, ...]:
    """For a converter: any iterable but a string or a mapping (common slips), as a
    tuple."""
    if isinstance(value, str | bytes | Mapping):
        raise invalid(where, expected, value)
    try:
        return tuple(value)
    except TypeError:
        raise invalid(where, expected, value) from None


# -- for plain ``__init__`` methods: the same checks, given the name to report -----------
def count(value: object, where: str, minimum: int) -> int:
    """``value`` if it is an ``int`` (not a ``bool``) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise invalid(where, f"an integer of at least {minimum}", value)
    return value


def positive(value: object, where: str) -> float:
    """``value`` as a float if it is a finite number greater than 0."""
    if not is_finite_number(value) or not value > 0:  # type: ignore[operator]
        raise invalid(where, "a finite number of seconds greater than 0", value)
    return float(value)  # type: ignore[arg-type]


def string(value: object, where: str) -> str:
    """``value`` if it is a ``str``."""
    if not isinstance(value, str):
        raise invalid(where, "a str", value)
    return value
