"""Multi round-trip requests: open a retry's state and responses; shape ``input_required``.

Only ``tools/call``, ``prompts/get`` and ``resources/read`` get here
(MCP revision 2026-07-28, multi round-trip server rules). A retry's ``requestState`` is verified before the
handler runs; its responses are decoded by what the previous round asked, so the
handler sees typed values under the keys it chose. Keys it did not ask for are
ignored; keys it asked for and the client left out are simply absent, so the usual
handler asks again. Responses sent without any ``requestState`` answer nothing that
was asked (this server always sends a state): they are ignored, the handler runs
once, and if it asks, the client is asked again; a handler never runs twice in one
request. ``input_required`` results always carry ``inputRequests`` and a
sealed ``requestState`` (even for ``state=None``, so the retry stays bound), and no
``ttlMs``/``cacheScope``.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping

import attrs

from .._context import MissingClientCapability, client_supports
from .._declare import NeedsInput, read_response
from .._errors import DecodeError, Problem
from .._json import JsonObject, JsonValue
from .._protocol._state import Binding, InvalidState, StateSealer, salient_digest
from .._store import MemoryStore, Store
from .._store._memory import ClaimsFull

__all__ = ["Answered", "BadRound", "Round", "ask", "open_round", "round_binding"]

log = logging.getLogger("trio_mcp")

_NOTHING: JsonObject = {}


class Answered:
    """The rounds answered already: a sealed ``requestState`` opens for one retry.

    A state that verifies is claimed in the server's store (``Store.claim``) for
    as long as it could still open (the sealer's ``ttl``), keyed by a digest of
    the token (each seal has a fresh nonce, so each token is one round). A second
    retry with it is refused, so an answered round (a confirmation the user gave
    once) cannot be replayed within the state's lifetime (MCP revision
    2026-07-28, multi round-trip server rules: "one-time use has to be enforced
    on the server"). With a ``RedisStore`` this holds across replicas; a store
    that cannot be reached is stood in for by this process's memory.

    Args:
        store: The server's store.
        ttl: Seconds a sealed state stays valid.
    """

    def __init__(self, store: Store, ttl: float) -> None:
        self.store = store
        self.ttl = ttl
        self._local = MemoryStore()
        """The claims made while the store cannot be reached."""

    async def first(self, token: str) -> None:
        """Claim the round of ``token``.

        Raises:
            BadRound: if it was answered already.
            ClaimsFull: if no claim can be held now (the caller says "busy").
        """
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
        key = f"round:{digest[:40]}"
        try:
            fresh = await self.store.claim(key, self.ttl)
        except ClaimsFull:
            raise
        except Exception as exc:  # the store is down: claim in this process alone
            log.warning("requestState: the store failed (%s); claiming locally", exc)
            fresh = self._local.claim_now(key, self.ttl)
        if not fresh:
            raise BadRound(
                "invalid requestState: this round was answered already (a state is "
                "good for one retry); start the request again"
            )


class BadRound(Exception):
    """The retry's ``requestState`` or ``inputResponses`` are unusable (-32602)."""

    def __init__(self, message: str, data: JsonValue = None) -> None:
        self.data = data
        super().__init__(message)


@attrs.frozen(eq=False)
class Round:
    """What a retry carries into the handler."""

    state: JsonValue = None
    responses: Mapping[str, object] = attrs.field(factory=dict)


def round_binding(method: str, params: JsonObject, principal: str | None) -> Binding:
    """What a round's sealed state is bound to: the method, the params a retry must
    repeat (secrets masked by the caller) and the caller."""
    return Binding(method, salient_digest(method, params), principal)


def open_round(sealer: StateSealer, params: JsonObject, binding: Binding) -> Round:
    """Verify a request's ``requestState`` and decode its ``inputResponses``.

    Raises:
        BadRound: if the state does not verify for this request and caller, has
            expired, or a response does not fit what was asked.
    """
    raw = params.get("inputResponses", _NOTHING)
    if not isinstance(raw, dict):
        raise BadRound("inputResponses must be an object of responses by key")
    if "requestState" not in params:
        return Round()
    try:
        contents = sealer.open(params["requestState"], binding)
    except InvalidState as exc:
        raise BadRound(f"invalid requestState: {exc}") from None
    asked = contents.get("i")
    return Round(
        contents.get("s"),
        _read_responses(asked if isinstance(asked, dict) else {}, raw),
    )


def _read_responses(
    asked: Mapping[str, JsonValue], raw: Mapping[str, JsonValue]
) -> dict[str, object]:
    """Decode the responses to what was asked; every bad one is reported.

    Raises:
        BadRound: listing each response that does not fit its request.
    """
    responses: dict[str, object] = {}
    problems: list[Problem] = []
    for key, descriptor in asked.items():
        if key not in raw:
            continue
        try:
            responses[key] = read_response(descriptor, raw[key])
        except DecodeError as exc:
            problems.extend(
                Problem(
                    ".".join(p for p in ("inputResponses", key, q.path) if p), q.message
                )
                for q in exc.problems
            )
    if problems:
        raise BadRound(
            "invalid inputResponses:\n" + "\n".join(p.line() for p in problems),
            {"problems": [{"path": p.path, "message": p.message} for p in problems]},
        )
    return responses


def _merge(into: JsonObject, needs: Mapping[str, JsonValue]) -> None:
    for name, need in needs.items():
        have = into.setdefault(name, {})
        if isinstance(have, dict) and isinstance(need, Mapping):
            _merge(have, need)


def ask(
    sealer: StateSealer,
    needs: NeedsInput,
    binding: Binding,
    client_capabilities: Mapping[str, JsonValue],
) -> JsonObject:
    """Return the ``input_required`` result for ``needs``, its state sealed to
    ``binding``.

    Raises:
        MissingClientCapability: if a request needs a capability the request's
            client did not declare (MCP revision 2026-07-28, multi round-trip server rules).
    """
    missing: JsonObject = {}
    for request in needs.requests.values():
        if not client_supports(client_capabilities, request.client_capability):
            _merge(missing, request.client_capability)
    if missing:
        raise MissingClientCapability(
            missing,
            "this request needs input the client cannot give: declare "
            + ", ".join(sorted(missing))
            + " in _meta clientCapabilities",
        )
    contents: JsonObject = {
        "s": needs.state,
        "i": {key: request.descriptor() for key, request in needs.requests.items()},
    }
    return {
        "resultType": "input_required",
        "inputRequests": {key: r.to_wire() for key, r in needs.requests.items()},
        "requestState": sealer.seal(contents, binding),
    }
