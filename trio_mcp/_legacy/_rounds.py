"""A modern ``input_required`` round as real server-to-client requests, and back.

A handler asks once (``NeedsInput``); for a modern client the core answers
``input_required`` and the client retries with ``inputResponses``. A handshake-era
client instead receives ``elicitation/create``, ``sampling/createMessage`` or
``roots/list`` as JSON-RPC requests from the server and answers them; these
functions turn the round's ``inputRequests`` into those requests and the answers
into the retry's ``inputResponses``, so the same round completes and handlers are
written once. Pure functions; how requests travel and answers come back is the
transport's (``drive_round``'s ``ask``).

Only what the session's ``initialize`` declared is sent: the edge passes the
client's capabilities on to the core, which already refuses (-32021) a round that
needs another, so a request here never reaches a client that cannot answer it.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Final

import attrs
import trio

from .._json import JsonObject, JsonValue
from .._protocol import _wire as wire
from ._session import Session

__all__ = [
    "MAX_ROUNDS",
    "Answer",
    "ClientRequest",
    "RoundFailed",
    "client_requests",
    "drive_round",
    "next_params",
]

#: Most rounds one legacy request may take; beyond it the request fails (-32603).
MAX_ROUNDS: Final = 32

_METHODS: Final = frozenset(
    {"elicitation/create", "sampling/createMessage", "roots/list"}
)


class RoundFailed(Exception):
    """The round cannot be completed; ``code``/``data`` are the reply's error."""

    def __init__(self, code: int, message: str, data: JsonValue = None) -> None:
        self.code = code
        self.data = data
        super().__init__(message)

    def error(self) -> JsonObject:
        """The JSON-RPC ``error`` object."""
        error: JsonObject = {"code": self.code, "message": str(self)}
        if self.data is not None:
            error["data"] = self.data
        return error


@attrs.frozen
class ClientRequest:
    """One server-to-client request of a round: the input key it answers."""

    key: str
    method: str
    params: JsonObject


@attrs.frozen
class Answer:
    """The client's answer to one request: its ``result`` or its ``error``."""

    result: JsonValue = None
    error: JsonValue = None


def client_requests(round_result: JsonObject, session: Session) -> list[ClientRequest]:
    """The requests to send for an ``input_required`` result, in the session's shapes.

    Raises:
        RoundFailed: for a request the session's revision cannot carry (URL
            elicitation before 2025-11-25), or a malformed round.
    """
    asked = round_result.get("inputRequests")
    if not isinstance(asked, dict):
        asked = {}
    out = []
    for key, request in asked.items():
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) else None
        if method not in _METHODS or not isinstance(method, str):
            raise RoundFailed(wire.INTERNAL_ERROR, f"unknown input request {method!r}")
        out.append(ClientRequest(key, method, _params(method, params, session)))
    return out


def _params(method: str, params: JsonValue, session: Session) -> JsonObject:
    shaped: JsonObject = dict(params) if isinstance(params, dict) else {}
    if method != "elicitation/create":
        return shaped
    if shaped.get("mode") == "url":
        if not session.has("url_elicitation"):
            raise RoundFailed(
                wire.MISSING_CLIENT_CAPABILITY,
                f"this request needs URL elicitation, which protocol revision "
                f"{session.revision} does not have",
                {"requiredCapabilities": {"elicitation": {"url": {}}}},
            )
        # 2025-11-25 pairs a URL elicitation with an id (for its completion notice).
        shaped["elicitationId"] = secrets.token_hex(16)
    elif not session.has("url_elicitation"):
        shaped.pop("mode", None)  # 2025-06-18 has form mode only, unnamed
    if not session.has("rich_forms"):
        if _has_multi_select(shaped):
            raise RoundFailed(
                wire.INTERNAL_ERROR,
                "this form has a multi-select field, which protocol revision "
                f"{session.revision} cannot show (2025-11-25 can)",
            )
        shaped = _enum_names(shaped)
    return shaped


def _enum_names(params: JsonObject) -> JsonObject:
    """A form whose titled choices (``oneOf`` of ``const``/``title``, SEP-1330) are
    spelled as before 2025-11-25: ``enum`` with ``enumNames``."""
    schema = params.get("requestedSchema")
    fields = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(schema, dict) or not isinstance(fields, dict):
        return params
    shaped: JsonObject = {}
    for name, field in fields.items():
        choices = field.get("oneOf") if isinstance(field, dict) else None
        if isinstance(field, dict) and isinstance(choices, list):
            field = {k: v for k, v in field.items() if k != "oneOf"}
            field["enum"] = [c.get("const") for c in choices if isinstance(c, dict)]
            field["enumNames"] = [
                c.get("title") for c in choices if isinstance(c, dict)
            ]
        shaped[name] = field
    return {**params, "requestedSchema": {**schema, "properties": shaped}}


def _has_multi_select(params: JsonObject) -> bool:
    """Whether a form asks for a list of choices (SEP-1330, 2025-11-25 and later)."""
    schema = params.get("requestedSchema")
    fields = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(fields, dict):
        return False
    return any(
        isinstance(f, dict) and f.get("type") == "array" for f in fields.values()
    )


def input_response(request: ClientRequest, answer: Answer) -> JsonValue:
    """The ``inputResponses`` entry for the client's ``answer`` to ``request``.

    Raises:
        RoundFailed: if the client answered with an error or not with an object.
    """
    if answer.error is not None or not isinstance(answer.result, dict):
        error = answer.error if isinstance(answer.error, dict) else {}
        raise RoundFailed(
            wire.INTERNAL_ERROR,
            f"the client could not answer {request.method}: "
            f"{error.get('message', 'no result')}",
            {"method": request.method, "error": answer.error},
        )
    # The modern responses have no _meta (ElicitResult, ListRootsResult).
    return {k: v for k, v in answer.result.items() if k != "_meta"}


def next_params(
    params: JsonObject, round_result: JsonObject, responses: JsonObject
) -> JsonObject:
    """The modern params of the retry: the same request, the answers, the state."""
    retry = {
        k: v for k, v in params.items() if k not in ("inputResponses", "requestState")
    }
    retry["inputResponses"] = responses
    if "requestState" in round_result:
        retry["requestState"] = round_result["requestState"]
    return retry


Ask = Callable[[ClientRequest], Awaitable[Answer]]
"""Sends one request to the client and waits for its answer (the transport's)."""


async def drive_round(requests: list[ClientRequest], ask: Ask) -> JsonObject:
    """Ask every request at once; return the ``inputResponses`` of the answers.

    Raises:
        RoundFailed: if any answer is an error (the others are then abandoned).
    """
    responses: JsonObject = {}
    failures: list[RoundFailed] = []

    async def one(request: ClientRequest, cancel: trio.CancelScope) -> None:
        try:
            responses[request.key] = input_response(request, await ask(request))
        except RoundFailed as exc:
            failures.append(exc)
            cancel.cancel()

    async with trio.open_nursery() as nursery:
        for request in requests:
            nursery.start_soon(one, request, nursery.cancel_scope)
    if failures:
        raise failures[0]
    return responses
