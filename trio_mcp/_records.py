"""One ``__repr__`` for attrs value classes, instead of one compiled per class.

attrs writes each class's ``__repr__`` as source and compiles it when the class is
built: for the value classes ``import trio_mcp`` builds, that compile was a sixth of
the import. A class whose body sets ``__repr__ = record_repr`` gets this one instead
(attrs leaves alone a ``__repr__`` the class defines), and prints exactly what attrs'
would: ``Name(field=value, ...)`` in field order, fields with ``repr=False`` left out,
a field's own ``repr=`` callable used, and ``...`` for an instance already being
printed further up (a value that contains itself).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, cast

import attrs

if TYPE_CHECKING:
    from attrs import AttrsInstance

__all__ = ["record_repr"]

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
