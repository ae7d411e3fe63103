"""Enforcing a ``Field(json_schema=...)`` passthrough with ``jsonschema`` (2020-12).

The converter enforces what the type table derives; keywords it cannot derive
(``anyOf``, ``const``, ``if``/``then``/``else``, ``$ref`` ...) are checked here, on
the JSON value, and the problems of both are reported together. A check is compiled only for a value whose
passthrough asserts something, so every other value decodes as fast as before.

Messages are fixed text built from the schema, never from the value (it may be a
secret), in the same ``Problem(path, message)`` form as the converter's.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ._problems import UNKNOWN, Invalid, at

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

    from .._json import JsonObject

__all__ = ["asserting_formats", "verbatim_check"]

Check = Callable[[object], list[Exception]]

#: The leaf hooks' messages, for the formats ``verbatim_check`` may assert.
_FORMAT_WORDS = {
    "date-time": "expected a date-time string (RFC 3339)",
    "date": "expected a date string (YYYY-MM-DD)",
    "uuid": "expected a UUID string",
}
_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def verbatim_check(passthrough: JsonObject, *, formats: bool = False) -> Check:
    """Compile the check of one passthrough, alone (its own ``$defs`` resolve its
    ``$ref``); calling it returns the problems, placed below the value, or ``[]``.

    The converter enforces the rest of the value's schema, so the two together
    accept exactly what the whole schema accepts, at the price of validating only
    the passthrough's keywords. With ``formats``, the ``format`` values the type
    table asserts (``date-time``, ``date``, ``uuid``) are checked as the
    converter checks them; other formats stay annotations.
    """
    import jsonschema

    from ._compiled import compile_valid

    validator = jsonschema.Draft202012Validator(
        copy.deepcopy(passthrough), format_checker=_formats() if formats else None
    )
    # The common case, a valid value, through closures when the schema compiles.
    valid = compile_valid(passthrough, _format_checks() if formats else None)
    is_valid = validator.is_valid if valid is None else valid

    def check(value: object) -> list[Exception]:
        if is_valid(value):
            return []
        return [
            _placed(path, message)
            for error in validator.iter_errors(value)
            for path, message in _problems(error)
        ]

    return check


def _formats() -> object:
    """A format checker for the formats the leaf hooks decode, by the same rules."""
    import jsonschema

    from ._hooks import FORMATS

    checker = jsonschema.FormatChecker(formats=())
    for name, hook in FORMATS.items():
        checker.checks(name, raises=Invalid)(_accepts(hook))
    return checker


def asserting_formats() -> object:
    """A format checker for every format a client may hold a value to: the ones
    the leaf hooks decode (``date-time``, ``date``, ``uuid``), by their rules, and
    every other ``jsonschema`` can check (``email``, ``ipv4``, ...)."""
    import jsonschema

    checker = jsonschema.FormatChecker()
    for name, hook in _hook_formats().items():
        checker.checks(name, raises=Invalid)(_accepts(hook))
    return checker


def _hook_formats() -> dict[str, Callable[[object, object], object]]:
    from ._hooks import FORMATS

    return dict(FORMATS)


def _format_checks() -> dict[str, Callable[[str], bool]]:
    """The same formats as ``_formats``, as checks of a string."""
    from ._hooks import FORMATS

    return {name: _fits(hook) for name, hook in FORMATS.items()}


def _fits(hook: Callable[[object, object], object]) -> Callable[[str], bool]:
    def fits(value: str) -> bool:
        try:
            hook(value, None)
        except Invalid:
            return False
        return True

    return fits


def _accepts(hook: Callable[[object, object], object]) -> Callable[[object], bool]:
    def accepts(value: object) -> bool:
        if not isinstance(value, str):
            return True  # format applies to strings only
        hook(value, None)  # raises Invalid
        return True

    return accepts


def _placed(path: str, message: str) -> Exception:
    return at(Invalid(message), path, object) if path else Invalid(message)


def _problems(error: ValidationError) -> Iterator[tuple[str, str]]:
    """(path below the value, fixed message) for one ``jsonschema`` error."""
    path = ".".join(str(p) for p in error.absolute_path)
    keyword, expected = error.validator, error.validator_value
    if keyword == "required" and isinstance(error.instance, dict):
        for name in expected:
            if name not in error.instance:
                yield _join(path, name), "this field is required"
        return
    if keyword == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        for name in sorted(k for k in error.instance if k not in known):
            yield _join(path, name), UNKNOWN
        return
    if keyword in ("anyOf", "oneOf"):
        branch = _plausible_branch(error)
        if branch is not None:
            for sub in branch:
                yield from _problems(sub)
            return
        kinds = _only_kinds(error)
        if kinds:
            yield path, _message("type", kinds)
            return
    yield path, _message(str(keyword), expected)


def _only_kinds(error: ValidationError) -> list[object]:
    """The JSON types an ``anyOf`` allows, when every branch only failed on type."""
    context = list(error.context or ())
    if not context or not all(
        e.validator == "type" and not e.relative_path for e in context
    ):
        return []
    if len({e.relative_schema_path[0] for e in context}) != len(context):
        return []
    kinds: list[object] = []
    for e in context:
        found = e.validator_value
        kinds.extend(found if isinstance(found, list) else [found])
    return kinds


def _plausible_branch(error: ValidationError) -> list[ValidationError] | None:
    """The errors of the one ``anyOf``/``oneOf`` branch the value's JSON type fits.

    ``T | None`` with a ``$ref``, or ``anyOf`` over an integer range and a string
    enum, then report what is wrong inside that branch (``must be at most 5``);
    when several branches fit, no single one is to blame.
    """
    branches: dict[object, list[ValidationError]] = {}
    for sub in error.context or ():
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    plausible = [
        errors
        for errors in branches.values()
        if not any(_other_type(e) for e in errors)
    ]
    return plausible[0] if len(plausible) == 1 else None


def _other_type(error: ValidationError) -> bool:
    """Whether ``error`` says the value is of another JSON type than the branch's:
    a ``type`` mismatch, or a ``const``/``enum`` with no value of the value's type."""
    if error.relative_path:
        return False
    if error.validator == "type":
        return True
    if error.validator in ("const", "enum"):
        allowed = error.validator_value
        values = allowed if error.validator == "enum" else [allowed]
        kind = _kind(error.instance)
        return isinstance(values, list) and all(_kind(v) != kind for v in values)
    return False


def _kind(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return repr(type(value))
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _join(path: str, name: object) -> str:
    return f"{path}.{name}" if path else str(name)


def _plural(n: object, word: str) -> str:
    """As the converter's constraint messages say it: ``1 item``, ``2 items``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _message(keyword: str, expected: object) -> str:
    if keyword == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return "expected " + " or ".join(_TYPE_WORDS.get(str(k), str(k)) for k in kinds)
    if keyword == "const":
        return f"must be {json.dumps(expected)}"
    if keyword == "format" and expected in _FORMAT_WORDS:
        return _FORMAT_WORDS[str(expected)]
    if keyword == "enum" and isinstance(expected, list):
        return "must be one of: " + ", ".join(json.dumps(v) for v in expected)
    fixed = {
        "anyOf": "must match at least one of the allowed schemas",
        "oneOf": "must match exactly one of the allowed schemas",
        "not": "must not match the excluded schema",
        "minLength": f"must have at least {_plural(expected, 'character')}",
        "maxLength": f"must have at most {_plural(expected, 'character')}",
        "pattern": f"must match the pattern {expected}",
        "minimum": f"must be at least {expected}",
        "maximum": f"must be at most {expected}",
        "exclusiveMinimum": f"must be greater than {expected}",
        "exclusiveMaximum": f"must be less than {expected}",
        "minItems": f"must have at least {_plural(expected, 'item')}",
        "maxItems": f"must have at most {_plural(expected, 'item')}",
        "uniqueItems": "items must be unique",
        "minProperties": f"must have at least {expected} fields",
        "maxProperties": f"must have at most {expected} fields",
        "multipleOf": f"must be a multiple of {expected}",
        "contains": "must contain an item that matches the schema",
        "dependentRequired": "a field that needs another is given without it",
        "false": "no value is allowed here",
    }
    return fixed.get(keyword, f"does not satisfy the schema's '{keyword}' keyword")
