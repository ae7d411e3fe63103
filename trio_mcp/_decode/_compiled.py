"""A JSON Schema 2020-12 subset compiled to closures: whether a value is valid, fast.

``jsonschema`` walks a schema anew for every value (tens of microseconds per node),
which a pydantic model's whole schema, checked on every call, would pay each time.
The schemas trio_mcp checks (a model's listed schema, a passthrough) mostly use a
small set of keywords; this compiles those once into nested closures that answer
only *valid or not*, with ``jsonschema``'s semantics (``bool`` is not a number,
``1 == 1.0``, ``re.search`` for ``pattern``, ...).

A schema with any other keyword does not compile (``None``), and the caller keeps
``jsonschema``. The problems of an invalid value always come from ``jsonschema``
(``_verbatim``), so a closure that says "invalid" too eagerly costs only time; one
that says "valid" wrongly would let a value through, which the Hypothesis property
of ``tests/decode`` (decoding accepts exactly what the schema accepts) watches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

from ._hooks import canonical

if TYPE_CHECKING:
    from .._json import JsonValue

__all__ = ["compile_valid"]

Valid = Callable[[object], bool]
Formats = dict[str, Callable[[str], bool]]

#: Keywords that assert nothing (annotations), and pydantic's OpenAPI hint.
_IGNORED = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "contentMediaType",
        "contentEncoding",
        "discriminator",
    }
)
_TYPES: dict[str, Valid] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}


class _Unsupported(Exception):
    """A keyword this module does not compile."""


def compile_valid(schema: JsonValue, formats: Formats | None = None) -> Valid | None:
    """Compile ``schema`` into a validity check, or None when it uses a keyword
    beyond the subset (the caller then keeps ``jsonschema``).

    ``formats`` maps each asserted ``format`` to its check; any other format is
    an annotation, as ``jsonschema`` treats it without a format checker.
    """
    try:
        return _Compiler(formats or {}).node(schema)
    except _Unsupported:
        return None


#: Compiled together by ``_Compiler.properties``.
_OBJECT = frozenset({"properties", "required", "additionalProperties"})


class _Compiler:
    def __init__(self, formats: Formats) -> None:
        self.formats = formats
        self.type_checks: set[Valid] = set()

    def node(self, schema: JsonValue) -> Valid:
        if schema is True:
            return lambda _: True
        if schema is False:
            return lambda _: False
        if not isinstance(schema, dict):
            raise _Unsupported
        checks: list[Valid] = []
        if "properties" in schema or "additionalProperties" in schema:
            checks.append(self.properties(schema))
        for key, value in schema.items():
            if key in _IGNORED or key in _OBJECT or key.startswith("x-"):
                continue
            make = getattr(self, f"k_{key}", None)
            if make is None:
                raise _Unsupported(key)
            check = make(value, schema)
            if check is not None:
                checks.append(check)
        if not checks:
            return lambda _: True
        if len(checks) == 1:
            return checks[0]
        # The type first: every other check passes a value of another type.
        checks.sort(key=lambda c: c not in self.type_checks)
        every = tuple(checks)

        def all_of(v: object) -> bool:
            for check in every:  # noqa: SIM110 - all() of a generator is slower
                if not check(v):
                    return False
            return True

        return all_of

    def properties(self, schema: dict[str, JsonValue]) -> Valid:
        """``properties``, ``required`` and ``additionalProperties`` in one pass."""
        if "patternProperties" in schema:
            raise _Unsupported("patternProperties")
        named = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(named, dict) or not isinstance(required, list):
            raise _Unsupported("properties")
        if not all(isinstance(k, str) for k in required):
            raise _Unsupported("required")
        known = {k: self.node(s) for k, s in named.items()}
        needed = tuple(required)
        rest = schema.get("additionalProperties", True)
        closed, extra = (
            rest is False,
            None if rest in (True, False) else self.node(rest),
        )

        def properties(v: object) -> bool:
            if not isinstance(v, dict):
                return True
            for key in needed:
                if key not in v:
                    return False
            for key, item in v.items():
                check = known.get(key)
                if check is None:
                    if closed or (extra is not None and not extra(item)):
                        return False
                elif not check(item):
                    return False
            return True

        return properties

    # -- any value --------------------------------------------------------------------
    def k_type(self, value: JsonValue, _: object) -> Valid:
        names = value if isinstance(value, list) else [value]
        try:
            kinds = tuple(_TYPES[str(n)] for n in names)
        except KeyError:
            raise _Unsupported("type") from None
        check = kinds[0] if len(kinds) == 1 else _any_of(kinds)
        self.type_checks.add(check)
        return check

    def k_enum(self, value: JsonValue, _: object) -> Valid:
        if not isinstance(value, list):
            raise _Unsupported("enum")
        allowed = frozenset(canonical(v) for v in value)
        return lambda v: canonical(v) in allowed

    def k_const(self, value: JsonValue, _: object) -> Valid:
        wanted = canonical(value)
        return lambda v: canonical(v) == wanted

    def k_anyOf(self, value: JsonValue, _: object) -> Valid:
        branches = self.many(value)
        return lambda v: any(b(v) for b in branches)

    def k_oneOf(self, value: JsonValue, _: object) -> Valid:
        branches = self.many(value)
        return lambda v: sum(1 for b in branches if b(v)) == 1

    def k_allOf(self, value: JsonValue, _: object) -> Valid:
        branches = self.many(value)
        return lambda v: all(b(v) for b in branches)

    def k_not(self, value: JsonValue, _: object) -> Valid:
        inner = self.node(value)
        return lambda v: not inner(v)

    def many(self, value: JsonValue) -> tuple[Valid, ...]:
        if not isinstance(value, list) or not value:
            raise _Unsupported("a list of subschemas")
        return tuple(self.node(s) for s in value)

    # -- strings ----------------------------------------------------------------------
    def k_minLength(self, value: JsonValue, _: object) -> Valid:
        n = _count(value)
        return lambda v: not isinstance(v, str) or len(v) >= n

    def k_maxLength(self, value: JsonValue, _: object) -> Valid:
        n = _count(value)
        return lambda v: not isinstance(v, str) or len(v) <= n

    def k_pattern(self, value: JsonValue, _: object) -> Valid:
        if not isinstance(value, str):
            raise _Unsupported("pattern")
        try:
            search = re.compile(value).search
        except re.error:
            raise _Unsupported("pattern") from None
        return lambda v: not isinstance(v, str) or search(v) is not None

    def k_format(self, value: JsonValue, _: object) -> Valid | None:
        check = self.formats.get(str(value))
        if check is None:
            return None  # an annotation
        return lambda v: not isinstance(v, str) or check(v)

    # -- numbers ----------------------------------------------------------------------
    def k_minimum(self, value: JsonValue, _: object) -> Valid:
        bound = _number(value)
        return lambda v: not _is_number(v) or v >= bound  # type: ignore[operator]

    def k_maximum(self, value: JsonValue, _: object) -> Valid:
        bound = _number(value)
        return lambda v: not _is_number(v) or v <= bound  # type: ignore[operator]

    def k_exclusiveMinimum(self, value: JsonValue, _: object) -> Valid:
        bound = _number(value)
        return lambda v: not _is_number(v) or v > bound  # type: ignore[operator]

    def k_exclusiveMaximum(self, value: JsonValue, _: object) -> Valid:
        bound = _number(value)
        return lambda v: not _is_number(v) or v < bound  # type: ignore[operator]

    def k_multipleOf(self, value: JsonValue, _: object) -> Valid:
        step = _number(value)
        if not step > 0:
            raise _Unsupported("multipleOf")
        return lambda v: not _is_number(v) or _multiple(v, step)  # type: ignore[arg-type]

    # -- arrays -----------------------------------------------------------------------
    def k_minItems(self, value: JsonValue, _: object) -> Valid:
        n = _count(value)
        return lambda v: not isinstance(v, list) or len(v) >= n

    def k_maxItems(self, value: JsonValue, _: object) -> Valid:
        n = _count(value)
        return lambda v: not isinstance(v, list) or len(v) <= n

    def k_uniqueItems(self, value: JsonValue, _: object) -> Valid | None:
        if value is not True:
            return None
        return lambda v: (
            not isinstance(v, list) or len({canonical(item) for item in v}) == len(v)
        )

    def k_prefixItems(self, value: JsonValue, _: object) -> Valid:
        prefix = self.many(value)
        return lambda v: (
            not isinstance(v, list)
            or all(p(item) for p, item in zip(prefix, v, strict=False))
        )

    def k_items(self, value: JsonValue, schema: dict[str, JsonValue]) -> Valid:
        each = self.node(value)
        prefix = schema.get("prefixItems")
        skip = len(prefix) if isinstance(prefix, list) else 0

        def items(v: object) -> bool:
            if isinstance(v, list):
                for item in v[skip:] if skip else v:
                    if not each(item):
                        return False
            return True

        return items

    # -- objects ----------------------------------------------------------------------
    def k_propertyNames(self, value: JsonValue, _: object) -> Valid:
        each = self.node(value)
        return lambda v: not isinstance(v, dict) or all(each(k) for k in v)


def _any_of(kinds: tuple[Valid, ...]) -> Valid:
    return lambda v: any(k(v) for k in kinds)


def _count(value: JsonValue) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Unsupported("a count")
    return value


def _number(value: JsonValue) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Unsupported("a bound")
    if isinstance(value, float) and not math.isfinite(value):
        raise _Unsupported("a bound")
    return value


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _multiple(v: int | float, step: int | float) -> bool:
    """``jsonschema``'s ``multipleOf``, overflow included."""
    if isinstance(step, float):
        quotient = v / step
        try:
            return int(quotient) == quotient
        except (OverflowError, ValueError):  # inf: the exact way, as jsonschema
            if isinstance(v, float) and not math.isfinite(v):
                return False
            return (Fraction(v) / Fraction(step)).denominator == 1
    return v % step == 0
