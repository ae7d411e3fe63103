"""A callable's signature as one attrs class: the declaration's ``ArgumentsOf``.

The input schema and the argument decoder both come from that one class's fields
(the schema from the fields, the class from them on the first call), so what the
client is told and what the handler receives cannot drift apart.
"""

from __future__ import annotations

import ast
import functools
import inspect
import keyword
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from .._context import ToolContext
from .._errors import InvalidDeclaration
from .._json import JsonObject
from .._schema import (
    Field,
    UnsupportedType,
    arguments_schema,
    check_supported,
    name_of,
    strip,
    union_parts,
)

__all__ = [
    "CONTEXT_HINT",
    "Plan",
    "context_type",
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


def is_method(
    fn: Callable[..., object], signature: inspect.Signature | None = None
) -> bool:
    """Whether ``fn`` is written as a method: its first parameter is ``self``."""
    params = list((signature or inspect.signature(fn)).parameters)
    return bool(params) and params[0] == "self"


def resolve_hints(fn: Callable[..., object]) -> dict[str, object]:
    """Return ``fn``'s annotations with string forms resolved (``Annotated`` kept).

    Exactly ``typing.get_type_hints(fn, include_extras=True)``, which compiles every
    string annotation (``from __future__ import annotations``) afresh: an annotation
    that typing would leave as it evaluates (``"str"``, ``"Ticket"``,
    ``"list[str] | None"``) is evaluated here, from code compiled once per spelling.

    Raises:
        NameError: if a forward reference cannot be resolved yet.
    """
    if (
        type(fn) is not types.FunctionType
        or hasattr(fn, "__wrapped__")
        or getattr(fn, "__no_type_check__", None)
    ):
        return typing.get_type_hints(fn, include_extras=True)
    namespace = fn.__globals__
    annotations = fn.__annotations__
    direct: dict[str, object] = {}
    for name, value in annotations.items():
        found = _evaluated(value, namespace)
        if found is not None:
            direct[name] = found
    if len(direct) == len(annotations):
        return direct
    # The rest resolve as typing does, in the same namespace (a stand-in with
    # __globals__ is read exactly as a function is).
    rest = types.SimpleNamespace(
        __annotations__={k: v for k, v in annotations.items() if k not in direct},
        __globals__=namespace,
    )
    resolved = typing.get_type_hints(rest, include_extras=True)
    return {k: direct[k] if k in direct else resolved[k] for k in annotations}


def _evaluated(value: object, namespace: dict[str, Any]) -> object | None:
    """What typing makes of an annotation when it is ``_simple`` (else None).

    A bare name is looked up as ``eval`` would (``namespace``, then its builtins);
    other strings are evaluated only when ``_simple_code`` compiles them.
    """
    if isinstance(value, str):
        if value.isidentifier() and not keyword.iskeyword(value):
            if value in namespace:
                value = namespace[value]
            else:
                builtins = namespace.get("__builtins__")
                table = getattr(builtins, "__dict__", builtins)
                if not isinstance(table, dict) or value not in table:
                    return None
                value = table[value]
        else:
            code = _simple_code(value)
            if code is None:
                return None
            try:
                value = eval(code, namespace, namespace)  # as typing evaluates it
            except Exception:  # typing evaluates it again, and raises it
                return None
    return value if _simple(value) else None


#: Syntax with no side effect: names, subscripts, tuples, ``|``, None and ``...``.
_SIMPLE_SYNTAX = (
    ast.Expression,
    ast.Name,
    ast.Load,
    ast.Subscript,
    ast.Tuple,
    ast.BinOp,
    ast.BitOr,
    ast.Constant,
)


@functools.cache
def _simple_code(text: str) -> types.CodeType | None:
    """``text`` compiled, when it is built of ``_SIMPLE_SYNTAX`` only."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    if not all(isinstance(node, _SIMPLE_SYNTAX) for node in ast.walk(tree)):
        return None
    return compile(tree, "<annotation>", "eval")


_CONTAINERS = (list, dict, set, frozenset, tuple)


def _simple(tp: object) -> bool:
    """Whether typing's checks pass ``tp`` and its walk gives back ``tp`` (or an
    equal copy): a plain class (metaclass ``type``, not ``Generic``), or
    ``list``/``dict``/``set``/``frozenset``/``tuple`` or ``|`` of such."""
    if type(tp) is type:
        return tp is not typing.Generic
    if type(tp) is types.GenericAlias:
        return (
            tp.__origin__ in _CONTAINERS
            and not tp.__unpacked__
            and all(a is Ellipsis or _simple(a) for a in tp.__args__)
        )
    if type(tp) is types.UnionType:
        return all(_simple(a) for a in tp.__args__)
    return False


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
    # A loop over a stack, not a generator per level: this runs for every
    # declaration, twice.
    pending = [schema]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            if value.get("writeOnly") is True:
                return True
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


@attrs.define(eq=False)
class Plan:
    """How a call's ``arguments`` object becomes keyword arguments for the handler.

    The schema is derived from ``inputs`` at declaration; the attrs class the
    decoder structures into (the function's ``ArgumentsOf``) is made from the same
    inputs on the first call, so declaring a thousand tools compiles no class.
    ``arguments_schema`` is exactly ``json_schema`` of that class.
    """

    name: str
    """The class's name, ``ArgumentsOf_<function>``."""
    inputs: tuple[Input, ...]
    descriptions: dict[str, str]
    input_schema: JsonObject
    names: tuple[str, ...]
    _arguments_class: type | None = attrs.field(default=None, init=False, repr=False)

    @property
    def arguments_class(self) -> type:
        """The attrs class of the arguments: one keyword-only field per input."""
        cls = self._arguments_class
        if cls is None:
            cls = self._arguments_class = _arguments_class(
                self.name, self.inputs, self.descriptions
            )
        return cls


#: Why a context parameter is refused, after the type's name (RFC 156 chose
#: ``ToolContext.current()`` over an injected parameter).
CONTEXT_HINT = (
    ", a call context, which trio_mcp does not pass as an argument; remove the "
    "parameter and call ToolContext.current() inside the handler "
    "(from trio_mcp import ToolContext)"
)
#: Packages whose ``...Context`` classes are the FastMCP habit ``ctx: Context``.
_CONTEXT_PACKAGES = frozenset({"mcp", "fastmcp"})


def context_type(annotation: object) -> str | None:
    """The name of a call-context type ``annotation`` holds (``ToolContext``, or
    FastMCP's ``Context`` from ``mcp`` or ``fastmcp``), possibly optional; else None."""
    if isinstance(annotation, type):
        # A plain class, as most parameters are: nothing to unwrap. (Unwrapping
        # it anyway cost 18k instructions a parameter, 53M for 1,000 tools.)
        return _context_name(annotation)
    tp = strip(annotation)
    parts = union_parts(tp)
    for member in parts[0] if parts is not None else [tp]:
        cls = strip(member)
        cls = typing.get_origin(cls) or cls
        if isinstance(cls, type) and (name := _context_name(cls)) is not None:
            return name
    return None


def _context_name(cls: type) -> str | None:
    """The name ``context_type`` gives ``cls``, if it is a call context."""
    if issubclass(cls, ToolContext):
        return cls.__name__
    top = cls.__module__.split(".")[0]
    if top in _CONTEXT_PACKAGES and cls.__name__.endswith("Context"):
        return f"{top}'s {cls.__name__}"
    return None


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
    context = context_type(annotation)
    if context is not None:
        raise _Refused(f" is annotated with {context}{CONTEXT_HINT}")
    refused = refusal(annotation)
    if refused is not None:
        raise _Refused(refused)
    return annotation


@attrs.frozen(eq=False)
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
    signature: inspect.Signature | None = None,
) -> tuple[list[Input], list[str]]:
    """Walk ``fn``'s parameters the one way tools, resources and prompts share.

    Returns the inputs, and a problem naming ``where`` and the parameter for each
    one that has no annotation, an annotation ``refusal`` refuses (by default,
    one outside the type table), a ``*args``/``**kwargs`` or a positional-only form.
    ``signature`` is ``fn``'s, when the caller has it already.
    """
    problems: list[str] = []
    inputs: list[Input] = []
    params = list((signature or inspect.signature(fn)).parameters.values())
    for param in params[1:] if skip_self else params:
        try:
            annotation = _annotation(param, hints, refusal)
        except _Refused as refused:
            problems.append(f"{where}: parameter '{param.name}'{refused}")
            continue
        default: Any = param.default
        if _is_field(default):
            problems.append(
                f"{where}: parameter '{param.name}' has a {_field_name(default)} as its "
                "default; a default is a value: put the Field in the annotation, "
                f"'{param.name}: Annotated[{name_of(annotation)}, Field(...)]', and "
                "give the default (if any) after '='"
            )
            continue
        if default is param.empty:
            # ``T | None`` is never required: a missing value decodes to None.
            default = None if _allows_none(annotation) else attrs.NOTHING
        inputs.append(Input(param.name, annotation, default))
    return inputs, problems


def _is_field(value: object) -> bool:
    """Whether ``value`` is a ``trio_mcp.Field`` or what ``pydantic.Field()`` returns."""
    kind = type(value)
    return isinstance(value, Field) or (
        kind.__module__ == "pydantic.fields" and kind.__name__ == "FieldInfo"
    )


def _field_name(value: object) -> str:
    return "trio_mcp.Field(...)" if isinstance(value, Field) else "pydantic.Field(...)"


def plan_arguments(
    fn: Callable[..., object],
    *,
    where: str,
    descriptions: dict[str, str],
    skip_self: bool,
    hints: dict[str, object],
    signature: inspect.Signature | None = None,
) -> Plan:
    """Plan the arguments of ``fn``: its schema now, its class on first use.

    Raises:
        InvalidDeclaration: naming ``where`` and the parameter, for a parameter that
            has no annotation, an unsupported type, or a ``*args``/``**kwargs`` form.
    """
    inputs, problems = input_parameters(
        fn, where=where, skip_self=skip_self, hints=hints, signature=signature
    )
    problems.extend(
        _reserved(one.name, where) for one in inputs if _is_reserved(one.name)
    )
    if problems:
        raise InvalidDeclaration(problems)
    schema = arguments_schema(
        (one.name, one.annotation, one.default, descriptions.get(one.name))
        for one in inputs
    )
    names = tuple(one.name for one in inputs)
    return Plan(
        f"ArgumentsOf_{getattr(fn, '__name__', 'handler')}",
        tuple(inputs),
        {name: descriptions[name] for name in names if name in descriptions},
        schema,
        names,
    )


def _is_reserved(name: str) -> bool:
    """Whether an input name cannot be a field of the arguments class."""
    return name == "self" or (len(name) > 4 and name[:2] == name[-2:] == "__")


def _reserved(name: str, where: str) -> str:
    """The problem of an input whose name the arguments class cannot hold."""
    if name == "self":
        return (
            f"{where}: parameter 'self' is not the first parameter; 'self' names "
            "a method's instance, so rename this input"
        )
    return (
        f"{where}: parameter '{name}' has a name Python reserves (leading and "
        "trailing '__'); rename it"
    )


def _arguments_class(
    name: str, inputs: Iterable[Input], descriptions: dict[str, str]
) -> type:
    """Make the arguments class: a keyword-only field per input, described."""
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
            # attrs strips a private name's underscores for __init__ ('_x' would
            # be passed as 'x', clash with an input 'x', and '_' would be no
            # name at all): each input is passed under its own name.
            alias=one.name,
        )
    # Only a plain __init__ is generated: an instance lives inside one call, is
    # never compared, printed or handed on (the handler gets keyword arguments),
    # and each generated method is one more compile().
    return attrs.make_class(
        name, fields, frozen=False, slots=False, repr=False, eq=False
    )
