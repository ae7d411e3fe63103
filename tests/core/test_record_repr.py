"""The value classes' shared ``__repr__`` prints what attrs' generated one would.

``record_repr`` replaces the ``__repr__`` attrs compiles for each class (an import-time
cost). For every class that uses it, an attrs subclass that keeps attrs' own
``__repr__`` is built, both get the same field values (any values, this one itself
included), and the two texts must agree once the class names are aligned.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.records import classes_using

from trio_mcp._records import record_repr

CLASSES = classes_using("__repr__", record_repr)


def test_the_value_classes_use_it() -> None:
    names = {cls.__name__ for cls in CLASSES}
    assert {"ToolSpec", "TextContent", "Field", "Elicit", "Limits"} <= names


def _twin(cls: type) -> type:
    """``cls`` with attrs' own generated ``__repr__`` (and the same fields)."""
    twin = type(cls.__name__, (cls,), {"__repr__": None})
    del twin.__repr__  # attrs then generates one
    return attrs.define(twin, repr=True, eq=False, init=False, slots=False)


def _filled(cls: type, values: list[object], *, itself: bool) -> Any:
    """An instance with ``values`` in its fields (validators bypassed)."""
    obj: Any = object.__new__(cls)
    for index, field in enumerate(attrs.fields(cls)):
        value = obj if itself and index == 0 else values[index % len(values)]
        object.__setattr__(obj, field.name, value)
    return obj


VALUES = st.lists(
    st.none()
    | st.integers()
    | st.text(max_size=5)
    | st.lists(st.booleans(), max_size=2),
    min_size=1,
    max_size=4,
)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__qualname__)
@settings(max_examples=20, deadline=None)
@given(values=VALUES, itself=st.booleans())
def test_record_repr_prints_what_attrs_would(
    cls: type, values: list[object], itself: bool
) -> None:
    ours = _filled(cls, values, itself=itself)
    theirs = _filled(_twin(cls), values, itself=itself)
    assert repr(ours) == repr(theirs)
