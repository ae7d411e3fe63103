"""A callable's signature as one attrs class: the declaration's ``ArgumentsOf``.

The input schema and the argument decoder both come from that one class, so what
the client is told and what the handler receives cannot drift apart.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from .._errors import InvalidDeclaration
from .._json import JsonObject
from .._schema import Field, UnsupportedType, check_supported, json_schema

__all__ = [
    "Plan",
    "declaration_id",
    "holds_write_only",
    "is_method",
    "plan_arguments",
    "resolve_hints",
    "stale_args",
]


def declaration_id(fn: Callable[..., object]) -> str:
    """Return ``module:qualname``, the name errors and receipts use for a handler."""
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def is_method(fn: Callable[..., object]) -> bool:
    """Whether ``fn`` is written as a method: its first parameter is ``self``."""
    params = list(inspect.signature(fn).parameters)
    return bool(params) and params[0] == "self"


def resolve_hints(fn: Callable[..., object]) -> dict[str, object]:
    """Return ``fn``'s annotations with string forms resolved (``Annotated`` kept).

    Raises:
        NameError: if a forward reference cannot be resolved yet.
    """
    return typing.get_type_hints(fn, include_extras=True)


def _allows_none(annotation: object) -> bool:
    """Whether ``annotation`` (possibly ``Annotated``) is ``T | None``."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if annotation is None or annotation is type(None):
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return type(None) in typing.get_args(annotation)
    return False


def stale_args(
    documented: Iterable[str], parameters: Iterable[str], *, where: str
) -> list[str]:
    """Problems for ``Args:`` entries of a docstring that name no parameter."""
    known = set(parameters)
    return [
        f"{where}: the docstring documents '{name}' under 'Args:', but there is no "
        "such parameter; remove the entry or fix its name"
        for name in documented
        if name not in known
    ]


def holds_write_only(schema: object) -> bool:
    """Whether a JSON Schema marks any value ``writeOnly`` (a ``Secret``)."""
    if isinstance(schema, dict):
        return schema.get("writeOnly") is True or any(
            holds_write_only(v) for v in schema.values()
        )
    if isinstance(schema, list):
        return any(holds_write_only(v) for v in schema)
    return False


@attrs.frozen
class Plan:
    """How a call's ``arguments`` object becomes keyword arguments for the handler."""

    arguments_class: type
    input_schema: JsonObject
    names: tuple[str, ...]


class _Refused(Exception):
    """Why a parameter cannot be an input; ``str()`` continues its message."""


def _annotation(param: inspect.Parameter, hints: dict[str, object]) -> object:
    """The annotation of an input parameter, checked against the type table.

    Raises:
        _Refused: for ``*args``/``**kwargs``, positional-only, unannotated or
            unsupported parameters.
    """
    if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
        raise _Refused(" is *args/**kwargs; declare each input as a named parameter")
    if param.kind is param.POSITIONAL_ONLY:
        raise _Refused(" is positional-only; inputs are passed by name")
    if param.name not in hints:
        raise _Refused(
            " has no type annotation; annotate it (for example 'str' or 'int')"
        )
    annotation = hints[param.name]
    try:
        check_supported(annotation)
    except UnsupportedType as exc:
        inner = f" at '{exc.where}'" if exc.where else ""
        raise _Refused(f"{inner}: {exc.reason}") from None
    return annotation


def plan_arguments(
    fn: Callable[..., object],
    *,
    where: str,
    descriptions: dict[str, str],
    skip_self: bool,
    hints: dict[str, object],
) -> Plan:
    """Build the arguments class and its schema for ``fn``.

    Raises:
        InvalidDeclaration: naming ``where`` and the parameter, for a parameter that
            has no annotation, an unsupported type, or a ``*args``/``**kwargs`` form.
    """
    problems: list[str] = []
    fields: dict[str, object] = {}
    params = list(inspect.signature(fn).parameters.values())
    for param in params[1:] if skip_self else params:
        try:
            annotation = _annotation(param, hints)
        except _Refused as refused:
            problems.append(f"{where}: parameter '{param.name}'{refused}")
            continue
        metadata: dict[str, Field] = {}
        if param.name in descriptions:
            metadata["trio_mcp"] = Field(description=descriptions[param.name])
        default: Any = param.default
        if default is param.empty:
            # ``T | None`` is never required: a missing value decodes to None.
            default = None if _allows_none(annotation) else attrs.NOTHING
        # attrs accepts any annotation object as ``type``; its stub says ``type``.
        fields[param.name] = attrs.field(  # type: ignore[call-overload]
            type=annotation,
            default=default,
            metadata=metadata,
            kw_only=True,
        )
    if problems:
        raise InvalidDeclaration(problems)
    name = f"ArgumentsOf_{getattr(fn, '__name__', 'handler')}"
    # Only a plain __init__ is generated: an instance lives inside one call, is
    # never compared, printed or handed on (the handler gets keyword arguments),
    # and each generated method is one more compile() at declaration time.
    cls = attrs.make_class(
        name, fields, frozen=False, slots=False, repr=False, eq=False
    )
    schema = json_schema(cls, cache=False)
    return Plan(cls, schema, tuple(fields))
