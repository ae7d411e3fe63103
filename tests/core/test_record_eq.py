"""The value classes' shared ``__eq__`` and ``__hash__`` decide what attrs' would.

``record_eq`` and ``record_hash`` replace the ``__eq__`` and ``__hash__`` attrs compiles
for each class (an import-time cost). For every class that uses them, an attrs subclass
with attrs' own generated methods is built; pairs of instances get the same field
values, and both must compare alike; equal instances hash alike.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.records import classes_using

from trio_mcp._records import record_eq, record_hash

CLASSES = classes_using("__eq__", record_eq)


def test_the_value_classes_use_them() -> None:
    names = {cls.__name__ for cls in CLASSES}
    assert {"ToolSpec", "TextContent", "Field", "Capability", "Caller"} <= names
    for cls in CLASSES:  # a frozen class stays hashable, a mutable one does not
        frozen = getattr(cls, "__setattr__") is not object.__setattr__  # noqa: B009
        assert (cls.__dict__.get("__hash__") is record_hash) == frozen, cls


def _twin(cls: type) -> type:
    """``cls`` with attrs' own generated ``__eq__`` and ``__hash__``."""
    twin = type(cls.__name__, (cls,), {})
    hashable = cls.__dict__.get("__hash__") is record_hash
    return attrs.define(
        twin, eq=True, hash=hashable or None, init=False, repr=False, slots=False
    )


def _filled(cls: type, values: list[object]) -> Any:
    """An instance with ``values`` in its fields (validators bypassed)."""
    obj: Any = object.__new__(cls)
    for index, field in enumerate(attrs.fields(cls)):
        object.__setattr__(obj, field.name, values[index % len(values)])
    return obj


NAN = float("nan")
VALUES = st.lists(
    st.sampled_from([None, 0, 1, 1.0, "a", "", (), (1,), NAN, float("nan"), True]),
    min_size=1,
    max_size=4,
)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__qualname__)
@settings(max_examples=30, deadline=None)
@given(left=VALUES, right=VALUES)
def test_record_eq_and_hash_decide_what_attrs_would(
    cls: type, left: list[object], right: list[object]
) -> None:
    twin = _twin(cls)
    ours = (_filled(cls, left), _filled(cls, right))
    theirs = (_filled(twin, left), _filled(twin, right))
    assert (ours[0] == ours[1]) == (theirs[0] == theirs[1])
    assert (ours[0] != ours[1]) == (theirs[0] != theirs[1])
    assert (ours[0] == ours[0]) == (theirs[0] == theirs[0])
    assert ours[0].__eq__(object()) is NotImplemented
    if cls.__dict__.get("__hash__") is record_hash and ours[0] == ours[1]:
        assert hash(ours[0]) == hash(ours[1])
