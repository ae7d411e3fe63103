"""Reading Python types: unwrap wrappers, classify unions, describe attrs fields.

Shared by the schema walker and the decoder's hook factories, so both see a type
the same way. Pure functions over types; no schema and no converter here.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import types
import typing
from collections.abc import MutableSequence, Sequence
from typing import Annotated, Literal, NewType, Union, get_args, get_origin

import attrs

from .._authority._secrets import Secret
from ._constraints import Field, Kind, field_of, misplaced, split_validators

__all__ = [
    "FieldInfo",
    "declared_description",
    "NoneType",
    "RecordField",
    "field_info",
    "is_model",
    "is_record",
    "record_fields",
    "is_secret",
    "is_tagged_union",
    "kind_of",
    "name_of",
    "strip",
    "union_parts",
]

NoneType = type(None)
_QUALIFIER = re.compile(r"\b(?:[A-Za-z_]\w*\.)+")
_SEQUENCES: tuple[object, ...] = (
    list,
    tuple,
    set,
    frozenset,
    Sequence,
    MutableSequence,
)


def strip(tp: object) -> object:
    """Remove NewType and Annotated layers, which do not change the JSON shape."""
    while True:
        if isinstance(tp, NewType):
            tp = tp.__supertype__
        elif get_origin(tp) is Annotated:
            tp = tp.__origin__  # type: ignore[attr-defined]
        else:
            return tp


def declared_description(tp: object) -> str | None:
    """The description an ``Annotated`` type's ``Field`` (trio_mcp's or
    pydantic's) gives, if any: a parameter documented where it is declared."""
    if get_origin(tp) is not Annotated:
        return None
    field = field_of(tp.__metadata__)  # type: ignore[attr-defined]
    return None if field is None else field.description


def union_parts(tp: object) -> tuple[list[object], bool] | None:
    """Return a union's members other than None, and whether None is one."""
    if get_origin(tp) not in (Union, types.UnionType):
        return None
    args = get_args(tp)
    return [a for a in args if a is not NoneType], NoneType in args


def is_tagged_union(members: list[object]) -> bool:
    """Return whether the members form a union decoded by ``{"Name": payload}``:
    attrs classes, dataclasses and pydantic models (a TypedDict's value is a plain
    dict, so its class cannot be told when encoding)."""
    return len(members) > 1 and all(
        isinstance(m, type)
        and (attrs.has(m) or dataclasses.is_dataclass(m) or is_model(m))
        for m in members
    )


def is_model(tp: object) -> bool:
    """Whether ``tp`` is a ``pydantic.BaseModel`` subclass.

    Read from ``sys.modules``: no class can be a model before pydantic is
    imported, so this never imports it.
    """
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(tp, type):
        return False
    base = pydantic.BaseModel
    return tp is not base and issubclass(tp, base)


def is_secret(tp: object) -> bool:
    """Return whether ``tp`` is ``Secret`` or ``Secret[X]``."""
    return tp is Secret or get_origin(tp) is Secret


def kind_of(tp: object) -> Kind:
    """Return which constraints can apply to values of ``tp``."""
    tp = strip(tp)
    parts = union_parts(tp)
    if parts is not None and len(parts[0]) == 1:
        tp = strip(parts[0][0])
    if tp is str or (
        get_origin(tp) is Literal and all(isinstance(a, str) for a in get_args(tp))
    ):
        return "string"
    if tp in (int, float):
        return "number"
    if get_origin(tp) in _SEQUENCES:
        return "array"
    return "other"


def name_of(tp: object) -> str:
    """Return a short readable name for a type, for messages."""
    parts = union_parts(tp)
    if parts is not None:
        names = [name_of(m) for m in parts[0]] + (["None"] * parts[1])
        return " | ".join(names)
    origin, args = get_origin(tp), get_args(tp)
    if origin is not None and origin is not Annotated and args:
        inner = ", ".join("..." if a is Ellipsis else name_of(a) for a in args)
        return f"{name_of(origin)}[{inner}]"
    if isinstance(tp, type):
        return tp.__name__
    return _QUALIFIER.sub("", repr(tp))


@attrs.frozen(eq=False)
class FieldInfo:
    """What the schema and the decoder need to know about one attrs field."""

    name: str
    """The key in JSON: the attribute name."""
    type: object
    """The annotation, wrapped in ``Annotated[..., Field]`` when constrained."""
    required: bool
    """No default: the key must be present."""
    opaque: tuple[object, ...]
    """Validators JSON Schema cannot express; they run at construction."""


def field_info(attribute: attrs.Attribute[object]) -> FieldInfo:
    """Combine an attrs field's annotation, metadata Field and validators."""
    tp: object = attribute.type
    kind = kind_of(tp)
    field = field_of(attribute.metadata)
    translated, opaque = split_validators(attribute, kind)
    merged: Field | None = field
    if translated is not None:
        merged = translated if merged is None else translated.merge(merged)
    if merged is not None:
        tp = Annotated[tp, merged]
    if (refused := misplaced(attribute.metadata)) is not None:
        tp = Annotated[tp, refused]  # the schema walk refuses it by name
    return FieldInfo(
        name=attribute.name,
        type=tp,
        required=attribute.default is attrs.NOTHING,
        opaque=tuple(opaque),
    )


@attrs.frozen(eq=False)
class RecordField:
    """One key of a dataclass or TypedDict, read the way an attrs field is."""

    name: str
    type: object
    """The annotation (``Required``/``NotRequired`` removed), wrapped in
    ``Annotated[..., Field]`` when ``dataclasses.field(metadata=...)`` has one."""
    required: bool
    default: object = dataclasses.MISSING
    """A dataclass field's plain default (not a factory), shown in the schema."""


def is_record(tp: object) -> bool:
    """Whether ``tp`` is a dataclass or a ``TypedDict`` (an object like an attrs class)."""
    return isinstance(tp, type) and (
        dataclasses.is_dataclass(tp) or typing.is_typeddict(tp)
    )


def record_fields(cls: type) -> list[RecordField]:
    """Return the keys a caller passes to a dataclass or TypedDict, types resolved.

    Raises:
        NameError: if a string annotation names something not importable.
        TypeError: for a dataclass ``InitVar`` (an argument that is no field).
    """
    hints = typing.get_type_hints(cls, include_extras=True)
    if typing.is_typeddict(cls):
        required = cls.__required_keys__  # type: ignore[attr-defined]
        return [
            RecordField(name, _unwrap_required(tp), _is_required(tp, name in required))
            for name, tp in hints.items()
        ]
    for name, tp in hints.items():
        if isinstance(tp, dataclasses.InitVar) or tp is dataclasses.InitVar:
            raise TypeError(f"InitVar '{name}'")
    out: list[RecordField] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp, field = hints[f.name], field_of(f.metadata)
        if field is not None:
            tp = Annotated[tp, field]
        if (refused := misplaced(f.metadata)) is not None:
            tp = Annotated[tp, refused]  # the schema walk refuses it by name
        absent = f.default_factory is dataclasses.MISSING
        required = f.default is dataclasses.MISSING and absent
        out.append(RecordField(f.name, tp, required, f.default))
    return out


def _is_required(tp: object, by_totality: bool) -> bool:
    """A TypedDict key's ``Required``/``NotRequired`` marker, else its class's
    totality. Read from the resolved hint: under ``from __future__ import
    annotations`` Python 3.11 cannot see the marker when it builds the class."""
    origin = get_origin(tp)
    if origin is typing.Required:
        return True
    if origin is typing.NotRequired:
        return False
    return by_totality


def _unwrap_required(tp: object) -> object:
    while get_origin(tp) in (typing.Required, typing.NotRequired):
        (tp,) = get_args(tp)
    return tp


def init_fields(cls: type) -> list[attrs.Attribute[object]]:
    """Return the fields a caller passes to ``cls``, types resolved.

    Raises:
        NameError: if a string annotation names something not importable.
    """
    attrs.resolve_types(cls)
    return [a for a in attrs.fields(cls) if a.init]
