"""``McpTestClient``: drive a Server in-process through real JSON text.

Every request is encoded to JSON text and every message the server emits is decoded
from text and validated against the revision's official schema, so a test sees
exactly what a client on the wire would, without sockets or subprocesses.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Self, TypeVar, Unpack

import attrs
import trio

from .._authority import Grants
from .._errors import McpError
from .._json import JsonObject, JsonValue
from .._limits import LimitFields, Limits
from .._server import Server
from ._results import (
    ListedPrompt,
    ListedResource,
    ListedTool,
    PromptResult,
    ResourceResult,
)
from ._schema import SchemaViolation, check_message

__all__ = ["Listen", "ProtocolError", "ToolResult", "McpTestClient", "PROTOCOL_VERSION"]

PROTOCOL_VERSION = "2026-07-28"
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPS = "io.modelcontextprotocol/clientCapabilities"
_META_INFO = "io.modelcontextprotocol/clientInfo"
_META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

E = TypeVar("E", bound=BaseException)

#: What a test that is not run by Trio gets, from the fixture or the client itself.
NOT_A_TRIO_TEST = (
    "{what} runs on Trio, but {test} is not a Trio test{taken}. Mark it "
    "@pytest.mark.trio (instead of @pytest.mark.asyncio, if it has that), or set "
    "trio_mode = true in the pytest configuration (pytest-trio): every async test "
    "not marked @pytest.mark.asyncio then runs on Trio."
)
#: ... when pytest-trio is not loaded at all: marking the test would not help.
NO_PYTEST_TRIO = (
    "{what} runs on Trio, but pytest-trio is not installed, so {test} cannot run "
    "on Trio (a trio_mode setting is ignored without it). Install it "
    "(pip install pytest-trio), then mark the test @pytest.mark.trio or set "
    "trio_mode = true in the pytest configuration."
)


class ProtocolError(Exception):
    """The server answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: JsonValue = None) -> None:
        self.code = code
        self.message = message
        self.data = data
        super().__init__(f"{code}: {message}")


@attrs.frozen
class ToolResult:
    """A ``tools/call`` result as the client received it."""

    content: list[JsonObject]
    structured: JsonValue
    is_error: bool
    meta: JsonObject
    raw: JsonObject
    notifications: list[JsonObject] = attrs.field(factory=list)

    @property
    def text(self) -> str:
        """The text blocks joined with newlines."""
        return "\n".join(
            text
            for block in self.content
            if block.get("type") == "text"
            and isinstance(text := block.get("text"), str)
        )


@attrs.define
class Exchange:
    """One request as ``McpTestClient.exchange`` saw it: the whole response
    message and every notification the server tied to the request.

    .. versionadded:: 0.2
    """

    method: str
    """The request's method."""
    token: JsonValue
    """The request's ``progressToken`` (from ``_meta``), or None."""
    reply: JsonObject | None = None
    """The whole JSON-RPC response (``result`` or ``error``); None until it came."""
    notifications: list[JsonObject] = attrs.Factory(list)
    """The progress and log notifications of this request, in order."""
    _done: trio.Event = attrs.field(factory=trio.Event, repr=False, eq=False)


class Listen:
    """An open ``subscriptions/listen`` stream, as ``McpTestClient.listen`` sees it.

    ``honoured`` is the acknowledgement's filter (what the server agreed to send);
    ``received`` holds every later notification tagged with this subscription, in
    order; ``result`` is the listen's result once the server ended the stream.

    .. versionadded:: 0.2
    """

    def __init__(
        self, client: McpTestClient, request_id: str | int, pending: Exchange
    ) -> None:
        self.client = client
        self.id = request_id
        """The listen request's id: the subscription id the server tags with."""
        self.acknowledgement: JsonObject | None = None
        """The whole ``notifications/subscriptions/acknowledged`` message."""
        self.received: list[JsonObject] = []
        self._pending = pending
        self._read = 0
        self._arrived = trio.Event()
        self._acked = trio.Event()

    @property
    def honoured(self) -> JsonObject:
        """The filter the server agreed to honour (the acknowledgement's ``notifications``)."""
        assert self.acknowledgement is not None
        return _object(_object(self.acknowledgement["params"])["notifications"])

    @property
    def result(self) -> JsonObject | None:
        """The listen's result, once the server ended the stream gracefully."""
        reply = self._pending.reply
        return None if reply is None else _result(self._pending)

    def _take(self, message: JsonObject) -> None:
        if self.acknowledgement is None:
            assert message["method"] == _ACKNOWLEDGED, (
                f"the first message of subscription {self.id!r} must be the "
                f"acknowledgement, got {message['method']}"
            )
            self.acknowledgement = message
            self._acked.set()
            return
        assert self._pending.reply is None, (
            "a notification arrived after the listen result"
        )
        self.received.append(message)
        self._arrived.set()
        self._arrived = trio.Event()

    async def _acknowledged(self) -> None:
        """Wait for the acknowledgement, or for the response that came instead.

        Raises:
            ProtocolError: if the server answered the listen with an error.
            trio.TooSlowError: if neither arrives within the client's timeout.
        """
        with trio.fail_after(self.client.timeout):
            async with trio.open_nursery() as nursery:

                async def first(event: trio.Event) -> None:
                    await event.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(first, self._acked)
                nursery.start_soon(first, self._pending._done)
        if self.acknowledgement is None:
            _result(self._pending)  # raises the ProtocolError

    async def next(self, *, timeout: float | None = None) -> JsonObject:  # noqa: ASYNC109 - a test helper bound
        """Return the next tagged notification not yet returned, waiting for it.

        Raises:
            trio.TooSlowError: if none arrives within ``timeout`` (default: the
                client's timeout).
        """
        with trio.fail_after(self.client.timeout if timeout is None else timeout):
            while self._read >= len(self.received):
                await self._arrived.wait()
        self._read += 1
        return self.received[self._read - 1]

    async def wait_result(self, *, timeout: float | None = None) -> JsonObject:  # noqa: ASYNC109
        """Wait for the listen's result (sent when the server shuts down) and return it.

        Raises:
            ProtocolError: if the server answered with an error.
        """
        with trio.fail_after(self.client.timeout if timeout is None else timeout):
            await self._pending._done.wait()
        result: JsonObject = _result(self._pending)
        return result

    async def cancel(self) -> None:
        """End the stream as a stdio client does: ``notifications/cancelled``."""
        await self.client.notify("notifications/cancelled", {"requestId": self.id})


class McpTestClient:
    """Drive ``server`` in-process through encoded JSON messages.

    Use as ``async with McpTestClient(server) as client:``; the server runs in a
    nursery for the duration. Every emitted message is validated against the
    2026-07-28 schema; a violation fails the test. ``limits=Limits(...)`` bounds it as
    ``serve_stdio`` would be bounded (``max_concurrent``, ``max_depth``, ...), and
    takes the same ``LimitFields`` keywords (``McpTestClient(server,
    max_concurrent=2)``).
    """

    def __init__(
        self,
        server: Server,
        client_capabilities: Mapping[str, object] | None = None,
        principal: object | None = None,
        allow: Grants = (),
        *,
        client_info: Mapping[str, object] | None = None,
        limits: Limits | None = None,
        timeout: float = 30.0,
        **fields: Unpack[LimitFields],
    ) -> None:
        self.server = server
        self.client_capabilities = dict(client_capabilities or {})
        self.principal = principal
        self.allow = allow
        self.client_info = dict(
            client_info or {"name": "trio-mcp-test", "version": "1"}
        )
        self.limits = Limits.of(limits, fields)
        """The bounds the server is driven with (``limits=`` and the ``LimitFields``
        beside it, as ``serve_stdio``)."""
        self.timeout = timeout
        self.notifications: list[JsonObject] = []
        """Every notification the server emitted, in order."""
        self._ids = itertools.count(1)
        self._pending: dict[str | int, Exchange] = {}
        self._raw_waiters: list[list[JsonObject]] = []
        self._listens: dict[str | int, Listen] = {}
        self._ended_listens: set[str] = set()
        """Ids (as JSON) of listens this client ended: late notifications are a race."""

    async def __aenter__(self) -> Self:
        try:
            trio.lowlevel.current_task()
        except RuntimeError:  # asyncio (pytest-asyncio's auto mode) or another loop
            raise McpError(
                NOT_A_TRIO_TEST.format(
                    what="McpTestClient",
                    test="this test",
                    taken=" (another event loop, such as pytest-asyncio's, runs it)",
                )
            ) from None
        self._send_in, self._receive_in = trio.open_memory_channel[str | bytes](64)
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        self._nursery.start_soon(self._serve)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self._send_in.close()  # not a checkpoint: the nursery may be cancelled already
        if exc is not None:
            # The test failed: stop serving now instead of waiting out the grace period.
            self._nursery.cancel_scope.cancel()
        try:
            return await self._nursery_cm.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            violation = _first(group, SchemaViolation)
            if violation is not None:
                # The server emitted an invalid message: that is the test's failure.
                raise violation from group
            # The nursery wraps the test's own exception; hand it back as raised, so
            # ``pytest.raises(ProtocolError)`` works around ``async with``.
            if exc is None or list(group.exceptions) != [exc]:
                raise
        raise exc

    async def _serve(self) -> None:
        await self.server.serve_messages(
            self._receive_in,
            self._on_message,
            allow=self.allow,
            principal=self.principal,
            limits=self.limits,
        )

    async def _on_message(self, text: str) -> None:
        assert "\n" not in text, "a message must be one line"
        message = json.loads(text)
        pending = (
            self._pending.get(message.get("id")) if "method" not in message else None
        )
        check_message(message, pending.method if pending else None)
        for waiter in self._raw_waiters:
            waiter.append(message)
        if "method" in message:
            self.notifications.append(message)
            params = message.get("params", {})
            subscription = params.get("_meta", {}).get(_META_SUBSCRIPTION)
            if _META_SUBSCRIPTION in params.get("_meta", {}):
                listen = self._listens.get(subscription)
                if listen is None:
                    # Spec §11: a notification may cross the client's cancellation.
                    assert json.dumps(subscription) in self._ended_listens, (
                        f"notification for unknown subscription {subscription!r}"
                    )
                    return
                listen._take(message)
                return
            token = params.get("progressToken")
            for p in self._pending.values():
                if token is None or p.token == token:
                    p.notifications.append(message)
            return
        if pending is not None:
            pending.reply = message
            pending._done.set()

    def meta(self, **extra: object) -> dict[str, object]:
        """Return the ``_meta`` this client sends: version, capabilities, clientInfo."""
        meta: dict[str, object] = {
            _META_VERSION: PROTOCOL_VERSION,
            _META_CAPS: self.client_capabilities,
            _META_INFO: self.client_info,
        }
        meta.update(extra)
        return meta

    async def close(self) -> None:
        """Close the server's input, as a stdio client closing stdin does.

        The server ends open listen streams with their result (``Listen.wait_result``)
        and finishes what is running; nothing more can be sent.
        """
        await self._send_in.aclose()

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_subscriptions: list[str] | None = None,
        notifications: Mapping[str, object] | None = None,
        request_id: str | int | None = None,
    ) -> AsyncIterator[Listen]:
        """Open a ``subscriptions/listen`` stream for the block; yield it acknowledged.

        The filter is built from the flags, or sent as ``notifications`` verbatim.
        Leaving the block sends ``notifications/cancelled`` unless the server has
        already ended the stream.

        Raises:
            ProtocolError: if the server answers the listen with an error.
            trio.TooSlowError: if no acknowledgement arrives within the timeout.

        .. versionadded:: 0.2
        """
        if notifications is None:
            flags = {
                "toolsListChanged": tools_list_changed,
                "promptsListChanged": prompts_list_changed,
                "resourcesListChanged": resources_list_changed,
            }
            wanted: JsonObject = {flag: True for flag, on in flags.items() if on}
            if resource_subscriptions is not None:
                wanted["resourceSubscriptions"] = list(resource_subscriptions)
            notifications = wanted
        rid = next(self._ids) if request_id is None else request_id
        async with self._listening(rid, notifications) as listen:
            yield listen

    @asynccontextmanager
    async def _listening(
        self, rid: str | int, notifications: Mapping[str, object]
    ) -> AsyncIterator[Listen]:
        """Send the listen request ``rid``; yield its stream once acknowledged.

        ``_on_message`` routes the stream's notifications to it during the block;
        after the block, a late one is a race with the cancellation, not an error.
        """
        pending = Exchange("subscriptions/listen", None)
        listen = Listen(self, rid, pending)
        self._pending[rid] = pending
        self._listens[rid] = listen
        try:
            params: dict[str, object] = {
                "_meta": self.meta(),
                "notifications": dict(notifications),
            }
            await self._send_request(rid, "subscriptions/listen", params)
            await listen._acknowledged()
            yield listen
            if pending.reply is None:
                with contextlib.suppress(trio.ClosedResourceError):  # after close()
                    await listen.cancel()
        finally:
            self._ended_listens.add(json.dumps(rid))
            del self._pending[rid]
            del self._listens[rid]

    async def send_raw(
        self, text: str | bytes, *, settle: float = 0.05
    ) -> list[JsonObject]:
        """Write raw text as one message; return what the server emitted for it.

        Waits until the server has been quiet for ``settle`` seconds. A
        notification (a JSON object without ``id``) gets no reply, so for one the
        result may be ``[]``; anything else waits for at least one message.

        Raises:
            trio.TooSlowError: if a request gets nothing within ``timeout``.
        """
        seen: list[JsonObject] = []
        expects_reply = not _is_notification(text)
        self._raw_waiters.append(seen)
        try:
            await self._send_in.send(text)
            with trio.fail_after(self.timeout):
                while True:
                    count = len(seen)
                    await trio.sleep(settle)
                    if len(seen) == count and (seen or not expects_reply):
                        break
        finally:
            self._raw_waiters.remove(seen)
        return seen

    async def notify(self, method: str, params: Mapping[str, object]) -> None:
        """Send a notification (for example ``notifications/cancelled``)."""
        await self._send_in.send(
            json.dumps({"jsonrpc": "2.0", "method": method, "params": dict(params)})
        )

    async def exchange(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        request_id: str | int | None = None,
    ) -> Exchange:
        """Send a request and wait for its response; return it with its notifications."""
        params = dict(params or {})
        if "_meta" not in params:
            params["_meta"] = self.meta()
        rid = next(self._ids) if request_id is None else request_id
        meta = params["_meta"]
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        pending = Exchange(method, token)
        self._pending[rid] = pending
        try:
            await self._send_request(rid, method, params)
            try:
                with trio.fail_after(self.timeout):
                    await pending._done.wait()
            except BaseException:
                if pending.reply is None:
                    self._abandon(rid)
                raise
        finally:
            del self._pending[rid]
        return pending

    def _abandon(self, rid: str | int) -> None:
        """Cancel a request the test stopped waiting for, as the official client does
        over stdio and HTTP, so its handler sees its cancel now rather than holding
        the end of the ``async with`` block.

        Without a checkpoint: the caller's scope is cancelled already.
        """
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": rid, "reason": "the test stopped waiting"},
        }
        with contextlib.suppress(
            trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError
        ):
            self._send_in.send_nowait(json.dumps(cancel))

    async def _send_request(
        self, rid: str | int, method: str, params: dict[str, object]
    ) -> None:
        """Write one request as JSON text to the server's input."""
        await self._send_in.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
            )
        )

    async def request(
        self, method: str, params: Mapping[str, object] | None = None
    ) -> JsonObject:
        """Send a request; return its result or raise ``ProtocolError``."""
        pending = await self.exchange(method, params)
        return _result(pending)

    async def discover(self) -> JsonObject:
        """Call ``server/discover``."""
        result: JsonObject = await self.request("server/discover")
        return result

    async def _list(self, method: str, key: str) -> list[JsonObject]:
        items: list[JsonObject] = []
        params: dict[str, object] = {}
        while True:
            result = await self.request(method, params)
            items.extend(map(_object, _array(result[key])))
            if "nextCursor" not in result:
                return items
            params = {"cursor": result["nextCursor"]}

    async def list_tools(self) -> list[ListedTool]:
        """Return every tool of every page of ``tools/list``.

        Each is the wire object (a dict, as before) with properties: ``.name``,
        ``.description``, ``.input_schema``, ``.output_schema``, ``.annotations``.
        """
        return list(map(ListedTool, await self._list("tools/list", "tools")))

    async def list_prompts(self) -> list[ListedPrompt]:
        """Return every prompt of ``prompts/list`` (``.name``, ``.arguments``, ...)."""
        return list(map(ListedPrompt, await self._list("prompts/list", "prompts")))

    async def list_resources(self) -> list[ListedResource]:
        """Return every resource of ``resources/list`` (``.uri``, ``.name``, ...)."""
        listed = await self._list("resources/list", "resources")
        return list(map(ListedResource, listed))

    async def list_resource_templates(self) -> list[ListedResource]:
        """Return every template of ``resources/templates/list`` (``.uri_template``)."""
        listed = await self._list("resources/templates/list", "resourceTemplates")
        return list(map(ListedResource, listed))

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        progress_token: str | int | None = None,
        log_level: str | None = None,
        meta: Mapping[str, object] | None = None,
        input_responses: Mapping[str, object] | None = None,
        request_state: str | None = None,
        **extra_meta: object,
    ) -> ToolResult:
        """Call a tool; return its result (JSON-RPC errors raise ``ProtocolError``)."""
        m = self.meta(**extra_meta)
        if progress_token is not None:
            m["progressToken"] = progress_token
        if log_level is not None:
            m["io.modelcontextprotocol/logLevel"] = log_level
        m.update(meta or {})
        params: dict[str, object] = {"name": name, "_meta": m}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if input_responses is not None:
            params["inputResponses"] = dict(input_responses)
        if request_state is not None:
            params["requestState"] = request_state
        pending = await self.exchange("tools/call", params)
        result = _result(pending)
        return ToolResult(
            content=list(map(_object, _array(result.get("content", [])))),
            structured=result.get("structuredContent"),
            is_error=bool(result.get("isError", False)),
            meta=_object(result.get("_meta", {})),
            raw=result,
            notifications=pending.notifications,
        )

    async def read_resource(self, uri: str) -> ResourceResult:
        """Call ``resources/read``; the result with ``.contents``, ``.text``, ``.blobs``.

        Raises:
            ProtocolError: if the server answered with an error (-32602 for an
                unknown URI).
        """
        return ResourceResult(await self.request("resources/read", {"uri": uri}))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> PromptResult:
        """Call ``prompts/get``; the result with ``.messages``, ``.text``, ``.description``.

        Raises:
            ProtocolError: if the server answered with an error.
        """
        params: dict[str, object] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return PromptResult(await self.request("prompts/get", params))


def _result(pending: Exchange) -> JsonObject:
    """The reply's result; its error raised as ``ProtocolError``."""
    reply = pending.reply
    assert reply is not None
    error = reply.get("error")
    if error is not None:
        error = _object(error)
        code, message = error["code"], error["message"]
        assert isinstance(code, int)
        assert isinstance(message, str)
        raise ProtocolError(code, message, error.get("data"))
    return _object(reply["result"])


def _object(value: JsonValue) -> JsonObject:
    """``value`` as an object; the schema check has already made sure it is one."""
    assert isinstance(value, dict), f"expected a JSON object, got {value!r}"
    return value


def _array(value: JsonValue) -> list[JsonValue]:
    assert isinstance(value, list), f"expected a JSON array, got {value!r}"
    return value


def _is_notification(text: str | bytes) -> bool:
    """Whether ``text`` is one JSON-RPC notification (an object with a method, no id)."""
    try:
        message = json.loads(text)
    except ValueError:
        return False
    return isinstance(message, dict) and "id" not in message and "method" in message


def _first(group: BaseExceptionGroup[BaseException], kind: type[E]) -> E | None:
    """Return the first ``kind`` exception anywhere in ``group``, or None."""
    for exc in group.exceptions:
        if isinstance(exc, kind):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = _first(exc, kind)
            if found is not None:
                return found
    return None
