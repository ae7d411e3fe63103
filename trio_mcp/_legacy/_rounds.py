"""A modern ``input_required`` round as real server-to-client requests, and back.

A handler asks once (``NeedsInput``); a modern client gets ``input_required`` and
retries with ``inputResponses``, a handshake-era client receives
``elicitation/create``, ``sampling/createMessage`` or ``roots/list`` as requests
and answers them. A ``Carried`` call turns the round into those requests and the
answers into the retry, so handlers are written once; ``Rounds`` holds the bounds,
for one stdio stream or one HTTP app. No I/O: the adapters send what a ``Step``
says and feed the answers back in. Only what the session declared is asked: the
core already refuses (-32021) a round that needs another capability.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Final

import attrs

from .._json import JsonObject, JsonValue, encode_message
from .._limits import Limits
from .._protocol import _wire as wire
from ._session import Session
from ._shapes import OutputSchemaOf, legacy_reply, round_of

__all__ = ["MAX_ROUNDS", "Answer", "Carried", "Rounds", "Step", "cancelled_note"]

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


@attrs.frozen
class Step:
    """What a carried call does next: ``out`` for the client, in order; then the
    retry's modern ``params`` (the next round), or ``done`` (its reply is in
    ``out``), or neither (it waits for the client's answers)."""

    out: list[bytes]
    retry: JsonObject | None = None
    done: bool = False


@attrs.define(eq=False)
class Carried:
    """One legacy request on its way through the core, round by round."""

    client_id: str | int
    method: str
    params: JsonObject
    """The modern params of the current round."""
    session: Session
    rounds: int = 0
    round: JsonObject = attrs.Factory(dict)
    """The ``input_required`` result being answered."""
    asked: dict[str | int, ClientRequest] = attrs.Factory(dict)
    """The round's requests the client has not answered yet, by id."""
    responses: JsonObject = attrs.Factory(dict)

    def fail(self, code: int, message: str, data: JsonValue = None) -> bytes:
        """The client's error reply, encoded."""
        return encode_message(wire.error_message(self.client_id, code, message, data))


def cancelled_note(request_id: str | int) -> bytes:
    """``notifications/cancelled`` for a request the server no longer needs answered."""
    note = wire.notification_message(
        "notifications/cancelled", {"requestId": request_id}
    )
    return encode_message(note)


class Rounds:
    """The rounds of one stdio stream or one HTTP app.

    At most ``max_concurrent + max_waiting`` wait for the client at once (beyond,
    the request is answered "server busy"), each request at most ``MAX_ROUNDS``;
    ``ended`` (a stream's input ended) fails any round that would begin.
    """

    def __init__(
        self,
        limits: Limits,
        output_schema: OutputSchemaOf,
        new_id: Callable[[], str | int],
    ) -> None:
        self.bound = limits.max_concurrent + limits.max_waiting
        self.output_schema = output_schema
        self.new_id = new_id
        """The id of a new server-to-client request (the transport routes answers by it)."""
        self.waiting = 0
        self.ended = False

    def replied(
        self, call: Carried, result: JsonObject | None, error: JsonValue
    ) -> Step:
        """The core's reply to ``call``'s current round: the client's reply (shaped
        into its revision, encoded once), or the requests of a new round."""
        needs = round_of(call.method, result)
        if needs is None:
            out = legacy_reply(call, result, error, self.output_schema)
            return Step([out], done=True)
        try:
            self._check(call)
            requests = _client_requests(needs, call.session)
        except RoundFailed as exc:
            return Step([call.fail(exc.code, str(exc), exc.data)], done=True)
        call.round, call.responses = needs, {}
        call.asked = {self.new_id(): request for request in requests}
        if not call.asked:
            return self._retry(call)
        self.waiting += 1
        return Step([_ask(i, r) for i, r in call.asked.items()])

    def _check(self, call: Carried) -> None:
        if self.waiting >= self.bound:
            raise RoundFailed(
                wire.SERVER_BUSY,
                wire.busy_message(f"{self.bound} requests wait for client input"),
                {"retryable": True},
            )
        if call.rounds >= MAX_ROUNDS:
            raise RoundFailed(
                wire.INTERNAL_ERROR,
                f"the request asked for input {MAX_ROUNDS} times; it was stopped",
            )
        if self.ended:
            raise RoundFailed(
                wire.INTERNAL_ERROR,
                "the client's input has ended, so it cannot be asked for input",
            )

    def answered(self, call: Carried, request_id: str | int, answer: Answer) -> Step:
        """The client's ``answer`` to the request ``request_id`` of ``call``'s round."""
        request = call.asked.pop(request_id)
        try:
            call.responses[request.key] = _input_response(request, answer)
        except RoundFailed as exc:
            notes = self.dropped(call)
            return Step([*notes, call.fail(exc.code, str(exc), exc.data)], done=True)
        if call.asked:
            return Step([])
        self.waiting -= 1
        return self._retry(call)

    def _retry(self, call: Carried) -> Step:
        call.rounds += 1
        retry = {
            k: v
            for k, v in call.params.items()
            if k not in ("inputResponses", "requestState")
        }
        retry["inputResponses"] = call.responses
        if "requestState" in call.round:
            retry["requestState"] = call.round["requestState"]
        call.params = retry
        return Step([], retry=retry)

    def dropped(self, call: Carried) -> list[bytes]:
        """``call`` waits no more (it failed, its client cancelled it, its stream
        ended): the notes telling the client its open requests need no answer."""
        if not call.asked:
            return []
        self.waiting -= 1
        notes = [cancelled_note(request_id) for request_id in call.asked]
        call.asked.clear()
        return notes


def _ask(request_id: str | int, request: ClientRequest) -> bytes:
    return encode_message(
        {
            "jsonrpc": wire.JSONRPC,
            "id": request_id,
            "method": request.method,
            "params": request.params,
        }
    )


def _client_requests(needs: JsonObject, session: Session) -> list[ClientRequest]:
    """The requests to send for an ``input_required`` result, in the session's shapes.

    Raises:
        RoundFailed: for a request the session's revision cannot carry (URL
            elicitation before 2025-11-25), or a malformed round.
    """
    asked = needs.get("inputRequests")
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


def _input_response(request: ClientRequest, answer: Answer) -> JsonValue:
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
