"""pydantic models through the one converter: checked against their listed schema,
then built by pydantic; encoded by pydantic's serializer.

Imported by the hook factories of ``_shapes`` the first time the converter meets a
model, so a server without models never loads it (nor pydantic).

Decoding a model is two steps, every problem of a step reported together:

1. the JSON value is checked against the model's listed schema (``json_schema``,
   with ``jsonschema``, the formats of the type table asserted): wrong types,
   constraints, missing and unknown keys, each at its path, in the converter's
   own words. The listed schema is what decoding accepts, whatever the model's
   ``extra=`` or ``strict=`` say (``_schema/_pydantic``);
2. pydantic builds the model from the checked value (lax, as for JSON input, so a
   ``strict=True`` model still takes ``"2026-01-02"`` for a date and ``5.0`` for an
   int, as the schema does). What remains to refuse is the model's own
   validators' doing: each ``ValidationError`` entry becomes a problem at its
   ``loc``, its message shown unless it quotes a value the caller sent.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cattrs.errors import ClassValidationError

from .._schema import json_schema
from ._problems import Invalid, at, refusal_message, shown
from ._verbatim import verbatim_check

if TYPE_CHECKING:
    import cattrs

__all__ = ["model_structure", "model_unstructure"]

Hook = Callable[[object, object], object]
#: The words pydantic puts before a validator's own message.
_PREFIXES = ("Value error, ", "Assertion failed, ")


def model_structure(cls: type, converter: cattrs.Converter) -> Hook:
    """The structure hook of one model class."""
    del converter  # pydantic builds the fields: no hooks of ours inside a model
    from pydantic import ValidationError

    check = verbatim_check(json_schema(cls), formats=True)
    validate = cls.model_validate  # type: ignore[attr-defined]
    what = f"while structuring {cls.__name__}"

    def structure(value: object, _: object) -> object:
        problems = check(value)
        if problems:
            raise ClassValidationError(what, problems, cls)
        try:
            try:
                return validate(value, strict=False)
            except ValidationError as exc:
                wider = _numbers_as_json_means_them(value, exc.errors())
                if wider is None:
                    raise
                return validate(wider, strict=False)
        except ValidationError as exc:
            found = [
                _problem(error["loc"], error["msg"], value)
                for error in exc.errors(include_url=False, include_input=False)
            ]
            raise ClassValidationError(what, found, cls) from None
        except Exception as exc:  # a validator raised what pydantic does not wrap
            raise Invalid(refusal_message(None, exc, value)) from None

    return structure


def _problem(loc: Sequence[int | str], message: str, sent: object) -> Exception:
    for prefix in _PREFIXES:
        message = message.removeprefix(prefix)
    problem = Invalid(shown(message, sent))
    path = ".".join(str(part) for part in loc)
    return at(problem, path, object) if path else problem


def _numbers_as_json_means_them(value: object, errors: Sequence[Any]) -> object | None:
    """``value`` with each number pydantic refused but the schema takes made one
    pydantic takes, or None when no error is about such a number.

    The schema's ``number`` takes a 400-digit integer, and so does the converter's
    ``float`` (as infinity, the nearest double, as JSON parsers read ``1e400``);
    pydantic's float refuses an ``int`` beyond a double. The schema's ``integer``
    takes ``1e300`` (a zero fraction), and so does the converter's ``int``;
    pydantic's int refuses a float beyond 64 bits. Each is found by its error's
    ``loc`` and replaced by the same number pydantic can take (infinity, or the
    ``int``), so nothing else of the value changes.
    """
    places = [(e["loc"], e["input"]) for e in errors if _json_number(e)]
    if not places:
        return None
    wider = copy.deepcopy(value)
    for loc, number in places:
        parent: Any = wider
        try:
            for part in loc[:-1]:
                parent = parent[part]
            if parent[loc[-1]] != number:
                return None
        except (KeyError, IndexError, TypeError):
            return None  # a union member's tag in the loc: report it as it is
        if type(number) is int:
            parent[loc[-1]] = math.inf if number > 0 else -math.inf
        else:
            parent[loc[-1]] = int(number)
    return wider


def _json_number(error: Any) -> bool:
    """Whether pydantic refused a number JSON Schema's type of it takes."""
    kind, number = error["type"], error["input"]
    if not error["loc"]:
        return False
    if kind == "float_type":
        return type(number) is int
    if kind == "int_parsing_size":
        return type(number) is float and number.is_integer()
    return False


def model_unstructure(
    cls: type, converter: cattrs.Converter
) -> Callable[[object], object]:
    """The unstructure hook of one model class: its JSON as the listed schema
    names it (aliases), computed fields left out (the listed schema is the
    validation schema, which has none).

    Raises (from the hook):
        TypeError: for a value that is not an instance of ``cls``.
        PydanticSerializationError: for a field holding what JSON cannot show.
    """
    del converter
    serializer = cls.__pydantic_serializer__  # type: ignore[attr-defined]

    def unstructure(value: object) -> object:
        if not isinstance(value, cls):
            raise TypeError(f"a {type(value).__name__} is not a {cls.__name__}")
        return serializer.to_python(
            value,
            mode="json",
            by_alias=True,
            exclude_computed_fields=True,
            # A field holding the wrong type is serialized as it is; the output
            # schema check then names its path (an unknown type still raises).
            warnings="none",
        )

    return unstructure
