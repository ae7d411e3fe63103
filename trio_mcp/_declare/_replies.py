"""A tool's return annotation decides its reply; this module shapes it.

| returns                    | the client receives                                  |
| R                          | ``structuredContent`` + one text block with the JSON |
| R | None, gives None       | ``structuredContent: null``                           |
| Content / list[Content]    | those blocks, no output schema                        |
| None                       | no content                                            |
| ... | NeedsInput           | NeedsInput is stripped from the schema; the dispatcher handles it |
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Literal

import attrs

from .._decode import encode
from .._errors import InvalidDeclaration
from .._json import JsonObject, dumps
from .._schema import UnsupportedType, json_schema
from ._content import CONTENT_TYPES
from ._needs_input import NeedsInput

__all__ = ["ReplyShape", "strip_needs_input", "tool_reply_shape"]

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


@attrs.frozen
class ReplyShape:
    """How a tool's return value becomes a ``CallToolResult``."""

    mode: Literal["structured", "content", "none"]
    output_schema: JsonObject | None
    output_type: object

    def result(self, value: object) -> JsonObject:
        """Return the ``CallToolResult`` fields (without ``resultType``) for ``value``."""
        if self.mode == "content":
            blocks = [value] if isinstance(value, CONTENT_TYPES) else list(value)  # type: ignore[call-overload]
            return {"content": [b.to_wire() for b in blocks], "isError": False}
        if self.mode == "none":
            return {"content": [], "isError": False}
        structured = encode(value, self.output_type)
        text = dumps(structured)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": False,
        }


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
        raise InvalidDeclaration(f"{where}: return type{at}: {exc.reason}") from None
    return ReplyShape("structured", schema, inner)
