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
    "input_parameters",
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


def _supported(annotation: object) -> str | None:
    """Why ``annotation`` is outside the type table (a message suffix), or None."""
    try:
        check_supported(annotation)
    except UnsupportedType as exc:
        inner = f" at '{exc.where}'" if exc.where else ""
        return f"{inner}: {exc.what} is not supported: {exc.reason}"
    return None


def _annotation(
    param: inspect.Parameter,
    hints: dict[str, object],
    refusal: Callable[[object], str | None],
) -> object:
    """The annotation of an input parameter, checked by ``refusal``.

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
    refused = refusal(annotation)
    if refused is not None:
        raise _Refused(refused)
    return annotation


@attrs.frozen
class Input:
    """One input parameter of a handler: its name, annotation and default."""

    name: str
    annotation: object
    default: Any
    """The parameter's default; None for ``T | None`` without one (never
    required); ``attrs.NOTHING`` when the input is required."""


def input_parameters(
    fn: Callable[..., object],
    *,
    where: str,
    skip_self: bool,
    hints: dict[str, object],
    refusal: Callable[[object], str | None] = _supported,
) -> tuple[list[Input], list[str]]:
    """Walk ``fn``'s parameters the one way tools, resources and prompts share.

    Returns the inputs, and a problem naming ``where`` and the parameter for each
    one that has no annotation, an annotation ``refusal`` refuses (by default,
    one outside the type table), a ``*args``/``**kwargs`` or a positional-only form.
    """
    problems: list[str] = []
    inputs: list[Input] = []
    params = list(inspect.signature(fn).parameters.values())
    for param in params[1:] if skip_self else params:
        try:
            annotation = _annotation(param, hints, refusal)
        except _Refused as refused:
            problems.append(f"{where}: parameter '{param.name}'{refused}")
            continue
        default: Any = param.default
        if default is param.empty:
            # ``T | None`` is never required: a missing value decodes to None.
            default = None if _allows_none(annotation) else attrs.NOTHING
        inputs.append(Input(param.name, annotation, default))
    return inputs, problems


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
    inputs, problems = input_parameters(
        fn, where=where, skip_self=skip_self, hints=hints
    )
    if problems:
        raise InvalidDeclaration(problems)
    fields: dict[str, object] = {}
    for one in inputs:
        metadata: dict[str, Field] = {}
        if one.name in descriptions:
            metadata["trio_mcp"] = Field(description=descriptions[one.name])
        # attrs accepts any annotation object as ``type``; its stub says ``type``.
        fields[one.name] = attrs.field(  # type: ignore[call-overload]
            type=one.annotation,
            default=one.default,
            metadata=metadata,
            kw_only=True,
        )
    name = f"ArgumentsOf_{getattr(fn, '__name__', 'handler')}"
    # Only a plain __init__ is generated: an instance lives inside one call, is
    # never compared, printed or handed on (the handler gets keyword arguments),
    # and each generated method is one more compile() at declaration time.
    cls = attrs.make_class(
        name, fields, frozen=False, slots=False, repr=False, eq=False
    )
    schema = json_schema(cls, cache=False)
    return Plan(cls, schema, tuple(fields))
