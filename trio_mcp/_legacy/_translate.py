"""A legacy request as the modern request the core serves, and its reply back.

What every transport's legacy edge does per request, whatever carries it (the stdio
edge through the message loop, an HTTP session through the dispatcher): pure
functions over JSON values, no I/O.

    modern = modern_params(request.params, session)      # -> the core
    reply = <the core's reply to (method, modern)>
    round = round_of(method, reply)                      # input_required?
    if round: client_requests(round, session) ... next_params(modern, round, answers)
    else: legacy_reply(client_id, method, modern, reply, session, output_schema)
"""

from __future__ import annotations

from typing import Final

from .._json import JsonObject, JsonValue
from .._protocol import _wire as wire
from ._session import Session
from ._shapes import OutputSchemaOf, legacy_error, legacy_result

__all__ = [
    "FORWARDED",
    "ROUND_METHODS",
    "BadParams",
    "legacy_reply",
    "modern",
    "modern_params",
    "round_of",
]

#: Legacy methods the core serves once translated (the others are the edge's own).
FORWARDED: Final = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        # the skills extension (SEP-2640), when the server has skills
        "skills/list",
        "skills/get",
        "resources/directory/read",
    }
)
#: The methods whose reply may be ``input_required`` (a round).
ROUND_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: Params a legacy request cannot carry into the core: the edge's rounds own the
#: first two, and 2025-11-25's in-core tasks are not served.
_DROPPED: Final = ("inputResponses", "requestState", "task")


class BadParams(Exception):
    """A legacy request whose params are not an object (-32602)."""


def modern(params: JsonValue) -> bool:
    """Whether a request carries 2026-07-28 ``_meta`` (then it is served statelessly)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and wire.META_PROTOCOL_VERSION in meta


def modern_params(params: JsonValue, session: Session) -> JsonObject:
    """The params of the modern request for a legacy request's ``params``.

    Raises:
        BadParams: if ``params`` is neither absent nor an object.
    """
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise BadParams("params must be an object")
    modern = {k: v for k, v in params.items() if k not in _DROPPED}
    modern["_meta"] = session.modern_meta(params.get("_meta"))
    return modern


def round_of(method: str, reply: JsonObject) -> JsonObject | None:
    """The ``input_required`` result of ``reply``, if it is one of a round method."""
    result = reply.get("result")
    if (
        method in ROUND_METHODS
        and isinstance(result, dict)
        and result.get("resultType") == "input_required"
    ):
        return result
    return None


def legacy_reply(
    client_id: str | int,
    method: str,
    params: JsonObject,
    reply: JsonObject,
    session: Session,
    output_schema: OutputSchemaOf,
) -> JsonObject:
    """The response a handshake-era client gets for the core's final ``reply``.

    ``params`` are the modern request's (the tool's name for ``tools/call``).
    """
    result = reply.get("result")
    if isinstance(result, dict):
        shaped = legacy_result(method, params, result, session, output_schema)
        return wire.result_message(client_id, shaped)
    error = reply.get("error")
    if isinstance(error, dict):
        error = legacy_error(method, error)
    return {"jsonrpc": wire.JSONRPC, "id": client_id, "error": error}
