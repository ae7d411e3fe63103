"""Pages of the list methods: opaque cursors and items encoded once.

A cursor names the list it belongs to and an offset, base64url-encoded; anything
else is an invalid cursor (-32602). The catalog is fixed, so offsets are stable,
and each page's items are encoded once (``Pages``) and spliced into every reply
that lists them: a ``tools/list`` of a large catalog encodes only its envelope.
"""

from __future__ import annotations

import base64
import binascii
import uuid

import attrs

from .._json import JsonObject, JsonValue, encode_message

__all__ = ["PAGE_SIZE", "InvalidCursor", "Pages"]

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


#: Stands where a page's items go until the encoded items replace it. No catalog
#: holds it: it starts with NUL and ends with a fresh random id.
_SLOT = f"\x00trio-mcp-page-{uuid.uuid4().hex}"
_SLOT_JSON = encode_message(_SLOT)


@attrs.define(eq=False)
class Pages:
    """One list of the catalog, its pages encoded on first use and kept."""

    kind: str
    key: str
    items: list[JsonObject]
    size: int = PAGE_SIZE
    _encoded: dict[int, bytes] = attrs.Factory(dict)

    def result(self, params: JsonObject) -> tuple[JsonObject, int]:
        """The page's result with a stand-in for its items, and its offset.

        Raises:
            InvalidCursor: for a cursor this server did not issue for this list.
        """
        total = len(self.items)
        offset = (
            _decode(self.kind, params["cursor"], total) if "cursor" in params else 0
        )
        # The items come first: the stand-in is the first string of the message.
        out: JsonObject = {self.key: _SLOT}
        if offset + self.size < total:
            out["nextCursor"] = _encode(self.kind, offset + self.size)
        return out, offset

    def splice(self, body: bytes, offset: int) -> bytes:
        """Put the encoded items of the page at ``offset`` into ``body``."""
        items = self._encoded.get(offset)
        if items is None:
            chosen: list[JsonValue] = [*self.items[offset : offset + self.size]]
            items = encode_message(chosen)
            self._encoded[offset] = items
        return body.replace(_SLOT_JSON, items, 1)
