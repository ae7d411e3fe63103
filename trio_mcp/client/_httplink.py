"""The Streamable HTTP link: each request its own POST, its reply JSON or an event
stream (revision 2026-07-28, "Streamable HTTP"; 2025-11-25 for handshake-era
sessions).

Headers: every POST carries ``Accept`` (both media types), ``Content-Type``,
``MCP-Protocol-Version`` and the caller's ``headers=`` and bearer token (``auth=``,
asked for again per request). A modern request adds the mirrored headers
(``Mcp-Method``; ``Mcp-Name`` for ``tools/call``, ``prompts/get`` and
``resources/read``; ``Mcp-Param-*`` for the tool parameters declared with
``x-mcp-header``), values outside visible ASCII in the ``=?base64?...?=`` form. A
handshake-era request adds ``Mcp-Session-Id`` once the session has one.

Cancellation: leaving an exchange before its reply closes its connection, which is
the cancellation on Streamable HTTP; in a handshake-era session a
``notifications/cancelled`` POST follows, as those servers expect.

Status: a 3xx is never followed (``McpError.Transport`` names the ``Location``); a
4xx or 5xx whose body is a JSON-RPC error is that error (the session raises
``McpError.Remote``); any other is ``HttpStatus``, a ``Transport`` that keeps the
status, so the session can tell a handshake-era server (a bare 400, 404 or 405 to
``server/discover``) and an expired session (404) from a real failure.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Mapping

import trio

from .._errors import Transport
from .._json import JsonObject
from .._protocol._headers import ParamHeader
from ._h11 import Endpoint, HttpPool, HttpResponse
from ._jsonrpc import MAX_MESSAGE_BYTES, Incoming, decode, encode, notification
from ._link import HttpStatus, Notice, Unsolicited, request_headers
from ._sse import SseParser

__all__ = ["HttpLink", "HttpStatus", "header_value"]

log = logging.getLogger("trio_mcp.client")

#: Asked for the bearer token before each request (None: no Authorization header).
TokenSource = Callable[[], Awaitable[str | None]]

_VISIBLE = re.compile(r"^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$")
_NAME_SOURCES = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
#: Seconds the rest of an event stream may take to end once the reply has come.
_DRAIN = 0.5


def header_value(value: str) -> str:
    """``value`` as a header carries it: itself when plain visible ASCII, else the
    base64 form (also when it could be mistaken for one)."""
    if _VISIBLE.match(value) and not value.startswith("=?base64?"):
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"=?base64?{encoded}?="


def _param_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else str(value)
    return str(value)


class HttpLink:
    """A link to one Streamable HTTP endpoint (see the module docstring)."""

    def __init__(
        self,
        url: str,
        nursery: trio.Nursery,
        *,
        headers: Mapping[str, str],
        token: TokenSource,
    ) -> None:
        self.endpoint = Endpoint.of(url)
        self.source = self.endpoint.shown
        self._pool = HttpPool(self.endpoint)
        self._nursery = nursery
        self._headers = dict(headers)
        self._token = token
        self.on_unsolicited: Unsolicited | None = None
        self.revision = "2026-07-28"
        self.modern = True
        self.session_id: str | None = None
        self._listening = trio.CancelScope()
        #: Tool name -> its ``x-mcp-header`` parameters (filled by the session).
        self.param_headers: dict[str, list[ParamHeader]] = {}

    # -- headers ----------------------------------------------------------------
    async def _request_headers(self, message: JsonObject) -> list[tuple[str, str]]:
        headers = [(k, v) for k, v in self._headers.items()]
        headers += request_headers.get()
        token = await self._token()
        if token is not None:
            headers.append(("authorization", f"Bearer {token}"))
        headers += [
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
            ("user-agent", "trio-mcp-client"),
        ]
        if self.modern or message.get("method") != "initialize":
            headers.append(("mcp-protocol-version", self.revision))
        if self.modern:
            headers += self._mirrored(message)
        elif self.session_id is not None:
            headers.append(("mcp-session-id", self.session_id))
        return headers

    def _mirrored(self, message: JsonObject) -> list[tuple[str, str]]:
        method = message.get("method")
        if not isinstance(method, str):
            return []
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        headers = [("mcp-method", method)]
        source = _NAME_SOURCES.get(method)
        name = params.get(source) if source else None
        if isinstance(name, str):
            headers.append(("mcp-name", header_value(name)))
        if method == "tools/call" and isinstance(name, str):
            arguments = params.get("arguments")
            arguments = arguments if isinstance(arguments, dict) else {}
            for param in self.param_headers.get(name, ()):
                text = _param_text(arguments.get(param.prop))
                if text is not None:
                    headers.append((f"mcp-param-{param.name}", header_value(text)))
        return headers

    # -- the exchanges ----------------------------------------------------------
    async def exchange(self, message: JsonObject, on_notice: Notice) -> JsonObject:
        rid = message["id"]
        assert isinstance(rid, str | int)
        body = encode(message).encode("utf-8", "surrogatepass")
        headers = await self._request_headers(message)
        try:
            async with self._pool.request("POST", headers, body) as response:
                self._keep_session(message, response)
                return await self._reply(response, rid, on_notice)
        except trio.Cancelled:
            if not self.modern:
                cancel = notification(
                    "notifications/cancelled",
                    {"requestId": rid, "reason": "cancelled by the client"},
                )
                self._nursery.start_soon(self._post_quietly, cancel)
            raise

    def _keep_session(self, message: JsonObject, response: HttpResponse) -> None:
        if not self.modern and message.get("method") == "initialize":
            self.session_id = response.headers.get("mcp-session-id")

    async def _reply(
        self, response: HttpResponse, rid: str | int, on_notice: Notice
    ) -> JsonObject:
        _refuse_redirect(response, self.source)
        if response.status == 404 and not self.modern and self.session_id is not None:
            # Revision 2025-11-25: the session is gone; the session opens another.
            raise HttpStatus(404, f"{self.source} no longer knows the session")
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "text/event-stream" and response.status == 200:
            return await self._from_stream(response, rid, on_notice)
        if kind == "application/json":
            body = await response.read_all(MAX_MESSAGE_BYTES)
            incoming = _decoded(body, self.source, response.status)
            if (
                incoming.kind == "response"
                and incoming.id in (rid, None)
                and (response.status == 200 or "error" in incoming.message)
            ):
                return incoming.message
            if response.status == 200:
                raise Transport(
                    f"{self.source} answered with a message that is not the reply to request {rid!r}"
                )
        raise _status_error(response, self.source)

    async def _from_stream(
        self, response: HttpResponse, rid: str | int, on_notice: Notice
    ) -> JsonObject:
        parser = SseParser(self.source, MAX_MESSAGE_BYTES)
        while chunk := await response.receive():
            for data in parser.feed(chunk):
                incoming = decode(data, source=self.source)
                if incoming.kind == "response":
                    if incoming.id == rid:
                        await self._drain(response)
                        return incoming.message
                    continue
                await self._route(incoming, on_notice)
        raise Transport(
            f"{self.source} ended the event stream before the reply to request {rid!r}"
        )

    async def _route(self, incoming: Incoming, on_notice: Notice) -> None:
        if incoming.kind == "notification" and "progressToken" in incoming.params:
            await on_notice(incoming)
        elif self.on_unsolicited is not None:
            if incoming.kind == "request":
                self._nursery.start_soon(self._answer, self.on_unsolicited, incoming)
            else:
                await self.on_unsolicited(incoming)

    async def _answer(self, handler: Unsolicited, incoming: Incoming) -> None:
        # An answer that cannot be delivered fails the stream waiting on it.
        with contextlib.suppress(Transport):
            await handler(incoming)

    @staticmethod
    async def _drain(response: HttpResponse) -> None:
        """Read what is left of the stream for a moment, so the connection can be
        reused; a stream that does not end is closed instead."""
        with trio.move_on_after(_DRAIN):
            while await response.receive():
                pass

    async def _post(self, message: JsonObject) -> None:
        body = encode(message).encode("utf-8", "surrogatepass")
        headers = await self._request_headers(message)
        async with self._pool.request("POST", headers, body) as response:
            _refuse_redirect(response, self.source)
            await response.read_all(MAX_MESSAGE_BYTES)
            if not 200 <= response.status < 300:
                raise _status_error(response, self.source)

    async def _post_quietly(self, message: JsonObject) -> None:
        with trio.move_on_after(1.0):
            with contextlib.suppress(Transport):
                await self._post(message)

    async def notify(self, message: JsonObject) -> None:
        await self._post(message)

    async def respond(self, message: JsonObject) -> None:
        await self._post(message)

    def session_opened(self) -> None:
        """Open the session's ``GET`` stream: a handshake-era server sends its own
        requests and notifications not tied to a POST there (revision 2025-11-25,
        "Listening for Messages from the Server")."""
        if not self.modern and self.session_id is not None:
            self._listening = trio.CancelScope()
            self._nursery.start_soon(self._listen_session, self._listening)

    async def _listen_session(self, scope: trio.CancelScope) -> None:
        """Hold the ``GET`` stream open while the session lasts; reopen it (0.5 s
        doubling to 30 s) when it drops; stop at a status that says there is none."""
        delay = 0.5
        with scope:
            while self.session_id is not None:
                try:
                    if not await self._session_stream():
                        return
                except Transport as exc:
                    log.debug("%s: the session stream broke: %s", self.source, exc)
                await trio.sleep(delay)
                delay = min(delay * 2, 30.0)

    async def _session_stream(self) -> bool:
        """Read the ``GET`` stream to its end; False if the server has none."""
        headers = await self._request_headers({})
        async with self._pool.request("GET", headers) as response:
            kind = response.headers.get("content-type", "").split(";")[0].strip()
            if response.status != 200 or kind.lower() != "text/event-stream":
                return False
            parser = SseParser(self.source, MAX_MESSAGE_BYTES)
            while chunk := await response.receive():
                for data in parser.feed(chunk):
                    incoming = decode(data, source=self.source)
                    if incoming.kind != "response":
                        await self._route(incoming, _ignore)
        return True

    async def end_session(self) -> None:
        """``DELETE`` the handshake-era session (best effort, within a second)."""
        self._listening.cancel()
        if self.modern or self.session_id is None:
            return
        with trio.move_on_after(1.0):
            try:
                headers = await self._request_headers({})
                async with self._pool.request("DELETE", headers) as response:
                    await response.read_all(MAX_MESSAGE_BYTES)
            except Transport:
                pass
        self.session_id = None

    async def aclose(self) -> None:
        await self._pool.aclose()


async def _ignore(_: Incoming) -> None:
    return None


def _refuse_redirect(response: HttpResponse, source: str) -> None:
    if 300 <= response.status < 400:
        where = response.headers.get("location", "(no Location header)")
        raise Transport(
            f"{source} answered with a redirect ({response.status}) to {where}; the "
            "client never follows redirects: if that is the server, use it as the target"
        )


def _decoded(body: bytes, source: str, status: int) -> Incoming:
    try:
        return decode(body, source=source)
    except Transport:
        if status == 200:
            raise
        raise HttpStatus(
            status, f"{source} answered HTTP {status} without a JSON-RPC body"
        ) from None


def _status_error(response: HttpResponse, source: str) -> HttpStatus:
    status = response.status
    if status == 401:
        return HttpStatus(
            status, f"{source} answered 401: it needs a credential (give auth=)"
        )
    if status == 403:
        return HttpStatus(
            status, f"{source} answered 403: the credential is not enough for this"
        )
    return HttpStatus(status, f"{source} answered HTTP {status}")
