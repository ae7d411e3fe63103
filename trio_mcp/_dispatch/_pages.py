"""Opaque pagination cursors for the list methods.

A cursor names the list it belongs to and an offset, base64url-encoded; anything
else is an invalid cursor (-32602). The catalog is fixed, so offsets are stable.
"""

from __future__ import annotations

import base64
import binascii

from .._json import JsonObject, JsonValue

__all__ = ["PAGE_SIZE", "InvalidCursor", "page"]

PAGE_SIZE = 100


class InvalidCursor(ValueError):
    """The cursor was not issued by this server for this list."""


def _encode(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode("ascii")


def _decode(kind: str, cursor: JsonValue, total: int) -> int:
    if not isinstance(cursor, str):
        raise InvalidCursor("the cursor must be a string")
    if cursor == "":
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        tag, _, number = text.partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeError, ValueError):
        raise InvalidCursor("the cursor is not one this server issued") from None
    if tag != kind or not 0 < offset <= total:
        raise InvalidCursor("the cursor is not one this server issued")
    return offset


def page(
    kind: str,
    items: list[JsonObject],
    params: JsonObject,
    key: str,
    size: int = PAGE_SIZE,
) -> JsonObject:
    """Return one page of ``items`` under ``key``, with ``nextCursor`` if more remain.

    Raises:
        InvalidCursor: for a cursor this server did not issue for this list.
    """
    offset = _decode(kind, params["cursor"], len(items)) if "cursor" in params else 0
    end = offset + size
    out: JsonObject = {key: list(items[offset:end])}
    if end < len(items):
        out["nextCursor"] = _encode(kind, end)
    return out
