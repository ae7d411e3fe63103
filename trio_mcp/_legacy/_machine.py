"""The handshake-era session machine: client messages and core results in, messages
and effects out, with no I/O and no Trio (in the manner of h11). Written once here:
``route`` (what a legacy request of a session is: the edge's own answer, a fault, a
setting of the session, or a ``Carried`` call for the core, whose rounds ``Rounds``
drives) and the internal listen (``listen_params``, ``legacy_note``).

``StreamMachine`` is a stdio stream's one session, the ``Front`` of its message loop:
``take`` a client message, ``reply`` and ``note`` for what the core sends back for
the machine's requests, ``ended`` when the input ends; each returns the effects in
order (``bytes`` to write, a ``Request`` to serve, a ``Notification`` or ``Fault``
for the loop), which the loop performs. A 2026-07-28 request passes untouched.
"""

from __future__ import annotations

import itertools
import logging
import secrets
from typing import TYPE_CHECKING, Final

import attrs

from .._json import (
    JsonObject,
    JsonValue,
    could_exceed,
    depth_exceeds,
    encode_message,
    loads,
)
from .._limits import Limits
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault, Notification, Request, classify, parse_message
from ._rounds import Answer, Carried, Rounds, Step
from ._session import (
    ACKNOWLEDGED,
    ALL_REVISIONS,
    FORWARDED,
    LIST_FLAGS,
    MAX_SUBSCRIPTIONS,
    BadInitialize,
    Session,
    modern,
    negotiate,
    subscription_uri,
)
from ._shapes import OutputSchemaOf, initialize_result

if TYPE_CHECKING:
    from .._dispatch import Reply

__all__ = [
    "Effect",
    "Level",
    "StreamMachine",
    "Subscribe",
    "is_response",
    "legacy_note",
    "listen_params",
    "listen_flags",
    "route",
]

log = logging.getLogger("trio_mcp")

LISTEN: Final = "subscriptions/listen"
Effect = bytes | Request | Notification | Fault
"""What the machine asks of its adapter: write it, or have the loop serve it."""


@attrs.frozen
class Level:
    """``logging/setLevel``: the session's level from now on."""

    level: str


@attrs.frozen
class Subscribe:
    """``resources/subscribe`` (``wanted``) or ``resources/unsubscribe`` of ``uri``."""

    uri: str
    wanted: bool


def route(
    request: Request, session: Session, subscribable: bool, again: str
) -> JsonObject | Fault | Level | Subscribe | Carried:
    """What a legacy ``request`` of ``session`` is (a result is the answer itself).

    ``subscribable``: the server advertises ``resources.subscribe``; ``again``:
    what a second ``initialize`` is told (-32600, HTTP 400).
    """
    method, rid = request.method, request.id
    if method in FORWARDED:
        modern_params = session.modern_params(request.params)
        if modern_params is None:
            return Fault(wire.INVALID_PARAMS, "params must be an object", None, rid)
        return Carried(rid, method, modern_params, session)
    if method == "ping":
        return {}
    if method == "initialize":
        return Fault(wire.INVALID_REQUEST, again, None, rid, 400)
    if method == "logging/setLevel":
        params = request.params
        level = params.get("level") if isinstance(params, dict) else None
        if not isinstance(level, str) or level not in wire.LOG_LEVEL_RANK:
            levels = ", ".join(wire.LOG_LEVELS)
            text = f"logging/setLevel needs params.level, one of {levels}"
            return Fault(wire.INVALID_PARAMS, text, None, rid)
        return Level(level)
    if method in ("resources/subscribe", "resources/unsubscribe"):
        uri = subscription_uri(request, subscribable)
        if isinstance(uri, Fault):
            return attrs.evolve(uri, request_id=rid)
        return Subscribe(uri, method == "resources/subscribe")
    text = f"method '{method}' is not served in protocol revision {session.revision}"
    return Fault(wire.METHOD_NOT_FOUND, text, None, rid)


def result_bytes(request_id: str | int, result: JsonObject) -> bytes:
    """A result the edge answers itself, encoded."""
    return encode_message(wire.result_message(request_id, result))


def fault_bytes(fault: Fault) -> bytes:
    """An error the edge answers itself, encoded."""
    return encode_message(fault.to_message())


# -- the internal listen ---------------------------------------------------------------
def listen_flags(capabilities: JsonObject) -> JsonObject:
    """The list changes a session hears of: the kinds advertised ``listChanged``."""
    return {
        flag: True
        for kind, flag in LIST_FLAGS.items()
        if isinstance(advertised := capabilities.get(kind), dict)
        and advertised.get("listChanged") is True
    }


def listen_params(flags: JsonObject, session: Session) -> JsonObject | None:
    """The params of the listen following ``session`` (None: nothing to hear)."""
    wanted = dict(flags)
    if session.subscriptions:
        uris: list[JsonValue] = [*sorted(session.subscriptions)]
        wanted["resourceSubscriptions"] = uris
    if not wanted:
        return None
    return {"_meta": session.modern_meta(None), "notifications": wanted}


def legacy_note(note: JsonObject) -> bytes:
    """A notification of an internal listen as a handshake-era client gets it."""
    params = note.get("params")
    out: JsonObject = {"jsonrpc": wire.JSONRPC, "method": note.get("method")}
    rest = (
        {k: v for k, v in params.items() if k != "_meta"}
        if isinstance(params, dict)
        else {}
    )
    if rest:
        out["params"] = rest
    return encode_message(out)


_AGAIN: Final = (
    "invalid request: this stream is already initialized (revision {}); start a new "
    "server process for a new session"
)
_NO_VERSION: Final = (
    "this request carries no protocol version: send initialize first "
    f"(revisions {', '.join(ALL_REVISIONS[1:])}) or carry params._meta "
    f"(revision {wire.PROTOCOL_VERSION})"
)
_ENDED: Final = "the client's input has ended, so it cannot be asked for input"


class StreamMachine:
    """The one handshake-era session of a message stream (stdio), sans I/O."""

    def __init__(self, limits: Limits, output_schema: OutputSchemaOf) -> None:
        self.max_depth = limits.max_depth
        self.max_waiting = limits.max_waiting
        self.prefix = f"legacy-{secrets.token_hex(8)}-"
        self._ids = itertools.count(1)
        self.rounds = Rounds(limits, output_schema, itertools.count(1).__next__)
        self.session: Session | None = None
        self.initializing: tuple[str, str | int] | None = None
        """The internal discovery's id and the client's ``initialize`` id."""
        self.by_client: dict[str | int, Carried] = {}
        self.asked: dict[str | int, Carried] = {}
        """Calls waiting in a round, by the id of each request the client was asked."""
        self.subscribable = False
        self.flags: JsonObject = {}
        self.listen: str | None = None
        """The internal listen whose notifications reach the client."""
        self.opening: str | None = None
        """The listen that replaces it once acknowledged."""
        self.answering: list[str | int] = []
        """``resources/(un)subscribe`` requests answered when ``opening`` is."""
        self.queued: list[str | int] = []
        """Those that came meanwhile: a listen after ``opening`` answers them."""

    def _new_id(self) -> str:
        return f"{self.prefix}{next(self._ids)}"

    # -- client to server -----------------------------------------------------------
    def take(self, raw: object) -> list[Effect]:
        """The effects of one message the client sent (read once: the loop takes a
        parsed request as it is)."""
        if not isinstance(raw, str | bytes):
            return [raw]  # type: ignore[list-item]  # Oversized: the loop answers it
        try:
            value = loads(raw)
        except (ValueError, RecursionError):
            return [parse_message(raw, max_depth=self.max_depth)]
        if could_exceed(raw, self.max_depth) and depth_exceeds(value, self.max_depth):
            return [parse_message(raw, max_depth=self.max_depth)]
        if isinstance(value, dict) and is_response(value):
            return self._answered(value)
        message = classify(value)
        if isinstance(message, Request):
            if modern(message.params):
                return [message]
            if message.method == "initialize":
                return self._initialize(message)
            return self._request(message)
        if isinstance(message, Notification):
            return self._notified(message)
        return [message]

    def _initialize(self, request: Request) -> list[Effect]:
        if self.session is not None:
            text = _AGAIN.format(self.session.revision)
            return [fault_bytes(Fault(wire.INVALID_REQUEST, text, None, request.id))]
        try:
            session = negotiate(request.params)
        except BadInitialize as exc:
            fault = Fault(wire.INVALID_PARAMS, str(exc), None, request.id)
            return [fault_bytes(fault)]
        self.session = session
        discover_id = self._new_id()
        self.initializing = (discover_id, request.id)
        params: JsonObject = {"_meta": session.modern_meta(None)}
        return [Request(discover_id, "server/discover", params)]

    def _request(self, request: Request) -> list[Effect]:
        session = self.session
        if session is None:
            if request.method == "ping":
                return [result_bytes(request.id, {})]
            return [
                fault_bytes(Fault(wire.INVALID_PARAMS, _NO_VERSION, None, request.id))
            ]
        routed = route(request, session, self.subscribable, "")
        if isinstance(routed, Carried):
            self.by_client[routed.client_id] = routed
            return [self._carry(routed)]
        if isinstance(routed, Fault):
            return [fault_bytes(routed)]
        if isinstance(routed, Level):
            self.session = attrs.evolve(session, log_level=routed.level)
            return [result_bytes(request.id, {})]
        if isinstance(routed, Subscribe):
            return self._subscribe(request.id, routed, session)
        return [result_bytes(request.id, routed)]

    def _carry(self, call: Carried) -> Request:
        """The modern request of ``call``'s current round, for the core: under the
        client's id (its ids are unique among its requests; the machine's own are
        prefixed), known again by what it carries."""
        return _Carrying(call.client_id, call.method, call.params, call)

    def _notified(self, message: Notification) -> list[Effect]:
        if message.method in (
            "notifications/initialized",
            "notifications/roots/list_changed",
        ):
            return []  # nothing of the core depends on them
        params = message.params
        request_id = params.get("requestId") if isinstance(params, dict) else None
        call = (
            self.by_client.get(request_id)
            if message.method == "notifications/cancelled"
            and isinstance(request_id, str | int)
            else None
        )
        if call is None:
            return [message]
        if call.asked:  # it waits in a round: nothing reaches the core
            return [*self._forget(call)]
        self._forget(call)
        return [message]

    def _forget(self, call: Carried) -> list[bytes]:
        """``call`` is over: forget it; the notes for the requests it still waits on."""
        if self.by_client.get(call.client_id) is call:
            del self.by_client[call.client_id]
        for request_id in call.asked:
            self.asked.pop(request_id, None)
        return self.rounds.dropped(call)

    def _answered(self, response: JsonObject) -> list[Effect]:
        """A client's answer to a server-to-client request."""
        request_id = response.get("id")
        call = self.asked.pop(request_id, None) if type(request_id) is int else None
        if call is None or request_id not in call.asked:
            log.debug(
                "dropped a client answer to no waiting request: id %r", request_id
            )
            return []
        assert isinstance(request_id, int)
        waiting = [*call.asked]
        answer = Answer(response.get("result"), response.get("error"))
        step = self.rounds.answered(call, request_id, answer)
        if step.done:
            for other in waiting:
                self.asked.pop(other, None)
        return self._stepped(call, step)

    def _stepped(self, call: Carried, step: Step) -> list[Effect]:
        if step.retry is not None:
            return [*step.out, self._carry(call)]
        if step.done:
            self._forget(call)
        else:
            for request_id in call.asked:
                self.asked[request_id] = call
        return [*step.out]

    # -- server to client ----------------------------------------------------------------
    def reply(self, request: Request, reply: Reply) -> list[Effect] | None:
        """The effects of the core's reply to ``request`` (None: not the machine's
        request, so the loop writes the reply as it is)."""
        if type(request) is _Carrying:
            call = request.call
            result, error = reply.parts()
            return self._stepped(call, self.rounds.replied(call, result, error))
        rid = request.id
        if not (isinstance(rid, str) and rid.startswith(self.prefix)):
            return None
        result, error = reply.parts()
        if self.initializing is not None and rid == self.initializing[0]:
            return self._initialized(result, error)
        return self._listen_ended(rid, error)

    def _initialized(self, result: JsonObject | None, error: JsonValue) -> list[Effect]:
        assert self.initializing is not None
        assert self.session is not None
        client_id = self.initializing[1]
        self.initializing = None
        if result is None:
            message = {"jsonrpc": wire.JSONRPC, "id": client_id, "error": error}
            return [encode_message(message)]
        caps = result.get("capabilities")
        capabilities = caps if isinstance(caps, dict) else {}
        self.flags = listen_flags(capabilities)
        resources = capabilities.get("resources")
        self.subscribable = (
            isinstance(resources, dict) and resources.get("subscribe") is True
        )
        reply = initialize_result(result, self.session)
        return [result_bytes(client_id, reply), *self._follow()]

    def note(self, request: Request, note: JsonObject) -> list[Effect] | None:
        """The effects of a notification the core sends for ``request`` (None: the
        loop writes it as it is)."""
        rid = request.id
        acknowledged = note.get("method") == ACKNOWLEDGED
        if rid == self.opening and acknowledged:
            return self._acknowledged()
        if rid in (self.listen, self.opening):
            return [] if acknowledged else [legacy_note(note)]
        if isinstance(rid, str) and rid.startswith(self.prefix):
            return []  # a listen being replaced
        return None

    def ended(self) -> list[Effect]:
        """The client's input ended: no round can be answered any more."""
        self.rounds.ended = True
        out: list[Effect] = []
        for call in {id(c): c for c in self.asked.values()}.values():
            self._forget(call)
            out.append(call.fail(wire.INTERNAL_ERROR, _ENDED))
        return out

    # -- subscriptions and the internal listen ---------------------------------------------
    def _subscribe(
        self, request_id: str | int, change: Subscribe, session: Session
    ) -> list[Effect]:
        held = session.subscriptions
        if change.wanted:
            if change.uri not in held and len(held) >= MAX_SUBSCRIPTIONS:
                text = (
                    f"this session already holds {MAX_SUBSCRIPTIONS} subscriptions; "
                    "unsubscribe from some first"
                )
                return [fault_bytes(Fault(wire.INVALID_PARAMS, text, None, request_id))]
            new = held | {change.uri}
        else:
            new = held - {change.uri}
        if new == held:
            return [result_bytes(request_id, {})]
        if self.opening is not None:  # a change is on its way: this one follows it
            if len(self.queued) >= self.max_waiting:
                text = wire.busy_message("too many subscription changes wait")
                busy = Fault(wire.SERVER_BUSY, text, {"retryable": True}, request_id)
                return [fault_bytes(busy)]
            self.session = attrs.evolve(session, subscriptions=new)
            self.queued.append(request_id)
            return []
        self.session = attrs.evolve(session, subscriptions=new)
        self.answering = [request_id]
        return self._follow()

    def _follow(self) -> list[Effect]:
        """Open a listen with the session's filter; without one, the current listen
        ends and the waiting requests are answered."""
        assert self.session is not None
        params = listen_params(self.flags, self.session)
        if params is not None:
            self.opening = self._new_id()
            return [Request(self.opening, LISTEN, params)]
        out: list[Effect] = self._close_listen()
        out += [result_bytes(request_id, {}) for request_id in self.answering]
        self.answering = []
        return out

    def _close_listen(self) -> list[Effect]:
        if self.listen is None:
            return []
        cancel: JsonObject = {"requestId": self.listen}
        self.listen = None
        return [Notification("notifications/cancelled", cancel)]

    def _acknowledged(self) -> list[Effect]:
        """The new listen is open: the old one ends, the waiting are answered."""
        out = self._close_listen()
        self.listen, self.opening = self.opening, None
        out += [result_bytes(request_id, {}) for request_id in self.answering]
        return out + self._next_change()

    def _next_change(self) -> list[Effect]:
        self.answering, self.queued = self.queued, []
        return self._follow() if self.answering else []

    def _listen_ended(self, rid: str, error: JsonValue) -> list[Effect]:
        """An internal listen ended: refused before its acknowledgement (the waiting
        requests get its error), or by itself."""
        if rid == self.listen:
            self.listen = None
        if rid != self.opening:
            return []
        self.opening = None
        code, text = wire.INTERNAL_ERROR, "the listen ended"
        if isinstance(error, dict):
            raw_code, raw_text = error.get("code"), error.get("message")
            code = raw_code if isinstance(raw_code, int) else code
            text = raw_text if isinstance(raw_text, str) else text
        out: list[Effect] = [
            fault_bytes(Fault(code, text, None, request_id))
            for request_id in self.answering
        ]
        return out + self._next_change()


@attrs.frozen(eq=False)
class _Carrying(Request):
    """The core's request for a carried call's current round."""

    call: Carried = attrs.field(repr=False)


def is_response(value: JsonObject) -> bool:
    """Whether a client's message is its answer to a server-to-client request."""
    return (
        "method" not in value
        and "id" in value
        and ("result" in value or "error" in value)
    )
