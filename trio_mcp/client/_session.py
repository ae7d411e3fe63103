"""One conversation with a server, in whichever era it speaks.

``open`` picks the era (revision 2026-07-28, "Versioning"): with ``era="auto"`` a
``server/discover`` answered with ``2026-07-28`` among the ``supportedVersions``
means a modern server; any other answer (an error, a bare HTTP 400, 404 or 405, no
reply within ``_PROBE`` seconds) means a handshake-era one, which gets an
``initialize`` with 2025-11-25 and ``notifications/initialized``. A transport
failure is no answer: it is raised.

``request`` sends one request and returns its result:

* modern: every request carries the full ``_meta`` (protocol version, client
  capabilities, client info); an ``input_required`` result is answered through
  ``on_input`` and retried under a new id with ``inputResponses`` and the
  ``requestState`` echoed byte for byte, at most ``_MAX_ROUNDS`` times;
* handshake era: requests carry only a ``progressToken``; the server's own requests
  (``elicitation/create``, ``sampling/createMessage``, ``roots/list``, ``ping``)
  are answered through ``on_input`` as they come; a 404 on HTTP (the session
  expired) opens a new session and sends the request once more.

The deadline is the call's ``timeout``: when it passes the request is cancelled at
the server (the link's job) and ``McpError.Timeout`` is raised. A caller's own
cancellation cancels it the same way and propagates as Trio's.
"""

from __future__ import annotations

import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Literal

import trio

from .._errors import InvalidArgument, Remote, Timeout, Transport
from .._json import JsonObject, JsonValue, dumps, loads
from .._version import __version__
from ._jsonrpc import Incoming, raise_error, request, response
from ._link import HttpStatus, Link
from ._values import InputRequest, ServerInfo

__all__ = ["Era", "InputAnswerer", "Progress", "Session"]

log = logging.getLogger("trio_mcp.client")

Era = Literal["auto", "modern", "legacy"]
#: ``on_input``: answers one request of the server for input.
InputAnswerer = Callable[[InputRequest], Awaitable[Mapping[str, object]]]
#: ``progress``: ``done, total, message``; may be sync or async.
Progress = Callable[[float, float | None, str | None], object]

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
#: The handshake-era revisions the client speaks, should the server pick another.
LEGACY_REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
_INPUT_METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPS = "io.modelcontextprotocol/clientCapabilities"
_META_INFO = "io.modelcontextprotocol/clientInfo"
_META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
#: Seconds a server gets to answer ``server/discover`` before it counts as legacy.
_PROBE = 10.0
#: Input rounds of one request before the client gives up (a server asking forever).
_MAX_ROUNDS = 16
_CLIENT_INFO: JsonObject = {"name": "trio-mcp", "version": __version__}


class Session:
    """See the module docstring."""

    def __init__(
        self,
        link: Link,
        *,
        era: Era,
        timeout: float,
        on_input: InputAnswerer | None,
        progress: Progress | None,
    ) -> None:
        self.link = link
        self.era = era
        self.timeout = timeout
        self.on_input = on_input
        self.progress = progress
        self.info: ServerInfo | None = None
        #: Called with the method of each list-changed or updated notification.
        self.on_change: Callable[[Incoming], Awaitable[None]] | None = None
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self.capabilities: JsonObject = (
            {"elicitation": {}, "sampling": {}, "roots": {}}
            if on_input is not None
            else {}
        )
        link.on_unsolicited = self._unsolicited

    # -- opening ----------------------------------------------------------------
    async def open(self) -> ServerInfo:
        """Learn the server's era and what it says of itself (within ``timeout``)."""
        with trio.move_on_after(self.timeout) as scope:
            if self.era != "legacy":
                found = await self._discover()
                if found is not None:
                    self.info = found
                    return found
            self.info = await self._initialize()
            return self.info
        assert scope.cancelled_caught
        raise Timeout(f"{self.link.source} did not answer within {self.timeout:g} s")

    async def _discover(self) -> ServerInfo | None:
        params: JsonObject = {"_meta": self._meta()}
        message = request(next(self._ids), "server/discover", params)
        try:
            with trio.move_on_after(
                _PROBE if self.era == "auto" else self.timeout
            ) as probe:
                reply = await self.link.exchange(message, _ignore)
        except HttpStatus:
            if self.era == "modern":
                raise
            return None
        if probe.cancelled_caught:
            if self.era == "modern":
                raise Timeout(f"{self.link.source} did not answer server/discover")
            return None
        try:
            result = raise_error(reply, "server/discover")
        except Remote:
            if self.era == "modern":
                raise
            return None
        versions = result.get("supportedVersions")
        if isinstance(versions, list) and MODERN in versions:
            meta = result.get("_meta")
            implementation = (
                meta.get(_META_SERVER_INFO) if isinstance(meta, dict) else None
            )
            return ServerInfo.of(result, MODERN, implementation)
        if self.era == "modern":
            raise Transport(
                f"{self.link.source} does not speak revision {MODERN} (it lists {versions!r})"
            )
        return None

    async def _initialize(self) -> ServerInfo:
        self.link.modern = False
        self.link.revision = LEGACY
        params: JsonObject = {
            "protocolVersion": LEGACY,
            "capabilities": self.capabilities,
            "clientInfo": _CLIENT_INFO,
        }
        reply = await self.link.exchange(
            request(next(self._ids), "initialize", params), _ignore
        )
        result = raise_error(reply, "initialize")
        revision = result.get("protocolVersion")
        if not isinstance(revision, str) or revision not in LEGACY_REVISIONS:
            raise Transport(
                f"{self.link.source} chose revision {revision!r}, which the client does not "
                f"speak (it speaks {MODERN} and {', '.join(LEGACY_REVISIONS)})"
            )
        self.link.revision = revision
        await self.link.notify(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        self.link.session_opened()
        return ServerInfo.of(result, revision, result.get("serverInfo"))

    # -- requests ---------------------------------------------------------------
    def _meta(self, token: str | None = None) -> JsonObject:
        meta: JsonObject = {}
        if self.link.modern:
            meta = {
                _META_VERSION: MODERN,
                _META_CAPS: self.capabilities,
                _META_INFO: _CLIENT_INFO,
            }
        if token is not None:
            meta["progressToken"] = token
        return meta

    async def request(
        self,
        method: str,
        params: Mapping[str, JsonValue] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the contract's deadline, applied with trio
        progress: Progress | None = None,
    ) -> JsonObject:
        """Send ``method`` and return its result (see the module docstring).

        Raises:
            McpError.Remote: the server answered with a JSON-RPC error.
            McpError.Timeout: no result within the deadline (cancelled remotely).
            McpError.Transport: the link failed, or the reply broke the protocol.
        """
        limit = self.timeout if timeout is None else timeout
        with trio.move_on_after(limit) as scope:
            return await self._rounds(
                method, dict(params or {}), progress or self.progress
            )
        assert scope.cancelled_caught
        raise Timeout(f"{method}: {self.link.source} did not answer within {limit:g} s")

    async def _rounds(
        self, method: str, params: JsonObject, progress: Progress | None
    ) -> JsonObject:
        token = f"trio-mcp-{next(self._tokens)}" if progress is not None else None

        async def on_notice(incoming: Incoming) -> None:
            if progress is not None and incoming.method == "notifications/progress":
                await _report(progress, incoming.params)
            elif incoming.method == "notifications/message":
                _log_message(self.link.source, incoming.params)

        for _ in range(_MAX_ROUNDS):
            sent = dict(params)
            meta = self._meta(token)
            extra = sent.get("_meta")
            sent["_meta"] = {**(extra if isinstance(extra, dict) else {}), **meta}
            if not sent["_meta"]:
                del sent["_meta"]
            reply = await self._exchange(
                request(next(self._ids), method, sent), on_notice
            )
            result = raise_error(reply, method)
            kind = result.get("resultType", "complete")
            if kind == "complete" or not self.link.modern:
                return result
            if kind != "input_required":
                raise Transport(
                    f"{method}: {self.link.source} answered with resultType {kind!r}, which the client does not know"
                )
            params = await self._answered(method, params, result)
        raise Transport(
            f"{method}: {self.link.source} asked for input {_MAX_ROUNDS} times; the client gave up"
        )

    async def _exchange(
        self, message: JsonObject, on_notice: Callable[[Incoming], Awaitable[None]]
    ) -> JsonObject:
        try:
            return await self.link.exchange(message, on_notice)
        except HttpStatus as exc:
            if exc.status != 404 or self.link.modern:
                raise
        log.info("%s: the session expired; opening a new one", self.link.source)
        await self.link.end_session()
        self.info = await self._initialize()
        params = message.get("params")
        retry = request(
            next(self._ids),
            str(message["method"]),
            params if isinstance(params, dict) else {},
        )
        return await self.link.exchange(retry, on_notice)

    async def _answered(
        self, method: str, params: JsonObject, result: JsonObject
    ) -> JsonObject:
        """The next round's params: the answers to ``result``'s input requests."""
        requests = result.get("inputRequests", {})
        if not isinstance(requests, dict):
            raise Transport(
                f"{method}: the input_required result's inputRequests is not an object"
            )
        answers: JsonObject = {}
        for key, value in requests.items():
            if not isinstance(value, dict):
                raise Transport(f"{method}: input request {key!r} is not an object")
            answers[key] = await self._input(method, InputRequest.of(value))
        retry = {
            k: v
            for k, v in params.items()
            if k not in ("inputResponses", "requestState")
        }
        if answers:
            retry["inputResponses"] = answers
        state = result.get("requestState")
        if state is not None:
            if not isinstance(state, str):
                raise Transport(f"{method}: the requestState is not a string")
            retry["requestState"] = state
        return retry

    async def _input(self, method: str, wanted: InputRequest) -> JsonObject:
        if self.on_input is None or wanted.method not in _INPUT_METHODS:
            raise Transport(
                f"{method}: {self.link.source} asked for {wanted.method}, which this client "
                "did not declare (give on_input= to answer input requests)"
            )
        return _json_answer(await self.on_input(wanted), wanted.method)

    # -- what the server sends unasked ------------------------------------------
    async def _unsolicited(self, incoming: Incoming) -> None:
        if incoming.kind == "notification":
            if incoming.method == "notifications/message":
                _log_message(self.link.source, incoming.params)
            elif self.on_change is not None:
                await self.on_change(incoming)
            return
        rid = incoming.id
        if rid is None:
            return
        await self.link.respond(await self._answer_request(rid, incoming))

    async def _answer_request(self, rid: str | int, incoming: Incoming) -> JsonObject:
        """The response to a handshake-era server's own request."""
        if incoming.method == "ping":
            return response(rid, {})
        if self.on_input is None or incoming.method not in _INPUT_METHODS:
            return response(
                rid,
                error={
                    "code": -32601,
                    "message": f"the client does not answer {incoming.method}",
                },
            )
        try:
            answer = await self.on_input(InputRequest(incoming.method, incoming.params))
        except Exception:
            log.exception("on_input failed to answer %s", incoming.method)
            return response(
                rid, error={"code": -32603, "message": "the client could not answer"}
            )
        return response(rid, _json_answer(answer, incoming.method))


def _json_answer(answer: Mapping[str, object], method: str) -> JsonObject:
    """``on_input``'s answer as JSON; ``InvalidArgument`` if it is not JSON."""
    try:
        value = loads(dumps(dict(answer)))  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(
            f"on_input's answer to {method} is not a JSON object ({exc}); return a "
            "dict of JSON values"
        ) from None
    assert isinstance(value, dict)
    return value


async def _ignore(_: Incoming) -> None:
    return None


async def _report(progress: Progress, params: JsonObject) -> None:
    done, total, message = (
        params.get("progress"),
        params.get("total"),
        params.get("message"),
    )
    if isinstance(done, bool) or not isinstance(done, int | float):
        return
    total = (
        total
        if isinstance(total, int | float) and not isinstance(total, bool)
        else None
    )
    text = message if isinstance(message, str) else None
    outcome = progress(float(done), None if total is None else float(total), text)
    if inspect.isawaitable(outcome):
        await outcome


def _log_message(source: str, params: JsonObject) -> None:
    level = params.get("level")
    log.debug("%s logged (%s): %.500s", source, level, params.get("data"))
