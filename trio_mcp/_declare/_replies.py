"""A tool's return annotation decides its reply; this module shapes it.

| returns                    | the client receives                                  |
| R                          | ``structuredContent`` + one text block with the JSON |
| R | None, gives None       | ``structuredContent: null``                           |
| Content / list[Content]    | those blocks, no output schema                        |
| None                       | no content                                            |
| ... | NeedsInput           | NeedsInput is stripped from the schema; the dispatcher handles it |
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Iterator, Sequence
from typing import Literal

import attrs

from .._authority._secrets import Secret
from .._decode import decode, encode
from .._errors import DecodeError, InvalidDeclaration, InvalidReply
from .._json import JsonObject, JsonValue
from .._schema import (
    UnsupportedType,
    is_model,
    is_record,
    json_schema,
    record_fields,
    strip,
    union_parts,
)
from ._content import CONTENT_TYPES, Content, TextContent
from ._needs_input import NeedsInput
from ._values import ToolReply

__all__ = [
    "ReplyShape",
    "check_as",
    "content_blocks",
    "encode_as",
    "strip_needs_input",
    "tool_reply_shape",
]

MISSING = object()


def strip_needs_input(annotation: object) -> object:
    """Return the annotation without ``NeedsInput``, which never enters a schema."""
    if annotation is NeedsInput:
        return type(None)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        rest = tuple(a for a in args if a is not NeedsInput)
        if len(rest) != len(args):
            return rest[0] if len(rest) == 1 else typing.Union[rest]  # noqa: UP007
    return annotation


def _is_content(annotation: object) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, CONTENT_TYPES):
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return all(_is_content(a) for a in args)
    if origin in (list, tuple, Sequence) or origin is typing.get_origin(Sequence[int]):
        return bool(args) and all(_is_content(a) for a in args if a is not Ellipsis)
    return False


def encode_as(value: object, tp: object, *, where: str) -> JsonValue:
    """Encode ``value`` through ``tp``'s converter and check it decodes back as ``tp``.

    The strict decoder accepts exactly what ``json_schema(tp)`` accepts, so a value
    that passes is one the advertised schema accepts (NaN and infinity included:
    JSON has neither).

    Raises:
        InvalidReply: if the value cannot be encoded as ``tp`` or does not fit it.
    """
    try:
        encoded = encode(value, tp)
    except Exception as exc:  # cattrs' unstructure hooks fail in many ways
        raise InvalidReply(
            where,
            f"a {type(value).__name__} cannot be encoded as the declared "
            f"{_type_name(tp)} ({type(exc).__name__})",
        ) from exc
    try:
        decoded = check_as(encoded, tp, where=where)
    except InvalidReply as exc:
        came = f"returned a {_kind(value)} where {_type_name(tp)} is declared"
        raise InvalidReply(where, [came, *exc.problems]) from None
    if decoded != value and _comparable(tp) and not _same(decoded, value):
        # Schema-valid but not what was returned: "ab" for list[str] encodes as
        # ["a", "b"], {"a": 1} for tuple[str, ...] as ["a"].
        raise InvalidReply(
            where,
            f"a {type(value).__name__} is not a {_type_name(tp)}: it changes when "
            "encoded as one",
        )
    return encoded


def _same(decoded: object, value: object) -> bool:
    """Whether ``value`` is what decoding its JSON gave back, a ``list`` and a
    ``tuple`` counting as the same sequence (both are JSON arrays; F17, issue 34):
    a tuple returned for ``-> list[str]`` is accepted, at any depth (in a dict,
    in an attrs class or a dataclass). A set for a list, a string for a list, a
    dict for a tuple still differ."""
    if decoded == value:
        return True
    sequences = (list, tuple)
    if type(decoded) in sequences and type(value) in sequences:
        return len(decoded) == len(value) and all(  # type: ignore[arg-type]
            map(_same, decoded, value)  # type: ignore[call-overload]
        )
    if type(decoded) is dict and type(value) is dict:
        return decoded.keys() == value.keys() and all(
            _same(decoded[k], value[k]) for k in decoded
        )
    kind = type(decoded)
    if kind is not type(value):
        return False
    if attrs.has(kind):
        return all(
            _same(getattr(decoded, f.name), getattr(value, f.name))
            for f in attrs.fields(kind)
        )
    if dataclasses.is_dataclass(kind):
        return all(
            _same(getattr(decoded, f.name), getattr(value, f.name))
            for f in dataclasses.fields(kind)
        )
    return False


def _comparable(tp: object, _seen: frozenset[int] = frozenset()) -> bool:
    """Whether values of ``tp`` compare by value (no ``Secret``, no ``eq=False`` class).

    Only asked when a round trip did not give back an equal value.
    """
    if id(tp) in _seen:
        return True
    seen = _seen | {id(tp)}
    if typing.get_origin(tp) is typing.Annotated:
        return _comparable(typing.get_args(tp)[0], seen)
    if is_model(tp):
        # pydantic serializes a model as its declared class (a subclass's extra
        # fields left out) and compares private attributes: equality says nothing
        # the output schema check has not said.
        return False
    if isinstance(tp, type):
        if issubclass(tp, Secret):
            return False
        if attrs.has(tp):
            if tp.__eq__ is object.__eq__:
                return False
            attrs.resolve_types(tp)
            return all(_comparable(f.type, seen) for f in attrs.fields(tp))
        if is_record(tp):
            if tp.__eq__ is object.__eq__:  # @dataclass(eq=False)
                return False
            return all(_comparable(f.type, seen) for f in record_fields(tp))
        return True
    if typing.get_origin(tp) is Secret:
        return False
    return all(_comparable(arg, seen) for arg in typing.get_args(tp))


def check_as(encoded: JsonValue, tp: object, *, where: str) -> object:
    """Check an encoded value against ``tp`` with the strict decoder; return the decoded.

    Raises:
        InvalidReply: naming each place the value does not fit, or holds NaN or
            infinity (JSON has neither, though decoding reads ``1e400`` as one).
    """
    if _any_non_finite(encoded):
        odd = list(_non_finite(encoded, ""))
        raise InvalidReply(
            where, [f"{p or 'the value'}: expected a finite number" for p in odd]
        )
    try:
        return decode(tp, encoded)
    except DecodeError as exc:
        raise InvalidReply(
            where,
            [
                f"{p.path or 'the value'}: {p.message}{_got(encoded, p.path, p.message)}"
                for p in exc.problems
            ],
        ) from None
    except Exception as exc:  # an attrs validator refusing a value it built itself
        raise InvalidReply(where, f"{type(exc).__name__}: {exc}") from exc


def _any_non_finite(value: object) -> bool:
    """Whether an encoded JSON value holds NaN or an infinite float anywhere.

    The same walk as ``_non_finite`` without a generator per container: every
    reply is checked, and only one that fails needs the paths.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is float:
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _non_finite(value: object, path: str) -> Iterator[str]:
    """The paths of NaN and infinite floats in an encoded JSON value."""
    if type(value) is float:
        if not math.isfinite(value):
            yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_finite(item, f"{path}.{index}" if path else str(index))


def _type_name(tp: object) -> str:
    if typing.get_origin(tp) is None and isinstance(tp, type):
        return tp.__qualname__
    return _QUALIFIER.sub("", repr(tp))


_QUALIFIER = re.compile(r"\b(?:[A-Za-z_]\w*\.)+")
_JSON_KINDS = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def _kind(value: object) -> str:
    """A value's type name, for messages: never the value (it may be a secret)."""
    return "None" if value is None else type(value).__name__


def _got(encoded: JsonValue, path: str, message: str) -> str:
    """`` (got a string)``: the JSON type found at ``path`` of a wrong reply."""
    if not message.startswith("expected "):
        return ""
    value: object = encoded
    for part in filter(None, path.split(".")):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return ""
    kind = _JSON_KINDS.get(type(value))
    return f" (got {kind})" if kind else ""


def content_blocks(value: object, *, where: str) -> tuple[Content, ...]:
    """Return ``value`` as content blocks: one block, or a list or tuple of them.

    Raises:
        InvalidReply: for anything else (a ``str`` where blocks are declared, ...).
    """
    if isinstance(value, CONTENT_TYPES):
        return (value,)
    if isinstance(value, list | tuple):
        bad = [
            f"item {i} is a {type(b).__name__}, not a content block"
            for i, b in enumerate(value)
            if not isinstance(b, CONTENT_TYPES)
        ]
        if not bad:
            return tuple(value)
        raise InvalidReply(where, bad)
    raise InvalidReply(
        where,
        f"returned a {type(value).__name__} where content blocks are declared "
        "(TextContent, ImageContent, ... or a list of them)",
    )


@attrs.frozen(eq=False)
class ReplyShape:
    """How a tool's return value becomes a ``ToolReply``."""

    mode: Literal["structured", "content", "none"]
    output_schema: JsonObject | None
    output_type: object
    plain_text: bool = False
    """``-> str`` (or ``str | None``, ``Annotated``, a ``NewType``): the text block
    is the string itself, not its JSON."""

    def reply(self, value: object, *, where: str) -> ToolReply:
        """Return the reply for what the handler returned.

        Raises:
            InvalidReply: if ``value`` does not fit the declared return type.
        """
        if self.mode == "content":
            return ToolReply.ok(content=content_blocks(value, where=where))
        if self.mode == "none":
            if value is not None:
                raise InvalidReply(
                    where, f"returned a {type(value).__name__}; '-> None' is declared"
                )
            return ToolReply.ok()
        # Checked by construction: the strict decoder accepts exactly what the
        # output schema accepts, and a value that changes shape is refused.
        encoded = encode_as(value, self.output_type, where=where)
        if isinstance(encoded, str) and self.plain_text:
            # Models and hosts read the text block: the string, not its JSON.
            return ToolReply.ok(encoded, TextContent(encoded))
        return ToolReply.ok(encoded)


def tool_reply_shape(annotation: object, *, where: str) -> ReplyShape:
    """Classify a tool's return annotation.

    Raises:
        InvalidDeclaration: if there is no annotation or its type is unsupported.
    """
    if annotation is MISSING:
        raise InvalidDeclaration(
            f"{where}: the return type is not annotated; annotate it "
            "(for example '-> str', '-> MyResult' or '-> None')"
        )
    inner = strip_needs_input(annotation)
    if inner is None or inner is type(None):
        return ReplyShape("none", None, type(None))
    if _is_content(inner):
        return ReplyShape("content", None, inner)
    try:
        schema = json_schema(inner)
    except UnsupportedType as exc:
        at = f" at '{exc.where}'" if exc.where else ""
        raise InvalidDeclaration(
            f"{where}: return type{at}: {exc.what} is not supported: {exc.reason}"
        ) from None
    return ReplyShape("structured", schema, inner, plain_text=_is_text(inner))


def _is_text(tp: object) -> bool:
    """Whether ``tp`` is ``str``, possibly optional, annotated or a ``NewType``."""
    tp = strip(tp)
    parts = union_parts(tp)
    if parts is not None and len(parts[0]) == 1:
        tp = strip(parts[0][0])
    return tp is str
