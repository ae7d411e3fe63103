"""One ``__repr__``, ``__eq__`` and ``__hash__`` for attrs value classes, instead of
one compiled per class.

attrs writes each class's ``__repr__`` as source and compiles it when the class is
built: for the value classes ``import trio_mcp`` builds, that compile was a sixth of
the import. A class whose body sets ``__repr__ = record_repr`` gets this one instead
(attrs leaves alone a ``__repr__`` the class defines), and prints exactly what attrs'
would: ``Name(field=value, ...)`` in field order, fields with ``repr=False`` left out,
a field's own ``repr=`` callable used, and ``...`` for an instance already being
printed further up (a value that contains itself).

``__eq__ = record_eq`` (and ``__hash__ = record_hash`` for a frozen class) likewise
replace attrs' generated comparison: the same class and each compared field equal
(``==`` field by field, as attrs chains them) (``eq=False`` fields left out, a field's ``eq=`` key applied); the hash covers
the fields attrs would hash. A test holds both to attrs' own.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias, cast

import attrs

if TYPE_CHECKING:
    from attrs import AttrsInstance

__all__ = ["record_eq", "record_hash", "record_repr"]

_printing = threading.local()


def record_repr(self: object) -> str:
    """``repr`` of an attrs instance, as attrs' generated ``__repr__`` writes it."""
    try:
        active: set[int] = _printing.active
    except AttributeError:
        active = _printing.active = set()
    if id(self) in active:
        return "..."
    active.add(id(self))
    try:
        parts = []
        for field in attrs.fields(cast("type[AttrsInstance]", self.__class__)):
            if field.repr is False:
                continue
            value = (
                getattr(self, field.name)
                if field.init
                else getattr(self, field.name, attrs.NOTHING)
            )
            shown = repr(value) if field.repr is True else field.repr(value)
            parts.append(f"{field.name}={shown}")
        name = self.__class__.__qualname__.rsplit(">.", 1)[-1]
        return f"{name}({', '.join(parts)})"
    finally:
        active.discard(id(self))


_Key: TypeAlias = Callable[[object], tuple[object, ...]]
_keys: dict[type, tuple[_Key, _Key]] = {}


def _key(fields: list[attrs.Attribute[object]]) -> _Key:
    """A function giving an instance's values of ``fields`` as a tuple, each
    through its field's ``eq_key`` if it has one."""
    # attrs' stub leaves out ``eq_key`` (the ``eq=`` callable), which it sets.
    pairs: list[tuple[str, Callable[[object], object] | None]] = [
        (field.name, getattr(field, "eq_key", None)) for field in fields
    ]
    if any(key is not None for _, key in pairs):
        return lambda obj: tuple(
            getattr(obj, name) if key is None else key(getattr(obj, name))
            for name, key in pairs
        )
    if len(fields) == 1:
        one = operator.attrgetter(fields[0].name)
        return lambda obj: (one(obj),)
    if not fields:
        return lambda obj: ()
    return cast("_Key", operator.attrgetter(*(field.name for field in fields)))


def _keys_of(cls: type) -> tuple[_Key, _Key]:
    """The compared and the hashed values' functions of an attrs class."""
    try:
        return _keys[cls]
    except KeyError:
        pass
    fields = list(attrs.fields(cast("type[AttrsInstance]", cls)))
    compared = [field for field in fields if field.eq]
    hashed = [
        field
        for field in fields
        if field.hash is True or (field.hash is None and field.eq)
    ]
    keys = _keys[cls] = (_key(compared), _key(hashed))
    return keys


def record_eq(self: object, other: object) -> bool:
    """``==`` of an attrs instance, as attrs' generated ``__eq__`` decides it: the
    same class, and each compared field's values equal, in field order."""
    if other.__class__ is not self.__class__:
        return cast("bool", NotImplemented)
    compared = _keys_of(self.__class__)[0]
    same: bool = True
    for mine, theirs in zip(compared(self), compared(other)):  # noqa: B905
        # attrs chains ``self.a == other.a and ...``: no identity shortcut (a NaN
        # field is unequal to itself), and the first false result is the answer.
        same = mine == theirs
        if not same:
            return same
    return same


def record_hash(self: object) -> int:
    """``hash`` of a frozen attrs instance: its class and hashed fields' values."""
    cls = self.__class__
    return hash((cls.__qualname__, _keys_of(cls)[1](self)))
