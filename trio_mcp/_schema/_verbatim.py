"""``Field(json_schema=...)``: 2020-12 keywords passed through verbatim, kept sound.

The type table derives most schemas; a passthrough adds what it cannot derive
(``anyOf``, ``const``, ``if``/``then``/``else``, ``$defs`` with ``$ref`` ...). For the
result to stay one flat, self-contained schema, and for decoding to enforce it:

- a passthrough's ``$defs`` move to the root of the schema being built (a ``$ref``
  of ``#/$defs/name`` always means the root), and two passthroughs may define one
  name only with the same subschema;
- a ``$ref`` points into the same passthrough's ``$defs`` (``#/$defs/name...``) or
  at an ``$anchor`` inside it: no remote or root-relative references, so the same
  passthrough also validates alone, where decoding checks it;
- ``$id`` and ``$schema`` are refused: a passthrough is part of a larger schema;
- a passthrough adds to what the type says, never replaces it: where both set one
  asserting keyword (a passthrough ``anyOf`` on ``int | None``), the type's moves
  into ``allOf``, so the schema still says what the converter enforces.

Keywords that only describe (``description``, ``examples``, ``x-...``) cost decoding
nothing; any other keyword makes decoding validate that value with ``jsonschema``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._json import JsonObject, JsonValue

__all__ = [
    "DESCRIBING",
    "asserts",
    "is_open",
    "merge_passthrough",
    "passthrough_problem",
]

#: Keywords of a passthrough that assert nothing about the value (2020-12
#: annotations, ``format`` as an annotation, and locations of subschemas).
DESCRIBING = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "format",
        "contentMediaType",
        "contentEncoding",
        "$defs",
        "$anchor",
    }
)
_REFUSED = ("$id", "$schema", "$dynamicRef", "$dynamicAnchor", "$recursiveRef")


def asserts(passthrough: Mapping[str, object] | None) -> bool:
    """Whether a passthrough has a keyword that decoding must enforce."""
    return bool(passthrough) and any(
        key not in DESCRIBING and not key.startswith("x-")
        for key in passthrough  # type: ignore[union-attr]
    )


def is_open(tp: object) -> bool:
    """Whether ``tp`` is ``Any`` or ``object``: any JSON value, shaped only by a
    passthrough."""
    return tp is Any or tp is object


def _walk(node: JsonValue) -> Iterator[tuple[str, JsonValue]]:
    """Every (keyword, value) pair anywhere in a schema."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


def passthrough_problem(passthrough: JsonObject) -> str | None:
    """What makes a passthrough unsound (see the module docstring), or None."""
    defs = passthrough.get("$defs", {})
    if not isinstance(defs, dict):
        return "$defs must be an object of subschemas"
    anchors = {v for k, v in _walk(passthrough) if k == "$anchor"}
    for key, value in _walk(passthrough):
        if key in _REFUSED:
            return f"leave out {key}: the passthrough is part of a larger schema"
        if key != "$ref":
            continue
        if not isinstance(value, str):
            return "$ref must be a string"
        if value.startswith("#/$defs/"):
            name = value[len("#/$defs/") :].split("/", 1)[0]
            if name not in defs:
                return (
                    f"$ref '{value}' names no entry of this Field's $defs; define "
                    f"'{name}' under $defs in the same json_schema"
                )
        elif not (value.startswith("#") and value[1:] in anchors):
            return (
                f"$ref '{value}' is not local; point it at '#/$defs/name' or an "
                "$anchor in the same json_schema (schemas are self-contained)"
            )
    return None


def merge_passthrough(out: JsonObject, passthrough: JsonObject) -> None:
    """Merge ``passthrough`` into the derived schema ``out`` (see the module docstring)."""
    kept: list[JsonValue] = [
        {key: out[key]}
        for key, value in passthrough.items()
        if key in out
        and out[key] != value
        and key not in DESCRIBING
        and not key.startswith("x-")
    ]
    out.update(copy.deepcopy(passthrough))
    if kept:
        existing = out.get("allOf", [])
        out["allOf"] = [*kept, *(existing if isinstance(existing, list) else [])]
