"""Field(...) constraints and attrs validators: their JSON Schema keywords and checks.

One ``Field`` yields both the keywords a schema shows and the compiled check that
decoding runs, so the two cannot drift apart. attrs validators that JSON Schema can
express (``ge``, ``le``, ``gt``, ``lt``, ``min_len``, ``max_len``) become keywords;
any other validator keeps running at construction and its message is described.

No converter here: ``_decode`` calls ``compile_checks`` and owns the hooks.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Literal, TypeVar

import attrs

from .. import _checks as checks

if TYPE_CHECKING:
    from .._json import JsonObject, JsonValue

__all__ = [
    "METADATA_KEY",
    "Check",
    "Field",
    "Kind",
    "Misplaced",
    "compile_checks",
    "contradiction",
    "described",
    "describe_validator",
    "field_of",
    "keywords",
    "misplaced",
    "read_extra",
    "split_validators",
    "unhonoured",
]

METADATA_KEY = "trio_mcp"
"""The key of a ``Field`` in ``attrs.field(metadata=...)``."""

Kind = Literal["string", "number", "array", "other"]
"""What a constraint can apply to; JSON Schema ignores keywords of another kind."""

Number = int | float
Check = Callable[[object], list[str]]
"""A compiled constraint: the messages for one structured value, empty when it fits."""

F = TypeVar("F", bound=Callable[..., object])
V = TypeVar("V")


# Types only here (and finite bounds: JSON has no NaN). A negative length, a pattern
# that does not compile and bounds that admit no value are refused when the
# declaration is built (McpError.InvalidDeclaration naming the parameter), whether
# they came from a Field or from annotated-types.
_optional_text = checks.optional(checks.text)
_optional_count = checks.optional(checks.integer)
_optional_number = checks.optional(checks.finite_number)


@attrs.frozen(kw_only=True)
class Field:
    """Constraints and documentation for one parameter or attrs field.

    Use ``Annotated[int, Field(ge=1, le=100)]`` or
    ``attrs.field(metadata={"trio_mcp": Field(...)})``. Every constraint is shown
    in the JSON Schema and enforced when decoding.
    """

    description: str | None = attrs.field(default=None, validator=_optional_text)
    """Text for the property's ``description``."""
    min_length: int | None = attrs.field(default=None, validator=_optional_count)
    """Fewest characters of a string (``minLength``)."""
    max_length: int | None = attrs.field(default=None, validator=_optional_count)
    """Most characters of a string (``maxLength``)."""
    pattern: str | None = attrs.field(default=None, validator=_optional_text)
    """A regular expression the string must contain a match of (``re.search``)."""
    ge: Number | None = attrs.field(default=None, validator=_optional_number)
    """Smallest number allowed (``minimum``)."""
    le: Number | None = attrs.field(default=None, validator=_optional_number)
    """Largest number allowed (``maximum``)."""
    gt: Number | None = attrs.field(default=None, validator=_optional_number)
    """The number must be greater (``exclusiveMinimum``)."""
    lt: Number | None = attrs.field(default=None, validator=_optional_number)
    """The number must be less (``exclusiveMaximum``)."""
    min_items: int | None = attrs.field(default=None, validator=_optional_count)
    """Fewest items of an array (``minItems``)."""
    max_items: int | None = attrs.field(default=None, validator=_optional_count)
    """Most items of an array (``maxItems``)."""
    json_schema: JsonObject | None = attrs.field(
        default=None, hash=False, validator=checks.optional(checks.mapping)
    )
    """JSON Schema 2020-12 keywords merged verbatim into the schema, for what the
    type table cannot derive (``anyOf``, ``const``, ``if``/``then``/``else``,
    ``$defs`` with local ``$ref`` ...). Decoding enforces every keyword that asserts
    something (with ``jsonschema``); ``description``, ``examples``, ``x-...`` and
    other annotations are only shown. ``Annotated[Any, Field(json_schema=...)]``
    accepts any JSON value the passthrough allows, as is."""

    def merge(self, other: Field) -> Field:
        """Return this field overridden by the settings ``other`` gives."""
        passthrough = _pick(self.json_schema, other.json_schema)
        if self.json_schema and other.json_schema:
            passthrough = {**self.json_schema, **other.json_schema}
        return Field(
            description=_pick(self.description, other.description),
            min_length=_pick(self.min_length, other.min_length),
            max_length=_pick(self.max_length, other.max_length),
            pattern=_pick(self.pattern, other.pattern),
            ge=_pick(self.ge, other.ge),
            le=_pick(self.le, other.le),
            gt=_pick(self.gt, other.gt),
            lt=_pick(self.lt, other.lt),
            min_items=_pick(self.min_items, other.min_items),
            max_items=_pick(self.max_items, other.max_items),
            json_schema=passthrough,
        )


def _pick(mine: V | None, theirs: V | None) -> V | None:
    return mine if theirs is None else theirs


_STRING = ("min_length", "max_length", "pattern")
_NUMBER = ("ge", "le", "gt", "lt")
_ARRAY = ("min_items", "max_items")
_KEYWORDS = {
    "min_length": "minLength",
    "max_length": "maxLength",
    "pattern": "pattern",
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
    "min_items": "minItems",
    "max_items": "maxItems",
}
_APPLIES: dict[str, Kind] = {
    **dict.fromkeys(_STRING, "string"),
    **dict.fromkeys(_NUMBER, "number"),
    **dict.fromkeys(_ARRAY, "array"),
}


def misapplied(field: Field, kind: Kind) -> list[str]:
    """Return the constraint names that cannot apply to a value of ``kind``."""
    return [
        name
        for name, applies in _APPLIES.items()
        if getattr(field, name) is not None and applies != kind
    ]


_LENGTHS = ("min_length", "max_length", "min_items", "max_items")
_LOWER = ("ge", "gt")
_UPPER = ("le", "lt")


def contradiction(field: Field) -> str | None:
    """Why ``field``'s bounds are not a valid schema or admit no value, or None.

    A length must be a non-negative int (JSON Schema says so); a lower bound
    above an upper one (or equal, when either is exclusive) leaves nothing a
    caller could send, which is a mistake in the declaration.
    """
    for name in _LENGTHS:
        n = getattr(field, name)
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
            return f"{name}={n!r}: a length is an int, not negative"
    for low, high in (("min_length", "max_length"), ("min_items", "max_items")):
        a, b = getattr(field, low), getattr(field, high)
        if a is not None and b is not None and a > b:
            return f"{low}={a} and {high}={b} admit no value"
    for low in _LOWER:
        for high in _UPPER:
            a, b = getattr(field, low), getattr(field, high)
            if a is None or b is None:
                continue
            if a > b or (a == b and (low, high) != ("ge", "le")):
                return f"{low}={a} and {high}={b} admit no value"
    return None


def keywords(field: Field) -> JsonObject:
    """Return the JSON Schema keywords of ``field`` (not its passthrough)."""
    out: JsonObject = {}
    if field.description is not None:
        out["description"] = field.description
    for name, keyword in _KEYWORDS.items():
        value: JsonValue = getattr(field, name)
        if value is not None:
            out[keyword] = value
    return out


def _plural(n: Number, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _checks(field: Field) -> Iterator[Callable[[object], str | None]]:
    # Each closure captures its bound once; decoding only calls them.
    if (n := field.min_length) is not None:
        text = f"must have at least {_plural(n, 'character')}"
        yield lambda v: text if isinstance(v, str) and len(v) < n else None
    if (m := field.max_length) is not None:
        text_m = f"must have at most {_plural(m, 'character')}"
        yield lambda v: text_m if isinstance(v, str) and len(v) > m else None
    if field.pattern is not None:
        regex = re.compile(field.pattern)
        text_p = f"must match the pattern {field.pattern}"
        yield lambda v: text_p if isinstance(v, str) and not regex.search(v) else None
    yield from _number_checks(field)
    if (i := field.min_items) is not None:
        text_i = f"must have at least {_plural(i, 'item')}"
        yield lambda v: text_i if _is_array(v) and len(v) < i else None  # type: ignore[arg-type]
    if (j := field.max_items) is not None:
        text_j = f"must have at most {_plural(j, 'item')}"
        yield lambda v: text_j if _is_array(v) and len(v) > j else None  # type: ignore[arg-type]


def _number_checks(field: Field) -> Iterator[Callable[[object], str | None]]:
    bounds: list[tuple[Number | None, str, Callable[[Number, Number], bool]]] = [
        (field.ge, "must be at least", lambda v, b: v < b),
        (field.le, "must be at most", lambda v, b: v > b),
        (field.gt, "must be greater than", lambda v, b: v <= b),
        (field.lt, "must be less than", lambda v, b: v >= b),
    ]
    for bound, words, fails in bounds:
        if bound is not None:
            yield _number_check(bound, f"{words} {bound}", fails)


def _number_check(
    bound: Number, text: str, fails: Callable[[Number, Number], bool]
) -> Callable[[object], str | None]:
    def check(v: object) -> str | None:
        is_number = isinstance(v, int | float) and not isinstance(v, bool)
        return text if is_number and fails(v, bound) else None  # type: ignore[arg-type]

    return check


def _is_array(v: object) -> bool:
    return isinstance(v, list | tuple | set | frozenset)


def compile_checks(field: Field) -> Check | None:
    """Compile ``field``'s constraints once; ``None`` when it has none.

    Raises:
        re.error: if ``pattern`` is not a regular expression.
    """
    checks = list(_checks(field))
    if not checks:
        return None

    def check(value: object) -> list[str]:
        return [text for c in checks if (text := c(value)) is not None]

    return check


def described(message: str) -> Callable[[F], F]:
    """Give a validator the message shown in schemas and when it fails.

    Without it the first line of the validator's docstring is used. The message
    replaces the exception's text, which may contain the rejected value.
    """

    def mark(validator: F) -> F:
        validator.describe = message  # type: ignore[attr-defined]
        return validator

    return mark


def describe_validator(validator: object) -> str:
    """Return a validator's message: ``describe``, its docstring's first line, or
    (undocumented) the check it is: its name, or an attrs validator's own words."""
    text = getattr(validator, "describe", None)
    if isinstance(text, str) and text.strip():
        return text.strip()
    if type(validator).__module__ in ("attr.validators", "attrs.validators"):
        return f"must pass {validator!r}"  # <matches_re validator for pattern ...>
    doc = getattr(validator, "__doc__", None)
    if isinstance(doc, str) and doc.strip():
        return doc.strip().splitlines()[0].strip()
    name = getattr(validator, "__name__", None) or type(validator).__name__
    return f"must pass the check '{name}'"


def _flatten(validator: object) -> Iterator[object]:
    inner = getattr(validator, "_validators", None)
    if type(validator).__name__ == "_AndValidator" and isinstance(inner, tuple):
        for v in inner:
            yield from _flatten(v)
    elif type(validator).__name__ == "_OptionalValidator":
        # None always passes the inner validator; the Optional schema allows null.
        yield from _flatten(getattr(validator, "validator", None))
    elif validator is not None:
        yield validator


_COMPARE = {">=": "ge", "<=": "le", ">": "gt", "<": "lt"}


def _translate(validator: object, kind: Kind) -> Field | Literal[False] | None:
    """Return the Field a built-in validator means, None if the type says it all.

    ``False`` means JSON Schema cannot express it.
    """
    name = type(validator).__name__
    if name == "_InstanceOfValidator":
        return None  # the annotation already fixes the type
    if name == "_NumberValidator" and kind == "number":
        op = _COMPARE.get(getattr(validator, "compare_op", ""))
        if op is not None:
            return Field(**{op: getattr(validator, "bound", None)})
    length_name = {"_MinLengthValidator": "min", "_MaxLengthValidator": "max"}.get(name)
    if length_name is not None and kind in ("string", "array"):
        unit = "length" if kind == "string" else "items"
        bound = getattr(validator, f"{length_name}_length")
        return Field(**{f"{length_name}_{unit}": bound})
    if name == "_MatchesReValidator" and kind == "string":
        return _pattern_of(validator)
    if name == "_InValidator":
        return _enum_of(validator)
    return False


#: The anchors that make ``re.search`` mean what ``matches_re``'s function means.
_ANCHORS = {"fullmatch": "^(?:{})$", "match": "^(?:{})", "search": "{}"}


def _pattern_of(validator: object) -> Field | Literal[False]:
    """``attrs.validators.matches_re`` as a ``pattern``, unless flags change it."""
    pattern = getattr(validator, "pattern", None)
    func = getattr(getattr(validator, "match_func", None), "__name__", "")
    if not isinstance(pattern, re.Pattern) or not isinstance(pattern.pattern, str):
        return False
    if pattern.flags & ~re.UNICODE or func not in _ANCHORS:
        return False  # IGNORECASE, VERBOSE ...: JSON Schema has no flags
    return Field(pattern=_ANCHORS[func].format(pattern.pattern))


def _enum_of(validator: object) -> Field | Literal[False]:
    """``attrs.validators.in_`` over JSON scalars as an ``enum``."""
    options = getattr(validator, "_original_options", None)
    if options is None:
        options = getattr(validator, "options", None)
    if isinstance(options, Mapping):
        options = list(options)
    if isinstance(options, set | frozenset):
        options = sorted(options, key=repr)  # a stable order for the schema
    if not isinstance(options, list | tuple) or not options:
        return False  # a str means substrings; an iterator may not repeat
    if not all(_is_json_scalar(v) for v in options):
        return False
    return Field(json_schema={"enum": list(options)})


def _is_json_scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int)


def split_validators(
    attribute: attrs.Attribute[object], kind: Kind
) -> tuple[Field | None, list[object]]:
    """Split an attrs field's validators into a Field and the ones to describe."""
    field: Field | None = None
    opaque: list[object] = []
    for validator in _flatten(attribute.validator):
        translated = _translate(validator, kind)
        if translated is False:
            opaque.append(validator)
        elif translated is not None:
            field = translated if field is None else field.merge(translated)
    return field, opaque


def field_of(
    metadata: Mapping[object, object] | tuple[object, ...], kind: Kind = "other"
) -> Field | None:
    """Return the merged Field in attrs metadata or ``Annotated`` extras, if any.

    ``Annotated`` extras may be ``Field`` values and annotated-types constraints
    (``Ge(1)``, ``Interval(...)``, ``Len(...)``), which apply to a value of ``kind``;
    anything else is skipped here and refused by ``unhonoured``.
    """
    if isinstance(metadata, Mapping):
        found = metadata.get(METADATA_KEY)
        return found if isinstance(found, Field) else None
    read = (_read(m, kind) for m in _expand(metadata))
    fields = [f for f in read if isinstance(f, Field)]
    if not fields:
        return None
    merged = fields[0]
    for more in fields[1:]:
        merged = merged.merge(more)
    return merged


@attrs.frozen(eq=False)
class Misplaced:
    """What ``metadata={"trio_mcp": ...}`` holds when it is not a ``Field``.

    ``_inspect`` wraps the field's type in ``Annotated[tp, Misplaced(item)]`` so
    the schema walk refuses it by name, where it refuses any other extra.
    """

    item: object


def misplaced(metadata: Mapping[object, object]) -> Misplaced | None:
    """The non-``Field`` under an attrs or dataclass field's ``metadata["trio_mcp"]``.

    Only a ``trio_mcp.Field`` is read there: anything else (a pydantic
    ``FieldInfo``, an annotated-types constraint, a string) would promise a check
    that nothing runs, so it is refused, never dropped.
    """
    if METADATA_KEY not in metadata:
        return None
    found = metadata[METADATA_KEY]
    return None if isinstance(found, Field) else Misplaced(found)


HONOURED = (
    "trio_mcp.Field(...), pydantic.Field(...) or the annotated-types constraints "
    "Gt, Ge, Lt, Le, MultipleOf, MinLen, MaxLen, Len and Interval"
)


def unhonoured(metadata: tuple[object, ...], kind: Kind) -> str | None:
    """Why an ``Annotated`` extra cannot be honoured (naming its type), or None.

    Constraint metadata is never dropped silently: an annotated-types
    ``Predicate``, a lambda, a bare string or a ``pydantic.Field(alias=...)``
    would each promise something that nothing does.
    """
    for item in _expand(metadata):
        read = _read(item, kind)
        if isinstance(read, str):
            return read
    return None


def _expand(metadata: tuple[object, ...]) -> Iterator[object]:
    """The extras, with annotated-types groups (``Interval``, ``Len``) unpacked."""
    for item in metadata:
        if _from_annotated_types(item) and isinstance(item, Iterable):
            low = getattr(item, "min_length", 0)
            if isinstance(low, int) and low < 0:  # Len drops it: refuse it instead
                yield sys.modules["annotated_types"].MinLen(low)
            yield from item
        else:
            yield item


def _from_annotated_types(item: object) -> bool:
    return type(item).__module__ == "annotated_types"


def _type_name(item: object) -> str:
    kind = type(item)
    return f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")


def _named(item: object) -> str:
    """Name an extra for a message: its type, or the alias it is.

    ``annotated_types.LowerCase`` is ``Annotated[str, Predicate(str.islower)]``:
    its type (``typing._AnnotatedAlias``) says nothing, so it is found by name.
    """
    metadata = getattr(item, "__metadata__", None)
    if not isinstance(metadata, tuple):
        return _type_name(item)
    module = sys.modules.get("annotated_types")
    for name, value in vars(module).items() if module is not None else ():
        if value is item:
            return f"annotated_types.{name} ({', '.join(map(repr, metadata))})"
    return f"Annotated[..., {', '.join(map(repr, metadata))}]"


_AT_BOUNDS = {"Gt": "gt", "Ge": "ge", "Lt": "lt", "Le": "le"}
_AT_LENGTHS = {"MinLen": ("min", "min_length"), "MaxLen": ("max", "max_length")}


def _read(item: object, kind: Kind) -> Field | str:
    """One extra as a Field, or why it cannot be honoured."""
    if isinstance(item, Field):
        return item
    if type(item).__module__ == "pydantic.fields":
        from ._pydantic import is_pydantic_field, read_field_info

        if is_pydantic_field(item):
            return read_field_info(item, kind)
    return read_extra(item, kind)


def read_extra(item: object, kind: Kind) -> Field | str:
    """An annotated-types constraint as a Field, or why it cannot be honoured."""
    if isinstance(item, Misplaced):
        return (
            f"metadata['{METADATA_KEY}'] holds {_named(item.item)}, which cannot be "
            f"honoured there; put a trio_mcp.Field(...) there, or the constraint "
            "in Annotated[...]"
        )
    name = type(item).__name__
    refused = f"{_named(item)} cannot be honoured; use {HONOURED}"
    if not _from_annotated_types(item):
        return refused
    if name in _AT_BOUNDS:
        bound = getattr(item, _AT_BOUNDS[name], None)
        if not _is_number(bound):
            return f"{refused} (a bound must be an int or float)"
        return Field(**{_AT_BOUNDS[name]: bound})
    if name == "MultipleOf":
        step = getattr(item, "multiple_of", None)
        if not _is_number(step) or not step > 0:  # type: ignore[operator]
            return f"{refused} (multiple_of must be a positive int or float)"
        return Field(json_schema={"multipleOf": step})
    if name in _AT_LENGTHS:
        end, attribute = _AT_LENGTHS[name]
        unit = "items" if kind == "array" else "length"
        return Field(**{f"{end}_{unit}": getattr(item, attribute)})
    return refused


def _is_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)
