"""Shape hooks: arrays, objects, Optional, tagged unions and attrs classes.

Each factory checks the JSON shape first (a string is not a list) and then reuses
cattrs' generated, detailed-validation code for the contents, so every problem in
a value is gathered with its path. Factories run once per type; cattrs caches the
hook they return.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableSequence, Sequence
from typing import TYPE_CHECKING, Any, cast, get_args, get_origin, is_typeddict

import attrs
from cattrs.cols import (
    homogenous_tuple_structure_factory,
    list_structure_factory,
    mapping_structure_factory,
)
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    ForbiddenExtraKeysError,
)
from cattrs.gen import make_dict_structure_fn, override

from .._schema import (
    FieldInfo,
    describe_validator,
    field_info,
    init_fields,
    is_model,
    is_record,
    is_tagged_union,
    record_fields,
    union_parts,
)
from ._hooks import canonical
from ._problems import FALLBACK, REQUIRED, UNKNOWN, Invalid, at, refusal_message

if TYPE_CHECKING:
    import cattrs

__all__ = ["install_shape_hooks"]

Hook = Callable[[object, object], object]
_LISTS: tuple[object, ...] = (list, Sequence, MutableSequence)


def _array_factory(tp: object, converter: cattrs.Converter) -> Hook:
    origin, args = get_origin(tp), get_args(tp)
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return _fixed_tuple(args, converter)
    if origin is tuple:
        inner = homogenous_tuple_structure_factory(tp, converter)  # type: ignore[arg-type]
    else:
        inner = list_structure_factory(list[args[0]], converter)  # type: ignore[valid-type]
    unique = origin in (set, frozenset)
    build: Callable[[list[object]], object] = origin if unique else lambda r: r  # type: ignore[assignment]

    def array(value: object, _: object) -> object:
        if not isinstance(value, list):
            raise Invalid("expected an array")
        if unique and len({canonical(v) for v in value}) != len(value):
            raise Invalid("items must be unique")
        result = inner(value, tp)
        return build(result) if unique else result

    return array


def _fixed_tuple(args: tuple[object, ...], converter: cattrs.Converter) -> Hook:
    hooks = [converter.get_structure_hook(a) for a in args]
    text = f"expected an array of {len(args)} items"

    def fixed(value: object, _: object) -> tuple[object, ...]:
        if not isinstance(value, list) or len(value) != len(args):
            raise Invalid(text)
        errors: list[Exception] = []
        result: list[object] = []
        for i, (hook, item, tp) in enumerate(zip(hooks, value, args, strict=True)):
            try:
                result.append(hook(item, tp))
            except Exception as exc:
                errors.append(at(exc, i, tp))
        if errors:
            raise ClassValidationError("while structuring a tuple", errors, tuple)
        return tuple(result)

    return fixed


def _is_array(tp: object) -> bool:
    return get_origin(tp) in (*_LISTS, tuple, set, frozenset)


def _mapping_factory(tp: object, converter: cattrs.Converter) -> Hook:
    mapping_type = cast("type", dict[get_args(tp)])  # type: ignore[misc]
    inner = cast("Hook", mapping_structure_factory(mapping_type, converter))

    def mapping(value: object, _: object) -> object:
        if not isinstance(value, dict):
            raise Invalid("expected an object")
        return inner(value, tp)

    return mapping


def _is_mapping(tp: object) -> bool:
    return get_origin(tp) in (dict, Mapping)


def _union_factory(tp: object, converter: cattrs.Converter) -> Hook:
    parts = union_parts(tp)
    assert parts is not None  # the predicate checked it
    members, nullable = parts
    if len(members) == 1:
        return _optional(members[0], converter)
    hooks = {m.__name__: (converter.get_structure_hook(m), m) for m in members}  # type: ignore[attr-defined]
    text = "expected an object with one key, one of: " + ", ".join(
        f'"{name}"' for name in hooks
    )
    if nullable:
        text += "; or null"

    def tagged(value: object, _: object) -> object:
        if value is None and nullable:
            return None
        if not isinstance(value, dict) or len(value) != 1:
            raise Invalid(text)
        ((name, payload),) = value.items()
        found = hooks.get(name)
        if found is None:
            raise Invalid(text)
        hook, member = found
        try:
            return hook(payload, member)
        except Exception as exc:
            raise ClassValidationError(
                "while structuring a tagged union", [at(exc, name, member)], dict
            ) from None

    return tagged


def _optional(member: object, converter: cattrs.Converter) -> Hook:
    inner = converter.get_structure_hook(member)

    def optional(value: object, _: object) -> object:
        if value is None:
            return None
        try:
            return inner(value, member)
        except Invalid as exc:
            (message, *more) = exc.messages
            if not more and message.startswith("expected "):
                raise Invalid(f"{message} or null") from None
            raise

    return optional


def _is_union(tp: object) -> bool:
    return union_parts(tp) is not None


def _attrs_factory(cls: type, converter: cattrs.Converter) -> Hook:
    infos = {a.name: (field_info(a), a) for a in init_fields(cls)}
    overrides = {
        name: override(struct_hook=converter.get_structure_hook(info.type))
        for name, (info, attribute) in infos.items()
        if info.type is not attribute.type
    }
    # cattrs types overrides as **kwargs mixed with its own options: Any is forced.
    options = cast("dict[str, Any]", overrides)
    generated = cast("Hook", make_dict_structure_fn(cls, converter, **options))

    def structure(value: object, _: object) -> object:
        if not isinstance(value, dict):
            raise Invalid("expected an object")
        try:
            return generated(value, cls)
        except ClassValidationError as exc:
            if _construction_failed(exc):
                raise _diagnose(cls, infos, value, converter) from None
            raise

    return structure


def _construction_failed(exc: ClassValidationError) -> bool:
    # cattrs wraps an exception from cls(**kwargs) without an attribute note. Unknown
    # keys alone also come without one, but they are not a construction failure.
    if len(exc.exceptions) != 1:
        return False
    only = exc.exceptions[0]
    return not isinstance(only, ForbiddenExtraKeysError) and not any(
        isinstance(n, AttributeValidationNote) for n in getattr(only, "__notes__", ())
    )


def _diagnose(
    cls: type,
    infos: dict[str, tuple[FieldInfo, attrs.Attribute[object]]],
    value: dict[str, object],
    converter: cattrs.Converter,
) -> ClassValidationError:
    """Run each validator again on its own, to name every field that failed.

    Only after construction failed: the fields all decoded, so we rebuild them on
    a bare instance and call the validators JSON Schema could not express.
    """
    instance: object = object.__new__(cls)
    for name, (info, attribute) in infos.items():
        item: object
        make = getattr(attribute.default, "factory", None)
        if name in value:
            item = converter.get_structure_hook(info.type)(value[name], info.type)
        elif callable(make):  # an attrs.Factory
            takes_self = getattr(attribute.default, "takes_self", False)
            item = make(instance) if takes_self else make()
        else:
            item = attribute.default
        object.__setattr__(instance, name, item)
    errors: list[Exception] = []
    for name, (info, attribute) in infos.items():
        for validator in info.opaque:
            try:
                validator(instance, attribute, getattr(instance, name))  # type: ignore[operator]
            except Exception:  # its text may quote the value
                message = describe_validator(validator)
                errors.append(at(Invalid(message), name, attribute.type))
    if not errors:
        errors.append(Invalid(FALLBACK))
    return ClassValidationError(f"while structuring {cls.__name__}", errors, cls)


def _record_factory(cls: type, converter: cattrs.Converter) -> Hook:
    """A dataclass or TypedDict: each key decoded by its type's hook, unknown and
    missing keys reported with the others, then the class built (a dict for a
    TypedDict)."""
    fields = record_fields(cls)
    hooks = {f.name: (converter.get_structure_hook(f.type), f.type) for f in fields}
    required = [f.name for f in fields if f.required]
    build: Callable[..., object] = dict if is_typeddict(cls) else cls
    post_init = getattr(cls, "__post_init__", None)

    def structure(value: object, _: object) -> object:
        if not isinstance(value, dict):
            raise Invalid("expected an object")
        errors: list[Exception] = []
        kwargs: dict[str, object] = {}
        for key, item in value.items():
            found = hooks.get(key)
            if found is None:
                errors.append(at(Invalid(UNKNOWN), key, cls))
                continue
            try:
                kwargs[key] = found[0](item, found[1])
            except Exception as exc:
                errors.append(at(exc, key, found[1]))
        errors += [at(Invalid(REQUIRED), k, cls) for k in required if k not in value]
        if errors:
            raise ClassValidationError(f"while structuring {cls.__name__}", errors, cls)
        try:
            return build(**kwargs)
        except Exception as exc:  # __post_init__ refused: its text, unless it quotes
            raise Invalid(refusal_message(post_init, exc, value)) from None

    return structure


def _is_attrs(tp: object) -> bool:
    return isinstance(tp, type) and attrs.has(tp)


def _unstructure_tagged_factory(
    tp: object, converter: cattrs.Converter
) -> Callable[[object], object]:
    def tagged(value: object) -> object:
        if value is None:
            return None
        return {type(value).__name__: converter.unstructure(value, type(value))}

    return tagged


def _is_tagged(tp: object) -> bool:
    parts = union_parts(tp)
    return parts is not None and is_tagged_union(parts[0])


def _model_factory(cls: type, converter: cattrs.Converter) -> Hook:
    from ._pydantic import model_structure  # only once a model is met

    return model_structure(cls, converter)


def _model_unstructure_factory(
    cls: type, converter: cattrs.Converter
) -> Callable[[object], object]:
    from ._pydantic import model_unstructure

    return model_unstructure(cls, converter)


def install_shape_hooks(converter: cattrs.Converter) -> None:
    """Register the array, object, union, attrs class and pydantic model hooks."""
    converter.register_structure_hook_factory(_is_array, _array_factory)
    converter.register_structure_hook_factory(_is_mapping, _mapping_factory)
    converter.register_structure_hook_factory(_is_union, _union_factory)
    converter.register_structure_hook_factory(_is_attrs, _attrs_factory)
    converter.register_structure_hook_factory(is_record, _record_factory)
    converter.register_structure_hook_factory(is_model, _model_factory)
    converter.register_unstructure_hook_factory(is_model, _model_unstructure_factory)
    converter.register_unstructure_hook_factory(_is_tagged, _unstructure_tagged_factory)
