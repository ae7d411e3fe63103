"""The type table: Python types -> JSON Schema 2020-12, and what is refused.

Schemas are flat and self-contained: recursive classes are refused, and the only
``$ref`` are those a ``Field(json_schema=...)`` passthrough brings with its own
``$defs`` (hoisted to the root; see ``_verbatim``). ``Any`` or ``object`` is
accepted only under a passthrough that asserts something about the value.
Decoding accepts exactly what these schemas accept; ``_decode`` calls
``json_schema`` once per type to refuse what it cannot decode.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import functools
import inspect
import math
import re
import uuid
from collections.abc import Iterable, Mapping
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    TypeAlias,
    get_args,
    get_origin,
)

import attrs

if TYPE_CHECKING:
    from .._json import JsonObject, JsonValue
from .._errors import UnsupportedType
from ._constraints import (
    Field,
    Misplaced,
    contradiction,
    describe_validator,
    field_of,
    keywords,
    misapplied,
    unhonoured,
)
from ._inspect import (
    _SEQUENCES,
    NoneType,
    field_info,
    init_fields,
    is_model,
    is_record,
    is_secret,
    is_tagged_union,
    kind_of,
    name_of,
    record_fields,
    strip,
    union_parts,
)
from ._verbatim import asserts, is_open, merge_passthrough, passthrough_problem

__all__ = [
    "Argument",
    "UnsupportedType",
    "arguments_schema",
    "check_supported",
    "json_schema",
    "literal_values",
]

#: One argument of a handler: name, annotation, default (``attrs.NOTHING``: required)
#: and description (or None).
Argument: TypeAlias = tuple[str, object, object, "str | None"]


_SCALARS: dict[object, JsonObject] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    NoneType: {"type": "null"},
    None: {"type": "null"},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    uuid.UUID: {"type": "string", "format": "uuid"},
}
_JSON_TYPES: dict[type, str] = {str: "string", bool: "boolean", int: "integer"}
_REFUSED: dict[object, str] = {
    list: "name the item type, e.g. list[str]",
    tuple: "name the item type, e.g. tuple[str, ...]",
    set: "name the item type, e.g. set[str]",
    frozenset: "name the item type, e.g. frozenset[str]",
    dict: "name the value type, e.g. dict[str, int]",
    bytes: "use str (for example base64 text) instead",
    bytearray: "use str (for example base64 text) instead",
    Any: "name the type, e.g. str, an attrs class or dict[str, int], or shape any "
    "JSON value with Annotated[Any, Field(json_schema={...})]",
    object: "name the type, e.g. str, an attrs class or dict[str, int], or shape any "
    "JSON value with Annotated[object, Field(json_schema={...})]",
    inspect.Parameter.empty: "annotate it, e.g. `query: str`",
}


def _join(where: str, part: str) -> str:
    return f"{where}.{part}" if where else part


def literal_values(tp: object) -> list[object] | None:
    """Return the Python values a Literal or Enum allows, JSON scalars only."""
    if get_origin(tp) is Literal:
        values = list(get_args(tp))
    elif isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = [m.value for m in tp]
    else:
        return None
    values = [v.value if isinstance(v, enum.Enum) else v for v in values]
    ok = all(v is None or isinstance(v, str | int | float) for v in values)
    return values if ok and values else []


def _enum_schema(values: list[JsonValue]) -> JsonObject:
    kinds = {
        _JSON_TYPES.get(type(v), "number" if isinstance(v, float) else "")
        for v in values
    }
    if kinds == {"integer", "number"}:
        kinds = {"number"}
    out: JsonObject = {}
    if len(kinds) == 1 and "" not in kinds:
        out["type"] = kinds.pop()
    out["enum"] = values
    return out


@attrs.define(eq=False)
class _Walker:
    """One walk over a type; ``stack`` holds the attrs classes being expanded."""

    stack: list[type] = attrs.Factory(list)
    defs: JsonObject = attrs.Factory(dict)
    """``$defs`` of every passthrough met, for the root of the schema."""

    def schema(self, tp: object, where: str) -> JsonObject:
        """Return the schema of ``tp``, or raise UnsupportedType naming ``where``."""
        if get_origin(tp) is Annotated:
            return self.annotated(tp, where)
        base = strip(tp)
        if base is not tp:
            return self.schema(base, where)
        refused = _REFUSED.get(tp) if _hashable(tp) else None
        if refused is not None:
            what = "an untyped value" if tp is inspect.Parameter.empty else name_of(tp)
            raise UnsupportedType(what, refused, where)
        if _hashable(tp) and tp in _SCALARS:
            return dict(_SCALARS[tp])
        values = literal_values(tp)
        if values is not None:
            if not values:
                raise UnsupportedType(
                    name_of(tp), "use str, int, float, bool or None values", where
                )
            return _enum_schema(values)  # type: ignore[arg-type]
        parts = union_parts(tp)
        if parts is not None:
            return self.union(tp, parts[0], nullable=parts[1], where=where)
        if is_secret(tp):
            return self.secret(tp, where)
        if get_origin(tp) in _SEQUENCES:
            return self.array(tp, where)
        if get_origin(tp) in (dict, Mapping):
            return self.mapping(tp, where)
        if isinstance(tp, type) and attrs.has(tp):
            return self.attrs_class(tp, where)
        if is_record(tp):
            return self.record(tp, where)  # type: ignore[arg-type]
        if is_model(tp):
            return self.model(tp, where)  # type: ignore[arg-type]
        raise UnsupportedType(
            name_of(tp),
            "use str, int, float, bool, a list, a dict[str, ...], an enum, "
            "a Literal, an attrs class, a dataclass, a TypedDict or a "
            "pydantic model",
            where,
        )

    def annotated(self, tp: object, where: str) -> JsonObject:
        base: object = tp.__origin__  # type: ignore[attr-defined]
        metadata: tuple[object, ...] = tp.__metadata__  # type: ignore[attr-defined]
        why = unhonoured(metadata, kind_of(base))
        if why is not None:
            what = f"Annotated[{name_of(base)}, ...] metadata"
            if any(isinstance(m, Misplaced) for m in metadata):
                what = "this field's metadata"
            raise UnsupportedType(what, why, where)
        field = field_of(metadata, kind_of(base))
        if field is not None and is_open(strip(base)) and asserts(field.json_schema):
            out: JsonObject = {}  # any JSON value, as the passthrough shapes it
        else:
            out = self.schema(base, where)
        if field is not None:
            _apply(out, field, base, where)
            self.hoist(out, where)
        if is_secret(strip(base)):
            # Not even a passthrough may show a secret's value.
            out.pop("default", None)
            out.pop("examples", None)
        return out

    def hoist(self, out: JsonObject, where: str) -> None:
        """Move a passthrough's ``$defs`` to ``defs``, refusing a clash of names."""
        defs = out.pop("$defs", None)
        if not isinstance(defs, dict):
            return
        for name, subschema in defs.items():
            if name in self.defs and self.defs[name] != subschema:
                raise UnsupportedType(
                    f"$defs entry '{name}'",
                    "two Field(json_schema=...) define it differently; give one "
                    "of them another name",
                    where,
                )
            self.defs[name] = subschema

    def root(self, tp: object) -> JsonObject:
        """The schema of ``tp`` with every passthrough's ``$defs`` at its root."""
        out = self.schema(tp, "")
        if self.defs:
            out["$defs"] = self.defs
        return out

    def union(
        self, tp: object, members: list[object], *, nullable: bool, where: str
    ) -> JsonObject:
        if len(members) == 1:
            inner = self.schema(members[0], where)
            return {"anyOf": [inner, {"type": "null"}]} if nullable else inner
        if not is_tagged_union(members):
            raise UnsupportedType(
                name_of(tp),
                "a union may only be `X | None` or a union of attrs classes "
                "and dataclasses",
                where,
            )
        names = [m.__name__ for m in members]  # type: ignore[attr-defined]
        if len(set(names)) != len(names):
            raise UnsupportedType(
                name_of(tp), "the classes of a union need distinct names", where
            )
        branches: list[JsonValue] = []
        for name, member in zip(names, members, strict=True):
            payload = self.schema(member, _join(where, name))
            branches.append(
                {
                    "type": "object",
                    "properties": {name: payload},
                    "required": [name],
                    "additionalProperties": False,
                }
            )
        if nullable:
            branches.append({"type": "null"})
        return {"oneOf": branches}

    def secret(self, tp: object, where: str) -> JsonObject:
        if get_args(tp) != (str,):
            raise UnsupportedType(name_of(tp), "use Secret[str]", where)
        return {"type": "string", "writeOnly": True}

    def array(self, tp: object, where: str) -> JsonObject:
        origin, args = get_origin(tp), get_args(tp)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return self.fixed_tuple(args, where)
        if len(args) != 1 and origin is not tuple:
            raise UnsupportedType(name_of(tp), "name the item type", where)
        items = self.schema(args[0], _join(where, "items"))
        out: JsonObject = {"type": "array", "items": items}
        if origin in (set, frozenset):
            if not _hashable_type(args[0]):
                raise UnsupportedType(
                    name_of(tp), "set items must be hashable; use a list", where
                )
            out["uniqueItems"] = True
        return out

    def fixed_tuple(self, args: tuple[object, ...], where: str) -> JsonObject:
        if not args or args == ((),):
            raise UnsupportedType("tuple[()]", "use a list", where)
        prefix: list[JsonValue] = [
            self.schema(a, _join(where, str(i))) for i, a in enumerate(args)
        ]
        return {
            "type": "array",
            "prefixItems": prefix,
            "items": False,
            "minItems": len(args),
            "maxItems": len(args),
        }

    def mapping(self, tp: object, where: str) -> JsonObject:
        args = get_args(tp)
        if len(args) != 2 or strip(args[0]) is not str:
            raise UnsupportedType(
                name_of(tp), "JSON object keys are strings: use dict[str, ...]", where
            )
        values = self.schema(args[1], _join(where, "values"))
        return {"type": "object", "additionalProperties": values}

    def attrs_class(self, cls: type, where: str) -> JsonObject:
        self.enter(cls, where)
        try:
            fields = init_fields(cls)
        except NameError as exc:
            raise UnsupportedType(
                cls.__name__, f"an annotation cannot be resolved ({exc.name})", where
            ) from exc
        self.stack.append(cls)
        properties: JsonObject = {}
        required: list[JsonValue] = []
        for attribute in fields:
            properties[attribute.name] = self.attrs_field(attribute, where)
            if attribute.default is attrs.NOTHING:
                required.append(attribute.name)
        self.stack.pop()
        return _object(properties, required)

    def record(self, cls: type, where: str) -> JsonObject:
        """A dataclass or TypedDict: an object like an attrs class."""
        self.enter(cls, where)
        try:
            fields = record_fields(cls)
        except NameError as exc:
            raise UnsupportedType(
                cls.__name__, f"an annotation cannot be resolved ({exc.name})", where
            ) from exc
        except TypeError as exc:
            raise UnsupportedType(
                cls.__name__, f"{exc} is not a field; make it one", where
            ) from None
        self.stack.append(cls)
        properties: JsonObject = {}
        for f in fields:
            properties[f.name] = out = self.schema(f.type, _join(where, f.name))
            _show_default(out, f.default, f.type)
        self.stack.pop()
        required: list[JsonValue] = [f.name for f in fields if f.required]
        return _object(properties, required)

    def model(self, cls: type, where: str) -> JsonObject:
        """A pydantic model: the model's own schema, flat and closed (``_pydantic``)."""
        self.enter(cls, where)
        from ._pydantic import Refused, model_schema

        try:
            return model_schema(cls)
        except Refused as exc:
            inner = _join(where, exc.where) if exc.where else where
            raise UnsupportedType(exc.what, exc.reason, inner) from None

    def enter(self, cls: type, where: str) -> None:
        """Refuse a class that contains itself, or a generic one."""
        if cls in self.stack:
            raise UnsupportedType(
                cls.__name__,
                "schemas are flat and self-contained, so a class cannot contain "
                "itself; use an id (str) to refer to another item",
                where,
            )
        if get_args(cls) or getattr(cls, "__parameters__", ()):
            raise UnsupportedType(cls.__name__, "use a non-generic class", where)

    def attrs_field(self, attribute: attrs.Attribute[object], where: str) -> JsonObject:
        here = _join(where, attribute.name)
        if attribute.type is None:
            raise UnsupportedType(
                f"field {attribute.name!r}", "annotate it, e.g. `name: str`", here
            )
        info = field_info(attribute)
        out = self.schema(info.type, here)
        messages = [describe_validator(v) for v in info.opaque]
        if messages:
            text = "; ".join(messages)
            current = out.get("description")
            out["description"] = f"{current} ({text})" if current else text
        _show_default(out, attribute.default, attribute.type)
        return out

    def arguments(self, inputs: Iterable[Argument]) -> JsonObject:
        """The object of ``inputs``, as ``attrs_class`` walks the class they make.

        Each one is read as ``field_info`` reads a field without validators: its
        annotation, under ``Annotated[..., Field(description=...)]`` when it has a
        description, and its default.
        """
        properties: JsonObject = {}
        required: list[JsonValue] = []
        for name, tp, default, description in inputs:
            if description is not None and get_origin(tp) is Annotated:
                # Annotated flattens: the description merges with tp's own extras.
                out = self.schema(Annotated[tp, Field(description=description)], name)
            else:
                out = self.schema(tp, name)
                if description is not None:
                    # All a lone Field(description=...) adds to any other type.
                    out["description"] = description
            _show_default(out, default, tp)
            properties[name] = out
            if default is attrs.NOTHING:
                required.append(name)
        out = _object(properties, required)
        if self.defs:
            out["$defs"] = self.defs
        return out


_NO_DEFAULT = object()


def _show_default(out: JsonObject, default: object, tp: object) -> None:
    """Add ``default`` to ``out`` when JSON shows it as itself (never a secret's)."""
    shown = _json_default(default)
    if shown is not _NO_DEFAULT and not is_secret(strip(tp)):
        out["default"] = shown  # type: ignore[assignment]


def _object(properties: JsonObject, required: list[JsonValue]) -> JsonObject:
    out: JsonObject = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def _json_default(default: object) -> object:
    """Return a default that JSON shows as itself, or ``_NO_DEFAULT``."""
    if default is attrs.NOTHING or default is dataclasses.MISSING:
        return _NO_DEFAULT
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        return _NO_DEFAULT
    if isinstance(default, enum.Enum):
        default = default.value
    if isinstance(default, float) and not math.isfinite(default):
        return _NO_DEFAULT  # JSON has no NaN or Infinity
    if default is None or isinstance(default, str | int | float):
        return default
    return _NO_DEFAULT


def _apply(out: JsonObject, field: Field, base: object, where: str) -> None:
    wrong = misapplied(field, kind_of(base))
    if wrong:
        raise UnsupportedType(
            f"{', '.join(wrong)} on {name_of(strip(base))}",
            "length and pattern apply to str, bounds to int and float, "
            "min_items and max_items to lists, tuples and sets",
            where,
        )
    impossible = contradiction(field)
    if impossible is not None:
        raise UnsupportedType(
            f"{name_of(strip(base))} with these bounds", impossible, where
        )
    if field.pattern is not None:
        try:
            re.compile(field.pattern)
        except re.error as exc:
            raise UnsupportedType(
                "the pattern", f"it is not a regular expression ({exc})", where
            ) from exc
    out.update(keywords(field))
    if field.json_schema:
        problem = passthrough_problem(field.json_schema)
        if problem is not None:
            raise UnsupportedType(
                "Field(json_schema=...)", f"Field(json_schema=...): {problem}", where
            )
        merge_passthrough(out, field.json_schema)


def _hashable(tp: object) -> bool:
    try:
        hash(tp)
    except TypeError:
        return False
    return True


def _hashable_type(tp: object) -> bool:
    tp = strip(tp)
    if get_origin(tp) in (list, dict, set, Mapping) or tp in (list, dict, set):
        return False
    if isinstance(tp, type) and (attrs.has(tp) or is_record(tp) or is_model(tp)):
        return getattr(tp, "__hash__", None) is not None
    return True


@functools.lru_cache(maxsize=1024)
def _cached(tp: object, spelling: str) -> JsonObject:
    # ``spelling`` keeps equal-but-reordered types apart: Literal["a", 1] equals
    # Literal[1, "a"] (and A | B equals B | A), yet each lists its own order.
    del spelling
    return _Walker().root(tp)


def json_schema(tp: object, *, cache: bool = True) -> JsonObject:
    """Return the JSON Schema 2020-12 of a supported type.

    The result is a fresh dict each call, so callers may change it. Pass
    ``cache=False`` for a type met once (a declaration's arguments class): it
    is walked directly, neither kept nor copied.

    Raises:
        UnsupportedType: if ``tp`` or a type inside it is outside the table; its
            ``where`` names the place (``filters.items``).
    """
    if not cache or not _hashable(tp):
        return _Walker().root(tp)
    return copy.deepcopy(_cached(tp, repr(tp)))


def arguments_schema(inputs: Iterable[Argument]) -> JsonObject:
    """Return the schema of a handler's ``arguments`` object, one property per input.

    An input is an ``Argument``: ``(name, annotation, default, description)``;
    ``attrs.NOTHING`` as the default makes it required. The result is exactly
    ``json_schema`` of the attrs class with one keyword-only field per input (that
    annotation and default,
    ``Field(description=...)`` in its metadata), which the decoder structures into:
    a declaration gets its schema without building that class.

    Raises:
        UnsupportedType: as ``json_schema`` does, ``where`` starting at the input.
    """
    return _Walker().arguments(inputs)


def check_supported(tp: object) -> None:
    """Raise what ``json_schema(tp)`` would raise; copy nothing.

    Raises:
        UnsupportedType: as ``json_schema`` does.
    """
    if _hashable(tp):
        _cached(tp, repr(tp))
    else:
        _Walker().root(tp)
