"""The media types of a POST to the MCP endpoint: 415 and 406 before the body is read.

Streamable HTTP (revision 2026-07-28) carries one JSON-RPC message as
``application/json`` and answers with ``application/json`` or ``text/event-stream``.
A body declared as anything else (``text/plain``, a form) or not declared at all is
refused with 415 (RFC 9110 §15.5.16), naming what is accepted. A client whose
``Accept`` admits neither answer type (only ``text/html``, say) is refused with 406
(§15.5.7): whatever the server sent, the client said it cannot take.

Lenient where the revision is: clients MUST list both answer types, but one that
lists only one, a wildcard (``*/*``, ``application/*``, ``text/*``) or no ``Accept``
at all is served; JSON variants with a ``+json`` suffix are JSON.
"""

from __future__ import annotations

import functools
from typing import Final

__all__ = ["Unacceptable", "media_refusal"]

_ANSWER_TYPES: Final = frozenset(
    {
        "application/json",
        "text/event-stream",
        "*/*",
        "application/*",
        "text/*",
    }
)

#: The status, message and extra response headers of a refusal.
Unacceptable = tuple[int, str, list[tuple[bytes, bytes]]]


def _media_type(value: str) -> str:
    """``type/subtype`` of a header value, lower-cased, parameters dropped."""
    return value.split(";", 1)[0].strip().lower()


def _refused_by_quality(value: str) -> bool:
    """Whether a media range says ``q=0`` (not acceptable)."""
    for parameter in value.split(";")[1:]:
        name, _, quality = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(quality.strip()) == 0
            except ValueError:
                return False
    return False


def _is_json(content_type: str) -> bool:
    media = _media_type(content_type)
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _accepts_an_answer(accept: str) -> bool:
    return any(
        _media_type(item) in _ANSWER_TYPES and not _refused_by_quality(item)
        for item in accept.split(",")
    )


def media_refusal(headers: dict[str, str]) -> Unacceptable | None:
    """Why a POST's media types are refused (415, 406), or None."""
    refusal = _refusal(headers.get("content-type"), headers.get("accept"))
    if refusal is None:
        return None
    status, text, extra = refusal
    return status, text, list(extra)  # the cached list stays as it is


@functools.lru_cache(maxsize=64)
def _refusal(content_type: str | None, accept: str | None) -> Unacceptable | None:
    """``media_refusal`` by the two header values, cached: a client sends the same
    ones on every request, and parsing them was most of this check's cost."""
    if content_type is None or not _is_json(content_type):
        given = "no Content-Type" if content_type is None else repr(content_type)
        return (
            415,
            f"unsupported media type: the body must be one JSON-RPC message sent "
            f"as Content-Type: application/json, not {given}",
            [(b"accept", b"application/json")],
        )
    if accept is not None and accept.strip() and not _accepts_an_answer(accept):
        return (
            406,
            "not acceptable: this endpoint answers with application/json or "
            f"text/event-stream, and Accept ({accept!r}) lists neither; send "
            "Accept: application/json, text/event-stream",
            [],
        )
    return None
